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


def enclosing(con, points_sql: str, out: str) -> None:
    """Create table ``out(pt, op_id)``: for each point ``(pt, pid, thread, ts_ns)`` of
    ``points_sql`` the innermost host op (cpu_op / user_annotation) enclosing it on its thread.

    Per thread, op starts (+1), op ends (-1) and points are put in time order (ends first,
    then starts, outer before inner, then points); the running sum before an event is the
    number of ops open there.  An op start gets the key "open ops including itself", a point
    "open ops"; the innermost op around a point is the latest start before it with the same
    key (two window functions, no per-event Python).  Zero-length ops enclose nothing."""
    con.execute(f"""
    CREATE OR REPLACE TEMP TABLE {out} AS
    WITH pts AS (
      SELECT pt, pid, thread, ts_ns FROM ({points_sql})
      WHERE pid IS NOT NULL AND thread IS NOT NULL AND ts_ns IS NOT NULL),
    threads AS (SELECT DISTINCT pid, thread FROM pts),
    ops AS (  -- only threads that launched something matter
      SELECT h.pid, h.thread, h.start_ns AS s, h.start_ns + h.dur_ns AS e, h.op_id
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
    SELECT id AS pt, op_id FROM keyed WHERE k = 2 AND op_id IS NOT NULL""")


#: the most threads the launching calls' enclosing ops are found on (:func:`enclosing`, most of
#: the link step): its window sorts hold a partition set per thread.  Measured on 2 cores, one
#: thread -> two: 100 MB trace 0.19 -> 0.12 s for the step, 300 MB 0.55 -> 0.33 s, 1 GB 1.91 ->
#: 1.20 s, and the import's peak RSS the same (443-461 / 852-865 / 1,540 MB against 436-492 /
#: 860-869 / 1,553 MB: the step is not where the import peaks)
ENCLOSING_THREADS = 2


def create_links(con) -> None:
    """Tables ``corr_link``, ``task_launch(task_uid, call_id, launch_ns)``, ``host_link`` and
    the view ``links`` (the launches rows).  The joins run on one thread, which keeps their row
    order and their choice among equal launch times as they always were; the enclosing ops
    (unique per call, whatever the order) on up to :data:`ENCLOSING_THREADS`."""
    threads = int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])
    con.execute("SET threads = 1")
    try:
        _create_links(con, max(1, min(threads, ENCLOSING_THREADS)))
    finally:
        con.execute(f"SET threads = {threads}")


def _create_links(con, enclosing_threads: int) -> None:
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
    con.execute(f"SET threads = {int(enclosing_threads)}")
    enclosing(
        con,
        "SELECT call_id AS pt, pid, thread, start_ns AS ts_ns FROM api WHERE call_id IN "
        "(SELECT call_id FROM task_launch WHERE task_uid NOT IN (SELECT task_uid FROM ext_link))",
        "call_enc",
    )
    con.execute("SET threads = 1")
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
