"""Host side: ``host_ops`` (framework events), ``steps``, ``api_calls`` (CANN) and the
per-instance durations of ``operator_details.csv``.

Text normalisation: ``input_shapes`` / ``input_dtypes`` / ``call_stack`` use the canonical forms
of :mod:`.._text` (shared with the DB importer) through their exact SQL twins in :mod:`._sql`:
lists joined by ``;`` without line breaks (``"32,3,224,224;\\r\\n64;\\r\\n"`` ->
``"32,3,224,224;64;"``, the trailing ``;`` being an empty last entry), frames joined by ``\\n``
innermost first.

operator_details.csv has no start time.  Its rows are the ``cpu_op`` events except
``ProfilerStep#N`` in (start, file) order -- verified on every fixture rank (859/859, names and
host durations equal).  The join uses that order, checks name and host duration, and falls back
to the n-th occurrence of (name, host duration) for rows the order does not explain.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._steps import build_steps, earliest_containing
from . import _files as F
from ._device import COMPUTE_HW

_STEP_RE = "'^ProfilerStep#(\\d+)$'"


def build_host_ops(con) -> None:
    """``host_ops`` from the framework slices (``op_id`` in start order; internal ``idx``), each
    with its step: the ``ProfilerStep#N`` whose host range contains its start (the earliest such
    step where ranges nest), found by :func:`.._steps.earliest_containing` and joined here, so
    the table is written once.  ``steps`` must exist.

    The same shapes, dtypes and call stacks come back in every step, so each distinct text is
    normalised once and joined back by value rather than normalised per op."""
    bounds = con.sql(
        "SELECT step, host_start_ns, host_end_ns FROM steps WHERE step IS NOT NULL "
        "AND host_start_ns IS NOT NULL AND host_end_ns IS NOT NULL"
    ).to_arrow_table()
    starts = con.sql("SELECT idx, start_ns FROM host").to_arrow_table()
    host_step = pa.table(
        {
            "idx": starts.column("idx"),
            "op_id": _start_order(starts),
            "step": earliest_containing(
                starts.column("start_ns"),
                bounds.column("host_start_ns"),
                bounds.column("host_end_ns"),
                bounds.column("step"),
            ),
        }
    )
    del starts
    con.register("host_step_arrow", host_step)
    try:
        con.execute(_HOST_OPS)
    finally:
        con.unregister("host_step_arrow")


def _start_order(starts: pa.Table) -> pa.Array:
    """Per row of ``starts`` (idx, start_ns) its position in (start_ns, idx) order, nulls last:
    ``op_id``.  Sorting these two columns here is what the statement that builds ``host_ops``
    did with a window over whole rows, call stacks included (4.4 s of a 1 GB import)."""
    order = pc.sort_indices(
        starts, sort_keys=[("start_ns", "ascending"), ("idx", "ascending")]
    ).to_numpy()  # nulls last
    pos = np.empty(len(order), dtype=np.int64)
    pos[order] = np.arange(len(order), dtype=np.int64)
    return pa.array(pos)


def _normalised(column: str, macro: str, alias: str) -> str:
    return (
        f"LEFT JOIN (SELECT raw, {macro}(raw) AS norm FROM (SELECT DISTINCT {column} AS raw FROM host "
        f"WHERE {column} IS NOT NULL)) {alias} ON {alias}.raw = h.{column}"
    )


_HOST_OPS = f"""CREATE OR REPLACE TABLE host_ops AS
    SELECT s.op_id, h.idx, h.pid, h.tid AS thread,
           CASE h.cat WHEN 'cpu_op' THEN 'op' WHEN 'python_function' THEN 'python'
                      WHEN 'user_annotation' THEN 'annotation' ELSE 'queue' END AS category,
           h.name, h.start_ns, h.dur_ns,
           nullif(TRY_CAST(h.a_sequence AS BIGINT), -1) AS sequence,
           nullif(TRY_CAST(h.a_fwd_thread AS BIGINT), 0) AS fwd_thread,
           d.norm AS input_shapes, t.norm AS input_dtypes, c.norm AS call_stack, s.step,
           CAST(NULL AS BIGINT) AS host_self_ns, CAST(NULL AS BIGINT) AS device_self_ns,
           CAST(NULL AS BIGINT) AS device_total_ns
    FROM host h
    {_normalised("a_input_dims", "norm_list", "d")}
    {_normalised("a_input_type", "norm_list", "t")}
    {_normalised("a_call_stack", "norm_stack", "c")}
    JOIN host_step_arrow s ON s.idx = h.idx"""


def build_steps_table(con, have_kd_steps: bool) -> None:
    """``steps`` (built before ``host_ops``, which takes its steps from it): host range of each
    ``ProfilerStep#N``; device range from the kernel_details
    rows with ``Step Id`` N (start = first start, end = max(last end, host end), the vendor's
    rule).  Without a Step Id column, tasks that start inside the host step are used."""
    con.execute(f"""CREATE OR REPLACE TABLE host_steps AS
        SELECT TRY_CAST(regexp_extract(name, {_STEP_RE}, 1) AS BIGINT) AS step,
               min(start_ns) AS host_start_ns, max(start_ns + dur_ns) AS host_end_ns
        FROM host WHERE cat = 'cpu_op' AND regexp_matches(name, {_STEP_RE}) GROUP BY step""")
    if have_kd_steps:
        con.execute("""CREATE OR REPLACE TABLE steps AS
            WITH dev AS (SELECT step, min(start_ns) AS s, max(start_ns + dur_ns) AS e FROM kd
                         WHERE step IS NOT NULL GROUP BY step)
            SELECT step, h.host_start_ns, h.host_end_ns, dev.s AS device_start_ns,
                   greatest(dev.e, h.host_end_ns) AS device_end_ns
            FROM host_steps h FULL OUTER JOIN dev USING (step) ORDER BY step""")
        return
    hs = con.execute("SELECT step, host_start_ns, host_end_ns FROM host_steps ORDER BY host_start_ns").fetchall()
    if con.sql("SELECT count(*) FROM kd").fetchall()[0][0]:
        src = "SELECT start_ns, dur_ns FROM kd"
    else:  # compute tasks and collectives only, as the vendor's rule (memcpys do not open a step)
        src = (
            f"SELECT start_ns, dur_ns FROM hw WHERE hw_task_type IN {COMPUTE_HW} "
            "UNION ALL SELECT start_ns, dur_ns FROM hccl_op"
        )
    t = con.sql(f"SELECT start_ns, start_ns + dur_ns AS end_ns FROM ({src})").to_arrow_table()
    con.register("steps_arrow", build_steps(hs, t.column("start_ns"), t.column("end_ns"), None))
    con.execute("CREATE OR REPLACE TABLE steps AS SELECT * FROM steps_arrow")
    con.unregister("steps_arrow")


_OD_DURATIONS = tuple(f"{who} {kind} Duration(us)" for who in ("Host", "Device") for kind in ("Self", "Total"))


def join_operator_details(con, inputs: F.Inputs, quiet: bool = False) -> None:
    """Copy operator_details.csv's host self / device self / device total durations onto the
    matching ``op`` rows (see the module docstring for the join).  ``quiet``: the trace is known
    to be damaged (reported elsewhere), so unmatched rows are not a separate finding."""
    cols = inputs.read_csv(con, F.OPERATORS, "od_raw")
    if cols is None:
        return
    p = lambda *n: F.pick(cols, *n)  # noqa: E731
    con.execute(f"""CREATE OR REPLACE TABLE od AS
        SELECT rowid AS od_row, clean({p("Name")}) AS name,
               dur_ns({p("Host Self Duration(us)")}) AS host_self_ns,
               dur_ns({p("Host Total Duration(us)")}) AS host_total_ns,
               dur_ns({p("Device Self Duration(us)")}) AS device_self_ns,
               dur_ns({p("Device Total Duration(us)")}) AS device_total_ns
        FROM od_raw""")
    inputs.report_unconverted(con, F.OPERATORS, "od_raw", cols, dict.fromkeys(_OD_DURATIONS, "dur_ns"))
    con.execute(_OD_JOIN)
    con.execute("""UPDATE host_ops SET host_self_ns = m.host_self_ns, device_self_ns = m.device_self_ns,
                   device_total_ns = m.device_total_ns FROM od_match m WHERE host_ops.op_id = m.op_id""")
    total, matched = con.sql("SELECT (SELECT count(*) FROM od), (SELECT count(*) FROM od_match)").fetchall()[0]
    has_ops = con.sql("SELECT count(*) FROM host_ops WHERE category = 'op'").fetchall()[0][0]
    if matched < total and has_ops and not quiet:
        inputs.add(
            "warning",
            "operator-details-unmatched",
            f"{total - matched} of {total} rows of {F.OPERATORS} match no cpu_op of trace_view.json; "
            "their host/device self times are not shown.",
            inputs.path(F.OPERATORS),
            "Use operator_details.csv and trace_view.json from the same export.",
        )


_OD_JOIN = f"""CREATE OR REPLACE TABLE od_match AS
    WITH ops AS (SELECT op_id, name, dur_ns, (row_number() OVER (ORDER BY start_ns, idx)) - 1 AS ord
                 FROM host_ops WHERE category = 'op' AND NOT regexp_matches(name, {_STEP_RE})),
    by_order AS (SELECT o.op_id, d.* FROM ops o JOIN od d ON d.od_row = o.ord AND d.name = o.name
                 WHERE abs(o.dur_ns - d.host_total_ns) <= 1000),
    rest_ops AS (SELECT *, row_number() OVER (PARTITION BY name, round(dur_ns / 1000) ORDER BY ord) AS occ
                 FROM ops WHERE op_id NOT IN (SELECT op_id FROM by_order)),
    rest_od AS (SELECT *, row_number() OVER (PARTITION BY name, round(host_total_ns / 1000) ORDER BY od_row) AS occ
                FROM od WHERE od_row NOT IN (SELECT od_row FROM by_order)),
    by_value AS (SELECT o.op_id, d.* EXCLUDE (occ) FROM rest_ops o JOIN rest_od d
                 ON d.name = o.name AND round(d.host_total_ns / 1000) = round(o.dur_ns / 1000) AND d.occ = o.occ)
    SELECT * FROM by_order UNION ALL SELECT * FROM by_value"""


def build_api_calls(con) -> None:
    """``api_calls`` from the CANN process: ``AscendCL@aclnnMuls`` -> level from args ``level``
    (else the prefix), name after ``@``, item from ``item_id``; pid = the framework process."""
    con.execute("""CREATE OR REPLACE TABLE api_calls AS
        SELECT (row_number() OVER (ORDER BY start_ns, idx)) - 1 AS call_id, idx, trace_pid, trace_tid,
               (SELECT CASE WHEN count(DISTINCT pid) = 1 THEN min(pid) END FROM host) AS pid,
               thread, level, name, start_ns, dur_ns, connection_id, item
        FROM (SELECT idx, pid AS trace_pid, tid AS trace_tid, start_ns, dur_ns,
                     coalesce(TRY_CAST(a_thread AS BIGINT), tid) AS thread,
                     lower(coalesce(clean(a_level), CASE split_part(name, '@', 1)
                         WHEN 'AscendCL' THEN 'acl' WHEN 'Node' THEN 'node' WHEN 'Hccl' THEN 'hccl'
                         WHEN 'Runtime' THEN 'runtime' WHEN 'Model' THEN 'model' END)) AS level,
                     CASE WHEN contains(name, '@') THEN substr(name, strpos(name, '@') + 1) ELSE name END AS name,
                     TRY_CAST(a_connection_id AS BIGINT) AS connection_id, clean(a_item) AS item
              FROM cann)
        ORDER BY call_id""")
