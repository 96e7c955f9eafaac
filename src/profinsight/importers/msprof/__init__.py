"""Importer for CANN ``msprof`` collections (``PROF_<id>_<time>_<hash>/``): each exported
``device_<n>/`` folder is one rank -> the canonical tables.

What is read (:mod:`._layout` says where things are, :mod:`._timeline` does the SQL):
``device_<n>/timeline/msprof_*.json`` (every event of every iteration, through the shared
Chrome-trace reader), ``step_trace_*.json`` (the iterations -> steps), ``info.json.<n>``
(rank, host, device) and ``start_info.<n>`` / ``end_info.<n>`` (the clock pairs that put the
device's monotonic timestamps on the wall clock).  ``task_time_*`` and ``hccl_*`` repeat events of
``msprof_*`` and are never read.

How discovery sees a collection: a ``device_<n>`` folder with an exported ``timeline/`` is a
rank folder; the ``PROF_*`` folder above it is entered (so several devices are several ranks of
one run, grouped by their common parent).  A collection none of whose devices was exported is
recognised and refused with the export command.  An msprof collection records the device and
CANN only: no host (PyTorch / MindSpore) operators are claimed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa

from ... import diagnostics as dg
from ...errors import UnsupportedFormat
from .._common import close_duck, duck
from .._steps import earliest_containing
from ..ascend_text._sql import install as install_text_macros
from ..base import Importer, RankData, RankSource, Recognised
from ..chrome_trace import damage
from . import _comm as C
from . import _devices as D
from . import _layout as L
from . import _memory as M
from . import _notes as N
from . import _output as O
from . import _summaries as S
from . import _timeline as T

VERSION = "4"  # 4: damaged events dropped and counted, copies kept once; 3: the output layout's memory CSVs and communication analysis; 2: the mindstudio_profiler_output layout
FORMAT = "msprof"
PROF_RE = L.PROF_RE

#: internal columns dropped before the tables are handed out
_INTERNAL = ("hw_task_type",)


# -- recognise ------------------------------------------------------------------------------
def _recognise(path: Path) -> Recognised | None:
    if L.is_device_folder(path):
        return _device(path)
    if path.name == O.OUTPUT:
        out = O.output_folder(path)
        prof = path.parent
        devices = [d for d in L.device_folders(prof) if L.is_device_folder(d)]
        return _output_ranks(out, devices) if out is not None else None
    if not (PROF_RE.match(path.name) or L.holds_collection(path)):
        return None
    devices = [d for d in L.device_folders(path) if L.is_device_folder(d)]
    if any(L.timeline_files(d) for d in devices):
        return None  # entered: each exported device folder is a rank
    out = O.output_folder(path)
    if out is not None:
        return _output_ranks(out, devices)
    return Recognised(problem=_never_exported(path, devices))


def _output_ranks(out: Path, devices: list[Path]) -> Recognised:
    """The ranks of a ``mindstudio_profiler_output/`` export: one per device of the collection
    (every device's events are in the same files), or one where no device folder came along."""
    files = O.flat(O.parts(out, O.TIMELINE, "json"))
    files += O.flat(O.parts(out, O.STEP_TRACE, "json")) + O.flat(O.parts(out, O.STEP_TRACE, "csv"))
    files += O.flat(O.parts(out, O.OP_SUMMARY, "csv"))
    files += [f for group in M.files(out).values() for f in group]
    files += [f for f in C.files(out) if f is not None]
    sources = []
    for d in devices or [None]:
        own = [] if d is None else [f for f in (L.info_file(d), L.start_file(d), L.end_file(d)) if f is not None]
        options = (
            ("layout", "output"),
            ("device_dir", "" if d is None else str(d)),
            ("devices", ",".join(str(L.device_number(x)) for x in devices)),
        )
        rank = 0 if d is None else L.rank_of(d)
        sources.append(RankSource(FORMAT, path=out, files=tuple(files + own), rank_hint=rank, options=options))
    if len(sources) == 1:
        return Recognised(source=sources[0])
    return Recognised(sources=tuple(sources))


def _device(device: Path) -> Recognised:
    timelines = L.timeline_files(device)
    if not timelines:
        prof = device.parent if L.holds_collection(device.parent) else device
        out = O.output_folder(prof)
        if out is not None:  # exported to the collection's output folder: this device of it
            found = _output_ranks(out, [device])
            return found
        return Recognised(problem=_never_exported(prof, [device]))
    files = [*timelines, *L.step_trace_files(device)]
    files += [f for f in (L.info_file(device), L.start_file(device), L.end_file(device)) if f is not None]
    source = RankSource(format=FORMAT, path=device, files=tuple(files), rank_hint=L.rank_of(device))
    return Recognised(source=source)


def _never_exported(prof: Path, devices: list[Path]):
    """Why a collection without ``timeline/`` cannot be read, and the call that fixes it."""
    if (prof / O.OUTPUT).is_dir():
        return UnsupportedFormat(
            f"{prof.name} is a CANN msprof collection whose {O.OUTPUT}/ holds no msprof_*.json timeline "
            "(the export was interrupted, or only summaries were kept)",
            file=prof,
            fix=f"export it again: {L.export_command(prof)}; profinsight reads {O.OUTPUT}/msprof_*.json with "
            "op_summary_*.csv and step_trace_*, or device_<n>/timeline/",
        )
    what = ", ".join(d.name for d in devices) or "no device_<n> folder"
    # UnsupportedFormat, as every recognised input that cannot be read: raw msprof records are a
    # format profinsight knows and does not decode; the export turns them into one it reads
    return UnsupportedFormat(
        f"{prof.name} is a CANN msprof collection whose raw data was never exported ({what}: no timeline/ "
        "folder); once exported it loads as one rank per device with its device tasks (kernels, HCCL "
        "communication and its tasks), one step per iteration, and the collectives",
        file=prof,
        fix=f"run {L.export_command(prof)} (CANN toolkit; it writes device_<n>/timeline/ and summary/), then load "
        "the PROF_* folder again",
    )


# -- load -----------------------------------------------------------------------------------
def load_rank(source: RankSource) -> RankData:
    """All canonical tables of one device folder (or of one device of an output folder), plus
    what the doctor found."""
    opts = dict(source.options)
    if opts.get("layout") == "output":
        return _load(source, _OutputPlan(Path(source.path), opts))
    return _load(source, _TimelinePlan(Path(source.path)))


class _TimelinePlan:
    """``device_<n>/timeline/``: one file per model and iteration."""

    def __init__(self, device_dir: Path):
        self.device_dir, self.device = device_dir, L.device_number(device_dir)
        self.timelines = L.timeline_files(device_dir)
        self.step_traces = L.step_trace_files(device_dir)
        self.step_csv: list[Path] = []
        self.op_summary: list[Path] = []
        self.split = False  # the CSV summaries are not filtered: this layout has none
        self.keep_host = True
        self.shared, self.lowest = False, True  # the folder's own timeline: a process of no known device is its own
        self.where = device_dir / "timeline"
        self.layout = "timeline"
        self.collection = device_dir.parent.name


class _OutputPlan:
    """``mindstudio_profiler_output/``: one timeline (maybe sliced) of every device, with the
    CSV summaries; the device folder (if it came along) gives the rank, clock and info."""

    def __init__(self, out: Path, opts: dict):
        self.device_dir = Path(opts["device_dir"]) if opts.get("device_dir") else None
        devices = [int(d) for d in opts.get("devices", "").split(",") if d]
        self.device = L.device_number(self.device_dir) if self.device_dir is not None else 0
        self.timelines = O.parts(out, O.TIMELINE, "json")
        self.step_traces = O.flat(O.parts(out, O.STEP_TRACE, "json"))
        self.step_csv = O.flat(O.parts(out, O.STEP_TRACE, "csv"))
        self.op_summary = O.flat(O.parts(out, O.OP_SUMMARY, "csv"))
        self.split = len(devices) > 1  # several devices share the files: keep this one's events
        self.keep_host = not devices or self.device == min(devices)
        self.shared, self.lowest = self.split, self.keep_host
        self.where = out
        self.layout = "output"
        self.collection = out.parent.name


def _load(source: RankSource, plan) -> RankData:
    device_dir, device = plan.device_dir, plan.device
    rank = source.rank_hint if source.rank_hint is not None else (L.rank_of(device_dir) if device_dir else 0)
    diags: list[dg.Diagnostic] = []
    clock = L.clock(device_dir) if device_dir is not None else L.Clock(None, None)
    info = L.read_json(L.info_file(device_dir)) if device_dir is not None else {}

    con = duck(threads=1)
    try:
        install_text_macros(con)
        reads = T.read_files(con, plan.timelines, plan.step_traces)
        for path, read in reads:
            if read.skipped_places:
                diags.append(
                    dg.warning(
                        "malformed-events",
                        read.describe_skipped(path.name) + ".",
                        file=path,
                        fix="export the collection again (msprof --export=on --output=PROF_DIR)",
                        rank=rank,
                    )
                )
            if read.truncated:
                code = "trace-invalid" if read.events == 0 else "trace-truncated"
                diags.append(
                    dg.warning(
                        code,
                        read.describe(path.name) if read.events else f"{path.name} is unreadable ({read.error})",
                        file=path,
                        fix="export the collection again (msprof --export=on --output=PROF_DIR)",
                        rank=rank,
                    )
                )
        diags += _damaged_events(con, plan, rank)
        S.load_step_trace_csv(con, plan.step_csv, device if plan.split else None, rank, diags)
        if plan.split or plan.layout == "timeline":
            diags += D.keep_device(con, device, plan.keep_host, plan.shared, plan.lowest, plan.where, rank)
        clock = _wall_clock(con, clock)
        off = "0" if clock.offset_ns is None else str(int(clock.offset_ns))
        T.build_work(con)
        seen = T.counts(con)
        T.build_tasks(con, off, device)
        typed = S.load_op_summary(con, plan.op_summary, device if plan.split else None, rank, diags)
        if typed[1]:
            S.apply_op_summary(con)
        steps = con.sql(T.steps_sql(off)).to_arrow_table()
        tasks = con.sql("SELECT * FROM dt").to_arrow_table()
        tasks = _with_steps(tasks, steps)
        con.register("dt_steps", tasks)
        ops_sql = T.comm_ops_sql().replace("FROM dt ", "FROM dt_steps ")
        extra: dict[str, pa.Table] = {}
        if plan.layout == "output":
            extra = M.load(con, plan.where, device if plan.split else None, device, off, rank, diags)
            if C.load(con, plan.where, plan.split, off, rank, diags):
                ops_sql = C.comm_ops_sql().replace("{ops}", ops_sql).replace("{device}", str(int(device)))
                extra["comm_links"] = con.sql(C.links_sql()).to_arrow_table()
        comm = con.sql(ops_sql).to_arrow_table()
        slices = con.sql(T.slices_sql(off)).to_arrow_table()
    finally:
        close_duck(con)

    tasks = tasks.drop_columns([c for c in _INTERNAL if c in tasks.column_names])
    diags += N.diagnostics(plan, rank, clock, seen, typed)
    tables = {
        "device_tasks": tasks,
        "steps": steps,
        "comm_ops": comm,
        "trace_slices": slices,
        "run_info": _run_info(plan, info, clock, steps),
        **extra,
    }
    return RankData(rank=rank, tables=tables, diagnostics=diags)


def _damaged_events(con, plan, rank) -> list[dg.Diagnostic]:
    """One warning per file and kind of damaged event (dropped: an unusable time, duration, pid
    or phase; kept once: exact copies), as the other Chrome-trace importers say them."""
    numbered = [(no, g[0] if isinstance(g, tuple) else g) for no, g in enumerate(plan.timelines)]
    numbered += [(len(plan.timelines) + k, p) for k, p in enumerate(plan.step_traces)]
    out = []
    for no, path in numbered:
        for code, message in damage.describe_losses(T.losses(con, no), Path(path).name):
            out.append(dg.warning(code, message, file=path, fix=damage.FIX, rank=rank))
    return out


def _wall_clock(con, clock: L.Clock) -> L.Clock:
    """Timestamps already on the wall clock (epoch us, as current CANN writes them) need no
    conversion; monotonic ones (seconds since boot) take the clock pair's offset."""
    first = con.sql("SELECT min(mono_ns) FROM ms_x").fetchall()[0][0]
    if first is not None and first > EPOCH_NS:
        return L.Clock(0, "epoch", clock.begin_ns, clock.end_ns, clock.drift_ns)
    return clock


#: a timestamp past 2001-09-09 (1e18 ns since the epoch) is on the wall clock, not since boot
EPOCH_NS = 10**18


def _with_steps(tasks: pa.Table, steps: pa.Table) -> pa.Table:
    """Each task's step: the iteration whose device range contains its start."""
    step = earliest_containing(
        tasks.column("start_ns"), steps.column("device_start_ns"), steps.column("device_end_ns"), steps.column("step")
    )
    return tasks.append_column("step", step)


def _run_info(plan, info: dict, clock: L.Clock, steps: pa.Table) -> pa.Table:
    device_dir, device = plan.device_dir, plan.device
    dev_info = next(
        (d for d in info.get("DeviceInfo") or [] if isinstance(d, dict) and d.get("id") == device),
        None,
    )
    versions = {k: str(info[k]) for k in ("version", "platform_version") if info.get(k) not in (None, "")}
    versions = {("msprof_info" if k == "version" else k): v for k, v in versions.items()}
    extra = {
        "collection": plan.collection,
        "layout": plan.layout,
        "devices": info.get("devices"),
        "rank_id": info.get("rank_id"),
        "clock_source": clock.source,
        "clock_offset_ns": clock.offset_ns,
        "clock_drift_ns": clock.drift_ns,
        "pid": info.get("pid"),
        "pid_name": info.get("pid_name"),
        "os": info.get("OS"),
        "device_info": dev_info,
    }
    row = {
        "device": device,
        "source_format": FORMAT,
        "path": str(device_dir if device_dir is not None else plan.where),
        "activities": "NPU",
        "env": "{}",
        "versions": json.dumps(versions, sort_keys=True),
        "device_name": None,
        "host": info.get("hostname") or None,
        "world_size": None,
        "collect_start_ns": clock.begin_ns,
        "collect_end_ns": clock.end_ns,
        "extra": json.dumps(extra, sort_keys=True, default=str),
        "device_family": "npu",
        "export_kind": "trace",
        "has_host_ops": False,
        "has_stack": False,
        "has_memory": None,  # from the tables: the output layout's memory CSVs, where present
    }
    types = {
        "device": pa.int32(),
        "world_size": pa.int64(),
        "collect_start_ns": pa.int64(),
        "collect_end_ns": pa.int64(),
    }
    types.update({k: pa.bool_() for k in ("has_host_ops", "has_stack", "has_memory")})
    return pa.table({k: pa.array([v], types.get(k, pa.string())) for k, v in row.items()})


IMPORTER = Importer(
    name=FORMAT,
    shape="folder",
    recognise=_recognise,
    doc="CANN msprof collection (PROF_*): each exported device_<n>/timeline, or each device of its "
    "mindstudio_profiler_output/ (msprof_*.json, op_summary_*.csv, step_trace_*; sliced parts joined), is a rank",
    hint=lambda name: bool(PROF_RE.match(name) or re.match(r"^device_\d+$", name) or name == O.OUTPUT),
)
