"""Exact time parsing and step assignment shared by the importers."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa
import pytest

from profinsight.importers._common import (
    duck,
    header_names,
    open_sqlite,
    read_csv_by_header,
    unconverted_cells,
    us_text_to_ns,
)
from profinsight.importers._steps import assign_steps, build_steps, earliest_containing, step_number


def test_ts_ns_is_exact_where_float64_is_not():
    text = "1736408883704643.212\t"
    exact = int(Decimal(text.strip()) * 1000)
    assert exact == 1736408883704643212
    assert int(float(text) * 1000) != exact  # float64 loses the last digits: why the macro exists
    con = duck()
    got = con.execute(
        "select ts_ns(?), ts_ns('N/A'), ts_ns(''), ts_ns('-0.5'), ts_ns('7'), ts_ns('1.25e3')", [text]
    ).fetchone()
    assert got == (exact, None, None, -500, 7000, 1250000)
    assert us_text_to_ns(text) == exact and us_text_to_ns("N/A") is None and us_text_to_ns("-0.5") == -500


def test_unit_macros():
    con = duck()
    got = con.execute(
        "select dur_ns('53.7410625'), ms_ns('2.5'), int_or_null('4294967295'), int_or_null('12'),"
        " mib_bytes('1452.0'), mb_bytes('28.647232'), kib_bytes('2')"
    ).fetchone()
    assert got == (53741, 2500000, None, 12, 1522532352, 28647232, 2048)


class _Counting:
    """A connection that counts the statements it runs."""

    def __init__(self, con):
        self.con, self.statements = con, 0

    def execute(self, sql, *args):
        self.statements += 1
        return self.con.execute(sql, *args)


def test_unconverted_cells_count_and_list_the_bad_cells_of_each_column():
    con = duck()
    con.execute(
        "CREATE TABLE raw AS SELECT * FROM (VALUES ('1.5', '1736408883704643.212'), (' abc ', 'N/A'), "
        "('1e400', ''), ('abc', '7'), (NULL, 'x1')) t(size, ts)"
    )
    counting = _Counting(con)
    got = unconverted_cells(counting, "raw", [("kib_bytes(size)", "size"), ("ts_ns(ts)", "ts")])
    # empty cells and N/A are not collected, not bad; distinct values, cleaned and sorted
    assert got == [(3, ["1e400", "abc"]), (1, ["x1"])]
    assert counting.statements == 2
    clean = _Counting(con)
    assert unconverted_cells(clean, "raw WHERE size = '1.5'", [("kib_bytes(size)", "size")]) == [(0, [])]
    assert clean.statements == 1  # nothing bad: the values are not listed
    assert unconverted_cells(clean, "raw", []) == []


def test_step_ranges_follow_the_vendor_rule():
    # two host steps; tasks launched inside each; the device range ends no earlier than the host step
    steps = build_steps(
        [(1, 100, 200), (2, 200, 300)],
        start_ns=[150, 180, 260, 400],
        end_ns=[170, 250, 390, 410],
        launch_ns=pa.array([110, 190, 250, None], pa.int64()),
    )
    d = steps.to_pydict()
    assert d["step"] == [1, 2]
    assert d["device_start_ns"] == [150, 260]
    assert d["device_end_ns"] == [250, 390]
    assert assign_steps([150, 245, 255, 265, 500], steps).to_pylist() == [1, 1, None, 2, None]
    assert step_number("ProfilerStep#50") == 50 and step_number("aten::add") is None


def _earliest_step(times, ranges):
    """The plain definition: per time, the step of the earliest-starting range containing it."""
    by_start = sorted(ranges, key=lambda r: r[1])
    return [next((s for s, lo, hi in by_start if lo <= t <= hi), None) for t in times]


def _device_steps(ranges) -> pa.Table:
    n = len(ranges)
    return pa.table(
        {
            "step": [r[0] for r in ranges],
            "host_start_ns": [0] * n,
            "host_end_ns": [0] * n,
            "device_start_ns": pa.array([r[1] for r in ranges], pa.int64()),
            "device_end_ns": pa.array([r[2] for r in ranges], pa.int64()),
        }
    )


@pytest.mark.parametrize("seed", range(6))
def test_assign_steps_ordered_ranges_match_the_definition(seed):
    """Ranges that end in the order they start (steps one after another, touching or overlapping
    the next): the answer is the plain definition's, gaps, touching ends, times outside every
    range and unknown times (-1) included."""
    import random

    rng = random.Random(seed)
    ranges, lo, hi = [], 100, 100  # every range after -1, the time of an unknown start
    for step in range(1, 40):
        # the next starts where this one ends, after a gap, or a little or a lot before its end
        # (after its start); ends come in the order of the starts
        lo = max(lo + 1, rng.choice([hi, hi, hi + 5, hi - 3, hi - 40]))
        hi = max(hi, lo + rng.randint(0, 60))
        ranges.append((step, lo, hi))
    at = hi
    rng.shuffle(ranges)
    times = [rng.randint(-20, at + 20) for _ in range(3000)] + [-1] + [r[1] for r in ranges] + [r[2] for r in ranges]
    got = assign_steps(pa.array(times, pa.int64()), _device_steps(ranges)).to_pylist()
    assert got == _earliest_step(times, ranges)


def test_assign_steps_nested_ranges_take_the_earliest():
    """A range that ends before an earlier one does (nested): the earliest that holds a time."""
    ranges = [(1, 100, 400), (2, 150, 200), (3, 300, 500), (4, 600, 700)]
    times = [99, 100, 160, 250, 350, 450, 550, 650, 701, -1]
    got = assign_steps(pa.array(times, pa.int64()), _device_steps(ranges)).to_pylist()
    assert got == _earliest_step(times, ranges) == [None, 1, 1, 1, 1, 3, None, 4, None, None]


def test_earliest_containing_range():
    """Each time gets the range that contains it (ends included) and starts first, the answer of
    ``SELECT min_by(id, lo) FROM ranges WHERE t BETWEEN lo AND hi``; nested and overlapping
    ranges, gaps, null bounds and null times included."""
    lo = pa.array([100, 120, 300, 300, 500, None], pa.int64())
    hi = pa.array([200, 150, 300, 400, 450, 900], pa.int64())  # id 5 ends before it starts: never
    ids = [1, 2, 3, 4, 5, 6]
    t = pa.array([99, 100, 130, 150, 200, 201, 300, 350, 400, 401, 460, None], pa.int64())
    got = earliest_containing(t, lo, hi, ids).to_pylist()
    assert got == [None, 1, 1, 1, 1, None, 3, 4, 4, None, None, None]
    # a nested range that wins by rank although it starts later (rank is not the start)
    got = earliest_containing([130, 160], [100, 120], [200, 150], [1, 2], rank=[5, 1]).to_pylist()
    assert got == [2, 1]
    # ranks that follow the starts take the binary-search path; the same answer as a plain loop
    import random

    rng = random.Random(7)
    los = sorted(rng.randrange(0, 10_000) for _ in range(60))
    his = [a + rng.randrange(0, 600) for a in los]
    ts = [rng.randrange(-100, 11_000) for _ in range(2000)]
    want = [next((i for a, i, b in sorted(zip(los, range(60), his)) if a <= x <= b), None) for x in ts]
    assert earliest_containing(ts, los, his, list(range(60))).to_pylist() == want
    assert earliest_containing([5], [], [], []).to_pylist() == [None]


def test_open_sqlite_read_only_on_wal_db(fixtures):
    db = fixtures / "ascend_pt/db_level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
    con = open_sqlite(db)
    assert con.execute("select count(*) from TASK").fetchone()[0] == 552


def test_rank_threads_follow_the_loader_then_the_idle_cores(monkeypatch):
    """A rank imported beside others gets the loader's share; a lone rank the cores the
    1-minute load leaves idle, never fewer than one."""
    import os

    from profinsight.importers import _common

    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    monkeypatch.setattr(_common, "busy_now", lambda: None)  # no /proc/stat: the load average alone
    try:
        _common.set_rank_threads(3)
        assert _common.rank_threads() == 3
        _common.set_rank_threads(None)
        monkeypatch.setattr(os, "getloadavg", lambda: (2.7, 0.0, 0.0))
        assert _common.rank_threads() == 6
        monkeypatch.setattr(os, "getloadavg", lambda: (11.0, 0.0, 0.0))
        assert _common.rank_threads() == 1
        monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
        assert _common.rank_threads() == 8
    finally:
        _common.set_rank_threads(None)


def test_duplicate_rows_checks_the_wide_columns_when_the_narrow_ones_repeat():
    """Rows equal on the narrow key but not on the wide columns are no copies; exact copies are
    found (their later rowids) and nothing is deleted."""
    from profinsight.importers.chrome_trace import damage

    con = duck()
    con.execute("CREATE TABLE t (ts BIGINT, name VARCHAR, stack VARCHAR)")
    con.execute("INSERT INTO t VALUES (1, 'a', 's1'), (1, 'a', 's2'), (2, 'b', 's'), (2, 'b', 's'), (3, 'c', 'x')")
    assert damage.duplicate_rows(con, "t", "ts, name, stack", "TRUE", "dup", key="ts, name") == 1
    assert con.sql("SELECT rid FROM dup").fetchall() == [(3,)]
    con.execute("DELETE FROM t WHERE rowid = 3")
    assert damage.duplicate_rows(con, "t", "ts, name, stack", "TRUE", "dup2", key="ts, name") == 0
    assert damage.duplicate_rows(con, "t", "ts, name, stack", "ts > 1", "dup3", key="ts, name") == 0
    assert con.sql("SELECT count(*) FROM t").fetchall() == [(4,)]


def test_rank_threads_look_at_the_cores_now_when_the_load_average_says_busy(monkeypatch):
    """The 1-minute load average still counts a process that just ended: where it says cores are
    taken, what they do now decides (the smaller of the two); an idle average is taken as it is,
    without sampling."""
    import os

    from profinsight.importers import _common

    asked = []
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.2, 0.0, 0.0))
    monkeypatch.setattr(_common, "busy_now", lambda: asked.append(1) or 0.05)
    assert _common.rank_threads() == 2  # the lag of the average: both cores idle now
    monkeypatch.setattr(_common, "busy_now", lambda: asked.append(1) or 1.9)
    assert _common.rank_threads() == 1  # busy now too
    monkeypatch.setattr(os, "getloadavg", lambda: (0.4, 0.0, 0.0))
    assert _common.rank_threads() == 2 and len(asked) == 2  # an idle average: no sample
    monkeypatch.setattr(os, "getloadavg", lambda: (1.5, 0.0, 0.0))
    monkeypatch.setattr(_common, "busy_now", lambda: 6.0)  # more than the average: the average
    assert _common.rank_threads() == 1


def test_busy_now_reads_proc_stat_once_per_while(monkeypatch):
    import os

    from profinsight.importers import _common

    if not os.path.exists("/proc/stat"):
        pytest.skip("no /proc/stat on this system")
    monkeypatch.setattr(_common, "_BUSY", [float("-inf"), None])
    first = _common.busy_now()
    assert first is not None and 0.0 <= first <= (os.cpu_count() or 1)
    _common._BUSY[1] = 123.0  # within BUSY_REUSE_S the sample is reused, not read again
    assert _common.busy_now() == 123.0


def test_busy_now_measures_from_the_mark_without_waiting_and_leaves_out_this_thread(monkeypatch):
    """The window begins where the import marked it: the sample waits only for what is left of
    it, and what this thread did meanwhile is not a busy core."""
    import os
    import time

    from profinsight.importers import _common

    ticks = os.sysconf("SC_CLK_TCK")
    stat = iter([(10_000, 8_000), (10_000 + 4 * ticks, 8_000)])  # 2 cores x 2 s, none idle
    cpu = iter([100.0, 101.0])  # this thread worked 1 s of it
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(_common, "_jiffies", lambda: next(stat))
    monkeypatch.setattr(time, "thread_time", lambda: next(cpu))
    monkeypatch.setattr(_common, "_BUSY", [float("-inf"), None])
    _common.mark_busy()
    _common._MARK[0] = (_common._MARK[0][0] - 2.0, *_common._MARK[0][1:])  # marked 2 s ago
    started = time.monotonic()
    assert _common.busy_now() == pytest.approx(1.5)  # 4 core-seconds busy, 1 of them ours: 3 of 4
    assert time.monotonic() - started < _common.BUSY_WINDOW_S / 2
    assert _common._MARK[0] is None  # a mark serves one sample


def test_a_csv_read_by_its_header_keeps_every_row_that_fits(tmp_path):
    """The fallback reader: a BOM, quoted names with commas, a repeated and an empty name, CRLF
    rows with one LF row among them, a quoted multi-line cell, empty and quoted-empty cells (NULL
    as the sniffing reader gives them, a blank stays), and rows with too few or too many cells
    (dropped and counted: the strict reader rejects both)."""
    path = tmp_path / "t.csv"
    path.write_bytes(
        b'\xef\xbb\xbf"Name, full",Dur,Dur,\r\n'
        b'"a ""x""",1,,3\r\n'
        b"b,4,5,6\n"
        b'"c\r\nd",7,8,9\r\n'
        b"bad,row\r\n"
        b"too,many,cells,in,this\r\n"
        b"trailing,1,2,3,\r\n"
        b'""," ",2,3\r\n'
    )
    assert header_names(path) == ["Name, full", "Dur", "Dur_1", "column3"]
    con = duck()
    assert read_csv_by_header(con, path, "t") == (4, 3)
    assert con.sql("SELECT * FROM t").fetchall() == [
        ('a "x"', "1", None, "3"),
        ("b", "4", "5", "6"),
        ("c\r\nd", "7", "8", "9"),
        (None, " ", "2", "3"),
    ]
    assert [r[0] for r in con.sql("DESCRIBE t").fetchall()] == ["Name, full", "Dur", "Dur_1", "column3"]
    assert con.sql("SELECT count(*) FROM duckdb_tables() WHERE table_name = 't_lenient'").fetchall() == [(0,)]
    assert header_names(tmp_path / "missing.csv") == []
