"""The innermost host op open around a point (``kineto._links.enclosing``), by arrays, against
the two window functions over the event stream that first computed it in SQL."""

from __future__ import annotations

import random

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from profinsight.importers.kineto import _links

#: the first form: op starts (+1), ends (-1) and points in one stream per thread; the running
#: sum before an event is the number of open ops; a point takes the latest start before it whose
#: "open ops including itself" equals the point's "open ops"
_BY_WINDOWS = """
    WITH pts AS (SELECT pt, pid, thread, ts_ns FROM points
                 WHERE pid IS NOT NULL AND thread IS NOT NULL AND ts_ns IS NOT NULL),
    threads AS (SELECT DISTINCT pid, thread FROM pts),
    ops AS (SELECT h.pid, h.thread, h.start_ns AS s, h.start_ns + h.dur_ns AS e, h.op_id
            FROM host h SEMI JOIN threads USING (pid, thread)
            WHERE h.category IN ('op', 'annotation') AND h.dur_ns > 0 AND h.start_ns IS NOT NULL),
    stream AS (
      SELECT pid, thread, s AS t, 1::TINYINT AS k, e, op_id AS id FROM ops
      UNION ALL SELECT pid, thread, e, 0::TINYINT, NULL, NULL FROM ops
      UNION ALL SELECT pid, thread, ts_ns, 2::TINYINT, NULL, pt FROM pts),
    depth AS (
      SELECT pid, thread, t, k, e, id,
             coalesce(sum(CASE k WHEN 1 THEN 1 WHEN 0 THEN -1 ELSE 0 END) OVER (
                  PARTITION BY pid, thread ORDER BY t, k, e DESC, id
                  ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)::INTEGER AS open_before
      FROM stream),
    keyed AS (
      SELECT k, id, last_value(CASE WHEN k = 1 THEN id END IGNORE NULLS) OVER (
                  PARTITION BY pid, thread, open_before + (k = 1)::INTEGER
                  ORDER BY t, k, e DESC, id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
               AS op_id
      FROM depth WHERE k <> 0)
    SELECT id AS pt, op_id FROM keyed WHERE k = 2 AND op_id IS NOT NULL"""


def _case(seed: int, nested: bool):
    """Ops on a few threads of two processes -- nested, or (``nested=False``) also overlapping
    without nesting, the case where the depth key and containment differ -- with equal starts,
    equal ends, zero-length ops, other categories, nulls, and points on op boundaries."""
    rnd = random.Random(seed)
    host = {k: [] for k in ("pid", "thread", "category", "start_ns", "dur_ns", "op_id")}
    for i in range(rnd.randint(0, 400)):
        s = rnd.randint(0, 60) * 10
        d = rnd.choice([0, 10, 20, 50, 100, 300, 1000])
        timed = [j for j, v in enumerate(host["start_ns"]) if v is not None]
        if nested and timed and rnd.random() < 0.6:  # inside an earlier op of this thread
            j = rnd.choice(timed)
            s = host["start_ns"][j] + rnd.randint(0, max(host["dur_ns"][j], 1) // 10) * 10
            d = rnd.randint(0, max(0, host["start_ns"][j] + host["dur_ns"][j] - s) // 10) * 10
            pid, thread = host["pid"][j], host["thread"][j]
        else:
            pid, thread = rnd.choice([1, 2, None]), rnd.choice([7, 8, 9, None])
        host["pid"].append(pid)
        host["thread"].append(thread)
        host["category"].append(rnd.choice(["op", "op", "annotation", "python"]))
        host["start_ns"].append(s if rnd.random() > 0.02 else None)
        host["dur_ns"].append(d)
        host["op_id"].append(i)
    n = rnd.randint(0, 300)
    points = {
        "pt": list(range(1000, 1000 + n)),
        "pid": [rnd.choice([1, 2, 2, None]) for _ in range(n)],
        "thread": [rnd.choice([7, 8, 9, 10]) for _ in range(n)],
        "ts_ns": [rnd.choice([rnd.randint(0, 700), rnd.randint(0, 70) * 10, None]) for _ in range(n)],
    }
    return pa.table(host, schema=_HOST), pa.table(points, schema=_POINTS)


_HOST = pa.schema(
    [("pid", pa.int64()), ("thread", pa.int64()), ("category", pa.string()), ("start_ns", pa.int64()),
     ("dur_ns", pa.int64()), ("op_id", pa.int64())]
)  # fmt: skip
_POINTS = pa.schema([("pt", pa.int64()), ("pid", pa.int64()), ("thread", pa.int64()), ("ts_ns", pa.int64())])


@pytest.mark.parametrize("nested", [True, False])
@pytest.mark.parametrize("seed", range(12))
def test_enclosing_by_arrays_equals_the_window_functions(seed, nested):
    host, points = _case(seed, nested)
    con = duckdb.connect()
    con.register("host", host)
    con.register("points", points)
    want = sorted(con.sql(_BY_WINDOWS).fetchall())
    _links.enclosing(con, "SELECT pt, pid, thread, ts_ns FROM points", "found")
    assert sorted(con.sql("SELECT pt, op_id FROM found").fetchall()) == want
    assert con.sql("SELECT typeof(pt), typeof(op_id) FROM found LIMIT 1").fetchall() in ([], [("BIGINT", "BIGINT")])


def test_the_innermost_op_and_the_boundaries():
    """A point at an op's start is inside it, at its end outside; of two ops starting together
    the shorter is inside the longer; a zero-length op encloses nothing; another thread's op
    never does."""
    i64 = lambda *v: np.array(v, dtype=np.int64)  # noqa: E731
    ops = (i64(7, 7, 7, 8), i64(0, 0, 50, 0), i64(100, 40, 60, 1000), i64(10, 11, 12, 13))
    points = (i64(7, 7, 7, 7, 9), i64(0, 40, 55, 100, 5), i64(1, 2, 3, 4, 5))
    pt, op = _links.innermost_open(ops, points)
    assert dict(zip(pt.tolist(), op.tolist())) == {1: 11, 2: 10, 3: 12}


def test_a_nesting_deeper_than_a_16_bit_sort_key():
    """70,000 ops nested on one thread and a few on another: the (thread, depth) key no longer
    fits the 16-bit radix sort, and the 64-bit sort gives the same innermost ops."""
    n = 70_000
    i = np.arange(n, dtype=np.int64)
    th = np.concatenate([np.zeros(n, np.int64), [1, 1]])
    starts = np.concatenate([2 * i, [0, 10]])
    ends = np.concatenate([4 * n - 2 * i, [100, 20]])
    ids = np.arange(n + 2, dtype=np.int64)
    probe = np.array([0, 1, 2 * (n - 1), 2 * (n - 1) + 1, 4 * n - 1, 4 * n], np.int64)
    points = (
        np.array([0, 0, 0, 0, 0, 0, 1, 1, 1], np.int64),
        np.concatenate([probe, [5, 15, 100]]),
        np.arange(100, 109, dtype=np.int64),
    )
    pt, op = _links.innermost_open((th, starts, ends, ids), points)
    # at 2k an op starts (it is inside it), at 4n - 1 only the outermost is open, at 4n none
    assert dict(zip(pt.tolist(), op.tolist())) == {100: 0, 101: 0, 102: n - 1, 103: n - 1, 104: 0, 106: n, 107: n + 1}
