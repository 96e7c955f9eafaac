"""The pre-pass of a Kineto trace: what the cluster view needs of a rank -- its steps, its
device tasks (for the step breakdown) and its collectives -- without building every table.

A Kineto job has no per-rank summaries (torch_npu's ``step_trace_time.csv`` and
``communication.json`` have no counterpart), so its summary tier reads the traces, but takes
out of the one parse (``load_raw``) only the device pass (kernels, copies, collectives), the
runtime calls (for each kernel's launch time, which decides its step as in the full import)
and the ``ProfilerStep#N`` ranges.  Not built: the framework ops and their JSON arguments
(the largest pass: about 30% of a full import), the host-device links, the counters, the trace
slices, memory and the rest of the events.  ``host_ops`` holds the step markers alone.

The collectives take their type, group and size from the kernel's own arguments (``Collective
name``, ``Process Group Name``, ``In msg nelems``, ``dtype``: what current PyTorch writes) or the
kernel name; the full import also consults the launching host op, which only old traces need.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pyarrow as pa

from .. import chrome_trace
from .._common import close_duck, duck, temp_folder
from ..base import RankData, RankSource
from . import _bare, _events, _runinfo, _sql, _tables

#: the option value of a rank source loaded by this pre-pass (``("tier", STEPS)``)
STEPS = "steps"
#: the host events the pre-pass reads: the step markers, and the host side of the collectives
#: (``record_param_comms`` and the ``nccl:all_to_all``-style annotations, whose arguments name the
#: collective where an older kernel name -- ``ncclKernel_SendRecv`` -- does not)
_HOST_NAMES = r"^ProfilerStep#\d+$|^record_param_comms$|^(nccl|rccl|gloo|c10d):"


def sources(run_sources) -> tuple[RankSource, ...]:
    """The rank sources of a Kineto job in the pre-pass tier (their own cache entries: the
    options are part of the key)."""
    return tuple(RankSource(s.format, s.path, s.files, s.rank_hint, (*s.options, ("tier", STEPS))) for s in run_sources)


def tier_note(root, n: int):
    """The run's one note: what the pre-pass read and what it left out."""
    from ... import diagnostics as dg

    return dg.info(
        "summary-tier",
        f"the {n} Kineto ranks come from a pre-pass over their traces: steps, device tasks (kernels, copies) "
        "and collectives; the framework ops, API-call links, memory, counters and trace slices were not built",
        file=root,
        fix="load one trace itself (profinsight.load(<trace>)) for its host side and timeline, or tier='full' "
        "(CLI: profinsight ranks --tier full) for every rank's tables",
    )


class Full(NamedTuple):
    """The full import's helpers the pre-pass shares, handed in by the package (which imports this
    module: importing them from it would be a circle)."""

    base_ns: Callable
    duck_error: Callable
    limit_memory: Callable
    rank: Callable
    stepped: Callable
    unreadable: Callable


def load(source: RankSource, full: Full) -> RankData:
    """Steps, device tasks, collectives and run_info of one Kineto trace (see the module doc)."""
    _base_ns, _duck_error, _limit_memory, _rank, _stepped, _unreadable = full
    path = Path(source.files[0] if source.files else source.path)
    with temp_folder("kineto") as tmp:
        try:
            if chrome_trace.form(path) == "array":
                ex = _bare.extract_array(path, Path(tmp))
            else:
                ex = chrome_trace.extract(path, Path(tmp), in_place=True)
        except (chrome_trace.ReadError, OSError) as exc:
            return RankData(source.rank_hint, diagnostics=[_unreadable(path, exc)])
        con = duck(macros=False)
        try:
            _limit_memory(con, Path(tmp))
            _sql.install(con)
            try:
                base = _base_ns(ex.meta.get("baseTimeNanoseconds"))
                legacy, _ = _events.load_raw(con, ex.events_path, base, ex.span, resync=False)
            except (_duck_error(), _events.Malformed) as exc:
                return RankData(
                    source.rank_hint,
                    diagnostics=[
                        _unreadable(path, f"the event list is not valid JSON ({exc}); tier='full' salvages it")
                    ],
                )
            finally:
                ex.release()
            host = _step_markers(con, legacy)
            _tables.read_api(con)  # registered as `api`: the launch times
            rocm = bool(con.execute("SELECT count(*) FROM api WHERE starts_with(name, 'hip')").fetchall()[0][0])
            dev = _tables.read_dev(con, "RCCL" if rocm else "NCCL", legacy)
            _launches(con)
            _collectives(con)
            tables = _stepped(con, host, dev)
            f = _facts(con, rocm)
            tables["run_info"] = _runinfo.run_info(ex.meta, f, path)
            for name in ("host", "api", "dev"):
                con.unregister(name)
            return RankData(_rank(ex.meta, source), tables=tables)
        finally:
            close_duck(con)


def _step_markers(con, legacy: bool) -> pa.Table:
    """The host pass of the step markers and the collectives' host ops alone (the full pass, with
    every framework op's arguments, is what this pre-pass saves): ``raw`` is narrowed to them
    behind a view while the host pass reads it."""
    con.execute("ALTER TABLE raw RENAME TO raw_all")
    try:
        con.execute(f"CREATE TEMP VIEW raw AS SELECT * FROM raw_all WHERE regexp_matches(name, '{_HOST_NAMES}')")
        host = _tables.read_host(con, legacy)
    finally:
        con.execute("DROP VIEW IF EXISTS raw")
        con.execute("ALTER TABLE raw_all RENAME TO raw")
    return host


def _launches(con) -> None:
    """``task_launch(task_uid, call_id, launch_ns)``: each device task's launching runtime call, by
    correlation id (as the full import's links; the host-side links are not built)."""
    con.execute("""
    CREATE OR REPLACE TEMP TABLE task_launch AS
      SELECT d.task_uid, arg_min(a.call_id, a.start_ns) AS call_id, min(a.start_ns) AS launch_ns
      FROM dev d JOIN api a ON d.connection_id = a.connection_id
      GROUP BY d.task_uid""")


def _collectives(con) -> None:
    """``comm``, the table ``_comm`` reads the collectives from, in the full import's order of
    priority (kernel arguments, the launching host op's, the annotation's name, the kernel name);
    the host op of a collective kernel is the one with its External id around its launch, else the
    innermost around its launching call on the same thread -- among the collectives' host ops."""
    con.execute("""
    CREATE OR REPLACE TEMP TABLE comm_host AS
    WITH k AS (
      SELECT d.task_uid, d.external_id, t.launch_ns, a.pid, a.thread
      FROM dev d LEFT JOIN task_launch t ON t.task_uid = d.task_uid LEFT JOIN api a ON a.call_id = t.call_id
      WHERE d.kind = 'communication'),
    ext AS (
      SELECT k.task_uid, h.op_id FROM k JOIN host h ON h.external_id = k.external_id
      WHERE h.category IN ('op', 'annotation') AND k.launch_ns BETWEEN h.start_ns AND h.start_ns + h.dur_ns
      QUALIFY row_number() OVER (PARTITION BY k.task_uid ORDER BY h.start_ns DESC, h.dur_ns, h.op_id) = 1),
    enc AS (
      SELECT k.task_uid, h.op_id FROM k JOIN host h ON h.pid = k.pid AND h.thread = k.thread
      WHERE k.task_uid NOT IN (SELECT task_uid FROM ext)
        AND k.launch_ns BETWEEN h.start_ns AND h.start_ns + h.dur_ns AND NOT regexp_matches(h.name, '^ProfilerStep#')
      QUALIFY row_number() OVER (PARTITION BY k.task_uid ORDER BY h.start_ns DESC, h.dur_ns, h.op_id) = 1)
    SELECT * FROM ext UNION ALL SELECT * FROM enc""")
    con.execute("""
    CREATE OR REPLACE TEMP TABLE comm AS
    SELECT d.task_uid, d.device, d.name, d.start_ns, d.dur_ns,
      coalesce(comm_type(d.coll_name), comm_type(h.coll_name),
               comm_type(regexp_extract(h.name, '^(?:nccl|rccl|gloo|c10d):+(\\w+)', 1)), d.type) AS type,
      coalesce(d."group", h.coll_group) AS "group",
      coalesce(d.coll_count, h.coll_count) AS count,
      coalesce(d.coll_dtype, h.coll_dtype) AS data_type
    FROM dev d LEFT JOIN comm_host l ON l.task_uid = d.task_uid LEFT JOIN host h ON h.op_id = l.op_id
    WHERE d.kind = 'communication'""")


def _facts(con, rocm: bool) -> _runinfo.Facts:
    f = _runinfo.Facts(rocm=rocm)
    f.device_tasks, f.main_device = con.execute("SELECT count(*), mode(device) FROM dev").fetchall()[0]
    f.api_calls = con.execute("SELECT count(*) FROM api").fetchall()[0][0]
    f.host_ops = con.execute(
        f"SELECT count(*) FROM raw WHERE ph = 'X' AND cat IN {_events.cats(_events.HOST_CATS)}"
    ).fetchall()[0][0]
    f.first_ns, f.last_ns = con.execute(
        "SELECT min(start_ns), max(start_ns + dur_ns) FROM raw WHERE ph <> 'M'"
    ).fetchall()[0]
    f.span_start_ns, f.span_end_ns = con.execute("""
        SELECT min(start_ns), max(start_ns + dur_ns) FROM raw
        WHERE ph = 'X' AND cat = 'Trace' AND starts_with(name, 'PyTorch Profiler')""").fetchall()[0]
    return f
