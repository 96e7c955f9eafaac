"""Importer for the torch_npu **text** export: one ``*_ascend_pt`` rank folder whose
``ASCEND_PROFILER_OUTPUT`` holds CSV/JSON deliverables -> the canonical tables.

How it works: ``trace_view.json`` is read once, in pieces, into DuckDB (``chrome_trace``), every
CSV through DuckDB ``read_csv``, and every canonical table is derived with SQL over those tables
-- no Python loop per event, so a multi-GB trace loads at DuckDB's speed.

Memory: DuckDB gets a cap that grows with the trace (:func:`_memory_cap`) and spills beyond it;
working tables are dropped as soon as nothing needs them; each output table is streamed from
DuckDB into an Arrow IPC file and memory-mapped only after DuckDB is closed, so the outputs and
DuckDB's working set are never in memory together.  Module map:

- ``_files``: where files are, CSV reading with bad-row counting, diagnostics collection.
- ``_meta``: profiler_info / profiler_metadata -> run_info, switch and missing-file checks.
- ``_kernels``: kernel_details.csv (+ l2_cache.csv) with PMU column naming.
- ``_trace``: splits the trace into working tables; counters and leftover slices.
- ``_host``: host_ops (text normalisation of shapes/stacks), steps, api_calls, operator_details join.
- ``_device``: device_tasks (kernel_details + trace, each device activity once, kinds).
- ``_links``: launches from flows and connection ids.
- ``_comm``: comm_ops / comm_links.  ``_memory``: the three memory CSVs.
- ``_summary``: the vendor's step summary, the steps of a partial export without device tasks.

Decisions shared with the DB importer are documented in the module that makes them.
"""

from __future__ import annotations

import copy
import os
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa

from .. import _torch_npu, progress
from .._common import close_duck, cursors, duck, ram_bytes, rank_threads, temp_dir
from ..base import Importer, RankData, RankSource
from ..chrome_trace import TraceRead, damage, out_of_memory
from . import _comm, _device, _files, _host, _kernels, _links, _memory, _meta, _sql, _summary, _trace

VERSION = "7"  # 7: flows bound to slices that start together by what they are (CANN level, name), not reading order; 6: negative sizes, durations and memory times are damage (null, counted); 5: partial exports take steps from the vendor summary; versions from profiler_info (4: Level0 types)
FORMAT = "ascend_text"


#: internal helper columns dropped before tables are handed out
_INTERNAL = {
    "device_tasks": ("pre_id", "hw_idx", "op_idx", "plane_idx"),
    "host_ops": ("idx",),
    "api_calls": ("idx", "trace_pid", "trace_tid"),
}


def sniff(path: Path) -> RankSource | None:
    """A RankSource for a torch_npu rank folder with text deliverables, else None."""
    folder = _files.rank_folder(Path(path))
    if folder is None:
        return None
    info = _files.info_file(folder)
    rank = _meta.rank_from_name(info)
    if rank is None and info is not None:
        rank = _meta.read_config(folder).rank
    return RankSource(format=FORMAT, path=folder, files=_files.source_files(folder), rank_hint=rank)


def load_rank(source: RankSource) -> RankData:
    """All canonical tables of one rank, plus what the doctor found."""
    folder = Path(source.path)
    inputs = _files.Inputs(folder, source.rank_hint)
    cfg = _meta.read_config(folder, inputs)
    rank = source.rank_hint if source.rank_hint is not None else cfg.rank
    inputs.set_rank(rank)
    import duckdb

    trace = inputs.path(_files.TRACE)
    trace_bytes = trace.stat().st_size if trace.is_file() else 0
    out_dir = temp_dir("out")
    try:
        con = duck(threads=rank_threads(), memory_limit=_memory_cap(trace_bytes))
        try:
            _sql.install(con)
            files, extra = _load(con, inputs, cfg, folder, out_dir)
        except duckdb.OutOfMemoryException as exc:
            raise out_of_memory(
                trace if trace.is_file() else folder, trace_bytes or _folder_bytes(folder), exc
            ) from None
        finally:
            close_duck(con)
        tables = {name: _mapped(path) for name, path in files.items()}
    finally:
        # a mapped file stays readable after its name is gone; its space is freed with the table
        shutil.rmtree(out_dir, ignore_errors=True)
    tables.update(extra)
    return RankData(rank=rank, tables=tables, diagnostics=inputs.diagnostics)


def _memory_cap(trace_bytes: int) -> int:
    """DuckDB's memory cap for one rank: 512 MB, plus a quarter of the trace's size, at most 40%
    of RAM.  Beyond it DuckDB spills to disk; the import never needs the whole trace in memory.
    (A half: 1 GB `analyze` with two threads peaked at 1,543-1,544 MiB; a quarter 1,519 MiB, an
    eighth 1,513 MiB, in the same time: 28-32 s on an idle 2-core machine.)"""
    ram = ram_bytes()
    top = int(ram * 0.4) if ram else 4 << 30
    return max(256 << 20, min(top, (512 << 20) + trace_bytes // 4))


def _folder_bytes(folder: Path) -> int:
    total = 0
    for root, _, names in os.walk(folder):
        for n in names:
            try:
                total += os.path.getsize(os.path.join(root, n))
            except OSError:
                pass
    return total


def _mapped(path: str) -> pa.Table:
    """An Arrow IPC file as a table whose buffers are the file's pages (no copy)."""
    with pa.memory_map(path) as source:
        return pa.ipc.open_file(source).read_all()


def _load(con, inputs: _files.Inputs, cfg: _meta.Config, folder: Path, out_dir: str):
    # the CSVs that do not depend on the trace are read while the trace is: their statements are
    # small and mostly single-threaded, so they fill the cores the trace's statements leave idle
    side_inputs, comm_inputs = _fork(inputs), _fork(inputs)
    cursor = con.cursor()
    with ThreadPoolExecutor(1) as pool:
        side = pool.submit(_read_side_csvs, cursor, side_inputs, comm_inputs)
        try:
            _trace.start_split(con)
            truncated = _read_trace(con, inputs)
            progress.stage([inputs.path(_files.TRACE)], "building")
            _trace.finish_split(con)
        finally:
            pmu, have_l2, made = side.result()
            cursor.close()
    for code, message in damage.describe_losses(damage.losses(con), _files.TRACE):
        inputs.add("warning", code, message, inputs.path(_files.TRACE), damage.FIX)
    inputs.diagnostics.extend(side_inputs.diagnostics)  # in the order a serial read gives
    _trace.build_counters(con)
    have_kd = pmu is not None
    no_tasks = not con.sql("SELECT (SELECT count(*) FROM kd) + (SELECT count(*) FROM hw)").fetchall()[0][0]
    summary = _summary.load_step_summary(con, inputs) if no_tasks else None
    device = _device_id(con, made)
    kd_steps = have_kd and con.sql("SELECT count(step) FROM kd").fetchall()[0][0] > 0
    _host.build_steps_table(con, kd_steps)
    _summary.fill_steps_from_summary(con, inputs, summary)
    # two chains that share no working table run side by side, each on its own cursor: the
    # device's (device_tasks, which takes the groups of communication.json read beside the CSVs)
    # and the host's (host_ops, operator_details.csv, api_calls).  Their statements are mostly
    # single-threaded, so one alone leaves a core idle.  Diagnostics keep the serial order:
    # communication.json's, then the host chain's (device_tasks says nothing).
    host_inputs = _fork(inputs)
    with cursors(con, 1) as (dev_cursor,), ThreadPoolExecutor(1) as pool:
        dev = pool.submit(_device.build_device_tasks, dev_cursor, pmu or [], have_kd, device, have_l2)
        try:
            _host.build_host_ops(con)
            _host.join_operator_details(con, host_inputs, quiet=truncated is not None)
            _host.build_api_calls(con)
        finally:
            dev.result()
    inputs.diagnostics.extend(comm_inputs.diagnostics + host_inputs.diagnostics)
    _links.build_launches(con)
    if truncated is not None:
        _report_trace(con, inputs, truncated)
    else:
        _check_unmatched(con, inputs, have_kd)
    has_comm = con.sql("SELECT count(*) FROM device_tasks WHERE kind = 'communication'").fetchall()[0][0] > 0
    _meta.check_switches(cfg, inputs)
    _check_steps(con, inputs)
    _meta.check_missing(cfg, inputs, has_comm)
    return _fetch(con, inputs, cfg, folder, device, made, out_dir)


def _fork(inputs: _files.Inputs) -> _files.Inputs:
    """The same inputs with a diagnostics list of their own, for work on another thread (its
    findings are added back in the order a serial import says them)."""
    forked = copy.copy(inputs)
    forked.diagnostics = []
    return forked


def _read_side_csvs(con, inputs: _files.Inputs, comm_inputs: _files.Inputs):
    """kernel_details (+ l2_cache), the memory CSVs and communication.json (``cj``,
    ``comm_groups``; its findings in ``comm_inputs``), on their own connection (``con``, a cursor
    of the import's database) -> (PMU columns or None, l2 read, memory tables made)."""
    pmu = _kernels.load_kernels(con, inputs)
    have_l2 = pmu is not None and _kernels.load_l2_cache(con, inputs)
    made = _memory.load_memory(con, inputs)
    _comm.load_comm_json(con, comm_inputs)
    return pmu, have_l2, made


def _read_trace(con, inputs: _files.Inputs) -> TraceRead | None:
    """``ev`` from trace_view.json (empty when missing); a cut file loads its readable prefix,
    one damaged in the middle every event around the damage.  Returns the read result when the
    file was damaged or unreadable (reported later, with evidence from the CSVs), else None."""
    path = inputs.path(_files.TRACE)
    if not path.is_file() or path.stat().st_size == 0:
        if path.is_file():
            inputs.add(
                "warning",
                "empty-file",
                f"{_files.TRACE} is empty (0 bytes): host ops, launches, API calls, "
                "counters and timeline slices are empty.",
                path,
                _TRACE_FIX,
            )
        return None
    result = _trace.read(con, path)
    return result if result.damaged else None


_TRACE_FIX = (
    "Copy the file again from the machine that recorded it, or re-run "
    "torch_npu.profiler.profiler.analyse(<rank folder>) to rebuild it."
)


def _report_trace(con, inputs: _files.Inputs, result: TraceRead) -> None:
    """Say what a damaged trace lost -- the stretches skipped in the middle, the tail after a cut
    -- with its own byte counts, plus the kernels and framework ops that kernel_details.csv /
    operator_details.csv list but the trace no longer holds."""
    path = inputs.path(_files.TRACE)
    if not result.events:
        inputs.add(
            "error",
            "trace-invalid",
            f"{_files.TRACE} could not be read ({result.error}); host ops, "
            "launches, API calls, counters and timeline slices are empty.",
            path,
            _TRACE_FIX,
        )
        return
    kd_missing, kd_total = con.sql(
        "SELECT count(*) FILTER (WHERE kd_row NOT IN (SELECT kd_row FROM kd_match)), count(*) FROM kd"
    ).fetchall()[0]
    od_total = con.sql("SELECT count(*) FROM od").fetchall()[0][0] if _has_table(con, "od") else 0
    od_missing = od_total - (con.sql("SELECT count(*) FROM od_match").fetchall()[0][0] if od_total else 0)
    evidence = []
    if kd_total:
        evidence.append(f"{kd_missing} of {kd_total} kernel_details.csv rows")
    if od_total:
        evidence.append(f"{od_missing} of {od_total} operator_details.csv ops")
    tail = f"; missing from it: {' and '.join(evidence)}" if evidence else ""
    if result.skipped_places:  # damage in the middle: the events around it are in
        inputs.add(
            "warning",
            "malformed-events",
            result.describe_skipped(_files.TRACE) + ("" if result.truncated else tail) + ". Host ops, launches, "
            "API calls and trace-only device tasks of the skipped stretch are absent.",
            path,
            _TRACE_FIX,
        )
    if result.truncated:
        inputs.add(
            "warning",
            "trace-truncated",
            result.describe(_files.TRACE) + tail + ". Host ops, launches, API calls "
            "and trace-only device tasks after the cut are absent.",
            path,
            _TRACE_FIX,
        )


def _has_table(con, name: str) -> bool:
    return bool(con.sql(f"SELECT count(*) FROM duckdb_tables() WHERE table_name = '{name}'").fetchall()[0][0])


def _device_id(con, made: dict[str, str]) -> int | None:
    """Device from the memory files' ``NPU:{id}``, else kernel_details ``Device_id``, else the
    low 5 bits of the Ascend Hardware pid (msprof pids end with the device id), else the
    ``Device_id`` of the vendor's step summary.  Never the rank: the two differ (rank 3 of the
    Qwen3 run is device 5)."""
    dev = _memory.memory_device(con, made)
    if dev is None:
        dev = con.sql("SELECT min(device) FROM kd").fetchall()[0][0]
    if dev is None:
        dev = con.sql("SELECT min(pid) % 32 FROM hw").fetchall()[0][0]
    if dev is None:  # a partial export: the vendor's step summary names the device
        dev = _summary.vendor_device(con)
    return None if dev is None else int(dev)


def _check_unmatched(con, inputs: _files.Inputs, have_kd: bool) -> None:
    """kernel_details rows the trace does not show lose their launch links: say how many."""
    if not have_kd or not con.sql("SELECT count(*) FROM hw").fetchall()[0][0]:
        return
    n = con.sql("SELECT count(*) FROM kd WHERE kd_row NOT IN (SELECT kd_row FROM kd_match)").fetchall()[0][0]
    if n:
        inputs.add(
            "info",
            "kernel-not-in-trace",
            f"{n} row(s) of {_files.KERNELS} have no matching event in {_files.TRACE}; they have no launch link.",
            inputs.path(_files.KERNELS),
        )


def _check_steps(con, inputs: _files.Inputs) -> None:
    """No ``ProfilerStep#N``: every per-step view (step breakdown, steps column) is empty."""
    has_ops = con.sql("SELECT count(*) FROM host_ops").fetchall()[0][0]
    if has_ops and not con.sql("SELECT count(*) FROM steps").fetchall()[0][0]:
        inputs.add(
            "info",
            "no-steps",
            "No ProfilerStep#N in trace_view.json: per-step views are empty and no task has a step.",
            inputs.path(_files.TRACE),
            "Call prof.step() once per training iteration inside the torch_npu.profiler.profile context.",
        )


def _fetch(con, inputs, cfg, folder, device, made, out_dir: str) -> tuple[dict[str, str], dict[str, pa.Table]]:
    """Write every output table to an Arrow IPC file in ``out_dir`` (streamed, never whole in
    memory), dropping each working table once no later output needs it.  Returns the files and
    the small tables built in Python."""
    dev = "NULL" if device is None else str(device)
    con.execute(
        "CREATE OR REPLACE TABLE used AS SELECT hw_idx AS idx FROM device_tasks WHERE hw_idx IS NOT NULL "
        "UNION ALL SELECT op_idx FROM device_tasks WHERE op_idx IS NOT NULL "
        "UNION ALL SELECT plane_idx FROM device_tasks WHERE plane_idx IS NOT NULL "
        "UNION ALL SELECT idx FROM kd_match UNION ALL SELECT idx FROM host_ops "
        "UNION ALL SELECT idx FROM api_calls"
    )
    # (output, query, working tables no later output reads)
    steps = [
        (
            "comm_ops",
            f"SELECT * REPLACE (coalesce(device, {dev}) AS device) FROM ({_comm.comm_ops_sql()})",
            ("cj", "hccl_op"),
        ),
        ("trace_slices", _trace.slices_sql("used") + " ORDER BY start_ns", ("x", "used")),
        ("counters", _trace.counters_sql(device), ("tr_cv", "counter_units", "procs")),
        ("device_tasks", "SELECT * FROM device_tasks ORDER BY task_uid", ("device_tasks",)),
        ("host_ops", "SELECT * FROM host_ops ORDER BY op_id", ("host_ops",)),
        ("api_calls", "SELECT * FROM api_calls ORDER BY call_id", ("api_calls",)),
        (
            "launches",
            "SELECT * FROM launches ORDER BY task_uid, link, host_op_id NULLS FIRST, api_call_id NULLS FIRST",
            ("launches",),
        ),
        ("steps", "SELECT * FROM steps ORDER BY step", ("steps",)),
    ] + [(t, f"SELECT * REPLACE (coalesce(device, {dev}) AS device) FROM {t}", (t,)) for t in made]
    keep = {"comm_groups"} | {t for _, _, dropped in steps for t in dropped}
    _drop_tables(con, lambda name: name not in keep)
    files = _write_outputs(con, steps, out_dir)
    extra = {}
    links = _comm.comm_links_table(inputs, con)
    if links is not None:
        extra["comm_links"] = links
    extra["run_info"] = _meta.run_info(cfg, folder, device)
    return files, extra


def _write_outputs(con, steps: list, out_dir: str) -> dict[str, str]:
    """Each output of ``steps`` (name, query, working tables no later output reads) written to an
    Arrow IPC file, two at a time, each thread on a cursor of its own: most of an output's time is
    one sort or join on one core.  The outputs are awaited in order and a step's working tables
    dropped once it is written, so no table goes while an earlier step may still read it and
    memory is given back in the serial order."""
    local = threading.local()
    with cursors(con, 2) as made:
        free = list(made)  # taken here, closed by cursors()

        def take() -> None:  # each of the pool's two threads, once
            local.cur = free.pop()

        def write(name: str, sql: str) -> str:
            rel = local.cur.sql(sql)
            drop = [c for c in _INTERNAL.get(name, ()) if c in rel.columns]
            if drop:
                rel = local.cur.sql(f"SELECT * EXCLUDE ({', '.join(drop)}) FROM ({sql})")
            return _write_ipc(rel, os.path.join(out_dir, f"{name}.arrow"))

        files = {}
        with ThreadPoolExecutor(2, initializer=take) as pool:
            written = [pool.submit(write, name, sql) for name, sql, _ in steps]
            try:
                for (name, _, gone), fut in zip(steps, written):
                    files[name] = fut.result()
                    _drop_tables(con, lambda t, gone=gone: t in gone)
            except BaseException:
                for fut in written:  # one failed (out of memory): write no more
                    fut.cancel()
                raise
    return files


def _drop_tables(con, which) -> None:
    for (name,) in con.sql("SELECT table_name FROM duckdb_tables() WHERE NOT temporary").fetchall():
        if which(name):
            con.execute(f'DROP TABLE IF EXISTS "{name}"')


def _write_ipc(rel, path: str) -> str:
    reader = rel.to_arrow_reader(1 << 17)
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, reader.schema) as writer:
        for batch in reader:
            writer.write_batch(batch)
    return path


_recognise = _torch_npu.recogniser(sniff, "text")


IMPORTER = Importer(
    name=FORMAT,
    shape="folder",
    recognise=_recognise,
    doc="torch_npu text export: a rank folder whose ASCEND_PROFILER_OUTPUT holds CSV/JSON deliverables",
    hint=lambda name: name.endswith("_ascend_pt"),
    export="text",
    layout=_torch_npu.LAYOUT,
)

__all__ = ["VERSION", "FORMAT", "IMPORTER", "sniff", "load_rank"]
