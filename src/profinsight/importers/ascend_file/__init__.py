"""A lone torch_npu deliverable: ``trace_view.json``, ``kernel_details.csv`` or the DB export
``ascend_pytorch_profiler*.db`` given by itself, not inside its ``*_ascend_pt`` rank folder (how single files are shared in issue threads; the
vendor's viewer opens a bare ``trace_view.json``) -> the canonical tables of one rank.

Why through the text importer: the file is exactly what :mod:`..ascend_text` reads from a rank
folder, so the same pieces read it.  The file is linked (copied where links are not allowed)
under the name the export gives it into a temporary rank folder of its own, the text (or DB)
importer loads that folder, and what comes back names the original file again.  Its "missing
file" notes become one warning that says what the lone file cannot give (steps from
``step_trace_time.csv`` / kernel_details, memory, communication analysis, ...) and which layout
would give the rest.

Recognised by content (the file name is a hint only): ``trace_view.json`` is a bare Chrome-trace
array whose first events are torch_npu's (framework events with the timestamp written as a quoted
decimal, or CANN's process names); ``kernel_details.csv`` a CSV whose header has ``Name``,
``Accelerator Core`` and ``Start Time(us)``; the DB a SQLite file with torch_npu's ``PYTORCH_API``
and CANN's ``TASK`` tables (any name: a copy is often renamed).
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
from pathlib import Path

import pyarrow as pa

from ... import diagnostics as dg
from ...errors import NotAProfile
from .. import ascend_db, ascend_text, chrome_trace
from .._cann_db import table_names
from .._common import temp_folder
from ..ascend_text import _files
from ..base import Importer, RankData, RankSource, Recognised

VERSION = "3"  # 3: flows bound by content on ties (ascend_text 7); 2: a lone torch_npu DB
FORMAT = "ascend_file"

#: the deliverables that can be read alone, by the name the text export gives them
TRACE, KERNELS = _files.TRACE, _files.KERNELS

#: framework events of torch_npu's trace: its timestamps are quoted decimals (Kineto writes numbers)
_NPU_EVENT = re.compile(
    rb'"cat"\s*:\s*"(?:cpu_op|python_function|user_annotation|async_npu|HostToDevice)"[^{}]*?"ts"\s*:\s*"\d+\.\d+"'
    rb'|"ts"\s*:\s*"\d+\.\d+"[^{}]*?"cat"\s*:\s*"(?:cpu_op|python_function|user_annotation|async_npu|HostToDevice)"'
)
#: CANN's process names in a trace (with the file name as the hint)
_CANN_PROCESS = re.compile(rb'"name"\s*:\s*"(?:Ascend Hardware|CANN|AscendCL|Overlap Analysis)"')
_KD_HEADER = ({"Name"}, {"Accelerator Core"}, {"Start Time(us)"})
#: msprof's op_summary_*.csv: kernel_details.csv before torch_npu renamed its headers (reference 4.3)
_OP_SUMMARY_HEADER = ({"Op Name"}, {"Task Type"}, {"Task Start Time(us)"})
#: the kind of a lone op_summary: read as kernel_details (the kernel reader knows both spellings)
OP_SUMMARY = "op_summary"
#: the kind of a lone torch_npu DB export (read by the DB importer under its export name)
DB = "ascend_pytorch_profiler.db"
_DB_TABLES = {"PYTORCH_API", "TASK", "STRING_IDS"}


def _kind(path: Path) -> str | None:
    """Which deliverable ``path`` holds (``TRACE`` / ``KERNELS``), by content; None for neither."""
    try:
        with open(path, "rb") as f:
            first = f.read(8192)
    except OSError:
        return None
    if first.startswith(b"SQLite format 3\x00"):
        return DB if _DB_TABLES <= (table_names(path) or set()) else None
    if first[:2] == b"\x1f\x8b" or first.lstrip(b" \t\r\n\xef\xbb\xbf")[:1] == b"[":
        if chrome_trace.form(path) != "array":
            return None
        head = chrome_trace.head(path, 64 << 10)
        if _NPU_EVENT.search(head) or (path.name == TRACE and _CANN_PROCESS.search(head)):
            return TRACE
        return None
    line = first.split(b"\n", 1)[0].decode("utf-8", "replace").lstrip("\ufeff").strip()
    cols = {c.strip().strip('"') for c in line.split(",")}
    if all(cols & need for need in _KD_HEADER):
        return KERNELS
    if all(cols & need for need in _OP_SUMMARY_HEADER):
        return OP_SUMMARY
    return None


def _recognise(path: Path) -> Recognised | None:
    path = Path(path)
    if path.name not in (TRACE, KERNELS) and path.suffix.lower() not in (".json", ".csv", ".gz", ".db"):
        return None
    kind = _kind(path)
    if kind is None:
        return None
    if path.parent.name == _files.OUTPUT and (
        _files.rank_folder(path.parent) is not None or ascend_db.sniff(path.parent.parent) is not None
    ):
        return Recognised(problem=_inside_export(path))
    if kind == OP_SUMMARY and path.parent.name == "mindstudio_profiler_output":
        return None  # part of an msprof export: the msprof importer reads the folder
    return Recognised(RankSource(format=FORMAT, path=path, files=(path,), options=(("holds", kind),)))


def _inside_export(path: Path) -> NotAProfile:
    """A deliverable inside its export's output folder: the whole rank folder is the profile."""
    folder = path.parent.parent
    return NotAProfile(
        f"{path.name} is part of the torch_npu export in {folder}",
        file=path,
        fix=f"load the rank folder {folder} (it holds {_files.OUTPUT}/ and reads every file in it)",
    )


IMPORTER = Importer(
    name=FORMAT,
    shape="file",
    recognise=_recognise,
    doc="a lone torch_npu trace_view.json, kernel_details.csv or ascend_pytorch_profiler*.db, outside its "
    "*_ascend_pt rank folder, or a lone msprof op_summary_*.csv",
    hint=lambda name: name in (TRACE, KERNELS) or name.startswith(("op_summary", "ascend_pytorch_profiler")),
)

#: what each missing deliverable would have given, for the lone-file warning
_GIVES = {
    TRACE: "host ops, launches, API calls and the timeline",
    KERNELS: "kernel types, shapes, formats and PMU metrics, and the steps of each kernel",
    "step_trace_time.csv": "the vendor's step breakdown",
    _files.OPERATORS: "host/device self times of the framework ops",
    _files.MEMORY_RECORD: "memory",
    _files.COMMUNICATION: "the communication analysis (transit/wait split, bandwidth)",
    _files.COMM_MATRIX: "the rank-to-rank link matrix",
    "profiler_info_<rank>.json": "the rank id, profiler level and versions",
}


def load_rank(source: RankSource) -> RankData:
    """The tables the lone file holds, read by the text importer, plus what the rest would give."""
    path = Path(source.path)
    kind = dict(source.options).get("holds") or _kind(path) or TRACE
    as_name = KERNELS if kind == OP_SUMMARY else kind
    with temp_folder("file") as tmp:
        folder = Path(tmp) / "rank_ascend_pt"
        out = folder / _files.OUTPUT
        out.mkdir(parents=True)
        _place(path, out / as_name)
        if kind == DB:
            wal = path.with_name(path.name + "-wal")
            if wal.is_file():  # pending changes: the DB importer reads them from a copy
                _place(wal, out / (as_name + "-wal"))
            rd = ascend_db.load_rank(RankSource(format="ascend_db", path=folder, files=(out / as_name,)))
        else:
            rd = ascend_text.load_rank(RankSource(format=ascend_text.FORMAT, path=folder, files=(out / as_name,)))
        diags = [_renamed(d, str(out / as_name), str(path), str(folder)) for d in rd.diagnostics]
    kept = [d for d in diags if d.code not in ("missing-file", "no-profiler-info", "no-comm-analysis")]
    rd.diagnostics = [_lone_file(path, kind, rd.rank)] + kept
    info = rd.tables.get("run_info")
    if info is not None and info.num_rows:
        rd.tables["run_info"] = info.set_column(
            info.schema.get_field_index("path"), "path", pa.array([str(path)] * info.num_rows, pa.string())
        )
    return rd


def _place(src: Path, dst: Path) -> None:
    try:
        os.symlink(src.resolve(), dst)
    except OSError:  # no links here (some Windows setups): a copy reads the same
        shutil.copyfile(src, dst)


def _renamed(d: dg.Diagnostic, linked: str, original: str, folder: str) -> dg.Diagnostic:
    """A diagnostic of the temporary rank folder, naming the user's file instead."""
    f = d.file
    if f == linked:
        f = original
    elif f and f.startswith(folder):
        f = None
    return dataclasses.replace(d, file=f, message=d.message.replace(linked, original).replace(folder, "."))


def _lone_file(path: Path, kind: str, rank) -> dg.Diagnostic:
    if kind == OP_SUMMARY:
        return _lone_op_summary(path, rank)
    if kind == DB:
        return dg.warning(
            "lone-file",
            f"{path.name} (torch_npu's DB export of one rank) was given alone, outside its rank folder: loaded every "
            "table it holds (device tasks, host ops, launches, API calls, steps, memory, collectives). Missing, "
            "with what each would give: analysis.db (the communication analysis: transit / wait split, the link "
            "matrix, the vendor's step summary); profiler_info_<rank>.json (the profiler level, versions and "
            "configuration).",
            file=path,
            fix="Load the whole rank folder instead: <name>_ascend_pt/ with profiler_info_<rank>.json and "
            "ASCEND_PROFILER_OUTPUT/ (ascend_pytorch_profiler_<rank>.db, analysis.db).",
            rank=rank,
        )
    missing = [f"{name} ({gives})" for name, gives in _GIVES.items() if name != kind]
    holds = (
        "the timeline tables (host ops, device tasks seen in the trace, launches, API calls, counters)"
        if kind == TRACE
        else "device_tasks (kernels with their types, shapes and PMU metrics)"
    )
    return dg.warning(
        "lone-file",
        f"{path.name} was given alone, outside its torch_npu rank folder: loaded {holds}. "
        f"Missing, with what each would give: {'; '.join(missing)}.",
        file=path,
        fix="Load the whole rank folder instead: <name>_ascend_pt/ with profiler_info_<rank>.json and "
        "ASCEND_PROFILER_OUTPUT/ (trace_view.json, kernel_details.csv, step_trace_time.csv, ...), or the "
        "folder that holds every rank folder.",
        rank=rank,
    )


def _lone_op_summary(path: Path, rank) -> dg.Diagnostic:
    return dg.warning(
        "lone-file",
        f"{path.name} (msprof's op summary) was given alone: loaded device_tasks (kernels with their op types, "
        "shapes and PMU metrics, and the HCCL ops it lists). Missing, with what each would give: the "
        "msprof_*.json timeline (the other device tasks, communication tasks, CANN API calls, the timeline); "
        "step_trace_* (the iterations as steps: op_summary has no step column); info.json.<n> / start_info.<n> "
        "(the rank, host and clock).",
        file=path,
        fix="Load the whole msprof collection instead: PROF_<id>_<time>_<hash>/ with its device_<n>/ folders and "
        "mindstudio_profiler_output/ (msprof_*.json, op_summary_*.csv, step_trace_*).",
        rank=rank,
    )


__all__ = ["VERSION", "FORMAT", "IMPORTER", "load_rank"]
