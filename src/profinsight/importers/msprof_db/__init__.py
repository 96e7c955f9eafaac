"""Importer for CANN msprof's SQLite export (``msprof_*.db``, given as a file) -> the canonical
tables of one rank.

Why through the torch_npu DB importer's pieces: an msprof DB holds the same CANN tables as
torch_npu's ``ascend_pytorch_profiler_*.db`` (``TASK``, ``COMPUTE_TASK_INFO``,
``COMMUNICATION_TASK_INFO``, ``COMMUNICATION_OP``, ``CANN_API``, ``STRING_IDS``, ``HBM`` / ``LLC``
...) and none of the PyTorch ones (``PYTORCH_API``, ``STEP_TIME``, ``MEMORY_RECORD``), so
:mod:`..ascend_db`'s reader and table builders read it unchanged; this package only opens the
file, adds what only msprof records (``NPU_OP_MEM`` -> memory, :mod:`._memory`) and says what the
DB cannot show.

How it is opened: ``immutable=1``, or from a temporary copy where a non-empty ``-wal`` lies beside
it (:mod:`.._cann_db`); no file is ever created beside the user's DB.  ``OVERLAP_ANALYSIS`` is read
as the torch_npu DB reads it (:mod:`..ascend_db.overlap`): the profiler's into the timeline, a
viewer's (``status_info`` present) not at all.

Recognised by content (the ``msprof*.db`` name is a hint only): a SQLite file with ``TASK`` and
``STRING_IDS`` and without ``PYTORCH_API`` (a torch_npu DB is read with its rank folder).
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pyarrow as pa

from ... import diagnostics as dg
from .._cann_db import open_export, table_names
from ..ascend_db import comm, damage, device, host, memory, overlap, run_info
from ..ascend_db.damage import guarded
from ..ascend_db.reader import Db
from ..base import Importer, RankData, RankSource, Recognised
from ._memory import load_op_memory

VERSION = "4"  # 4: untimed tasks out of waits and steps, damaged counter samples skipped (shared DB readers); 3: damaged values, rows and columns read as null / left out and counted; 2: the profiler's OVERLAP_ANALYSIS read into trace_slices
FORMAT = "msprof_db"

_NAME_RE = re.compile(r"^msprof.*\.db$", re.IGNORECASE)
#: what makes a SQLite file an msprof export, and what makes it torch_npu's instead
_NEEDS = {"TASK", "STRING_IDS"}
_TORCH_NPU = "PYTORCH_API"

HOST_FIX = (
    "profile the script with torch_npu.profiler (PyTorch; activities=[CPU, NPU], "
    "experimental_config=_ExperimentalConfig(export_type=ExportType.Db) writes ascend_pytorch_profiler_<rank>.db "
    "with these tables and the framework ones) or mindspore.Profiler (MindSpore)"
)


def _recognise(path: Path) -> Recognised | None:
    path = Path(path)
    if not path.is_file():
        return None
    tables = table_names(path)
    if tables is None or not _NEEDS <= tables or _TORCH_NPU in tables:
        return None
    return Recognised(RankSource(format=FORMAT, path=path, files=_files(path)))


def _files(path: Path) -> tuple[Path, ...]:
    """The DB and its ``-wal`` where there is one (pending changes are part of what is read)."""
    wal = path.with_name(path.name + "-wal")
    return (path, wal) if wal.is_file() else (path,)


IMPORTER = Importer(
    name=FORMAT,
    shape="file",
    recognise=_recognise,
    doc="a CANN msprof SQLite export (msprof_*.db): TASK / COMPUTE_TASK_INFO / ... without the PyTorch tables",
    hint=lambda name: bool(_NAME_RE.match(name)),
    export="db",
)


def load_rank(source: RankSource) -> RankData:
    """Read one msprof DB into canonical tables (not yet conformed: see ``RankData.finish``)."""
    path = Path(source.path)
    data = RankData(source.rank_hint)
    try:
        with open_export(path) as opened:
            if opened.wal_ignored:
                data.diagnostics.append(
                    dg.info(
                        "db-wal-ignored",
                        "the DB has a -wal file with pending changes, but it could not be copied to a temporary "
                        "folder to read them: the DB was read without them",
                        file=path,
                        fix="free space in the temporary folder (TMPDIR), or copy the DB with its -wal file "
                        "to a writable place and load the copy",
                    )
                )
            with Db(opened.con, path) as db:
                _load(db, data)
    except sqlite3.Error as exc:
        data.diagnostics.append(
            dg.error(
                "db-unreadable",
                f"cannot read the SQLite DB: {exc}",
                file=path,
                fix="check that the file is a complete SQLite file (was the export interrupted?) and readable",
                rank=data.rank,
            )
        )
    return data


def _load(db: Db, data: RankData) -> None:
    rank, dev = _identity(db)
    if data.rank is None:
        data.rank = rank
    data.diagnostics += damage.diagnostics(db.findings, db.path, data.rank)
    db.read_ahead(host.api_reads(db) + device.reads(db) + memory.reads(db))  # in the loaders' order
    call_of, node_start = guarded(data, db.path, "CANN_API (api_calls)", host.load_api_calls, db, data) or ({}, {})
    device.load_device(db, data, node_start, {})
    guarded(data, db.path, "the launch links (launches)", host.load_launches, data, host.NO_OWNED, call_of)
    guarded(data, db.path, "COMMUNICATION_OP (comm_ops)", comm.load_comm_ops, db, None, data)
    guarded(data, db.path, "the memory tables", memory.load_memory, db, data)
    guarded(data, db.path, "NPU_OP_MEM (memory)", load_op_memory, db, data)
    guarded(data, db.path, "the counter tables (counters)", memory.load_counters, db, data)
    guarded(
        data,
        db.path,
        "OVERLAP_ANALYSIS (trace_slices)",
        lambda: overlap.load_overlap(db, data, viewer_code="msprof-db-viewer-overlap"),
    )
    run_info.load_run_info(db, data, db.path, {}, {}, data.rank, dev)
    info = data.tables["run_info"]
    data.tables["run_info"] = info.set_column(
        info.schema.get_field_index("source_format"), "source_format", pa.array([FORMAT], pa.string())
    )
    _diagnose(db, data)


def _identity(db: Db) -> tuple[int | None, int | None]:
    """(rank, device): ``RANK_DEVICE_MAP`` where the DB has one (-1 = not set); else no rank,
    and the device where every task ran on one."""
    rank = dev = None
    if db.has("RANK_DEVICE_MAP"):
        rows = db.rows("SELECT rankId, deviceId FROM RANK_DEVICE_MAP")
        if rows:
            rank = rows[0][0] if rows[0][0] is not None and rows[0][0] >= 0 else None
            dev = rows[0][1] if rows[0][1] is not None and rows[0][1] >= 0 else None
    if dev is None and db.col("TASK", "deviceId"):
        devices = [d for (d,) in db.rows("SELECT DISTINCT deviceId FROM TASK") if d is not None]
        dev = devices[0] if len(devices) == 1 else None
    return rank, dev


def _diagnose(db: Db, data: RankData) -> None:
    """What the DB cannot show, and what to collect instead."""
    out, rank = data.diagnostics, data.rank
    for table, lost, make in (
        ("TASK", "device tasks: kernels, communication tasks, utilisation and idle gaps", dg.warning),
        ("STRING_IDS", "every name in the DB", dg.error),
    ):
        if not db.has(table):
            out.append(
                make(
                    "table-missing",
                    f"table {table} is missing: no {lost}",
                    file=db.path,
                    fix="export the collection again with a current CANN: msprof --export=on --output=<PROF_DIR>",
                    rank=rank,
                )
            )
    out.append(
        dg.info(
            "msprof-db-no-host-ops",
            "an msprof DB records CANN and the device only: no framework (PyTorch / MindSpore) operators, "
            "Python call stacks or framework memory, so host ops, framework-op launches and per-op device "
            "time are empty (CANN API calls and their launches are read)",
            file=db.path,
            fix=HOST_FIX,
            rank=rank,
        )
    )
    steps = data.tables.get("steps")
    if steps is None or steps.num_rows == 0:
        out.append(
            dg.info(
                "no-steps",
                "no step marks (the DB has no STEP_TIME rows): per-step views show the whole capture",
                file=db.path,
                fix="mark the iterations: with torch_npu.profiler, call prof.step() once per training iteration",
                rank=rank,
            )
        )
    tasks = data.tables.get("device_tasks")
    n_comm = 0 if tasks is None else int(pa.compute.sum(pa.compute.equal(tasks["kind"], "comm_task")).as_py() or 0)
    if n_comm and not db.count("COMMUNICATION_OP"):
        out.append(
            dg.info(
                "msprof-db-no-collectives",
                f"{n_comm} communication tasks were recorded but COMMUNICATION_OP is empty: no collectives, so "
                "comm_ops and the communication rows of device_tasks are empty (the tasks are kept as comm_task)",
                file=db.path,
                fix="export the collection again (msprof --export=on --output=<PROF_DIR>); the collectives are written "
                "by the export, not collected separately",
                rank=rank,
            )
        )


__all__ = ["VERSION", "IMPORTER", "FORMAT", "load_rank"]
