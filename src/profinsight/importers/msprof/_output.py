"""Where things are in current CANN's ``mindstudio_profiler_output/`` layout of an msprof collection.

``msprof --export=on`` of a current CANN writes the deliverables of every device into one folder
beside the raw data (reference section 4.1)::

    PROF_<id>_<time>_<hash>/
      device_<n>/                     raw data, info.json.<n>, start_info.<n> / end_info.<n>
      host/
      analyze/                        communication.json, communication_matrix.json (:mod:`._comm`)
      mindstudio_profiler_output/
        msprof_<time>.json            every event of every device (a Chrome-trace array)
        op_summary_<time>.csv         one row per device task with its op type, shapes, PMU
        step_trace_<time>.csv/.json   the iterations (graph mode)
        npu_mem_<time>.csv ...        the memory CSVs (npu_mem, memory_record, operator_memory,
                                      npu_module_mem; :mod:`._memory`)
        task_time_<time>.csv ...      views of the same tasks (never read)

Files are named ``{name}_{time}.{csv|json}``; above a million rows a file is cut into
``{name}_slice_{k}_{time}.{csv|json}`` parts that together are the one file (the parts are read in
slice order, as one).  Several devices share each file: in the timeline the low 5 bits of a
device process's ``pid`` are its device (host processes carry 31), in the CSVs ``Device_id``.

Everything here is cheap (listings and the head of a file): discovery calls it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

OUTPUT = "mindstudio_profiler_output"
#: ``{name}_[slice_{k}_]{time...}.{ext}``: the slice number and the part that names the logical file
_PART = r"^{stem}_(?:slice_(\d+)_)?(\d[^/]*)\.{ext}$"
#: the deliverables of the layout that are read
TIMELINE, OP_SUMMARY, STEP_TRACE = "msprof", "op_summary", "step_trace"
#: every other deliverable msprof writes there, and why it is not read (for the diagnostics)
NOT_READ = {
    "task_time": "a view of the timeline's hardware tasks",
    "op_statistic": "per-type sums of op_summary (the op views compute them)",
    "api_statistic": "per-API sums of the timeline's CANN lanes",
    "communication_statistic": "per-collective sums of the HCCL lanes",
}


def _listing(folder: Path) -> list[str]:
    try:
        with os.scandir(folder) as it:
            return [e.name for e in it if e.is_file()]
    except OSError:
        return []


def parts(folder: Path, stem: str, ext: str) -> list[tuple[Path, ...]]:
    """The files ``{stem}_*.{ext}`` of ``folder``, each as the tuple of its slices in slice
    order (a file that was not cut is a tuple of one); ordered by the part that names them."""
    rx = re.compile(_PART.format(stem=re.escape(stem), ext=re.escape(ext)))
    groups: dict[str, list[tuple[int, str]]] = {}
    for name in _listing(folder):
        m = rx.match(name)
        if m:
            groups.setdefault(m.group(2), []).append((int(m.group(1) or 0), name))
    return [tuple(folder / n for _, n in sorted(groups[k])) for k in sorted(groups, key=_numeric_key)]


def _numeric_key(text: str):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


def output_folder(path: Path) -> Path | None:
    """The ``mindstudio_profiler_output`` folder ``path`` is or holds, where it has a timeline."""
    for folder in (path / OUTPUT, path):
        if folder.name == OUTPUT and folder.is_dir() and parts(folder, TIMELINE, "json"):
            return folder
    return None


def flat(groups: list[tuple[Path, ...]]) -> list[Path]:
    return [p for g in groups for p in g]


def others(folder: Path) -> dict[str, str]:
    """The deliverables present that are not read -> why (for the diagnostics)."""
    names = _listing(folder)
    out = {}
    for stem, why in NOT_READ.items():
        rx = re.compile(_PART.format(stem=re.escape(stem), ext="(?:csv|json)"))
        if any(rx.match(n) for n in names):
            out[stem] = why
    return out
