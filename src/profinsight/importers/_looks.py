"""What a file that no importer reads looks like, and what profinsight reads instead -- for the
message of a path where no profile was found (``doctor`` and ``load`` say it).

Cheap, like ``recognise``: the name, the first bytes (decompressed where gzip), the header line of
a CSV, the table names of a SQLite file.  It never decides whether a file is a profile (the
importers do); it only puts words on what was seen.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

from ._cann_db import table_names

_HEAD = 64 << 10

#: (file name pattern, what it is, what to load instead)
_BY_NAME = (
    (r"\.(nsys-rep|qdrep)$", "an NVIDIA Nsight Systems report (binary)", "a PyTorch profiler trace (Kineto JSON)"),
    (r"\.ncu-rep$", "an NVIDIA Nsight Compute report (binary)", "a PyTorch profiler trace (Kineto JSON)"),
    (r"\.(pftrace|perfetto-trace)$", "a Perfetto protobuf trace", "a Chrome-trace JSON (Kineto) of the same run"),
    (r"\.xplane\.pb$", "a TensorFlow / JAX profiler capture (XPlane protobuf)", "a PyTorch profiler trace"),
    (r"\.(pt|pth|ckpt|safetensors)$", "a model checkpoint, not a profile", "the profiler's output folder or trace"),
)
#: msprof / torch_npu deliverables that are views or parts of a larger export: (name pattern, what)
_PARTS = (
    (r"^task_time_.*\.(csv|json)$", "an msprof task_time view (the timeline's hardware tasks; part of a collection)"),
    (r"^hccl_.*\.json$", "an msprof HCCL view (part of a collection's timeline)"),
    (r"^op_statistic.*\.csv$", "per-type sums of kernels (part of a torch_npu or msprof export)"),
    (r"^api_statistic.*\.csv$", "per-API sums (part of a torch_npu or msprof export)"),
    (r"^step_trace_time\.csv$", "torch_npu's step summary (part of a rank folder)"),
    (r"^communication(_matrix)?\.json$", "torch_npu's communication summary (part of a rank folder)"),
    (
        r"^(operator_details|operator_memory|memory_record|npu_module_mem|l2_cache)\.csv$",
        "a torch_npu deliverable (part of a rank folder's ASCEND_PROFILER_OUTPUT)",
    ),
    (r"^profiler_(info|metadata).*\.json$", "torch_npu's collection metadata (part of a rank folder)"),
    (r"^analysis\.db$", "torch_npu's analysis.db (a rank folder's step and communication summaries)"),
    (
        r"^msprof(_slice_\d+)?(_\d+)+\.json$",
        "an msprof timeline (part of a PROF_* collection: device_<n>/timeline/ or mindstudio_profiler_output/)",
    ),
    (r"^step_trace(_\d+)+\.(json|csv)$", "an msprof step trace (part of a PROF_* collection)"),
    (
        r"^(info\.json|start_info|end_info|sample\.json)(\.\d+)?(\.done)?$",
        "msprof's record of a device or host of a collection (part of a PROF_* folder)",
    ),
    (
        r"^(cluster_communication(_matrix)?\.json|communication_group\.json)$",
        "an msprof-analyze cluster summary (part of cluster_analysis_output/)",
    ),
)
#: what the parts above say to load instead (discovery names the folder where it finds one)
PART_OF = "the whole folder it came from"
_MEMORY_FIX = (
    "memory is read from a profiler trace: torch.profiler.profile(profile_memory=True) exported with "
    "export_chrome_trace (Kineto), or torch_npu's export (memory_record.csv / the DB)"
)


def looks_like(path: Path) -> tuple[str, str | None]:
    """(what ``path`` looks like, what profinsight reads instead or None)."""
    name = path.name
    for pattern, what, instead in _BY_NAME:
        if re.search(pattern, name, re.IGNORECASE):
            return what, instead
    for pattern, what in _PARTS:
        if re.match(pattern, name):
            return what, PART_OF
    head = _head(path)
    if head is None:
        return "unreadable", None
    if head[:1] == b"\x80" and (name.lower().endswith((".pickle", ".pkl")) or b"segments" in head[:4096]):
        return "a PyTorch CUDA memory snapshot (a pickle, as torch.cuda.memory._dump_snapshot writes)", _MEMORY_FIX
    if head.startswith(b"SQLite format 3\x00"):
        return _sqlite(path)
    text = head.decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    if text[:1] in "{[":
        return _json(text, path)
    first = text.split("\n", 1)[0]
    if first.count(",") >= 1 and name.lower().endswith(".csv"):
        cols = [c.strip().strip('"') for c in first.split(",")][:6]
        return f"a CSV with columns {', '.join(cols)}", None
    if not head:
        return "an empty file", None
    if b"\x00" in head[:4096]:
        return "a binary file", None
    return "a text file", None


def _head(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as f:
            raw = f.read(_HEAD)
        if raw[:2] == b"\x1f\x8b":
            with gzip.open(path, "rb") as f:
                return f.read(_HEAD)
        return raw
    except (OSError, EOFError, gzip.BadGzipFile):
        return None


def _sqlite(path: Path) -> tuple[str, str | None]:
    tables = sorted(table_names(path) or ())
    if any(t.startswith("CUPTI_ACTIVITY_KIND") for t in tables):
        return "an Nsight Systems SQLite export", "a PyTorch profiler trace (Kineto JSON)"
    shown = ", ".join(tables[:6]) + (", ..." if len(tables) > 6 else "") if tables else "none"
    return f"a SQLite database with tables {shown}", None


def _json(text: str, path: Path) -> tuple[str, str | None]:
    if '"nodes"' in text and '"schema"' in text:
        return (
            "a PyTorch execution trace (ExecutionTraceObserver / Chakra: the graph, not timings)",
            "the Kineto trace collected with it (torch.profiler with execution_trace_observer writes both)",
        )
    if '"traceEvents"' in text:
        return "a Chrome-trace JSON without PyTorch (Kineto) or Ascend events", None
    if text[:1] == "[":
        return "a JSON array (not Chrome-trace events of a format profinsight reads)", None
    try:
        keys = list(json.loads(path.read_bytes() if path.stat().st_size < _HEAD else b"{}"))
    except (OSError, ValueError):
        keys = re.findall(r'"([^"]{1,40})"\s*:', text[:2000])[:6]
    if not keys:
        return "a JSON object", None
    return f"a JSON object with keys {', '.join(map(str, keys[:6]))}", None


def describe(path: Path) -> str:
    """``name: what it looks like``, for a message."""
    what, _ = looks_like(path)
    return f"{path.name}: {what}"
