"""Launch links: runtime call -> device task, host op -> device task, host op enclosing a point.

Why three rules (reference 5.6):

* ``correlation``: a kernel/copy and the runtime call that launched it share
  ``args.correlation``; exact and always present on CUDA/ROCm traces.
* ``external_id``: a device task's ``External id`` names the innermost ``cpu_op`` /
  ``user_annotation`` open at launch time.  Older traces (the HTA samples) instead copy the
  correlation into ``External id``, where it collides with small host ids by chance, so a match
  only counts when that host op really encloses the launching call (or, without a call, starts
  before the task).
* ``enclosing``: when no id matches, the innermost host op open on the launching thread at the
  launch — what Kineto's ``External id`` would have named.

"Innermost op enclosing a point" is computed vectorised from the nesting depth (see
:func:`enclosing`); no per-event Python.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def enclosing(con, points_sql: str, out: str) -> None:
    """Create table ``out(pt, op_id)``: for each point ``(pt, pid, thread, ts_ns)`` of
    ``points_sql`` the innermost host op (cpu_op / user_annotation) enclosing it on its thread.

    Per thread, op starts (+1), op ends (-1) and points are put in time order (ends first,
    then starts, outer before inner, then points); the running sum before an event is the
    number of ops open there.  An op start gets the key "open ops including itself", a point
    "open ops"; the innermost op around a point is the latest start before it with the same
    key.  Zero-length ops enclose nothing.  Two sorts over arrays (:func:`innermost_open`), no
    per-event Python: the same answer as two window functions over the stream in SQL, in a
    third of the time (68 k launching calls of the 100 MB trace: 0.18 s of CPU in SQL).

    The threads are numbered here, in (pid, thread) order, so that the arrays carry one small
    code per event instead of two 64-bit ids (at 1 GB, 3.4 M stream events: the arrays were
    the import's peak, 0.7 GB above the tables)."""
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE enclosing_points AS
        SELECT pt, pid, thread, ts_ns FROM ({points_sql})
        WHERE pid IS NOT NULL AND thread IS NOT NULL AND ts_ns IS NOT NULL""")
    try:
        con.execute("""
            CREATE OR REPLACE TEMP TABLE enclosing_threads AS
            SELECT pid, thread, (row_number() OVER (ORDER BY pid, thread))::INTEGER AS th
            FROM (SELECT DISTINCT pid, thread FROM enclosing_points)""")
        pts = con.sql("SELECT th, ts_ns, pt FROM enclosing_points JOIN enclosing_threads USING (pid, thread)")
        points = _int_columns(pts.to_arrow_table())
        # only threads that launched something matter
        ops = con.sql("""
            SELECT th, h.start_ns, h.start_ns + h.dur_ns AS end_ns, h.op_id
            FROM host h JOIN enclosing_threads USING (pid, thread)
            WHERE h.category IN ('op', 'annotation') AND h.dur_ns > 0 AND h.start_ns IS NOT NULL""")
        ops = _int_columns(ops.to_arrow_table())
    finally:
        con.execute("DROP TABLE IF EXISTS enclosing_threads")
        con.execute("DROP TABLE enclosing_points")
    pt, op_id = innermost_open(ops, points)
    del ops, points
    con.register("enclosing_found", pa.table({"pt": pt, "op_id": op_id}))
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {out} AS SELECT pt, op_id FROM enclosing_found")
    finally:
        con.unregister("enclosing_found")


def _int_columns(table: pa.Table) -> tuple[np.ndarray, ...]:
    """The columns of ``table`` as NumPy arrays of their own integer type (no nulls)."""
    return tuple(np.asarray(c.combine_chunks().to_numpy(zero_copy_only=False)) for c in table.columns)


def innermost_open(ops: tuple, points: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The points that have an op open around them (by the depth key of :func:`enclosing`) and
    that op: ``ops`` = (thread, start, end, id) and ``points`` = (thread, time, id), integer
    arrays (a thread is any integer code), ops of positive length -> (point ids, op ids), in
    the order of (thread, key, time).

    The stream is sorted as the SQL of the first form sorted it (thread, time, kind with ends
    before starts before points, longer starts first, then id); the number of open ops before
    each event is a running sum (each op starts and ends on its thread, so the sum is back to
    zero where a thread's events end and needs no restart), and the last start of each
    (thread, key) before a point is carried forward over a second, stable sort.  Arrays no
    longer needed are dropped as it goes: at 3.4 M events each 64-bit array is 27 MB."""
    o_th, o_s, o_e, o_id = ops
    p_th, p_t, p_id = points
    n_o, n_p = len(o_s), len(p_t)
    if not n_p:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    th = np.concatenate([o_th, o_th, p_th])
    t = np.concatenate([o_s, o_e, p_t])
    kind = np.repeat(np.array([1, 0, 2], np.int8), [n_o, n_o, n_p])
    # within a time: ends (0), then starts (1) outer first (end descending) then by id, then
    # points by id; ends among themselves in any order (each only closes an op)
    zeros = np.zeros(n_o, np.int64)
    neg_end = np.concatenate([np.negative(o_e, dtype=np.int64), zeros, np.zeros(n_p, np.int64)])
    ident = np.concatenate([np.asarray(o_id, np.int64), zeros, np.asarray(p_id, np.int64)])
    del zeros
    order = np.lexsort((ident, neg_end, kind, t, th))
    del t, neg_end
    th, kind, ident = th[order], kind[order], ident[order]
    del order
    step = (kind == 1).astype(np.int64) - (kind == 0)
    key = np.cumsum(step)  # open ops after each event ...
    key -= step  # ... and before it
    del step
    key += kind == 1
    # starts and points of one (thread, key) side by side, in stream order: a stable sort by
    # (thread, key) in one integer, the thread numbered in stream order
    keep = np.flatnonzero(kind != 0)
    kind = kind[keep]
    k_th = th[keep]
    del th
    run = np.ones(len(keep), np.int64)
    run[1:] = k_th[1:] != k_th[:-1]
    del k_th
    np.cumsum(run, out=run)
    run *= int(key.max()) + 1
    run += key[keep]
    del key
    if run.max() < 1 << 16:  # a radix sort
        sort = np.argsort(run.astype(np.uint16), kind="stable")
    else:
        sort = np.argsort(run, kind="stable")
    by, run, kind = keep[sort], run[sort], kind[sort]
    del keep, sort
    pos = np.arange(len(by), dtype=np.int64)
    new_run = np.ones(len(by), bool)
    new_run[1:] = run[1:] != run[:-1]
    del run
    run_start = np.maximum.accumulate(np.where(new_run, pos, 0))
    del new_run
    last_start = np.maximum.accumulate(np.where(kind == 1, pos, -1))
    del pos
    found = np.flatnonzero((kind == 2) & (last_start >= run_start))
    return ident[by[found]], ident[by[last_start[found]]]


def create_links(con) -> None:
    """Tables ``corr_link``, ``task_launch(task_uid, call_id, launch_ns)``, ``host_link`` and
    the view ``links`` (the launches rows).  The joins run on one thread, which keeps their row
    order and their choice among equal launch times as they always were."""
    threads = int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])
    con.execute("SET threads = 1")
    try:
        _create_links(con)
    finally:
        con.execute(f"SET threads = {threads}")


def _create_links(con) -> None:
    con.execute("""
    CREATE OR REPLACE TEMP TABLE corr_link AS
      SELECT d.task_uid, a.call_id, a.start_ns AS launch_ns
      FROM dev d JOIN api a ON d.connection_id = a.connection_id""")
    con.execute("""
    CREATE OR REPLACE TEMP TABLE task_launch AS
      SELECT task_uid, arg_min(call_id, launch_ns) AS call_id, min(launch_ns) AS launch_ns
      FROM corr_link GROUP BY task_uid""")
    con.execute("""
    CREATE OR REPLACE TEMP TABLE ext_link AS
      SELECT d.task_uid, h.op_id
      FROM dev d LEFT JOIN task_launch t ON t.task_uid = d.task_uid
      JOIN host h ON h.external_id = d.external_id AND h.category IN ('op', 'annotation')
      WHERE d.external_id IS NOT NULL AND (
            (t.launch_ns IS NOT NULL AND h.start_ns <= t.launch_ns
             AND t.launch_ns <= h.start_ns + h.dur_ns)
         OR (t.launch_ns IS NULL AND h.start_ns <= d.start_ns))
      QUALIFY row_number() OVER (PARTITION BY d.task_uid
                                 ORDER BY h.start_ns DESC, h.dur_ns, h.op_id) = 1""")
    # only the calls whose tasks no External id links need their enclosing op (where the tasks
    # carry a matching External id, as on ROCm and older CUDA traces, that is almost none); the
    # op found for a call depends on its own thread's ops only, so the answers are the same
    enclosing(
        con,
        "SELECT call_id AS pt, pid, thread, start_ns AS ts_ns FROM api WHERE call_id IN "
        "(SELECT call_id FROM task_launch WHERE task_uid NOT IN (SELECT task_uid FROM ext_link))",
        "call_enc",
    )
    con.execute("""
    CREATE OR REPLACE TEMP TABLE host_link AS
      SELECT task_uid, op_id, 'external_id' AS link FROM ext_link
      UNION ALL
      SELECT t.task_uid, e.op_id, 'enclosing' FROM task_launch t JOIN call_enc e ON e.pt = t.call_id
      WHERE t.task_uid NOT IN (SELECT task_uid FROM ext_link)""")
    con.execute("DROP TABLE call_enc")
    con.execute("DROP TABLE ext_link")
    con.execute("""
    CREATE OR REPLACE TEMP VIEW links AS
      SELECT NULL::BIGINT AS host_op_id, call_id AS api_call_id, task_uid, 'correlation' AS link
      FROM corr_link
      UNION ALL
      SELECT op_id, NULL::BIGINT, task_uid, link FROM host_link""")


LAUNCHES = "SELECT host_op_id, api_call_id, task_uid, link FROM links ORDER BY task_uid, link"
