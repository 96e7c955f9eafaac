"""The DB reader's column-by-column reads (``Db.column_lists``, the PMU samples) give exactly what
``fetchall`` and a transposition give, value for value and type for type, and fall back to it
wherever JSON cannot carry a value exactly."""

from __future__ import annotations

import sqlite3

import pytest

from profinsight.importers.ascend_db import device
from profinsight.importers.ascend_db.reader import Db

TEXTS = ["plain", "", "é ü 中文 🙂", 'quote " and \\ slash', "new\nline\ttab", "nul\x00inside", "[1, 2]", "null", "3"]
INTS = [0, 1, -1, 2**53 + 1, 2**63 - 1, -(2**63), 1736410576375315901]


def _db(rows, declared="a INTEGER, b TEXT, c") -> Db:
    con = sqlite3.connect(":memory:")
    con.execute(f"CREATE TABLE T ({declared})")
    con.executemany("INSERT INTO T VALUES (?, ?, ?)", rows)
    return Db(con, None)


def _by_rows(db: Db, sql: str, n: int) -> list[list]:
    data = db.rows(sql)
    return [list(c) for c in zip(*data)] if data else [[] for _ in range(n)]


def _same(a: list[list], b: list[list]) -> bool:
    return a == b and [[type(v) for v in c] for c in a] == [[type(v) for v in c] for c in b]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT a, b, c FROM T",
        "SELECT a, b, c FROM T ORDER BY c",  # ties: the order within them is the statement's own
        "SELECT c, a FROM T ORDER BY a DESC, b",
        "SELECT b FROM T WHERE a > 0",
        "SELECT a, b, c FROM T WHERE a = 12345",  # no row
        "WITH x AS (SELECT a, b, c FROM T) SELECT a, c, b FROM x ORDER BY b",
    ],
)
def test_columns_equal_the_rows_transposed(sql):
    rows = [(INTS[i % len(INTS)], TEXTS[i % len(TEXTS)], i % 3 if i % 5 else None) for i in range(200)]
    db = _db(rows)
    n = len(db.con.execute(sql).description)
    got = db.column_lists(sql, n)
    assert _same(got, _by_rows(db, sql, n))


@pytest.mark.parametrize("reals", [[0.1, 1 / 3, 2.5, 1e-7 / 3], [1.7976931348623157e308, -5e-324, float("inf")]])
def test_reals_and_blobs_are_read_through_fetchall(reals):
    """A double (which SQLite's JSON prints with 15 digits: 1/3 would lose its last ones, the
    largest double would overflow) or a BLOB anywhere in the result: the values are those of
    fetchall, exactly."""
    db = _db([(i, "x", v) for i, v in enumerate(reals)] + [(9, "y", 7)], "a INTEGER, b TEXT, c REAL")
    got = db.column_lists("SELECT a, b, c FROM T ORDER BY a", 3)
    assert _same(got, _by_rows(db, "SELECT a, b, c FROM T ORDER BY a", 3)) and got[2][: len(reals)] == reals
    blob = _db([(1, b"\x00\xff", 2), (2, "t", None)])
    assert _same(blob.column_lists("SELECT b, a FROM T", 2), [[b"\x00\xff", "t"], [1, 2]])


def test_text_python_cannot_decode_raises_as_fetchall_does():
    db = _db([(1, "ok", 1)])
    db.con.execute("INSERT INTO T VALUES (2, CAST(x'fffe' AS TEXT), 2)")
    with pytest.raises(sqlite3.OperationalError) as by_rows:
        db.rows("SELECT b FROM T")
    with pytest.raises(sqlite3.OperationalError) as by_columns:
        db.column_lists("SELECT b FROM T", 1)
    assert str(by_columns.value) == str(by_rows.value)


def test_select_reads_missing_columns_as_none():
    db = _db([(1, "a", 2.0), (2, "b", None)])
    got = db.select("T", {"x": ("a",), "y": ("nope",), "z": ("c",)}, order="a")
    assert got == {"x": [1, 2], "y": [None, None], "z": [2.0, None]}
    assert db.select("T", {"x": ("a",)}, where="a > 5") == {"x": []}


def _pmu_db(values, shadow: bool = False) -> Db:
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE TASK_PMU_INFO (globalTaskId INTEGER, name INTEGER, value NUMERIC)")
    con.executemany("INSERT INTO TASK_PMU_INFO VALUES (?, ?, ?)", values)
    if shadow:  # as damage.sanitise shadows a damaged table
        con.execute("CREATE TEMP VIEW TASK_PMU_INFO AS SELECT * FROM main.TASK_PMU_INFO WHERE globalTaskId IS NOT NULL")
    return Db(con, None)


@pytest.mark.parametrize("shadow", [False, True])
def test_pmu_samples_pair_ids_and_values_row_by_row(shadow):
    """The ids (read as JSON) and the REAL values (read on their own) pair up row by row in the
    order written, repeats included; a shadowed table is read in one statement."""
    values = [(i % 7, 100 + i % 3, (i * 0.1) if i % 4 else i) for i in range(500)] + [(3, 101, 1 / 3), (3, 101, 0.7)]
    db = _pmu_db(values, shadow)
    assert db.shadowed("TASK_PMU_INFO") is shadow
    got = device._pmu_rows(db)
    # what one fetchall of the table gives (NUMERIC affinity stores 1.0 as the integer 1)
    assert _same(got, _by_rows(db, "SELECT globalTaskId, name, value FROM TASK_PMU_INFO", 3))
    assert got[0] == [v[0] for v in values] and got[2][-2:] == [1 / 3, 0.7]


def _file_db(path) -> None:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE A (a INTEGER, b TEXT, c INTEGER)")
    con.executemany("INSERT INTO A VALUES (?, ?, ?)", [(i % 50, TEXTS[i % len(TEXTS)], i) for i in range(3000)])
    con.execute("CREATE TABLE B (x INTEGER, v REAL)")
    con.executemany("INSERT INTO B VALUES (?, ?)", [(i, i / 7) for i in range(500)])
    con.commit()
    con.close()


PLAN = [
    ("SELECT a, b, c FROM A ORDER BY a", 3),
    ("SELECT x, v FROM B", 2),  # doubles: read through fetchall on the second connection
    ("SELECT c FROM A WHERE a = 3", 1),
    ("SELECT b, a FROM A ORDER BY b", 2),
    ("SELECT count(*) FROM B", 1),
]


def test_reads_ahead_give_what_the_reads_give_in_any_order(tmp_path, monkeypatch):
    """Asked in the plan's order, with one skipped, one asked after the read ahead of it, one
    asked twice and one not in the plan: every result equals the read on the first connection,
    the reads in order come from the second one, and closing stops it."""
    from profinsight.importers import _common
    from profinsight.importers.ascend_db import reader
    from profinsight.importers.ascend_db.reader import connect

    monkeypatch.setattr(_common, "thread_share", lambda: 2)
    path = tmp_path / "t.db"
    _file_db(path)
    con, _ = connect(path)
    direct = [reader._columns_of(con, sql, n) for sql, n in PLAN]
    ahead = []
    claim = reader._ReadAhead.claim
    monkeypatch.setattr(reader._ReadAhead, "claim", lambda self, key: ahead.append(claim(self, key)) or ahead[-1])
    with Db(con, path) as db:
        db.read_ahead(PLAN)
        twin = db._ahead.con
        asked = [0, 1, 3, 2, 4, 0]  # 2 skipped, then asked after 3; 0 asked again
        got = [db.column_lists(*PLAN[i]) for i in asked]
        other = db.column_lists("SELECT a FROM A ORDER BY c DESC", 1)  # in no plan: read here
    assert [_same(g, direct[i]) for g, i in zip(got, asked)] == [True] * len(asked)
    assert other == [[i % 50 for i in range(2999, -1, -1)]]
    # read ahead: 0, 1 (each started when the one before was claimed), 4 (started when 3 was
    # read here, 2 having been dropped); read here: 3, 2 and 0 again
    assert [f is not None for f in ahead] == [True, True, False, False, True, False, False]
    assert db._ahead is None
    with pytest.raises(sqlite3.ProgrammingError):
        twin.execute("SELECT 1")
    con.close()


def test_reads_ahead_see_the_cleaned_views_and_one_thread_reads_none(fixtures, tmp_path, monkeypatch):
    """A damaged table is read through its cleaned view on the second connection too; where the
    rank may use one thread nothing is read ahead."""
    import shutil

    from profinsight.importers import _common
    from profinsight.importers.ascend_db import host
    from profinsight.importers.ascend_db.reader import connect

    src = fixtures / "ascend_pt" / "db_level0" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    path = tmp_path / "ascend_pytorch_profiler_0.db"
    shutil.copyfile(src / path.name, path)
    con = sqlite3.connect(path)
    con.execute("UPDATE PYTORCH_API SET startNs = 'x' WHERE rowid % 9 = 2")
    con.commit()
    con.close()

    def read(threads: int):
        monkeypatch.setattr(_common, "thread_share", lambda: threads)
        con, _ = connect(path)
        try:
            with Db(con, path) as db:
                assert db.shadowed("PYTORCH_API")
                plan = host.host_ops_reads(db)
                db.read_ahead(plan)
                ahead = db._ahead is not None
                return [db.column_lists(*r) for r in plan], ahead
        finally:
            con.close()

    (one, ahead_one), (two, ahead_two) = read(1), read(2)
    assert not ahead_one and ahead_two
    assert _same(one[0], two[0]) and _same(one[1], two[1])
    assert len(one[0][0]) > 0 and "x" not in one[0][0]  # the damaged rows are left out, as the view does
