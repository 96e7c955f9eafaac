"""``OVERLAP_ANALYSIS`` in a DB export: read only where the profiler wrote it.

Both real DBs that hold the table (db_level1 rank 0, ``msprof_0.db``) were opened by a viewer,
which wrote it with its ``status_info`` table: there it is not read.  No real fixture holds a
profiler-written table, so the variant is the real rank-0 DB copied to tmp_path with
``status_info`` dropped -- the shape newer msprof writes (the table without a viewer's status).
Its totals are checked against the figures step_breakdown derives from the device tasks, which
agree with them to the ns on this step."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

import profinsight

RANK0 = ("ascend_pt", "db_level1", "rank0_ascend_pt")
DB = "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"


def _rows(db, sql):
    con = sqlite3.connect(f"file:{db}?immutable=1", uri=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@pytest.fixture(scope="module")
def profiler_written(fixtures, tmp_path_factory):
    dst = tmp_path_factory.mktemp("ov") / "rank0_ascend_pt"
    shutil.copytree(fixtures.joinpath(*RANK0), dst)
    con = sqlite3.connect(dst / DB)  # the copy: WAL changes fold in, status_info goes
    con.execute("DROP TABLE status_info")
    con.commit()
    con.execute("PRAGMA journal_mode=DELETE")
    con.close()
    return dst


def test_a_viewers_table_is_not_read_and_said_so(fixtures):
    p = profinsight.load(fixtures.joinpath(*RANK0))
    assert p.table("trace_slices").empty
    (note,) = [d for d in p.diagnostics if d.code == "db-viewer-overlap"]
    assert "status_info" in note.message and note.severity == "info"


def test_the_profilers_table_is_read_into_the_timeline(profiler_written):
    p = profinsight.load(profiler_written)
    sl = p.table("trace_slices")
    ov = sl[sl.process == "Overlap Analysis"]
    vendor = dict(
        (
            (t, (n, s))
            for t, n, s in _rows(
                profiler_written / DB, "SELECT type, count(*), sum(endNs - startNs) FROM OVERLAP_ANALYSIS GROUP BY type"
            )
        )
    )
    assert vendor == {0: (187, 8903431), 1: (4, 102108100), 2: (101, 98071947), 3: (90, 25258144)}
    got = ov.groupby("thread")["dur_ns"].agg(["size", "sum"])
    assert {k: (int(r["size"]), int(r["sum"])) for k, r in got.iterrows()} == {
        "Computing": vendor[0],
        "Communication": vendor[1],
        "Communication(Not Overlapped)": vendor[2],
        "Free": vendor[3],
    }
    assert {json.loads(a)["source"] for a in ov["args"]} == {"OVERLAP_ANALYSIS (written by the profiler)"}
    (note,) = [d for d in p.diagnostics if d.code == "db-profiler-overlap"]
    assert "Computing 8903.431 us" in note.message and "source 'tasks'" in note.message
    assert "db-viewer-overlap" not in {d.code for d in p.diagnostics}
    # the figures step_breakdown derives from the tasks reconcile with the profiler's own
    sb = p.step_breakdown().iloc[0]
    assert sb["source"] == "tasks"
    for col, t in (("computing_us", 0), ("comm_us", 1), ("comm_not_overlapped_us", 2), ("free_us", 3)):
        assert sb[col] == pytest.approx(vendor[t][1] / 1e3, rel=1e-3), col
    # the timeline shows the lanes
    from profinsight.timeline import tracks

    tree = json.dumps(tracks(p), default=str)
    assert '"Overlap Analysis"' in tree and '"Communication(Not Overlapped)"' in tree


def test_msprof_db_follows_the_same_rule(fixtures, tmp_path):
    src = fixtures / "msprof" / "msprof_db" / "msprof_0.db"
    p = profinsight.load(src)
    assert "msprof-db-viewer-overlap" in {d.code for d in p.diagnostics}
    assert p.table("trace_slices").empty
    dst = tmp_path / "msprof_0.db"
    shutil.copy(src, dst)
    wal = src.with_name(src.name + "-wal")
    if wal.exists():
        shutil.copy(wal, tmp_path / wal.name)
    con = sqlite3.connect(dst)
    con.execute("DROP TABLE status_info")
    con.commit()
    con.execute("PRAGMA journal_mode=DELETE")
    con.close()
    n = _rows(dst, "SELECT count(*) FROM OVERLAP_ANALYSIS")[0][0]
    q = profinsight.load(dst)
    assert len(q.table("trace_slices")) == n > 0
    assert "db-profiler-overlap" in {d.code for d in q.diagnostics}
