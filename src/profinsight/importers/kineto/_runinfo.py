"""``run_info`` and the doctor's findings for one Kineto trace.

Why here and not in SQL: both read a handful of counts and the small top-level object
(``deviceProperties``, ``distributedInfo``, ``baseTimeNanoseconds`` ...), nothing per event.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from ... import diagnostics as dx

#: top-level keys that hold software versions
VERSION_KEYS = (
    "schemaVersion",
    "cuda_runtime_version",
    "cuda_driver_version",
    "cupti_version",
    "hip_version",
    "rocm_version",
    "torch_version",
    "pytorch_version",
    "kineto_version",
)
#: top-level keys that run_info already holds in its own columns
OWN_KEYS = {"traceEvents", "deviceProperties", "distributedInfo", "baseTimeNanoseconds", "record_shapes", *VERSION_KEYS}


@dataclass
class Facts:
    """Counts gathered from the loaded tables (one query, see ``facts``)."""

    device_tasks: int = 0
    host_ops: int = 0
    api_calls: int = 0
    profiler_ranges: int = 0
    memory_events: int = 0
    python_events: int = 0
    shapes: int = 0
    stacks: int = 0
    modules: int = 0
    rocm: bool = False
    main_device: int | None = None
    first_ns: int | None = None
    last_ns: int | None = None
    span_start_ns: int | None = None
    span_end_ns: int | None = None


def facts(con) -> Facts:
    f = Facts()
    (f.device_tasks, f.main_device) = con.execute("SELECT count(*), mode(device) FROM dev").fetchall()[0]
    (f.host_ops, f.python_events, f.shapes, f.stacks, f.modules) = con.execute("""
        SELECT count(*), count(*) FILTER (category = 'python'),
               count(input_shapes) FILTER (category = 'op'),
               count(call_stack), count(module_hierarchy)
        FROM host""").fetchall()[0]
    (f.api_calls, hip) = con.execute("SELECT count(*), count(*) FILTER (starts_with(name, 'hip')) FROM api").fetchall()[
        0
    ]
    f.rocm = bool(hip)
    (f.profiler_ranges, f.memory_events) = con.execute("""
        SELECT count(*) FILTER (ph = 'X' AND cat = 'cuda_profiler_range'),
               count(*) FILTER (ph IN ('i', 'I') AND name = '[memory]')
        FROM ev""").fetchall()[0]
    (f.first_ns, f.last_ns) = con.execute("""
        SELECT min(s), max(e) FROM (
          SELECT min(start_ns) AS s, max(start_ns + dur_ns) AS e FROM ev WHERE ph <> 'M'
          UNION ALL SELECT min(start_ns), max(start_ns + dur_ns) FROM host
          UNION ALL SELECT min(start_ns), max(start_ns + dur_ns) FROM api
          UNION ALL SELECT min(start_ns), max(start_ns + dur_ns) FROM dev)""").fetchall()[0]
    (f.span_start_ns, f.span_end_ns) = con.execute("""
        SELECT min(start_ns), max(start_ns + dur_ns) FROM ev
        WHERE ph = 'X' AND cat = 'Trace' AND starts_with(name, 'PyTorch Profiler')""").fetchall()[0]
    return f


def run_info(meta: dict, f: Facts, path) -> pa.Table:
    props = meta.get("deviceProperties") or []
    dist = meta.get("distributedInfo") or {}
    device = f.main_device
    if device is None and props and isinstance(props[0], dict):
        device = props[0].get("id")
    name = next((p.get("name") for p in props if isinstance(p, dict) and p.get("id") == device), None)
    if name is None and props and isinstance(props[0], dict):
        name = props[0].get("name")
    acts = ["CPU"] if f.host_ops or f.api_calls else []
    if f.device_tasks or f.api_calls or f.profiler_ranges:
        acts.append("ROCm" if f.rocm or "AMD" in str(name or "") else "CUDA")
    versions = {k: meta[k] for k in VERSION_KEYS if k in meta}
    for k in ("nccl_version", "backend"):
        if k in dist:
            versions[k if k != "backend" else "distributed_backend"] = dist[k]
    shapes = meta.get("record_shapes")
    row = {
        "device": device,
        "source_format": "kineto",
        "device_family": "gpu" if len(acts) > (1 if "CPU" in acts else 0) else "cpu",
        "export_kind": "trace",
        "path": str(path),
        "activities": ",".join(acts) or None,
        "record_shapes": bool(shapes) if shapes is not None else f.shapes > 0,
        "profile_memory": f.memory_events > 0,
        "with_stack": f.python_events > 0 or f.stacks > 0,
        "with_modules": f.modules > 0,
        "versions": json.dumps(versions, sort_keys=True),
        "device_name": name,
        "host": _host_from_name(path),
        "world_size": _count(dist.get("world_size")),
        "collect_start_ns": f.span_start_ns if f.span_start_ns is not None else f.first_ns,
        "collect_end_ns": f.span_end_ns if f.span_end_ns is not None else f.last_ns,
        "extra": json.dumps(
            {k: v for k, v in meta.items() if k not in OWN_KEYS}
            | {
                "distributedInfo": dist,
                "deviceProperties": props,
                "baseTimeNanoseconds": meta.get("baseTimeNanoseconds"),
            },
            sort_keys=True,
            default=str,
        ),
    }
    return pa.Table.from_pylist([row])


def _count(value) -> int | None:
    """A world size as written, when it is one (1 .. int32): a damaged value reads as unknown."""
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 < value < 1 << 31
    return value if ok else None


def invalid_fields(meta: dict, rank, info: pa.Table, path) -> list:
    """A ``distributedInfo.rank`` or ``world_size`` that is written but unusable (``10**30``, a
    negative number, text): ignored, and said -- the rank then comes from the file's place in
    the run, the world size is unknown."""
    dist = meta.get("distributedInfo")
    if not isinstance(dist, dict):
        return []
    written = {
        "rank": (dist.get("rank"), rank is not None and str(rank) == str(dist.get("rank")).strip()),
        "world_size": (dist.get("world_size"), info.column("world_size")[0].as_py() is not None),
    }
    out = []
    for key, (value, used) in written.items():
        if value is None or used:
            continue
        text = repr(value)
        shown = text if len(text) <= 40 else text[:37] + "..."
        out.append(
            dx.warning(
                "meta-field-invalid",
                f"{Path(path).name}: field 'distributedInfo.{key}' = {shown} is not of the expected type or range "
                "(an integer, 0 .. 2^31 for a rank, 1 .. 2^31 for a world size); ignored.",
                path,
                fix="The trace was damaged or edited after it was written: copy or export it again.",
            )
        )
    return out


_HANDLER_NAME = re.compile(r"^(?P<host>.+)_\d+\.\d+\.pt\.trace\.json(\.gz)?$")


def _host_from_name(path) -> str | None:
    """tensorboard_trace_handler names files ``{hostname}_{pid}.{epoch_ms}.pt.trace.json``;
    the trace itself records no host."""
    m = _HANDLER_NAME.match(Path(path).name)
    return m.group("host") if m else None


def doctor(meta: dict, f: Facts, steps: int, rank, path) -> list:
    """Findings about what the trace lacks, each with what it disables and the fix."""
    out = []
    if not f.device_tasks:
        if f.profiler_ranges:
            what = (
                f"only CUPTI profiler ranges ({f.profiler_ranges} `cuda_profiler_range` "
                "events, a counter-collection run) and no kernel activity"
            )
        else:
            what = "no GPU activity at all (a CPU-only trace)"
        out.append(
            dx.warning(
                "no-device-activity",
                f"The trace records {what}: device_tasks, launches, comm_ops and every device view "
                "(step breakdown, utilization, idle gaps, kernels, collectives) will be empty; host "
                "ops and API calls are loaded.",
                path,
                fix="Profile with CUDA activity: torch.profiler.profile(activities=[ProfilerActivity.CPU, "
                "ProfilerActivity.CUDA]) and without a CUPTI range-profiler config.",
            )
        )
    if not steps:
        out.append(
            dx.info(
                "no-steps",
                "No ProfilerStep#N ranges: the trace is treated as one unnamed window; "
                "per-step views are empty and step columns are null.",
                path,
                fix="Use torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, warmup=1, "
                "active=3), ...) and call prof.step() once per training iteration.",
            )
        )
    if rank is None:
        out.append(
            dx.info(
                "no-rank-id",
                "The trace records no distributedInfo.rank; it is loaded as rank 0.",
                path,
                fix="Record with torch.distributed initialised (the profiler then writes "
                "distributedInfo), or give each rank's file a distinct name.",
            )
        )
    if f.host_ops and not f.shapes and not meta.get("record_shapes"):
        out.append(
            dx.info(
                "no-shapes",
                "Input shapes were not recorded: host_ops.input_shapes is empty and "
                "shape-based grouping is unavailable.",
                path,
                fix="Pass record_shapes=True to torch.profiler.profile.",
            )
        )
    base = meta.get("baseTimeNanoseconds")
    if base is None and f.first_ns is not None and f.first_ns < 10**18:
        out.append(
            dx.warning(
                "relative-time",
                "The trace has no baseTimeNanoseconds and its timestamps are not "
                "epoch times: times are relative, so ranks cannot be aligned by wall clock.",
                path,
                fix="Export the trace again with a current PyTorch (it writes baseTimeNanoseconds); "
                "a trace cut short loses it, as it is written after the events.",
            )
        )
    return out


def truncation(ex, events: int, path) -> list:
    """The warning for a trace cut short: how much was dropped and what was kept."""
    if not ex.truncated:
        return []
    total = max(ex.total_bytes, 1)
    why = ex.stream_error or (
        "the JSON text ends after the event list, in the keys that follow it"
        if ex.array_closed
        else "the JSON text ends inside the event list"
    )
    pct = 100.0 * ex.lost_bytes / total
    missing = (
        " Metadata written after the events (baseTimeNanoseconds, distributedInfo, "
        "deviceProperties in some versions) is missing."
        if ex.suffix_missing
        else ""
    )
    return [
        dx.warning(
            "trace-truncated",
            f"The trace is incomplete: {why}. Read {events} events from the first "
            f"{ex.kept_bytes:,} bytes; dropped the last {ex.lost_bytes:,} bytes ({pct:.2f}% of the "
            f"{ex.total_bytes:,} bytes read) and whatever the full file held after them.{missing}",
            path,
            fix="Copy or export the trace again from its source; the profiler was probably "
            "stopped or the copy interrupted while writing.",
        )
    ]
