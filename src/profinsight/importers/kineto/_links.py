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

"Innermost op enclosing a point" is computed vectorised with the nesting depth: per thread,
intervals sorted by (start, end desc); depth = intervals started before minus intervals ended
by the start; the parent of a point is the latest interval before it one level up (one ASOF
join).  No per-event Python.
"""
from __future__ import annotations


def enclosing(con, points_sql: str, out: str) -> None:
    """Create table ``out(pt, op_id)``: for each point ``(pt, pid, thread, ts_ns)`` of
    ``points_sql`` the innermost host op (cpu_op / user_annotation) enclosing it on its thread."""
    con.execute(f"""
    CREATE OR REPLACE TEMP TABLE iv AS
      SELECT pid, thread, start_ns AS s, start_ns + dur_ns AS e, op_id AS id, 0 AS is_pt FROM host
      WHERE category IN ('op', 'annotation') AND pid IS NOT NULL AND thread IS NOT NULL
        AND start_ns IS NOT NULL
      UNION ALL
      SELECT pid, thread, ts_ns, ts_ns, pt, 1 FROM ({points_sql})
      WHERE pid IS NOT NULL AND thread IS NOT NULL AND ts_ns IS NOT NULL""")
    con.execute("""
    CREATE OR REPLACE TEMP TABLE iv_ord AS
      SELECT *, row_number() OVER w AS ord,
             coalesce(sum(1 - is_pt) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)
               AS opened
      FROM iv WINDOW w AS (PARTITION BY pid, thread ORDER BY s, e DESC, is_pt, id)""")
    con.execute("""
    CREATE OR REPLACE TEMP TABLE iv_end AS
      SELECT DISTINCT pid, thread, e,
             count(*) OVER (PARTITION BY pid, thread ORDER BY e
                            RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS closed
      FROM iv WHERE is_pt = 0""")
    con.execute("""
    CREATE OR REPLACE TEMP TABLE iv_depth AS
      SELECT i.*, i.opened - coalesce(x.closed, 0) AS depth,
             i.opened - coalesce(x.closed, 0) - 1 AS parent_depth
      FROM iv_ord i ASOF LEFT JOIN iv_end x
        ON i.pid = x.pid AND i.thread = x.thread AND i.s >= x.e""")
    con.execute(f"""
    CREATE OR REPLACE TEMP TABLE {out} AS
      SELECT p.id AS pt, o.id AS op_id
      FROM (SELECT * FROM iv_depth WHERE is_pt = 1) p
      ASOF JOIN (SELECT * FROM iv_depth WHERE is_pt = 0) o
        ON p.pid = o.pid AND p.thread = o.thread AND p.parent_depth = o.depth AND p.ord > o.ord
      WHERE o.e >= p.s""")
    for t in ("iv", "iv_ord", "iv_end", "iv_depth"):
        con.execute(f"DROP TABLE {t}")


def create_links(con) -> None:
    """Tables ``task_launch(task_uid, call_id, launch_ns)`` and ``links`` (the launches rows)."""
    con.execute("""
    CREATE OR REPLACE TEMP TABLE corr_link AS
      SELECT d.task_uid, a.call_id, a.start_ns AS launch_ns
      FROM dev d JOIN api a ON d.connection_id = a.connection_id""")
    con.execute("""
    CREATE OR REPLACE TEMP TABLE task_launch AS
      SELECT task_uid, arg_min(call_id, launch_ns) AS call_id, min(launch_ns) AS launch_ns
      FROM corr_link GROUP BY task_uid""")
    enclosing(con, "SELECT call_id AS pt, pid, thread, start_ns AS ts_ns FROM api "
                   "WHERE call_id IN (SELECT call_id FROM task_launch)", "call_enc")
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
    con.execute("""
    CREATE OR REPLACE TEMP TABLE host_link AS
      SELECT task_uid, op_id, 'external_id' AS link FROM ext_link
      UNION ALL
      SELECT t.task_uid, e.op_id, 'enclosing' FROM task_launch t JOIN call_enc e ON e.pt = t.call_id
      WHERE t.task_uid NOT IN (SELECT task_uid FROM ext_link)""")
    con.execute("""
    CREATE OR REPLACE TEMP TABLE links AS
      SELECT NULL::BIGINT AS host_op_id, call_id AS api_call_id, task_uid, 'correlation' AS link
      FROM corr_link
      UNION ALL
      SELECT op_id, NULL::BIGINT, task_uid, link FROM host_link""")


LAUNCHES = "SELECT host_op_id, api_call_id, task_uid, link FROM links ORDER BY task_uid, link"

# the call's own `kernel` arg (ROCm) or the name of the (first) task it launched
API_CALLS = """
    SELECT a.call_id, a.pid, a.thread, a.level, a.name, a.start_ns, a.dur_ns, a.connection_id,
           coalesce(a.item, f.name) AS item, a.external_id
    FROM api a LEFT JOIN (
        SELECT c.call_id, arg_min(d.name, d.start_ns) AS name
        FROM corr_link c JOIN dev d ON d.task_uid = c.task_uid GROUP BY c.call_id) f
      ON f.call_id = a.call_id
    ORDER BY a.start_ns, a.call_id"""
