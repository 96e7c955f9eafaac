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
    third of the time (68 k launching calls of the 100 MB trace: 0.18 s of CPU in SQL)."""
    pts = con.sql(f"""
        SELECT pt, pid, thread, ts_ns FROM ({points_sql})
        WHERE pid IS NOT NULL AND thread IS NOT NULL AND ts_ns IS NOT NULL""").to_arrow_table()
    con.register("enclosing_points", pts)
    try:  # only threads that launched something matter
        ops = con.sql("""
            SELECT h.pid, h.thread, h.start_ns, h.start_ns + h.dur_ns AS end_ns, h.op_id
            FROM host h SEMI JOIN (SELECT DISTINCT pid, thread FROM enclosing_points) USING (pid, thread)
            WHERE h.category IN ('op', 'annotation') AND h.dur_ns > 0 AND h.start_ns IS NOT NULL""").to_arrow_table()
    finally:
        con.unregister("enclosing_points")

    def col(table: pa.Table, name: str) -> np.ndarray:
        return np.asarray(table.column(name).combine_chunks().to_numpy(zero_copy_only=False), dtype=np.int64)

    pt, op_id = innermost_open(
        (col(ops, "pid"), col(ops, "thread"), col(ops, "start_ns"), col(ops, "end_ns"), col(ops, "op_id")),
        (col(pts, "pid"), col(pts, "thread"), col(pts, "ts_ns"), col(pts, "pt")),
    )
    con.register("enclosing_found", pa.table({"pt": pt, "op_id": op_id}))
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {out} AS SELECT pt, op_id FROM enclosing_found")
    finally:
        con.unregister("enclosing_found")


def innermost_open(ops: tuple, points: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The points that have an op open around them (by the depth key of :func:`enclosing`) and
    that op: ``ops`` = (pid, thread, start, end, id) and ``points`` = (pid, thread, time, id),
    int64 arrays, ops of positive length -> (point ids, op ids).

    The stream is sorted as the SQL of the first form sorted it (thread, time, kind with ends
    before starts before points, longer starts first, then id), the number of open ops before
    each event is a running sum restarted per thread, and the last start of each (thread, key)
    before a point is carried forward over a second, stable sort."""
    o_pid, o_tid, o_s, o_e, o_id = ops
    p_pid, p_tid, p_t, p_id = points
    n_o, n_p = len(o_s), len(p_t)
    if not n_p:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    zeros = np.zeros(n_o, np.int64)
    pid = np.concatenate([o_pid, o_pid, p_pid])
    tid = np.concatenate([o_tid, o_tid, p_tid])
    t = np.concatenate([o_s, o_e, p_t])
    kind = np.concatenate([np.ones(n_o, np.int8), np.zeros(n_o, np.int8), np.full(n_p, 2, np.int8)])
    # within a time: ends (0), then starts (1) outer first (end descending) then by id, then
    # points by id; ends among themselves in any order (each only closes an op)
    neg_end = np.concatenate([-o_e, zeros, np.zeros(n_p, np.int64)])
    ident = np.concatenate([o_id, zeros, p_id])
    order = np.lexsort((ident, neg_end, kind, t, tid, pid))
    pid, tid, kind, ident = pid[order], tid[order], kind[order], ident[order]
    new_thread = np.ones(len(order), bool)
    new_thread[1:] = (pid[1:] != pid[:-1]) | (tid[1:] != tid[:-1])
    step = np.where(kind == 1, 1, np.where(kind == 0, -1, 0)).astype(np.int64)
    before = np.cumsum(step) - step  # open ops before each event, over every thread so far
    first = np.flatnonzero(new_thread)
    before -= np.repeat(before[first], np.diff(np.append(first, len(order))))
    key = before + (kind == 1)
    # starts and points of one (thread, key) side by side, in stream order
    keep = np.flatnonzero(kind != 0)
    by = keep[np.lexsort((keep, key[keep], tid[keep], pid[keep]))]
    b_pid, b_tid, b_key, b_kind = pid[by], tid[by], key[by], kind[by]
    new_run = np.ones(len(by), bool)
    new_run[1:] = (b_pid[1:] != b_pid[:-1]) | (b_tid[1:] != b_tid[:-1]) | (b_key[1:] != b_key[:-1])
    run_start = np.maximum.accumulate(np.where(new_run, np.arange(len(by)), 0))
    last_start = np.maximum.accumulate(np.where(b_kind == 1, np.arange(len(by)), -1))
    found = (b_kind == 2) & (last_start >= run_start)
    return ident[by][found], ident[by[last_start[found]]]


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
