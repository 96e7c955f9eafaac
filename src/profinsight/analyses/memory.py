"""Device memory: the allocator curves over time, the peak and the spikes with the operators
behind them, and the operators that allocate most.

Everything is computed from ``memory_samples`` (one sample per allocator event or periodic
process reading) and ``memory_blocks`` (one row per tensor allocation).  Sizes are bytes; the
``*_mib`` columns are the same values in binary MiB (2^20 bytes, the unit of the Ascend memory
CSVs) for reading.  Host memory is not in these profiles: an Ascend profile records device
memory only (Kineto's ``CPU`` allocator events, where present, are PyTorch's CPU tensors, not the
process's memory).
"""

from __future__ import annotations

import pandas as pd

from ..registry import Chart, Param, analysis
from ._sql import query, scope

MIB = float(1 << 20)

# A block belongs to a sample component when the names agree; the composite curves (PTA+GE =
# framework + graph engine, APP = the process's device memory) cover every device block.
_COVERS = (
    "(b.component = e.component OR (e.component = 'PTA+GE' AND b.component IN ('PTA', 'GE'))"
    " OR (e.component IN ('APP', 'WORKSPACE') AND b.component NOT IN ('CPU')))"
)
# live at time e.ts_ns: allocated at or before it (or before the window) and not yet freed
_LIVE = "(b.alloc_ns IS NULL OR b.alloc_ns <= e.ts_ns) AND (b.release_ns IS NULL OR b.release_ns > e.ts_ns)"
# "aten::empty_strided 64.0 MiB; aten::mm 16.0 MiB x3" — top 5 op names by bytes
_OPS_TEXT = (
    "string_agg(name || ' ' || printf('%.1f', nbytes / 1048576.0) || ' MiB'"
    " || CASE WHEN n > 1 THEN ' x' || n ELSE '' END, '; ' ORDER BY nbytes DESC, name)"
    " FILTER (WHERE k <= 5)"
)


def _filters(rank=None, component=None, alias: str = "") -> str:
    """SQL condition for the optional filters (values inlined: an int and a quoted literal)."""
    cond = scope(rank, alias=alias)
    if component is not None:
        a = f"{alias}." if alias else ""
        cond += f" AND upper({a}component) = upper({_literal(component)})"
    return cond


def _literal(text) -> str:
    return "'" + str(text).replace("'", "''") + "'"


_T0 = "(SELECT min(ts_ns) FROM memory_samples)"

CURVE_COLUMNS = {
    "rank": "rank",
    "device": "device index",
    "component": "PTA / GE / PTA+GE / APP / WORKSPACE / CUDA / CPU",
    "ts_ns": "sample time, epoch ns",
    "t_ms": "ms since the first memory sample of the profile",
    "allocated_bytes": "allocator total allocated (null for APP)",
    "reserved_bytes": "total reserved",
    "active_bytes": "total active (null where not recorded)",
    "allocated_mib": "allocated, MiB (2^20)",
    "reserved_mib": "reserved, MiB",
    "active_mib": "active, MiB",
}


@analysis(
    "memory_curve",
    title="Device memory over time",
    params=(
        Param("component", str, None, help="one component (PTA, GE, PTA+GE, APP, CUDA ...); all when omitted"),
        Param(
            "max_points",
            int,
            None,
            help="down-sample each (rank, component) curve to about this many "
            "points, keeping each time bucket's min and max (the peak always survives)",
        ),
        Param("rank", int, None, help="one rank; all when omitted"),
    ),
    chart=Chart(
        "line", "t_ms", ("allocated_mib", "reserved_mib"), title="device memory (MiB)", series=("rank", "component")
    ),
    columns=CURVE_COLUMNS,
)
def memory_curve(profile, component=None, max_points=None, rank=None) -> pd.DataFrame:
    """Allocated / reserved / active device memory over time, per rank and component.  With
    ``max_points`` each curve is cut into equal time buckets and only the lowest and highest
    sample of each bucket is kept (plus the curve's highest reserved sample), so a chart of the
    result keeps every peak and trough; host memory is not in these profiles."""
    where = _filters(rank, component)
    cols = "rank, device, component, ts_ns, allocated_bytes, reserved_bytes, active_bytes"
    if max_points is None:
        kept = f"SELECT {cols} FROM memory_samples WHERE {where}"
    else:
        kept = _downsample_sql(where, cols, max(3, int(max_points)))
    sql = f"""
    WITH k AS ({kept})
    SELECT rank, device, component, ts_ns, (ts_ns - {_T0}) / 1e6 AS t_ms,
           allocated_bytes, reserved_bytes, active_bytes,
           allocated_bytes / {MIB} AS allocated_mib, reserved_bytes / {MIB} AS reserved_mib,
           active_bytes / {MIB} AS active_mib
    FROM k ORDER BY rank, component, ts_ns"""
    return query(profile, sql)


def _downsample_sql(where: str, cols: str, max_points: int) -> str:
    """Samples kept of each (rank, component) curve: all of a curve with at most ``max_points``
    samples; else, per equal time bucket (``(max_points - 1) // 2`` of them), the lowest and the
    highest sample (earliest on ties), plus the curve's highest reserved sample.  Aggregates,
    not window ranks, so that millions of samples cost one pass."""
    nb = max(1, (max_points - 1) // 2)
    big = (1 << 63) - 1
    return f"""
      WITH s AS MATERIALIZED (
        SELECT {cols}, coalesce(allocated_bytes, reserved_bytes) AS v FROM memory_samples WHERE {where}),
      st AS (SELECT rank, component, count(*) AS n, min(ts_ns) AS lo, max(ts_ns) AS hi FROM s GROUP BY ALL),
      j AS MATERIALIZED (
        SELECT s.*, st.n, floor((s.ts_ns - st.lo) * {nb}.0 / (st.hi - st.lo + 1))::BIGINT AS bucket
        FROM s JOIN st USING (rank, component)),
      picks AS (
        SELECT rank, component, unnest([arg_max(ts_ns, (coalesce(v, -1), -ts_ns)),
                                        arg_min(ts_ns, (coalesce(v, {big}), ts_ns))]) AS ts_ns
        FROM j WHERE n > {max_points} GROUP BY rank, component, bucket
        UNION ALL
        SELECT rank, component, arg_max(ts_ns, (coalesce(reserved_bytes, -1), -ts_ns))
        FROM j WHERE n > {max_points} GROUP BY rank, component)
      SELECT {cols} FROM j WHERE n <= {max_points}
      UNION ALL
      SELECT {cols} FROM (SELECT * FROM j WHERE n > {max_points}) SEMI JOIN picks USING (rank, component, ts_ns)"""


PEAK_COLUMNS = {
    "rank": "rank",
    "component": "memory component",
    "kind": "peak_allocated / peak_reserved / spike",
    "ts_ns": "sample time, epoch ns",
    "t_ms": "ms since the first memory sample",
    "allocated_bytes": "total allocated at that sample",
    "reserved_bytes": "total reserved at that sample",
    "delta_bytes": "spike: jump of allocated from the previous sample of the same curve",
    "allocated_mib": "allocated, MiB",
    "live_bytes": "bytes of the recorded blocks live at that time",
    "live_blocks": "number of those blocks",
    "share_of_allocated_ratio": "live_bytes / allocated_bytes (the rest was allocated before the capture)",
    "ops": "peaks: the ops holding the live blocks; spikes: the ops whose allocations made the jump; "
    "largest first, top 5 names",
}


@analysis(
    "memory_peaks",
    title="Memory peaks and spikes",
    params=(
        Param("top", int, 5, help="spikes kept per rank and component"),
        Param("rank", int, None, help="one rank; all when omitted"),
    ),
    columns=PEAK_COLUMNS,
)
def memory_peaks(profile, top=5, rank=None) -> pd.DataFrame:
    """The peak of each memory curve (highest allocated, and highest reserved) and its largest
    spikes (jumps of allocated between consecutive samples), each with the operators behind it:
    at a peak the operators whose blocks are live then, at a spike those whose allocations made
    the jump."""
    where = _filters(rank)
    sql = f"""
    WITH s AS MATERIALIZED (
      SELECT rank, component, ts_ns, allocated_bytes, reserved_bytes,
             allocated_bytes - lag(allocated_bytes) OVER w AS delta_bytes, lag(ts_ns) OVER w AS prev_ts
      FROM memory_samples WHERE {where} WINDOW w AS (PARTITION BY rank, component ORDER BY ts_ns)),
    ev AS (
      SELECT 1 AS o, 'peak_allocated' AS kind, unnest(arg_max(s, (allocated_bytes, -ts_ns)))
      FROM s WHERE allocated_bytes IS NOT NULL GROUP BY rank, component
      UNION ALL
      SELECT 2, 'peak_reserved', unnest(arg_max(s, (reserved_bytes, -ts_ns)))
      FROM s WHERE reserved_bytes IS NOT NULL GROUP BY rank, component
      UNION ALL
      SELECT 3, 'spike', unnest(arg_max(s, (delta_bytes, -ts_ns), {max(int(top), 1)}), recursive := true)
      FROM s WHERE delta_bytes > 0 AND {int(top)} > 0 GROUP BY rank, component),
    e AS MATERIALIZED (SELECT row_number() OVER () AS eid, * FROM ev),
    live AS (
      SELECT e.eid, coalesce(b.name, '(unknown)') AS name, abs(b.size_bytes) AS size,
             e.kind = 'spike' AND b.alloc_ns > e.prev_ts AND b.alloc_ns <= e.ts_ns AS jump
      FROM e JOIN memory_blocks b ON b.rank = e.rank AND {_COVERS} AND {_LIVE}),
    per_op AS (
      SELECT l.eid, l.name, sum(l.size) AS nbytes, count(*) AS n
      FROM live l JOIN e USING (eid) WHERE e.kind <> 'spike' OR l.jump GROUP BY ALL),
    ops AS (
      SELECT eid, {_OPS_TEXT} AS ops
      FROM (SELECT *, row_number() OVER (PARTITION BY eid ORDER BY nbytes DESC, name) AS k FROM per_op)
      GROUP BY eid),
    tot AS (SELECT eid, sum(size) AS live_bytes, count(*) AS live_blocks FROM live GROUP BY eid)
    SELECT e.rank, e.component, e.kind, e.ts_ns, (e.ts_ns - {_T0}) / 1e6 AS t_ms,
           e.allocated_bytes, e.reserved_bytes, CASE WHEN e.kind = 'spike' THEN e.delta_bytes END AS delta_bytes,
           e.allocated_bytes / {MIB} AS allocated_mib,
           coalesce(t.live_bytes, 0)::BIGINT AS live_bytes, coalesce(t.live_blocks, 0)::BIGINT AS live_blocks,
           coalesce(t.live_bytes, 0) / nullif(e.allocated_bytes, 0)::DOUBLE AS share_of_allocated_ratio, o.ops
    FROM e LEFT JOIN tot t USING (eid) LEFT JOIN ops o USING (eid)
    ORDER BY e.rank, e.component, e.o, e.delta_bytes DESC NULLS LAST, e.ts_ns"""
    return query(profile, sql)


BY_OP_COLUMNS = {
    "rank": "rank",
    "component": "allocator of the blocks (PTA, GE, CUDA ...)",
    "name": "allocating op",
    "count": "allocations",
    "total_bytes": "sum of block sizes",
    "max_bytes": "largest block",
    "avg_bytes": "mean block size",
    "live_at_peak_bytes": "bytes of its blocks live at the component's peak",
    "avg_lifetime_us": "mean time from allocation to free (blocks freed inside the capture)",
    "share_of_peak_ratio": "live_at_peak_bytes / peak allocated of the component",
    "label": "the op as one text (the chart's bar label; prefixed by the rank when several)",
}


@analysis(
    "memory_by_op",
    title="Top allocating operators",
    params=(
        Param("top", int, 20, help="rows kept per rank, by total bytes"),
        Param("rank", int, None, help="one rank; all when omitted"),
    ),
    chart=Chart("bar", "label", ("total_bytes",), title="bytes allocated"),
    columns=BY_OP_COLUMNS,
)
def memory_by_op(profile, top=20, rank=None) -> pd.DataFrame:
    """Per allocating operator: how many blocks, how many bytes, how long they live, and how much
    of the component's peak they hold.  The peak is the highest allocated sample of the blocks'
    own component (PTA blocks: the PTA curve; GE: GE; CUDA: CUDA)."""
    where = _filters(rank, alias="b")
    keep = f"QUALIFY row_number() OVER (PARTITION BY rank ORDER BY total_bytes DESC, name) <= {int(top)}" if top else ""
    sql = f"""
    WITH e AS (
      SELECT rank, component, arg_max(ts_ns, (allocated_bytes, -ts_ns)) AS ts_ns, max(allocated_bytes) AS peak_bytes
      FROM memory_samples WHERE allocated_bytes IS NOT NULL GROUP BY rank, component),
    g AS (
      SELECT b.rank, b.component, coalesce(b.name, '(unknown)') AS name, count(*) AS count,
             sum(abs(b.size_bytes)) AS total_bytes, max(abs(b.size_bytes)) AS max_bytes,
             avg(abs(b.size_bytes)) AS avg_bytes,
             coalesce(sum(abs(b.size_bytes)) FILTER (WHERE e.ts_ns IS NOT NULL AND {_LIVE}), 0) AS live_at_peak_bytes,
             avg(b.release_ns - b.alloc_ns) / 1e3 AS avg_lifetime_us, any_value(e.peak_bytes) AS peak_bytes
      FROM memory_blocks b LEFT JOIN e ON e.rank = b.rank AND e.component = b.component
      WHERE {where} GROUP BY ALL)
    SELECT rank, component, name, count::BIGINT AS count, total_bytes::BIGINT AS total_bytes,
           max_bytes::BIGINT AS max_bytes, avg_bytes::DOUBLE AS avg_bytes,
           live_at_peak_bytes::BIGINT AS live_at_peak_bytes, avg_lifetime_us::DOUBLE AS avg_lifetime_us,
           live_at_peak_bytes / nullif(peak_bytes, 0)::DOUBLE AS share_of_peak_ratio,
           CASE WHEN count(DISTINCT rank) OVER () > 1 THEN 'rank ' || rank || ' ' ELSE '' END || name AS label
    FROM g {keep}
    ORDER BY rank, total_bytes DESC, name"""
    return query(profile, sql)


ALLOCATION_COLUMNS = {
    "rank": "rank",
    "component": "allocator of the block (PTA, GE, CUDA ...)",
    "name": "allocating op",
    "size_bytes": "block size",
    "alloc_ns": "allocation time, epoch ns (null: allocated before the capture)",
    "release_ns": "free time, epoch ns (null: still live at the end of the capture)",
    "alloc_ms": "allocation, ms since the first memory sample (the curves' t_ms)",
    "release_ms": "free, ms since the first memory sample",
    "lifetime_us": "release - allocation (null when either end lies outside the capture)",
    "allocated_after_bytes": "the allocator's total allocated right after this allocation",
}


@analysis(
    "memory_allocations",
    title="Device memory allocations",
    params=(
        Param("rank", int, None, help="one rank; all when omitted"),
        Param("component", str, None, help="one allocator component (PTA, GE, CUDA ...); all when omitted"),
        Param("start_ms", float, None, help="only blocks live at or after this t_ms"),
        Param("end_ms", float, None, help="only blocks live before this t_ms"),
        Param("top", int, None, help="keep the N largest blocks (all when omitted)"),
    ),
    chart=None,
    columns=ALLOCATION_COLUMNS,
)
def memory_allocations(profile, rank=None, component=None, start_ms=None, end_ms=None, top=None) -> pd.DataFrame:
    """One row per tensor allocation (``memory_blocks``): which op allocated how many bytes when,
    when it was freed and how long it lived, largest first.  ``start_ms`` / ``end_ms`` keep the
    blocks live somewhere in that stretch of the memory curves' time axis (``t_ms``), so the
    blocks behind a spike are one filter away."""
    where = _filters(rank, component, alias="b")
    if start_ms is not None:
        where += f" AND (b.release_ns IS NULL OR b.release_ns >= {_T0} + {float(start_ms) * 1e6:.0f})"
    if end_ms is not None:
        where += f" AND (b.alloc_ns IS NULL OR b.alloc_ns < {_T0} + {float(end_ms) * 1e6:.0f})"
    limit = f"LIMIT {int(top)}" if top else ""
    sql = f"""
    SELECT b.rank, b.component, coalesce(b.name, '(unknown)') AS name, abs(b.size_bytes)::BIGINT AS size_bytes,
           b.alloc_ns, b.release_ns,
           (b.alloc_ns - {_T0}) / 1e6 AS alloc_ms, (b.release_ns - {_T0}) / 1e6 AS release_ms,
           (b.release_ns - b.alloc_ns) / 1e3 AS lifetime_us,
           b.alloc_total_allocated_bytes AS allocated_after_bytes
    FROM memory_blocks b WHERE {where}
    ORDER BY abs(b.size_bytes) DESC, b.alloc_ns NULLS FIRST, b.rank {limit}"""
    return query(profile, sql)
