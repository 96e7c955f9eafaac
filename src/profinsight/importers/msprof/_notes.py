"""What the doctor says about an msprof rank: what the collection lacks (host operators, the
clock pair, iterations), devices never exported, and for the ``mindstudio_profiler_output/``
layout which deliverables were read and which were not."""

from __future__ import annotations

from pathlib import Path

from ... import diagnostics as dg
from . import _layout as L
from . import _output as O


def diagnostics(plan, rank: int, clock: L.Clock, seen: dict, typed: tuple[int, int]) -> list:
    device_dir, step_traces, where = plan.device_dir, plan.step_traces, plan.where
    here = device_dir or where
    out = _output_notes(plan, rank, typed) + [
        dg.info(
            "msprof-no-host-ops",
            "an msprof collection records the device and CANN only: no framework (PyTorch / MindSpore) "
            "operators, Python stacks or framework (PTA) memory, so the host-side views (host ops, launch gaps, per-op "
            "device time, the framework allocator's memory) stay empty",
            file=here,
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
                file=here,
                fix="copy the collection with its device_<n>/ folders (start_info.<n> / end_info.<n>)",
                rank=rank,
            )
        )
    if not seen["iters"]:
        named = step_traces[0].name if step_traces else "step_trace_*"
        out.append(
            dg.info(
                "msprof-no-iterations",
                f"{named}: no iteration is recorded (no step trace: single-op mode, or not exported), so "
                "there are no steps and the step views show the whole capture",
                file=where,
                fix="collect a graph-mode model with step trace on (msprof --task-time=on; the default)",
                rank=rank,
            )
        )
    elif seen["models"] > 1:
        out.append(
            dg.warning(
                "msprof-several-models",
                f"the step trace holds {seen['models']} models; their iterations share step numbers",
                file=where,
                fix="compare the models' iterations in the timeline (each model has its own Step Trace lane)",
                rank=rank,
            )
        )
    if device_dir is not None and plan.layout == "timeline":
        out += _unexported_siblings(device_dir, rank)
    return out


def _unexported_siblings(device_dir: Path, rank: int) -> list:
    others = [
        d.name
        for d in L.device_folders(device_dir.parent)
        if d != device_dir and L.is_device_folder(d) and not L.timeline_files(d)
    ]
    if not others:
        return []
    prof = device_dir.parent
    return [
        dg.warning(
            "msprof-not-exported",
            f"{', '.join(others)} of {prof.name} hold raw data only (never exported): those ranks are not loaded",
            file=prof,
            fix=f"run {L.export_command(prof)}, then load {prof.name} again",
            rank=rank,
        )
    ]


def _output_notes(plan, rank: int, typed: tuple[int, int]) -> list:
    """What an output-folder export gave and lacks: op types from op_summary, the summaries not read."""
    if plan.layout != "output":
        return []
    out = []
    rows, matched = typed
    if not plan.op_summary:
        out.append(
            dg.info(
                "msprof-no-op-summary",
                f"{O.OUTPUT}/ has no op_summary_*.csv: the kernels' op types, shapes and formats are not "
                "recorded in the timeline, so the views by op type show the kernel names",
                file=plan.where,
                fix="export with the summaries on (msprof --export=on; op_summary is written by default)",
                rank=rank,
            )
        )
    elif matched < rows:
        out.append(
            dg.warning(
                "msprof-op-summary-unmatched",
                f"{rows - matched} of the {rows} op_summary rows of this device match no kernel of the "
                "timeline (by stream, task id and order): their types are not applied",
                file=plan.op_summary[0],
                fix="export the collection again so that the timeline and op_summary come from one export",
                rank=rank,
            )
        )
    skipped = O.others(plan.where)
    if skipped:
        said = "; ".join(f"{k}_*: {why}" for k, why in skipped.items())
        out.append(
            dg.info(
                "msprof-output-not-read",
                f"deliverables of {O.OUTPUT}/ that are not read: {said}",
                file=plan.where,
                rank=rank,
            )
        )
    if plan.device_dir is None:
        out.append(
            dg.info(
                "msprof-output-alone",
                f"{O.OUTPUT}/ came without the collection's device_<n>/ folders: rank 0, no host or clock "
                "information from info.json / start_info",
                file=plan.where,
                fix="load the whole PROF_* folder (device_<n>/ beside mindstudio_profiler_output/)",
                rank=rank,
            )
        )
    return out
