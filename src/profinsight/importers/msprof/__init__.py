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
from ..base import Importer, RankData, RankSource, Recognised
from . import _layout as L
from . import _timeline as T

VERSION = "1"
FORMAT = "msprof"
PROF_RE = L.PROF_RE

#: internal columns dropped before the tables are handed out
_INTERNAL = ("hw_task_type",)


# -- recognise ------------------------------------------------------------------------------
def _recognise(path: Path) -> Recognised | None:
    if L.is_device_folder(path):
        return _device(path)
    if not (PROF_RE.match(path.name) or L.holds_collection(path)):
        return None
    devices = [d for d in L.device_folders(path) if L.is_device_folder(d)]
    if any(L.timeline_files(d) for d in devices):
        return None  # entered: each exported device folder is a rank
    return Recognised(problem=_never_exported(path, devices))


def _device(device: Path) -> Recognised:
    timelines = L.timeline_files(device)
    if not timelines:
        prof = device.parent if L.holds_collection(device.parent) else device
        return Recognised(problem=_never_exported(prof, [device]))
    files = [*timelines, *L.step_trace_files(device)]
    files += [f for f in (L.info_file(device), L.start_file(device), L.end_file(device)) if f is not None]
    source = RankSource(format=FORMAT, path=device, files=tuple(files), rank_hint=L.rank_of(device))
    return Recognised(source=source)


def _never_exported(prof: Path, devices: list[Path]):
    """Why a collection without ``timeline/`` cannot be read, and the call that fixes it."""
    if (prof / "mindstudio_profiler_output").is_dir():
        return UnsupportedFormat(
            f"{prof.name} is a CANN msprof collection exported to mindstudio_profiler_output/, a layout "
            "profinsight does not read yet",
            file=prof,
            fix=f"export the per-device timeline as well: {L.export_command(prof)} (it writes device_<n>/timeline/)",
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
    """All canonical tables of one device folder, plus what the doctor found."""
    device_dir = Path(source.path)
    device = L.device_number(device_dir)
    rank = source.rank_hint if source.rank_hint is not None else L.rank_of(device_dir)
    diags: list[dg.Diagnostic] = []
    timelines = L.timeline_files(device_dir)
    step_traces = L.step_trace_files(device_dir)
    clock = L.clock(device_dir)
    info = L.read_json(L.info_file(device_dir))
    off = "0" if clock.offset_ns is None else str(int(clock.offset_ns))

    con = duck(threads=1)
    try:
        reads = T.read_files(con, timelines, step_traces)
        for path, read in reads:
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
        T.build_work(con)
        seen = T.counts(con)
        T.build_tasks(con, off, device)
        steps = con.sql(T.steps_sql(off)).to_arrow_table()
        tasks = con.sql("SELECT * FROM dt").to_arrow_table()
        tasks = _with_steps(tasks, steps)
        con.register("dt_steps", tasks)
        comm = con.sql(T.comm_ops_sql().replace("FROM dt ", "FROM dt_steps ")).to_arrow_table()
        slices = con.sql(T.slices_sql(off)).to_arrow_table()
    finally:
        close_duck(con)

    tasks = tasks.drop_columns([c for c in _INTERNAL if c in tasks.column_names])
    diags += _diagnostics(device_dir, rank, clock, seen, step_traces)
    tables = {
        "device_tasks": tasks,
        "steps": steps,
        "comm_ops": comm,
        "trace_slices": slices,
        "run_info": _run_info(device_dir, device, info, clock, steps),
    }
    return RankData(rank=rank, tables=tables, diagnostics=diags)


def _with_steps(tasks: pa.Table, steps: pa.Table) -> pa.Table:
    """Each task's step: the iteration whose device range contains its start."""
    step = earliest_containing(
        tasks.column("start_ns"), steps.column("device_start_ns"), steps.column("device_end_ns"), steps.column("step")
    )
    return tasks.append_column("step", step)


def _run_info(device_dir: Path, device: int, info: dict, clock: L.Clock, steps: pa.Table) -> pa.Table:
    dev_info = next(
        (d for d in info.get("DeviceInfo") or [] if isinstance(d, dict) and d.get("id") == device),
        None,
    )
    versions = {k: str(info[k]) for k in ("version", "platform_version") if info.get(k) not in (None, "")}
    versions = {("msprof_info" if k == "version" else k): v for k, v in versions.items()}
    extra = {
        "collection": device_dir.parent.name,
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
        "path": str(device_dir),
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
        "has_memory": False,
    }
    types = {
        "device": pa.int32(),
        "world_size": pa.int64(),
        "collect_start_ns": pa.int64(),
        "collect_end_ns": pa.int64(),
    }
    types.update({k: pa.bool_() for k in ("has_host_ops", "has_stack", "has_memory")})
    return pa.table({k: pa.array([v], types.get(k, pa.string())) for k, v in row.items()})


def _diagnostics(device_dir: Path, rank: int, clock: L.Clock, seen: dict, step_traces: list[Path]) -> list:
    out = [
        dg.info(
            "msprof-no-host-ops",
            "an msprof collection records the device and CANN only: no framework (PyTorch / MindSpore) "
            "operators, Python stacks or memory, so the host-side views (host ops, launch gaps, per-op "
            "device time, memory) stay empty",
            file=device_dir,
            fix="profile with the framework's profiler to get host operators: torch_npu.profiler (PyTorch, "
            "activities=[CPU, NPU]) or mindspore.Profiler (MindSpore); both run msprof underneath",
            rank=rank,
        )
    ]
    if clock.offset_ns is None:
        out.append(
            dg.warning(
                "msprof-clock-unconverted",
                "start_info / end_info are missing or unreadable: timestamps stay on the device's monotonic "
                "clock (seconds since boot), so they cannot be lined up with other ranks or wall time",
                file=device_dir,
                fix="copy the collection with its start_info.<n> / end_info.<n> files",
                rank=rank,
            )
        )
    if not seen["iters"]:
        named = step_traces[0].name if step_traces else "step_trace_*.json"
        out.append(
            dg.info(
                "msprof-no-iterations",
                f"{named}: no iteration is recorded (no step trace: single-op mode, or not exported), so "
                "there are no steps and the step views show the whole capture",
                file=device_dir / "timeline",
                fix="collect a graph-mode model with step trace on (msprof --task-time=on; the default)",
                rank=rank,
            )
        )
    elif seen["models"] > 1:
        out.append(
            dg.warning(
                "msprof-several-models",
                f"the step trace holds {seen['models']} models; their iterations share step numbers",
                file=device_dir / "timeline",
                fix="compare the models' iterations in the timeline (each model has its own Step Trace lane)",
                rank=rank,
            )
        )
    others = [
        d.name
        for d in L.device_folders(device_dir.parent)
        if d != device_dir and L.is_device_folder(d) and not L.timeline_files(d)
    ]
    if others:
        prof = device_dir.parent
        out.append(
            dg.warning(
                "msprof-not-exported",
                f"{', '.join(others)} of {prof.name} hold raw data only (never exported): those ranks are not loaded",
                file=prof,
                fix=f"run {L.export_command(prof)}, then load {prof.name} again",
                rank=rank,
            )
        )
    return out


IMPORTER = Importer(
    name=FORMAT,
    shape="folder",
    recognise=_recognise,
    doc="CANN msprof collection (PROF_*): each exported device_<n>/timeline is a rank",
    hint=lambda name: bool(PROF_RE.match(name) or re.match(r"^device_\d+$", name)),
)
