#!/usr/bin/env python
"""Scale the REAL torch_npu DB export of a fixture rank N times, to see how the DB importer
scales (the fixture ranks are under 1 MB: a cold import of them is fixed costs).

Nothing is invented: copy k (k = 1 .. N-1) of every row of the per-step tables is the seed's
row with its times shifted by k * period (period: the seed's device span rounded up to whole ms,
plus 1 ms) and its ids offset so that links stay valid and unique per copy: ``globalTaskId``
(TASK, COMPUTE_TASK_INFO, COMMUNICATION_TASK_INFO, TASK_PMU_INFO) + k * 10^6, ``connectionId``
everywhere and ``CONNECTION_IDS.id`` + k * 10^7, ``opId`` + k * 10^7, ``sequenceNumber`` +
k * 10^6, ``STEP_TIME.id`` + k.  A time stored as text (``PYTORCH_API.startNs``) stays text.
``STRING_IDS``, ``PYTORCH_CALLCHAINS``, the enums and the metadata tables are kept once: the
export stores each distinct name and call stack once (the fixture's 2,460 framework events
share 316 stacks), so the copies' events point at the same ones, as the steps of a longer run
would; ``SESSION_TIME_INFO`` is widened to cover every copy.  The rank's other files
(``analysis.db``, the JSON metadata) are copied as they are.

    python benchmarks/scale_db.py --copies 100 --out /tmp/db_x100
    profinsight analyze /tmp/db_x100/rank0_ascend_pt
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import stat
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = HERE.parent.parent / "shared" / "fixtures" / "ascend_pt" / "db_level1" / "rank0_ascend_pt"

TIME = {"startNs", "endNs", "timestampNs", "timestamp", "allocationTime", "releaseTime", "activeReleaseTime"}
STRIDE = {"globalTaskId": 10**6, "connectionId": 10**7, "opId": 10**7, "sequenceNumber": 10**6}
#: tables whose rows are per step (repeated); every other table is kept once
TABLES = (
    "TASK", "COMPUTE_TASK_INFO", "COMMUNICATION_TASK_INFO", "TASK_PMU_INFO", "PYTORCH_API", "CANN_API",
    "CONNECTION_IDS", "COMMUNICATION_OP", "STEP_TIME", "OVERLAP_ANALYSIS", "connectionCats",
    "NPU_MEM", "MEMORY_RECORD", "OP_MEMORY", "NPU_OP_MEM", "NPU_MODULE_MEM", "HBM", "LLC", "ACC_PMU",
    "SOC_BANDWIDTH_LEVEL", "AICORE_FREQ",
)  # fmt: skip


def _expr(table: str, column: str, period: int) -> str:
    q = f'"{column}"'
    if column in TIME:
        return (
            f"CASE typeof({q}) WHEN 'text' THEN CAST(CAST({q} AS INTEGER) + k.v * {period} AS TEXT) "
            f"WHEN 'integer' THEN {q} + k.v * {period} ELSE {q} END"
        )
    if column in STRIDE or (column == "id" and table == "CONNECTION_IDS"):
        stride = 10**7 if column == "id" else STRIDE[column]
        return f"CASE WHEN typeof({q}) = 'integer' THEN {q} + k.v * {stride} ELSE {q} END"
    if column == "id" and table == "STEP_TIME":
        return f"{q} + k.v"
    if column == "id" and table == "OVERLAP_ANALYSIS":
        return f"{q} + k.v * 1000000"
    return q


def scale(seed: Path, copies: int, out: Path) -> Path:
    """Write ``out/<seed name>`` with its DB scaled ``copies`` times; returns the DB's path."""
    rank = out / seed.name
    if rank.exists():
        shutil.rmtree(rank)
    shutil.copytree(seed, rank)
    for p in rank.rglob("*"):  # the fixtures are read-only
        p.chmod(p.stat().st_mode | stat.S_IWUSR)
    db = next((rank / "ASCEND_PROFILER_OUTPUT").glob("ascend_pytorch_profiler_*.db"))
    seed_db = next((seed / "ASCEND_PROFILER_OUTPUT").glob("ascend_pytorch_profiler_*.db"))
    con = sqlite3.connect(db.resolve().as_uri(), uri=True)
    try:
        # immutable: read-only is not enough, SQLite would still create -shm / -wal beside the
        # seed (a WAL-mode DB), inside the fixtures (see importers._common.open_sqlite_state)
        con.execute("ATTACH ? AS s", (f"{seed_db.resolve().as_uri()}?immutable=1",))
        lo, hi = con.execute("SELECT min(startNs), max(endNs) FROM s.TASK").fetchone()
        period = ((hi - lo) // 1_000_000 + 2) * 1_000_000
        have = {r[0] for r in con.execute("SELECT name FROM s.sqlite_master WHERE type = 'table'")}
        for t in (t for t in TABLES if t in have and copies > 1):
            cols = [r[1] for r in con.execute(f'PRAGMA s.table_info("{t}")')]
            exprs = ", ".join(_expr(t, c, period) for c in cols)
            con.execute(
                f"WITH RECURSIVE k(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM k WHERE v < {copies - 1}) "
                f'INSERT INTO main."{t}" SELECT {exprs} FROM s."{t}", k'
            )
        if "SESSION_TIME_INFO" in have:
            con.execute("UPDATE main.SESSION_TIME_INFO SET endTimeNs = endTimeNs + ?", ((copies - 1) * period,))
        con.commit()
    finally:
        con.close()
    return db


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--copies", type=int, default=100)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=Path, default=SEED, help="a torch_npu rank folder with a DB export")
    a = ap.parse_args(argv)
    db = scale(a.seed, max(1, a.copies), a.out)
    print(f"{db}  {db.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
