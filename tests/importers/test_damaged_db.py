"""Damaged SQLite exports: a bad value costs that value (a row that cannot be placed in time costs
that row), never the table or the rank, and every loss is counted in one diagnostic naming the
file, table and column.  Each damaged DB is a real fixture copied to ``tmp_path`` and changed
with ``sqlite3``; what is expected is the undamaged load minus exactly the damaged rows/values."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

import profinsight
from profinsight.importers import ascend_db, load_rank, msprof_db
from profinsight.importers.ascend_db import damage

LEVEL0 = ("ascend_pt", "db_level0", "rank0_ascend_pt")
DB = "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
MSPROF = ("msprof", "msprof_db", "msprof_0.db")
INT64_MAX = 2**63 - 1
_BASE: dict = {}


def base(fixtures: Path, key=LEVEL0):
    if key not in _BASE:
        _BASE[key] = _load(fixtures.joinpath(*key))
    return _BASE[key]


def _load(path: Path):
    if path.is_file():
        return load_rank(msprof_db.IMPORTER.recognise(path).source)
    return load_rank(ascend_db.sniff(path))


def copy_rank(fixtures: Path, tmp_path: Path, *sql: str, params=()) -> Path:
    """The Level0 rank-0 DB export copied to ``tmp_path``, with ``sql`` run on its DB."""
    dst = tmp_path / "rank0_ascend_pt"
    shutil.copytree(fixtures.joinpath(*LEVEL0), dst)
    run(dst / DB, *sql, params=params)
    return dst


def run(db: Path, *sql: str, params=()) -> None:
    con = sqlite3.connect(db)
    for i, s in enumerate(sql):
        con.execute(s, params[i] if i < len(params) else ())
    con.commit()
    con.close()


def rows_of(db: Path, sql: str) -> list[tuple]:
    con = sqlite3.connect(f"{db.resolve().as_uri()}?immutable=1", uri=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def new_diags(rd, before, code=None) -> list:
    old = {(d.code, d.message) for d in before.diagnostics}
    return [d for d in rd.diagnostics if (d.code, d.message) not in old and (code is None or d.code == code)]


def counts(rd) -> dict[str, int]:
    return {name: t.num_rows for name, t in rd.tables.items()}


def tasks(rd, drop: set = frozenset()) -> list[tuple]:
    """device_tasks as sorted (start, dur, kind, name, stream, task_id) rows, without ``drop``
    (a set of (start, stream, task_id))."""
    t = rd.tables["device_tasks"].to_pydict()
    keys = zip(t["start_ns"], t["dur_ns"], t["kind"], t["name"], t["stream"], t["task_id"])
    return sorted((k for k in keys if (k[0], k[4], k[5]) not in drop), key=repr)


def damaged_tasks(db: Path, where: str) -> set:
    return {tuple(r) for r in rows_of(db, f"SELECT startNs, streamId, taskId FROM TASK WHERE {where}")}


def test_the_undamaged_exports_say_nothing_of_damage(fixtures):
    for key in (LEVEL0, ("ascend_pt", "db_level1", "rank0_ascend_pt"), MSPROF):
        # db-viewer-overlap is a note on where OVERLAP_ANALYSIS came from, not damage
        damage = [
            d for d in base(fixtures, key).diagnostics if d.code.startswith("db-") and d.code != "db-viewer-overlap"
        ]
        assert not damage, key


def test_task_end_at_int64_max_costs_that_task_and_every_analysis_runs(fixtures, tmp_path):
    before = base(fixtures)
    where = (
        "rowid IN (SELECT rowid FROM TASK WHERE globalTaskId IN (SELECT globalTaskId FROM COMPUTE_TASK_INFO) LIMIT 2)"
    )
    folder = copy_rank(fixtures, tmp_path)
    db = folder / DB
    gone = damaged_tasks(db, where)
    run(db, f"UPDATE TASK SET endNs = {INT64_MAX} WHERE {where}")
    first = rows_of(db, f"SELECT min(rowid) FROM TASK WHERE endNs = {INT64_MAX}")[0][0]
    rd = _load(folder)
    (said,) = new_diags(rd, before, damage.ROWS_DROPPED)
    assert said.message == (
        f"table TASK: 2 row(s) had no usable time in endNs ({INT64_MAX}); first at rowid {first}: dropped."
    )
    assert said.file == str(db) and said.fix == damage.FIX and said.severity == "warning"
    assert tasks(rd) == tasks(before, gone)
    want = counts(before)
    want["device_tasks"] -= 2
    assert counts(rd)["device_tasks"] == want["device_tasks"]
    assert counts(rd)["host_ops"] == want["host_ops"] and counts(rd)["memory_samples"] == want["memory_samples"]
    # the rank loads, and no raw engine error reaches the analyses
    p = profinsight.load(folder)
    assert len(p.op_summary()) and len(p.advise())
    assert int(p.step_breakdown()["step_us"].max()) < 10**9


def test_text_and_nan_in_task_times_cost_those_tasks(fixtures, tmp_path):
    before = base(fixtures)
    folder = copy_rank(fixtures, tmp_path)
    db = folder / DB
    gone = damaged_tasks(db, "rowid IN (10, 11, 12)")
    run(
        db,
        "UPDATE TASK SET startNs = 'abc' WHERE rowid = 10",
        "UPDATE TASK SET startNs = ? WHERE rowid = 11",
        "UPDATE TASK SET startNs = -5 WHERE rowid = 12",
        params=((), (float("nan"),)),
    )
    rd = _load(folder)
    (said,) = new_diags(rd, before, damage.ROWS_DROPPED)
    assert said.message == "table TASK: 3 row(s) had no usable time in startNs (-5, 'abc'); first at rowid 10: dropped."
    assert tasks(rd) == tasks(before, gone)


def test_swapped_start_and_end_cost_that_row_not_a_negative_duration(fixtures, tmp_path):
    before = base(fixtures)
    folder = copy_rank(fixtures, tmp_path)
    db = folder / DB
    gone = damaged_tasks(db, "rowid IN (20, 21) AND endNs > startNs")
    assert len(gone) == 2
    run(db, "UPDATE TASK SET startNs = endNs, endNs = startNs WHERE rowid IN (20, 21)")
    rd = _load(folder)
    (said,) = new_diags(rd, before, damage.ROWS_DROPPED)
    assert said.message == "table TASK: 2 row(s) had endNs before startNs; first at rowid 20: dropped."
    assert tasks(rd) == tasks(before, gone)
    assert min(rd.tables["device_tasks"].column("dur_ns").to_pylist()) >= 0


def test_text_in_an_integer_column_of_a_secondary_table_costs_those_values(fixtures, tmp_path):
    before = base(fixtures)
    folder = copy_rank(fixtures, tmp_path, "UPDATE MEMORY_RECORD SET totalReserved = 'lots' WHERE rowid <= 3")
    folder_db = folder / DB
    rd = _load(folder)
    assert counts(rd) == counts(before)
    (said,) = new_diags(rd, before, damage.BAD_VALUES)
    assert said.message == (
        "table MEMORY_RECORD, column totalReserved: 3 value(s) not an integer ('lots'); first at rowid 1: "
        "read as null, their rows kept."
    )
    assert said.file == str(folder_db)
    got, want = (r.tables["memory_samples"].to_pydict() for r in (rd, before))
    n = len(rows_of(folder_db, "SELECT 1 FROM MEMORY_RECORD"))
    assert got["reserved_bytes"][3:n] == want["reserved_bytes"][3:n]
    assert got["reserved_bytes"][:3] == [None] * 3 and None not in want["reserved_bytes"][:3]
    for col in ("ts_ns", "allocated_bytes", "component"):
        assert got[col] == want[col]
    assert tasks(rd) == tasks(before)


def test_a_missing_column_in_a_secondary_table_costs_that_column(fixtures, tmp_path):
    before = base(fixtures)
    folder = copy_rank(
        fixtures,
        tmp_path,
        "ALTER TABLE NPU_MODULE_MEM DROP COLUMN totalReserved",
        "ALTER TABLE CANN_API DROP COLUMN globalTid",
    )
    rd = _load(folder)
    assert counts(rd) == counts(before)
    said = sorted(d.message for d in new_diags(rd, before, damage.COLUMN_MISSING))
    assert said == [
        "table CANN_API, column globalTid is missing: read as null (what it holds is unknown for every row).",
        "table NPU_MODULE_MEM, column totalReserved is missing: read as null (what it holds is unknown for every row).",
    ]
    assert set(rd.tables["module_memory"].column("reserved_bytes").to_pylist()) == {None}
    assert rd.tables["module_memory"].column("ts_ns") == before.tables["module_memory"].column("ts_ns")
    assert set(rd.tables["api_calls"].column("thread").to_pylist()) == {None}
    assert rd.tables["api_calls"].column("name") == before.tables["api_calls"].column("name")
    assert tasks(rd) == tasks(before)
    assert rd.tables["host_ops"].column("dur_ns") == before.tables["host_ops"].column("dur_ns")


def test_collectives_without_a_start_column_keep_their_rows_and_no_made_up_time(fixtures, tmp_path):
    """COMMUNICATION_OP.startNs dropped (a damaged export; once a TypeError that lost the rank):
    the collectives stay, with null start, duration, wait and step, and every other task is as
    before -- no wait or step computed from a missing time."""
    before = base(fixtures)
    rd = _load(copy_rank(fixtures, tmp_path, "ALTER TABLE COMMUNICATION_OP DROP COLUMN startNs"))
    (said,) = new_diags(rd, before, damage.COLUMN_MISSING)
    assert said.message.startswith("table COMMUNICATION_OP, column startNs is missing")
    keep = ["kind", "name", "start_ns", "dur_ns", "step", "wait_ns"]

    def rows(t):
        d = t.select(keep).to_pydict()
        return [r for r in zip(*d.values())]

    got, old = rows(rd.tables["device_tasks"]), rows(before.tables["device_tasks"])
    comm = [r for r in got if r[0] == "communication"]
    assert len(comm) == 4 and {r[2:] for r in comm} == {(None, None, None, None)}
    # the other tasks keep their times and steps; a kernel right after a collective waits from the
    # previous timed task now (the collective's end is unknown), never from a made-up time
    assert [r[:5] for r in got if r[0] != "communication"] == [r[:5] for r in old if r[0] != "communication"]
    waits = [r[5] for r in got if r[0] == "kernel"]
    assert None not in waits and 0 <= min(waits) and max(waits) < 10**12


def test_step_ids_lost_give_way_to_the_profiler_step_rows(fixtures, tmp_path):
    """STEP_TIME.id dropped (once a TypeError that lost the rank): the steps come from PYTORCH_API's
    ProfilerStep#N rows, which name the same step, and the loss of the column is said."""
    before = base(fixtures)
    rd = _load(copy_rank(fixtures, tmp_path, "ALTER TABLE STEP_TIME DROP COLUMN id"))
    (said,) = new_diags(rd, before, damage.COLUMN_MISSING)
    assert said.message.startswith("table STEP_TIME, column id is missing")
    assert rd.tables["steps"].column("step").to_pylist() == before.tables["steps"].column("step").to_pylist() == [50]
    assert tasks(rd) == tasks(before)


@pytest.mark.parametrize(
    ("table", "evidence"),
    [
        ("COMMUNICATION_OP", "COMMUNICATION_TASK_INFO records their tasks"),
        ("CONNECTION_IDS", "PYTORCH_API and TASK have rows"),
        ("MEMORY_RECORD", "profile_memory was on"),
        ("OP_MEMORY", "profile_memory was on"),
        ("NPU_MODULE_MEM", "profile_memory was on"),
    ],
)
def test_a_table_the_rest_of_the_db_shows_was_collected_is_missed_aloud(fixtures, tmp_path, table, evidence):
    """A table that may simply not have been collected is said missing where the DB itself shows it
    was (the issue's silent cases: a dropped COMMUNICATION_OP, an emptied memory table)."""
    before = base(fixtures)
    rd = _load(copy_rank(fixtures, tmp_path, f"DROP TABLE {table}"))
    (d,) = new_diags(rd, before, "table-missing")
    assert d.message.startswith(f"table {table} is missing though {evidence}: no ") and d.severity == "warning"
    rd = _load(copy_rank(fixtures, tmp_path / "emptied", f"DELETE FROM {table}"))
    (d,) = new_diags(rd, before, "table-missing")
    assert d.message.startswith(f"table {table} is empty though {evidence}: no ")


def test_half_deleted_string_ids_are_said(fixtures, tmp_path):
    before = base(fixtures)
    folder = copy_rank(
        fixtures, tmp_path, "DELETE FROM STRING_IDS WHERE id IN (SELECT name FROM COMPUTE_TASK_INFO LIMIT 5)"
    )
    rd = _load(folder)
    said = new_diags(rd, before, damage.NAMES_MISSING)
    assert said and said[0].message.startswith("table COMPUTE_TASK_INFO, column name: ")
    assert counts(rd)["device_tasks"] == counts(before)["device_tasks"]


def test_a_secondary_table_too_damaged_to_read_costs_what_it_fills(fixtures, tmp_path, monkeypatch):
    from profinsight.importers.ascend_db import memory

    before = base(fixtures)
    folder = copy_rank(fixtures, tmp_path)

    def broken(db, data):
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(memory, "load_counters", broken)
    rd = _load(folder)
    (said,) = new_diags(rd, before, damage.STEP_FAILED)
    assert said.severity == "error" and said.message.startswith("the counter tables (counters) could not be read")
    assert rd.tables.get("counters") is None or rd.tables["counters"].num_rows == 0
    assert before.tables["counters"].num_rows > 0
    assert tasks(rd) == tasks(before) and counts(rd)["host_ops"] == counts(before)["host_ops"]


def test_an_msprof_db_with_bad_task_values_keeps_the_rest(fixtures, tmp_path):
    before = base(fixtures, MSPROF)
    path = tmp_path / "msprof_0.db"
    shutil.copyfile(fixtures.joinpath(*MSPROF), path)
    gone = damaged_tasks(path, "rowid IN (1, 2)")
    run(path, "UPDATE TASK SET endNs = 'x' WHERE rowid = 1", f"UPDATE TASK SET startNs = {INT64_MAX} WHERE rowid = 2")
    rd = _load(path)
    said = sorted(d.message for d in new_diags(rd, before, damage.ROWS_DROPPED))
    assert said == [
        "table TASK: 1 row(s) had no usable time in endNs ('x'); first at rowid 1: dropped.",
        f"table TASK: 1 row(s) had no usable time in startNs ({INT64_MAX}); first at rowid 2: dropped.",
    ]
    assert tasks(rd) == tasks(before, gone)


@pytest.mark.parametrize(
    ("column", "declared", "value", "bad"),
    [
        ("size", "INTEGER", 1.5, True),
        ("size", "INTEGER", "12x", True),
        ("size", "INTEGER", 12, False),
        ("value", "NUMERIC", float("inf"), True),
        ("value", "NUMERIC", 2.5, False),
        ("startNs", "TEXT", "1736410576385993410", False),
        ("startNs", "TEXT", "17364105763859934100", True),
        ("startNs", "INTEGER", 2**62 + 1, True),
    ],
)
def test_what_counts_as_a_damaged_value(column, declared, value, bad):
    con = sqlite3.connect(":memory:")
    con.execute(f'CREATE TABLE t ("{column}" {declared})')
    con.execute("INSERT INTO t VALUES (?)", (value,))
    clean, cond, _ = damage._clean(column, declared)
    assert bool(con.execute(f"SELECT {cond} FROM t").fetchone()[0]) is bad
    assert (con.execute(f"SELECT {clean} FROM t").fetchone()[0] is None) is bad


#: the time value as first written (digits told by the pattern alone): the reference the faster
#: form of :func:`damage._clean` must equal
def _first_time_value(c: str) -> str:
    m = damage.MAX_TIME_NS
    digits = f"(typeof({c}) = 'text' AND {c} <> '' AND {c} NOT GLOB '*[^0-9]*' AND length({c}) <= 19)"
    return (
        f"(CASE WHEN typeof({c}) = 'integer' AND {c} BETWEEN 0 AND {m} THEN {c}"
        f" WHEN typeof({c}) = 'real' AND {c} BETWEEN 0 AND {m} AND {c} = CAST({c} AS INTEGER)"
        f" THEN CAST({c} AS INTEGER)"
        f" WHEN {digits} AND CAST({c} AS INTEGER) BETWEEN 0 AND {m} THEN CAST({c} AS INTEGER) END)"
    )


_TIMES = [
    None,
    0,
    5,
    -5,
    1 << 62,
    (1 << 62) + 1,
    (1 << 63) - 1,
    5.0,
    5.5,
    -0.0,
    1e300,
    float("nan"),
    "",
    "0",
    "00",
    "007",
    "5",
    "-5",
    "+5",
    " 5",
    "5 ",
    "5e3",
    "5.0",
    "12a",
    "a12",
    "0x10",
    "1736410576385993410",
    "4611686018427387904",
    "4611686018427387905",
    "9223372036854775807",
    "9999999999999999999",
    "99999999999999999999",
    "１２",
    b"12",
    "--5",
    "5-",
]


@pytest.mark.parametrize("declared", ["INTEGER", "TEXT", "NUMERIC", ""])
def test_time_values_and_the_any_row_test_agree_with_the_first_form(declared, monkeypatch):
    con = sqlite3.connect(":memory:")
    con.execute(f'CREATE TABLE t ("startNs" {declared}, "endNs" {declared})')
    con.executemany("INSERT INTO t VALUES (?, ?)", [(a, b) for a in _TIMES for b in _TIMES[:12]])
    value, bad, _ = damage._clean("startNs", declared)
    got = con.execute(f"SELECT startNs, {value}, {bad}, {_first_time_value('startNs')} FROM t").fetchall()
    assert [(v, b) for _, v, b, _ in got] == [(ref, int(s is not None and ref is None)) for s, _, _, ref in got]
    # row by row: the findings are the same with and without the quick "any row" pass first
    con.execute("CREATE TABLE one AS SELECT * FROM t WHERE 0")
    quick = damage._any_row
    gated, counted = [], []
    for rowid in range(1, len(got) + 1):
        con.execute("DELETE FROM one")
        con.execute("INSERT INTO one SELECT * FROM t WHERE rowid = ?", (rowid,))
        for out, any_row in ((gated, quick), (counted, lambda *a: True)):
            monkeypatch.setattr(damage, "_any_row", any_row)
            out.append(damage._scan_table(con, "STEP_TIME", "one", ("startNs", "endNs"))[0])
            con.execute("DROP VIEW IF EXISTS temp.one")
    assert gated == counted
    assert sum(1 for f in gated if not f) > 10 and sum(1 for f in gated if f) > 10


@pytest.mark.parametrize("declared", ["INTEGER", "INT", "BIGINT", "integer"])
def test_an_integer_column_damaged_exactly_where_its_value_is_not_a_stored_integer(declared):
    """The damage test of an integer column (NULL first, then one storage-class test) says what
    the first form said (``typeof NOT IN ('integer', 'null')``) for every kind of stored value,
    and its cleaned value is NULL exactly there (and where the cell is NULL)."""
    con = sqlite3.connect(":memory:")
    con.execute(f'CREATE TABLE t ("size" {declared})')
    values = [None, 0, -1, 12, (1 << 63) - 1, 1.5, 2.0, float("inf"), "12x", "", " 7", b"\x00", "１２"]
    con.executemany("INSERT INTO t VALUES (?)", [(v,) for v in values])
    value, bad, _ = damage._clean("size", declared)
    got = con.execute(f"SELECT typeof(size), {value}, {bad}, typeof(size) NOT IN ('integer', 'null') FROM t").fetchall()
    assert [b for _, _, b, _ in got] == [ref for _, _, _, ref in got]
    assert [v is None for _, v, _, _ in got] == [t != "integer" for t, _, _, _ in got]
    # a text, a real and a blob each stay what they are in the column (nothing converted them)
    assert {t for t, *_ in got} == {"null", "integer", "real", "text", "blob"}


@pytest.mark.parametrize("wal", [False, True])
def test_the_scan_on_two_connections_finds_and_shadows_what_one_does(fixtures, tmp_path, monkeypatch, wal):
    """Damage in several tables (and a table too damaged to scan): the findings, in their order,
    and the cleaned views are the same whether the tables are scanned on one connection or on two
    (the DB itself opened immutable, or its temporary copy with pending WAL changes)."""
    from profinsight.importers import _common
    from profinsight.importers.ascend_db.reader import Db, connect

    folder = copy_rank(
        fixtures,
        tmp_path,
        "UPDATE TASK SET endNs = startNs - 5 WHERE rowid % 97 = 3",
        "UPDATE MEMORY_RECORD SET totalReserved = 'lots' WHERE rowid <= 3",
        "UPDATE PYTORCH_API SET startNs = 'x' WHERE rowid = 7",
        "UPDATE STRING_IDS SET id = -id WHERE rowid % 50 = 1",
        "ALTER TABLE CANN_API DROP COLUMN globalTid",
    )
    db_file = folder / DB
    if wal:  # changes left in the -wal file: the DB is read from a temporary copy
        con = sqlite3.connect(db_file)
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA wal_autocheckpoint=0")
        con.execute("UPDATE NPU_MODULE_MEM SET timestampNs = -1 WHERE rowid <= 2")
        con.commit()
        shutil.copyfile(db_file.with_name(db_file.name + "-wal"), tmp_path / "wal")
        con.close()
        shutil.copyfile(tmp_path / "wal", db_file.with_name(db_file.name + "-wal"))
    twins = []
    real_reopen = _common.reopen_sqlite
    monkeypatch.setattr(_common, "reopen_sqlite", lambda c: twins.append(c) or real_reopen(c))

    def scanned(threads: int):
        monkeypatch.setattr(_common, "thread_share", lambda: threads)
        con, pending = connect(db_file)
        try:
            db = Db(con, db_file)
            views = con.execute("SELECT name, sql FROM sqlite_temp_master WHERE type = 'view' ORDER BY name").fetchall()
            return db.findings, views, pending
        finally:
            con.close()

    one, two = scanned(1), scanned(2)
    assert len(twins) == 1 and one == two
    findings, views, pending = two
    codes = {(f.code, f.table) for f in findings}
    assert {
        ("db-rows-dropped", "TASK"),
        ("db-bad-values", "MEMORY_RECORD"),
        ("db-rows-dropped", "PYTORCH_API"),
    } <= codes
    assert ("db-column-missing", "CANN_API") in codes and ("db-names-missing", "PYTORCH_API") in codes
    assert ("db-rows-dropped", "NPU_MODULE_MEM") in codes if wal else not pending
    # the order of a serial scan: table by table as EXPECTED lists them, the missing names last
    order = [list(damage.EXPECTED).index(f.table) for f in findings if f.code != "db-names-missing"]
    assert order == sorted(order) and findings[-1].code == "db-names-missing"
    assert {v[0] for v in views} >= {"TASK", "MEMORY_RECORD", "PYTORCH_API", "CANN_API"}
