"""Importer for the torch_npu DB export: ``*_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler*.db``
(+ ``analysis.db``) -> the canonical tables of one rank.

Why SQLite through Python's ``sqlite3`` and not DuckDB's sqlite scanner: that extension
downloads itself at run time, which fails offline.  Each table is read whole (``fetchall``),
strings are resolved through one ``STRING_IDS`` dict, and Arrow tables are built column-wise.
The DB is opened so that nothing is ever written beside it (viewers write into these files, and
``mode=ro`` would still create ``-shm``/``-wal`` there): immutable, or a temporary copy with its
WAL where the ``-wal`` holds changes (:func:`.._common.open_sqlite_state`).

Modules: :mod:`.reader` (schema-tolerant access), :mod:`.device` (device_tasks, steps),
:mod:`.host` (host_ops, api_calls, launches, GC trace_slices), :mod:`.comm` (comm_ops, comm_links),
:mod:`.memory` (memory tables, counters), :mod:`.run_info` (run_info, diagnostics).
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from ... import diagnostics as dg
from .. import _torch_npu
from ..base import Importer, RankData, RankSource
from . import comm, damage, device, host, memory, overlap, run_info
from .damage import guarded
from .reader import Db, connect

VERSION = "7"  # 7: untimed tasks out of waits and steps, damaged counter samples skipped, implied tables said missing; 6: damaged values, rows and columns read as null / left out and counted; 5: the profiler's OVERLAP_ANALYSIS read; 4: versions from profiler_info; unnamed tasks named from the DB (3: Level0 types from names)

_DB_RE = re.compile(r"^ascend_pytorch_profiler(?:_(\d+))?\.db$")
_INFO_RE = re.compile(r"^profiler_info(?:_(\d+))?\.json$")


def sniff(path: Path) -> RankSource | None:
    """A rank folder holding ``ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler*.db``, else None."""
    path = Path(path)
    out_dir = path / "ASCEND_PROFILER_OUTPUT"
    if not path.is_dir() or not out_dir.is_dir():
        return None
    dbs = sorted(p for p in out_dir.iterdir() if _DB_RE.match(p.name) and p.is_file())
    if not dbs:
        return None
    files = [p for p in out_dir.iterdir() if p.is_file() and (p.name.endswith(".db") or p.name.endswith(".db-wal"))]
    files += [
        p for p in path.iterdir() if p.is_file() and (_INFO_RE.match(p.name) or p.name == "profiler_metadata.json")
    ]
    return RankSource(format="ascend_db", path=path, files=tuple(sorted(files)), rank_hint=_rank_hint(path, dbs[0]))


def _rank_hint(folder: Path, db_file: Path) -> int | None:
    m = _DB_RE.match(db_file.name)
    if m and m.group(1) is not None:
        return int(m.group(1))
    for p in sorted(folder.glob("profiler_info*.json")):
        m = _INFO_RE.match(p.name)
        if m and m.group(1) is not None:
            return int(m.group(1))
    return None


def load_rank(source: RankSource) -> RankData:
    """Read one rank's DB export into canonical tables (not yet conformed: see ``RankData.finish``)."""
    folder = Path(source.path)
    out_dir = folder / "ASCEND_PROFILER_OUTPUT"
    db_files = sorted(p for p in out_dir.glob("ascend_pytorch_profiler*.db") if _DB_RE.match(p.name))
    data = RankData(source.rank_hint)
    if not db_files:
        data.diagnostics.append(
            dg.error(
                "db-missing",
                "no ascend_pytorch_profiler*.db in ASCEND_PROFILER_OUTPUT",
                file=out_dir,
                fix="point at a torch_npu profile exported with export_type='db'",
                rank=source.rank_hint,
            )
        )
        return data
    db_path = db_files[0]
    try:
        con, immutable = connect(db_path)
    except sqlite3.Error as exc:
        data.diagnostics.append(
            dg.error(
                "db-unreadable",
                f"cannot open the SQLite DB: {exc}",
                file=db_path,
                fix="check that the file is a complete SQLite file (was the export interrupted?) and readable",
                rank=source.rank_hint,
            )
        )
        return data
    try:
        with Db(con, db_path) as db:
            return _load(source, folder, db, immutable, data)
    except sqlite3.DatabaseError as exc:
        data.diagnostics.append(
            dg.error(
                "db-unreadable",
                f"cannot read the SQLite DB: {exc}",
                file=db_path,
                fix="re-export the profile (the file looks damaged or truncated)",
                rank=source.rank_hint,
            )
        )
        return data
    finally:
        con.close()


def _load(source: RankSource, folder: Path, db: Db, immutable: bool, data: RankData) -> RankData:
    infos = sorted(folder.glob("profiler_info*.json"))
    meta_file = folder / "profiler_metadata.json"
    info = run_info.parse_profiler_info(infos[0] if infos else None)
    metadata = run_info.read_metadata(meta_file if meta_file.is_file() else None)
    rank, dev = _identity(db, info, source.rank_hint)
    data.rank = rank
    if immutable:
        data.diagnostics.append(
            dg.info(
                "db-wal-readonly",
                "the DB's -wal file holds changes that could not be copied to read them (no space "
                "in the temporary folder?); the DB was read without them",
                file=db.path,
                fix="free space in $TMPDIR, or copy the rank folder elsewhere, to read the pending WAL changes",
                rank=rank,
            )
        )

    data.diagnostics += damage.diagnostics(db.findings, db.path, rank)
    adb_path = folder / "ASCEND_PROFILER_OUTPUT" / "analysis.db"
    adb, adb_tables = _open_analysis(adb_path, data, rank)
    # the loaders' big reads, in their order: each is read on a second connection while the
    # loaders build the one before it
    db.read_ahead(host.api_reads(db) + device.reads(db) + host.host_ops_reads(db) + memory.reads(db))
    try:
        groups = guarded(data, adb_path, "analysis.db's CommAnalyzerTime", comm.group_map, adb) or {}
        call_of, node_start = guarded(data, db.path, "CANN_API (api_calls)", host.load_api_calls, db, data) or ({}, {})
        device.load_device(db, data, node_start, groups)
        owned = guarded(data, db.path, "PYTORCH_API (host_ops)", host.load_host_ops, db, data) or host.NO_OWNED
        guarded(data, db.path, "the launch links (launches)", host.load_launches, data, owned, call_of)
        guarded(data, db.path, "GC_RECORD (trace_slices)", host.load_trace_slices, db, data)
        guarded(data, db.path, "OVERLAP_ANALYSIS (trace_slices)", overlap.load_overlap, db, data)
        guarded(data, db.path, "COMMUNICATION_OP (comm_ops)", comm.load_comm_ops, db, adb, data)
        guarded(data, adb_path, "analysis.db's communication matrix (comm_links)", comm.load_comm_links, adb, data)
    finally:
        if adb is not None:
            adb.close()
    guarded(data, db.path, "the memory tables", memory.load_memory, db, data)
    guarded(data, db.path, "the counter tables (counters)", memory.load_counters, db, data)
    run_info.load_run_info(db, data, folder, info, metadata, rank, dev)
    run_info.diagnose(db, data, info, adb_tables, bool(infos), rank)
    return data


def _identity(db: Db, info: dict, hint: int | None) -> tuple[int | None, int | None]:
    """(rank, device) from ``RANK_DEVICE_MAP`` (-1 = not set), else profiler_info, else the hint."""
    rank = dev = None
    if db.has("RANK_DEVICE_MAP"):
        rows = db.rows("SELECT rankId, deviceId FROM RANK_DEVICE_MAP")
        if rows:
            rank = rows[0][0] if rows[0][0] is not None and rows[0][0] >= 0 else None
            dev = rows[0][1] if rows[0][1] is not None and rows[0][1] >= 0 else None
    if rank is None and isinstance(info.get("rank_id"), int) and info["rank_id"] >= 0:
        rank = info["rank_id"]
    return (hint if rank is None else rank), dev


def _open_analysis(path: Path, data: RankData, rank) -> tuple[sqlite3.Connection | None, set[str]]:
    if not path.is_file():
        return None, set()
    try:
        con, _ = connect(path)
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return con, tables
    except sqlite3.Error as exc:
        data.diagnostics.append(
            dg.error(
                "db-unreadable",
                f"cannot open analysis.db: {exc}",
                file=path,
                fix="re-run the offline parse to rebuild analysis.db; the rank DB was read without it",
                rank=rank,
            )
        )
        return None, set()


_recognise = _torch_npu.recogniser(sniff, "DB")


IMPORTER = Importer(
    name="ascend_db",
    shape="folder",
    recognise=_recognise,
    doc="torch_npu DB export: a rank folder whose ASCEND_PROFILER_OUTPUT holds ascend_pytorch_profiler*.db",
    hint=lambda name: name.endswith("_ascend_pt"),
    export="db",
    layout=_torch_npu.LAYOUT,
)

__all__ = ["VERSION", "IMPORTER", "sniff", "load_rank"]
