"""PyTorch Kineto chrome traces (GPU/CPU, CUDA and ROCm) -> canonical tables of one rank.

The flow, and why (details in each module):

1. :mod:`..chrome_trace` (the Chrome-trace reader shared with the Ascend trace) keeps the small
   top-level object and finds the bare event array: in a plain file by its byte range, read
   where it lies; a gzip file (or one cut short) is streamed once and the array copied to a
   temporary file - so that DuckDB can read it in pieces.  A trace cut short is closed after
   its last complete event.
2. :mod:`._events` reads that array columnar with exact nanosecond times.
3. :mod:`._tables`, :mod:`._links`, :mod:`._comm` build the canonical tables in SQL (no
   per-event Python); :mod:`..._steps` gives the step ranges shared with the other importers.
4. :mod:`._runinfo` writes ``run_info`` and says what the trace lacks.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from ... import diagnostics as dx
from .. import chrome_trace, progress
from .._common import close_duck, cursors, duck, rank_threads, release_memory, sql_str, temp_folder, thread_share
from .._steps import assign_steps, build_steps
from ..base import Importer, RankData, RankSource, Recognised
from . import _bare, _comm, _links, _prepass, _runinfo, _sql, _tables
from ._events import API_CATS, Malformed, cats, load_raw, load_rest

VERSION = (
    "3"  # 3: a damaged distributedInfo field is said; 2: old (PyTorch 1.8-1.13) category names and bare event arrays
)

#: DuckDB's budget for the working tables (it spills to the import's temp folder beyond it).
#: The import's peak is where the device pass's sorted rows meet the pass tables already built
#: in Arrow, which lie outside this budget: a 1 GB trace peaked at 1.59-1.66 GB with 512 MB here
#: (1.6x the file) and at 1.43-1.47 GB with 320 MB, for 0.9 s more (17.2 s against 16.3 s);
#: a 100 MB trace fits either way (2.06-2.10 s both)
MEMORY_LIMIT = "320MB"

_RANK = re.compile(rb'"distributedInfo"\s*:\s*\{[^{}]*?"rank"\s*:\s*(-?\d+)')
_WORLD = re.compile(rb'"world_size"\s*:\s*(\d{1,10})\b')
#: the largest rank taken as real (int32); ``distributedInfo.rank = 10**30`` is damage, not a rank
_MAX_RANK = (1 << 31) - 1
_KINETO_KEYS = (b'"traceEvents"', b'"schemaVersion"', b'"deviceProperties"', b'"distributedInfo"')
#: what only a Kineto trace writes near the start of a bare event array: a category in its own
#: spelling (old or new; torch_npu's trace_view.json shares ``cpu_op`` and the other host
#: categories, never these), or the ``Trace name`` every op of a PyTorch 1.8 trace carries
_KINETO_ARRAY = re.compile(
    rb'"cat"\s*:\s*"(?:Operator|Kernel|Runtime|Memcpy|Memset|kernel|cuda_runtime|cuda_driver|gpu_memcpy|gpu_memset)"'
    rb'|"Trace name"\s*:\s*"PyTorch Profiler"'
)


def sniff(path: Path) -> RankSource | None:
    """A Kineto trace: a file (plain or gzip, whatever its name) whose top level is an object
    with ``traceEvents``, or a bare event array (how some tools and old tutorials save one)
    whose first events are Kineto's own (torch_npu's trace_view.json, also a bare array, is not
    one: its head holds none of :data:`_KINETO_ARRAY`)."""
    return _sniffed(Path(path))[0]


def _recognise(path: Path) -> Recognised | None:
    src, head = _sniffed(Path(path))
    if src is None:
        return None
    m = _WORLD.search(head)
    return Recognised(src, world_size=int(m.group(1)) if m else None)


def _sniffed(path: Path) -> tuple[RankSource | None, bytes]:
    """(the rank source, the head it was decided on); a file that starts with neither ``{`` nor
    gzip's magic is refused after its first bytes."""
    try:
        with open(path, "rb") as f:  # a folder fails here too (IsADirectoryError)
            first = f.read(64)
    except OSError:
        return None, b""
    lead = first.lstrip(b" \t\r\n\xef\xbb\xbf")[:1]
    if first[:2] != b"\x1f\x8b" and lead not in (b"{", b"[", b""):
        return None, b""
    head = chrome_trace.head(path, 64 << 10)
    body = head.lstrip(b" \t\r\n\xef\xbb\xbf")
    if body.startswith(b"["):
        if not _KINETO_ARRAY.search(body):
            return None, b""
    elif not body.startswith(b"{") or not any(k in body for k in _KINETO_KEYS):
        return None, b""
    m = _RANK.search(body)
    return RankSource(format="kineto", path=path, files=(path,), rank_hint=_bounded(m)), head


def _bounded(m) -> int | None:
    """The rank a regexp found, when it is one (0 .. int32)."""
    return int(m.group(1)) if m and len(m.group(1)) <= 11 and 0 <= int(m.group(1)) <= _MAX_RANK else None


def _hint(name: str) -> bool:
    name = name.lower()
    return name.endswith((".json", ".json.gz"))


IMPORTER = Importer(
    name="kineto",
    shape="file",
    recognise=_recognise,
    doc="PyTorch Kineto Chrome trace (GPU/CPU, CUDA and ROCm): a JSON object with traceEvents "
    "(or a bare array of Kineto events), plain or gzip",
    hint=_hint,
)


def load_rank(source: RankSource) -> RankData:
    """Import one Kineto trace file (``("tier", "steps")`` in its options: the pre-pass of
    :mod:`._prepass`, steps, device tasks and collectives only)."""
    if dict(source.options).get("tier") == _prepass.STEPS:
        return _prepass.load(source, _prepass.Full(_base_ns, _duck_error, _limit_memory, _rank, _stepped, _unreadable))
    path = Path(source.files[0] if source.files else source.path)
    with temp_folder("kineto") as tmp, ThreadPoolExecutor(1) as opener:
        # the connection opens (DuckDB's instance, the parsing macros: 80 ms) while the event
        # array is found (80-100 ms, mostly reading and searching the file's tail): 163-190 ms
        # one after the other, 121-137 ms side by side, before the parse can start
        opening = opener.submit(_open, rank_threads(), Path(tmp))
        try:
            if chrome_trace.form(path) == "array":
                ex = _bare.extract_array(path, Path(tmp))
            else:
                ex = chrome_trace.extract(path, Path(tmp), in_place=True)
        except (chrome_trace.ReadError, OSError) as exc:
            _discard(opening)
            return RankData(source.rank_hint, diagnostics=[_unreadable(path, exc)])
        except BaseException:
            _discard(opening)
            raise
        # parsing is next: said before the wait for the connection, so that a file read whole
        # never shows the stage after it ("building") meanwhile
        progress.stage(source.files, "parsing")
        con = opening.result()
        try:
            passes, diags = _read_events(con, ex, path, Path(tmp))
            if passes is None:
                return RankData(source.rank_hint, diagnostics=diags)
            progress.stage(source.files, "building")
            return _build(con, *passes, ex, path, source, diags)
        finally:
            close_duck(con)


def _open(threads: int, tmp: Path):
    """The import's DuckDB connection, its memory limited (:func:`_limit_memory`)."""
    con = duck(threads=threads, macros=False)  # its SQL uses its own macros only (._sql)
    try:
        _limit_memory(con, tmp)
    except BaseException:
        close_duck(con)
        raise
    return con


def _discard(opening) -> None:
    """Close the connection ``opening`` opened, when the import stops before using it (a failure
    to open is not the reason it stops: the file's own error is what the user is told)."""
    try:
        con = opening.result()
    except Exception:  # noqa: BLE001 - see above
        return
    close_duck(con)


def _limit_memory(con, tmp: Path) -> None:
    """Let DuckDB spill its working tables to ``tmp`` instead of growing: the Arrow pass
    tables live outside its budget, so the import's peak stays near the trace's size."""
    con.execute(f"SET temp_directory = {sql_str(tmp / 'duckdb')}")
    con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")


def _unreadable(path: Path, why) -> dx.Diagnostic:
    return dx.error(
        "trace-invalid",
        f"Cannot read the Kineto trace {path.name}: {why}.",
        path,
        fix="Check that the file is a complete PyTorch profiler trace "
        "(prof.export_chrome_trace or tensorboard_trace_handler output); "
        "copy it again if it was cut short.",
    )


def _read_events(con, ex, path: Path, tmp: Path):
    """Run the read passes -> ((host, api, dev tables), diagnostics); on malformed JSON
    keep every event that parses and say how many were lost."""
    _sql.install(con)
    base = _base_ns(ex.meta.get("baseTimeNanoseconds"))
    diags = []
    read = None
    try:
        try:
            passes, read = _passes(con, ex.events_path, base, ex.span)
        except (_duck_error(), Malformed) as exc:  # a syntax error inside the array (the first pass sees it)
            fixed = tmp / "recovered.json"
            kept, dropped, lost = chrome_trace.salvage(ex.materialise(tmp), fixed)
            if not kept:
                return None, [_unreadable(path, f"the event list is not valid JSON ({exc})")]
            ex.release()
            ex.events_path = fixed
            try:
                passes, _ = _passes(con, fixed, base)
            except (_duck_error(), Malformed) as again:
                return None, [_unreadable(path, f"the event list cannot be read ({again})")]
            diags.append(
                dx.warning(
                    "malformed-events",
                    f"{dropped} events ({lost:,} bytes) of the event list are "
                    f"not valid JSON and were skipped; {kept} events were read.",
                    path,
                    fix="Export or copy the trace again; the file was damaged after it was written.",
                )
            )
    finally:
        ex.release()
    events = con.execute("SELECT count(*) FROM ev WHERE ph <> 'M'").fetchall()[0][0] + sum(t.num_rows for t in passes)
    if read is not None and read.skipped_places:  # broken JSON in the middle, stepped over by the read
        diags.append(
            dx.warning(
                "malformed-events",
                f"about {read.skipped_events} event(s) ({read.skipped_bytes:,} bytes, in {read.skipped_places} "
                f"place(s)) of the event list are not valid JSON and were skipped; {events} events were read.",
                path,
                fix="Export or copy the trace again; the file was damaged after it was written.",
            )
        )
    diags = _runinfo.truncation(ex, events, path) + diags + _damaged(con, path)
    if ex.truncated and not events:
        return None, diags + [_unreadable(path, "the file ends before its first complete event")]
    return passes, diags


def _damaged(con, path: Path) -> list:
    """One warning per kind of damaged event the read dropped (or copy it kept once)."""
    found = chrome_trace.damage.losses(con)
    return [
        dx.warning(code, message, path, fix=chrome_trace.damage.FIX)
        for code, message in chrome_trace.damage.describe_losses(found, path.name)
    ]


def _base_ns(value) -> int:
    """``baseTimeNanoseconds`` as an int (0 when absent: ``ts`` is then epoch us already)."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return 0


def _passes(con, events_path: Path, base: int, span: tuple[int, int] | None = None):
    """One parse of the array (the bytes ``span`` of ``events_path`` when given) into ``raw``;
    the host, runtime and device tables are taken out of it, then the rest becomes ``ev`` and
    ``raw`` is dropped.  Returns those three tables and the read (what it skipped as broken JSON)."""
    legacy, read = load_raw(con, events_path, base, span)
    # the three passes read ``raw`` at once, host and device each on a cursor of its own: their
    # statements leave a core idle.  Each pass's table is registered in the cursor that made it,
    # so it is registered here again for the statements that join them
    rocm = con.execute(
        f"SELECT coalesce(bool_or(starts_with(name, 'hip')), false) FROM raw WHERE ph = 'X' AND cat IN {cats(API_CATS)}"
    ).fetchall()[0][0]
    with cursors(con, 2) as (host_cur, dev_cur), ThreadPoolExecutor(2) as pool:
        host_f = pool.submit(_tables.read_host, host_cur, legacy)
        dev_f = pool.submit(_tables.read_dev, dev_cur, "RCCL" if rocm else "NCCL", legacy)
        api = _tables.read_api(con)
        host, dev = host_f.result(), dev_f.result()
    # the passes' working buffers are free now, but kept by the allocators for their next
    # allocation: given back before ``raw`` is read once more (at 1 GB, 0.25 GB of RSS at
    # the import's peak, in 2 ms)
    release_memory()
    con.register("host", host)
    con.register("dev", dev)
    load_rest(con)
    _tables.create_gpu_pids(con)
    return (host, api, dev), read


def _build(
    con, host: pa.Table, api: pa.Table, dev: pa.Table, ex, path: Path, source: RankSource, diags: list
) -> RankData:
    """Every canonical table; host_ops, api_calls and device_tasks share the pass tables'
    buffers."""
    meta = ex.meta
    # the links run on one DuckDB thread (their row order, see create_links): what reads no link
    # is made meanwhile on a cursor of its own, on the core they leave idle, where this rank may
    # use two (the pass tables are registered per connection, so again on the cursor).  Should
    # the links fail, leaving the block waits for the other thread before its cursor closes, and
    # their error is the one raised
    beside = thread_share() > 1
    with cursors(con, 1 if beside else 0) as side, ThreadPoolExecutor(1) as pool:
        aside = pool.submit(_beside_links, side[0], {"host": host, "api": api, "dev": dev}) if beside else None
        _links.create_links(con)
        release_memory()  # the enclosing-op arrays (0.3 GB at 1 GB), before the output tables are made
        _comm.create_comm(con)
        launches = _arrow(con, _links.LAUNCHES)
        f, counters, slices, memory = aside.result() if aside is not None else _beside_links(con)
    tables = {
        "launches": launches,
        "counters": counters,
        "trace_slices": slices,
        "run_info": _runinfo.run_info(meta, f, path),
    }
    tables.update(memory)
    tables.update(_stepped(con, host, dev))
    tables["api_calls"] = api.select(
        ["call_id", "pid", "thread", "level", "name", "start_ns", "dur_ns", "connection_id", "item", "external_id"]
    )
    for name in ("host", "api", "dev"):
        con.unregister(name)
    rank = _rank(meta, source)
    diags += _runinfo.doctor(meta, f, tables["steps"].num_rows, rank, path)
    diags += _runinfo.invalid_fields(meta, rank, tables["run_info"], path)
    return RankData(rank, tables=tables, diagnostics=diags)


def _beside_links(con, passes: dict[str, pa.Table] | None = None) -> tuple:
    """What reads no launch link -- the trace's facts, ``counters``, ``trace_slices`` and the
    memory tables -- made on ``con``; on a cursor while the links are made on one thread, with the
    pass tables ``passes`` registered on it first (a registration is the connection's own): the
    100 MB trace's ``_build`` 0.188 -> 0.170 s (medians of 12 alternating imports, 8 faster), the
    1 GB trace's peak unchanged (1.42 GB)."""
    for name, table in (passes or {}).items():
        con.register(name, table)
    f = _runinfo.facts(con)
    return f, _arrow(con, _tables.COUNTERS), _arrow(con, _tables.TRACE_SLICES), _memory(con)


def _rank(meta: dict, source: RankSource) -> int | None:
    dist = meta.get("distributedInfo")
    rank = dist.get("rank") if isinstance(dist, dict) else None
    if isinstance(rank, str) and rank.strip().isdigit() and len(rank.strip()) <= 10:
        rank = int(rank)
    if isinstance(rank, int) and not isinstance(rank, bool) and 0 <= rank <= _MAX_RANK:
        return rank
    return source.rank_hint


def _stepped(con, host: pa.Table, dev: pa.Table) -> dict[str, pa.Table]:
    """steps, and the tables with a step column: device_tasks, comm_ops (by the device range),
    host_ops (by the host range).  Sync tasks (waits) do not stretch a step's device range."""
    host_steps = con.execute(r"""
        SELECT TRY_CAST(regexp_extract(name, '^ProfilerStep#(\d+)$', 1) AS BIGINT) AS step,
               min(start_ns), max(start_ns + dur_ns)
        FROM host WHERE category IN ('op', 'annotation') AND regexp_matches(name, '^ProfilerStep#\d+$')
        GROUP BY 1 ORDER BY 2""").fetchall()
    co = _arrow(con, _comm.COMM_OPS)
    dt = _comm.device_tasks(con, dev)
    # a task whose launching call is not in the trace counts as launched when it started
    work = dt.select(["kind", "start_ns", "dur_ns", "launch_ns"])
    work = work.filter(pc.and_(pc.not_equal(work["kind"], "sync"), pc.is_valid(work["start_ns"])))
    steps = build_steps(
        host_steps,
        work["start_ns"],
        pc.add(work["start_ns"], work["dur_ns"]),
        pc.coalesce(work["launch_ns"], work["start_ns"]),
    )
    del work
    host_only = steps.set_column(3, "device_start_ns", pa.nulls(steps.num_rows, pa.int64())).set_column(
        4, "device_end_ns", pa.nulls(steps.num_rows, pa.int64())
    )
    ho = host.select(_tables.HOST_COLS)
    return {
        "steps": steps,
        "device_tasks": dt.append_column("step", assign_steps(_starts(dt), steps)),
        "host_ops": ho.append_column("step", assign_steps(_starts(ho), host_only)),
        "comm_ops": co.append_column("step", assign_steps(_starts(co), steps)),
    }


def _starts(table: pa.Table):
    """start_ns with nulls (an unreadable ``ts``) as -1, which lies in no step."""
    return pc.fill_null(table["start_ns"], -1)


def _memory(con) -> dict[str, pa.Table]:
    _tables.create_memory(con)
    if not con.execute("SELECT count(*) FROM mem").fetchall()[0][0]:
        return {}
    _links.enclosing(con, "SELECT mid AS pt, pid, thread, ts_ns FROM mem", "mem_enc")
    return {"memory_samples": _arrow(con, _tables.MEMORY_SAMPLES), "memory_blocks": _arrow(con, _tables.MEMORY_BLOCKS)}


def _arrow(con, sql: str) -> pa.Table:
    return con.sql(sql).to_arrow_table()


__all__ = ["VERSION", "IMPORTER", "load_rank", "sniff"]


def _duck_error():
    """DuckDB's error base class, imported on use (sniffing a file must not load DuckDB)."""
    import duckdb

    return duckdb.Error
