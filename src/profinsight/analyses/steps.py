"""Where the step goes: the vendor's step breakdown and device utilisation.

``step_breakdown`` reproduces torch_npu's ``step_trace_time.csv`` / ``analysis.db`` ``StepTraceTime``
from the canonical tables (never by reading those files; a rank without device tasks whose
``steps`` rows carry the vendor's figures, which the importers read from those files, shows
them, marked ``source = 'vendor_summary'``): per rank and step, compute and
communication intervals are merged, communication not covered by compute is "not overlapped",
the gaps inside the step's device span are "free".  ``utilization`` turns the same unions into
busy / compute / cube / vector ratios and adds time per kernel category and PMU averages;
``time_by_category`` is the long form of the category times with their shares.

Every interval union is computed in DuckDB SQL: sorted by start, each interval adds the part of it
beyond the running maximum of the earlier ends (one window pass); where the merged intervals
themselves are needed, "gaps and islands" (a new island where a start lies beyond every earlier
end).  No Python loop per task.
"""

from __future__ import annotations

import weakref

import pandas as pd

from ..registry import Chart, analysis
from ..schema.tables import VENDOR_STEP_FIGURES
from ._sql import query
from .categories import CATEGORIES, category_sql

#: device tasks that count as compute (the vendor's Computing)
COMPUTE = "kind = 'kernel'"
#: device tasks that count as communication (one row per collective / p2p op)
COMMUNICATION = "kind = 'communication'"
#: pipeline-parallel receive ops whose time the vendor calls Bubble and takes out of the stage
BUBBLE = "(lower(coalesce(name, '')) LIKE 'hcom_receive%' OR lower(coalesce(type, '')) LIKE 'hcom_receive%')"
#: a device task belongs to a step, or to the whole capture (step null) on a rank that marks no
#: step at all (an inference trace without ProfilerStep)
IN_STEP = "(step IS NOT NULL OR rank NOT IN (SELECT DISTINCT rank FROM steps))"
#: the vendor's per-step figures of ``steps`` -> the breakdown column each becomes (ns -> us) for a
#: (rank, step) without device tasks
VENDOR_FIGURES = tuple((col, us) for col, us, _ in VENDOR_STEP_FIGURES)
_VENDOR_COLS = ", ".join(col for col, _ in VENDOR_FIGURES)
_NO_VENDOR = ", ".join("NULL::BIGINT" for _ in VENDOR_FIGURES)
#: the "steps" of the breakdown: the host steps (with the vendor's figures where the importer
#: found them), plus one null step per rank without steps
STEP_ROWS = f"""(SELECT rank, step, host_start_ns, host_end_ns, {_VENDOR_COLS} FROM steps
    UNION ALL
    SELECT DISTINCT rank, NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, {_NO_VENDOR} FROM device_tasks
    WHERE rank NOT IN (SELECT DISTINCT rank FROM steps))"""
#: core types that run on the cube unit / the vector unit (Ascend)
CUBE_CORES = ("AI_CORE", "MIX_AIC")
VECTOR_CORES = ("AI_VECTOR_CORE", "MIX_AIV")


def islands_sql(src: str, keys: tuple[str, ...] | list[str], extra: str = "") -> str:
    """SQL relation of the merged intervals of ``src``.

    ``src`` is a relation (a CTE name or a parenthesised query) with the columns ``keys`` and
    ``s``, ``e`` (interval start and end, ns).  The result has one row per maximal union
    interval ("island") per key: ``keys..., s, e`` plus the aggregates in ``extra`` (SQL text
    starting with a comma, over any column of ``src``, e.g. ``", arg_min(step, s) AS first_step"``).
    Touching intervals (one ends where the next starts) are merged; lengths add up the same.
    """
    k = ", ".join(keys)
    return f"""(SELECT {k}, min(s) AS s, max(e) AS e{extra} FROM (
        SELECT *, sum(CASE WHEN pe IS NULL OR s > pe THEN 1 ELSE 0 END)
               OVER (PARTITION BY {k} ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS island
        FROM (SELECT *, max(e) OVER (PARTITION BY {k} ORDER BY s, e
                                     ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pe
              FROM {src}))
      GROUP BY {k}, island)"""


def union_length_sql(src: str, keys: tuple[str, ...] | list[str]) -> str:
    """SQL relation ``keys..., len_ns``: the length of the union of the intervals of ``src``
    (columns ``keys``, ``s``, ``e``) per key.  Sorted by start, each interval adds the part of
    it that lies beyond the largest end before it — one window pass, no islands needed."""
    k = ", ".join(keys)
    return f"""(SELECT {k}, sum(greatest(e - greatest(s, coalesce(pe, s)), 0)) AS len_ns FROM (
        SELECT {k}, s, e, max(e) OVER (PARTITION BY {k} ORDER BY s, e
                                       ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pe
        FROM {src})
      GROUP BY {k})"""


def _in(values) -> str:
    return ", ".join(f"'{v}'" for v in values)


#: the interval sets whose unions a step's breakdown needs, by the number that stands for each in
#: SQL: the window that measures the unions sorts every interval by its set, and a small integer
#: sorts faster than a name (the breakdown statement on the 100 MB Kineto trace 66 -> 58 ms,
#: Ascend text 37 -> 35 ms, medians of 15 alternating runs, the same rows)
UNION_SETS = ("compute", "comm", "busy", "cube", "vector")


def _set(name: str) -> str:
    return f"{UNION_SETS.index(name)}::UTINYINT"


def _unions_sql() -> str:
    """Per (rank, step): span, bubble and the union lengths (ns) of compute, communication,
    compute ∪ communication (busy), cube kernels and vector kernels."""
    lengths = ",\n               ".join(
        f"coalesce(sum(len_ns) FILTER (WHERE grp = {_set(g)}), 0) AS {g}_ns" for g in UNION_SETS
    )
    return f"""
    WITH t AS (
        SELECT rank, step, kind, core, name, type, start_ns AS s, start_ns + dur_ns AS e
        FROM device_tasks
        WHERE kind IN ('kernel', 'communication') AND {IN_STEP}
          AND start_ns IS NOT NULL AND dur_ns IS NOT NULL),
    iv AS (
        SELECT rank, step, {_set("compute")} AS grp, s, e FROM t WHERE {COMPUTE}
        UNION ALL SELECT rank, step, {_set("comm")}, s, e FROM t WHERE {COMMUNICATION}
        UNION ALL SELECT rank, step, {_set("busy")}, s, e FROM t
        UNION ALL SELECT rank, step, {_set("cube")}, s, e FROM t WHERE {COMPUTE} AND core IN ({_in(CUBE_CORES)})
        UNION ALL SELECT rank, step, {_set("vector")}, s, e FROM t WHERE {COMPUTE} AND core IN ({_in(VECTOR_CORES)})),
    ul AS {union_length_sql("iv", ("rank", "step", "grp"))},
    u AS (
        SELECT rank, step,
               {lengths}
        FROM ul GROUP BY rank, step),
    sp AS (
        SELECT rank, step, min(s) AS first_ns, max(e) AS last_ns,
               -- CASE, not AND: DuckDB evaluates both sides of an AND on every row, and lower()
               -- of every kernel name was 0.3 s of this query's 0.7 s on a 1 GB trace
               coalesce(sum(e - s) FILTER (WHERE CASE WHEN {COMMUNICATION} THEN {BUBBLE} ELSE false END), 0)
                   AS bubble_ns,
               count(*) FILTER (WHERE {COMPUTE} AND core IN ({_in(CUBE_CORES + VECTOR_CORES)})) AS n_ascend_core
        FROM t GROUP BY rank, step)
    SELECT st.rank, st.step, st.host_start_ns, st.host_end_ns, {", ".join("st." + c for c, _ in VENDOR_FIGURES)},
           sp.first_ns, sp.last_ns, sp.bubble_ns, sp.n_ascend_core,
           u.compute_ns, u.comm_ns, u.busy_ns, u.cube_ns, u.vector_ns
    FROM {STEP_ROWS} st
    LEFT JOIN sp ON sp.rank = st.rank AND sp.step IS NOT DISTINCT FROM st.step
    LEFT JOIN u ON u.rank = st.rank AND u.step IS NOT DISTINCT FROM st.step"""


#: where a breakdown row's figures come from (the ``source`` column)
FROM_TASKS, FROM_VENDOR = "tasks", "vendor_summary"


#: host and device further apart than this (ns) come from different collections (the load's
#: ``collections-apart``, the advisor's ``timestamp_sanity``): no preparing time is made of them
APART_NS = 60 * 10**9
_PREPARING = f"""(CASE WHEN first_ns BETWEEN host_start_ns - {APART_NS} AND host_end_ns + {APART_NS}
                  THEN (first_ns - host_start_ns) / 1e3 END)"""


def _breakdown_sql() -> str:
    # a (rank, step) without compute/communication tasks whose steps row carries the vendor's
    # figures takes them (ns -> us); busy and span follow from them by the vendor's own
    # definitions (busy = Computing + Communication(Not Overlapped), span = Stage + Bubble)
    vendor = f"(first_ns IS NULL AND coalesce({_VENDOR_COLS}) IS NOT NULL)"

    def pick(tasks: str, from_vendor: str) -> str:
        return f"CASE WHEN {vendor} THEN {from_vendor} ELSE {tasks} END"

    v = dict((us, f"{col} / 1e3") for col, us in VENDOR_FIGURES)
    return f"""
    WITH x AS ({_unions_sql()})
    SELECT rank, step,
           {pick("compute_ns / 1e3", v["computing_us"])} AS computing_us,
           {pick("(busy_ns - compute_ns) / 1e3", v["comm_not_overlapped_us"])} AS comm_not_overlapped_us,
           {pick("(comm_ns - (busy_ns - compute_ns)) / 1e3", v["overlapped_us"])} AS overlapped_us,
           {pick("comm_ns / 1e3", v["comm_us"])} AS comm_us,
           {pick("(last_ns - first_ns - busy_ns) / 1e3", v["free_us"])} AS free_us,
           {pick("bubble_ns / 1e3", v["bubble_us"])} AS bubble_us,
           {pick("greatest(busy_ns - compute_ns - bubble_ns, 0) / 1e3", v["comm_not_overlapped_exclude_receive_us"])}
               AS comm_not_overlapped_exclude_receive_us,
           {pick(_PREPARING, v["preparing_us"])} AS preparing_us,
           {pick("(last_ns - first_ns - bubble_ns) / 1e3", v["step_us"])} AS step_us,
           (host_end_ns - host_start_ns) / 1e3 AS host_step_us,
           {pick("busy_ns / 1e3", "(vendor_computing_ns + vendor_comm_not_overlapped_ns) / 1e3")} AS busy_us,
           {pick("(last_ns - first_ns) / 1e3", "(vendor_stage_ns + coalesce(vendor_bubble_ns, 0)) / 1e3")} AS span_us,
           cube_ns / 1e3 AS cube_busy_us,
           vector_ns / 1e3 AS vector_busy_us,
           n_ascend_core,
           CASE WHEN {vendor} THEN '{FROM_VENDOR}' ELSE '{FROM_TASKS}' END AS source,
           'r' || rank || ' s' || coalesce(CAST(step AS VARCHAR), '-') AS label
    FROM x ORDER BY rank, step"""


_BREAKDOWN_COLUMNS = {
    "rank": "rank id",
    "step": "step number N of ProfilerStep#N",
    "computing_us": "length of the union of compute-kernel intervals of the step (vendor Computing)",
    "comm_not_overlapped_us": "communication time not covered by any compute kernel "
    "(vendor Communication(Not Overlapped))",
    "overlapped_us": "communication time that runs while compute runs: comm_us - comm_not_overlapped_us",
    "comm_us": "length of the union of communication-op intervals (vendor Communication)",
    "free_us": "time inside the step's device span with neither compute nor communication (vendor Free)",
    "bubble_us": "sum of hcom_receive* op durations (pipeline-parallel receive wait; vendor Bubble)",
    "comm_not_overlapped_exclude_receive_us": "max(comm_not_overlapped_us - bubble_us, 0)",
    "preparing_us": "first compute/communication task start minus the host ProfilerStep start (vendor Preparing); "
    "null where the first task lies more than 60 s outside the host step (host and device files of different "
    "collections)",
    "step_us": "device step: last end - first start of the step's compute/communication tasks, minus "
    "bubble_us (vendor Stage)",
    "host_step_us": "host ProfilerStep#N duration (DB STEP_TIME endNs - startNs)",
    "source": f"where the figures come from: '{FROM_TASKS}' (derived from the rank's device tasks) or "
    f"'{FROM_VENDOR}' (the vendor's own per-step figures of the steps table's vendor_*_ns columns, for a "
    "rank without device tasks: a partial export or a cluster summary)",
    "label": "'r<rank> s<step>', the chart label",
}


@analysis(
    "step_breakdown",
    title="Step breakdown",
    chart=Chart(
        "stacked",
        "label",
        ("computing_us", "comm_not_overlapped_us", "free_us"),
        title="Device step: computing / communication not overlapped / free (us)",
    ),
    columns=_BREAKDOWN_COLUMNS,
)
def step_breakdown(profile) -> pd.DataFrame:
    """Per rank and step: computing, communication (overlapped or not), free, bubble, preparing
    and the step itself, with torch_npu's definitions (step_trace_time.csv / StepTraceTime).

    One row per rank and step, no total row: the steps of a profile are usually few and a mean
    over ranks hides the slow rank.  ``step_us + bubble_us = computing_us +
    comm_not_overlapped_us + free_us`` holds exactly for rows derived from tasks.  A step
    without any compute or communication task takes the vendor's own figures where its ``steps``
    row carries them (``vendor_*_ns``: a partial export, a cluster summary; ``source`` says
    ``vendor_summary``), else keeps its row with empty device columns.
    """
    return breakdown(profile)[list(_BREAKDOWN_COLUMNS)].copy()


def step_totals(profile) -> pd.DataFrame:
    """``rank, step, step_us, computing_us, busy_us`` per rank and step — the denominators other
    analyses divide by (``share_of_step_ratio``, ``share_of_compute_ratio``,
    ``share_of_busy_ratio``).  ``busy_us`` is the union of compute and communication.  Only real
    steps: the whole-capture row of a rank without steps (``step`` null) is left out, so that a
    profile without steps has no step denominator."""
    b = breakdown(profile)
    return b.loc[b["step"].notna(), ["rank", "step", "step_us", "computing_us", "busy_us"]].reset_index(drop=True)


#: per profile, the breakdown with its internal columns (span, busy, cube/vector unions): the
#: profile's tables never change, and step_breakdown, utilization, time_by_category,
#: launch_stats and other modules' shares all divide by it
_BREAKDOWNS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def breakdown(profile) -> pd.DataFrame:
    """The step breakdown with internal columns (``busy_us``, ``span_us``, ``cube_busy_us``,
    ``vector_busy_us``, ``n_ascend_core``), computed once per profile.  Do not modify it."""
    try:
        return _BREAKDOWNS[profile]
    except (KeyError, TypeError):
        pass
    df = query(profile, _breakdown_sql())
    try:
        _BREAKDOWNS[profile] = df
    except TypeError:  # not weak-referenceable: no cache
        pass
    return df


# --- utilisation ------------------------------------------------------------------------


def _device_columns(profile) -> list[str]:
    return list(query(profile, "SELECT * FROM device_tasks LIMIT 0").columns)


def _pmu_weight(col: str, cols: list[str]) -> str:
    """Weight of a kernel in the mean of PMU ratio ``col``.  A unit's ratio is that unit's
    metric time over its total time, so ``pmu_aic_*`` ratios are weighted by
    ``pmu_aic_total_time_ns`` and ``pmu_aiv_*`` by ``pmu_aiv_total_time_ns``: the mean is then
    Σ metric time / Σ unit time, and kernels that never ran on the unit (written as ratio 0 with
    unit time 0 by the vendor) do not dilute it.  Other ratios are weighted by kernel duration."""
    for unit in ("aic", "aiv"):
        total = f"pmu_{unit}_total_time_ns"
        if col.startswith(f"pmu_{unit}_") and total in cols:
            return f"coalesce({total}, dur_ns)"
    return "dur_ns"


#: device task kinds whose time is attributed to categories (comm_task rows are the internals
#: of a collective and would count its time twice; sync/other tasks take no device time)
CATEGORY_KINDS = ("kernel", "communication", "memcpy", "memset")
#: categories of compute kernels (the denominator of share_of_compute_ratio)
COMPUTE_CATEGORIES = tuple(c for c in CATEGORIES if c not in ("communication", "memory"))


def _category_sql() -> str:
    """``rank, step, category, n, dur_ns``: the step's tasks of each distinct kind, type, core,
    name and formats, with their category.  Classified once per distinct task, not per task: a
    kernel's name recurs in every step, and the category's regular expressions over it were most
    of the statement (the 100 MB Kineto trace's 68 k tasks: 0.105 -> 0.067 s, CPU 0.19 -> 0.12 s)."""
    return f"""
    SELECT rank, step, {category_sql()} AS category, n, dur_ns FROM (
        SELECT rank, step, kind, type, core, name, input_formats, output_formats,
               count(*) AS n, sum(dur_ns) AS dur_ns
        FROM device_tasks
        WHERE kind IN ({_in(CATEGORY_KINDS)}) AND {IN_STEP} AND dur_ns IS NOT NULL
        GROUP BY ALL)"""


_UTIL_COLUMNS = {
    "rank": "rank id",
    "step": "step number",
    "span_us": "first start to last end of the step's compute/communication tasks (step_us + bubble_us)",
    "step_us": "device step (vendor Stage), as in step_breakdown",
    "busy_us": "union of compute and communication intervals",
    "computing_us": "union of compute-kernel intervals",
    "cube_busy_us": "union of cube-core kernel intervals (core AI_CORE / MIX_AIC)",
    "vector_busy_us": "union of vector-core kernel intervals (core AI_VECTOR_CORE / MIX_AIV)",
    "busy_ratio": "busy_us / span_us",
    "compute_ratio": "computing_us / span_us",
    "cube_busy_ratio": "cube_busy_us / span_us; null where no kernel has an Ascend core type (GPU)",
    "vector_busy_ratio": "vector_busy_us / span_us; null where no kernel has an Ascend core type (GPU)",
    **{f"{c}_us": f"summed duration of {c} tasks of the step (not a union)" for c in CATEGORIES},
    "pmu_*_ratio": "each PMU ratio of the profile (pmu_aic_mac_ratio, pmu_aiv_vec_ratio, pmu_aic_scalar_ratio, "
    "pmu_aic_mte2_ratio, ...) averaged over the step's kernels: pmu_aic_* weighted by the "
    "kernels' cube time (pmu_aic_total_time_ns), pmu_aiv_* by their vector time, others by "
    "duration; only the PMU columns the profile has",
}


@analysis(
    "utilization",
    title="Device utilisation",
    chart=Chart("bar", "label", ("busy_ratio",), title="Device busy ratio per step"),
    columns=_UTIL_COLUMNS,
)
def utilization(profile) -> pd.DataFrame:
    """Per rank and step: how busy the device was (busy / compute / cube / vector ratios over
    the step's device span), the time per kernel category, and the PMU ratios averaged over the
    kernels (weighted by the time each kernel spent on the unit the ratio measures).  High busy
    ratio with few big kernels = compute bound; low ratio with long gaps = starved (see
    ``idle_gaps``)."""
    cols = _device_columns(profile)
    pmu = [c for c in cols if c.startswith("pmu_") and c.endswith("_ratio")]
    pmu_sel = "".join(
        f", sum({c} * {w}) FILTER (WHERE {c} IS NOT NULL) / nullif(sum({w}) FILTER (WHERE {c} IS NOT NULL), 0) AS {c}"
        for c, w in ((c, _pmu_weight(c, cols)) for c in pmu)
    )
    b = breakdown(profile)
    out = b[["rank", "step", "span_us", "step_us", "busy_us", "computing_us", "cube_busy_us", "vector_busy_us"]].copy()
    span = b["span_us"].where(b["span_us"] > 0)
    out["busy_ratio"] = b["busy_us"] / span
    out["compute_ratio"] = b["computing_us"] / span
    ascend = b["n_ascend_core"].fillna(0) > 0
    out["cube_busy_ratio"] = (b["cube_busy_us"] / span).where(ascend)
    out["vector_busy_ratio"] = (b["vector_busy_us"] / span).where(ascend)
    cats = _category_totals(profile)
    wide = cats.groupby(["rank", "step", "category"], dropna=False)["total_ns"].sum().unstack("category")
    wide = wide.reindex(columns=list(CATEGORIES)).astype("float64").fillna(0) / 1e3
    wide.columns = [f"{c}_us" for c in wide.columns]
    out = out.merge(wide.reset_index(), on=["rank", "step"], how="left")
    for c in CATEGORIES:
        out[f"{c}_us"] = out[f"{c}_us"].astype("Float64").fillna(0.0)
    if pmu:
        m = query(
            profile,
            f"""SELECT rank, step{pmu_sel}
                               FROM device_tasks WHERE {COMPUTE} AND {IN_STEP} GROUP BY rank, step""",
        )
        out = out.merge(m, on=["rank", "step"], how="left")
    out["label"] = b["label"].to_numpy()
    return out


def _category_totals(profile) -> pd.DataFrame:
    """``rank, step, category, count, total_ns`` — computed once per profile."""
    try:
        return _CATEGORY_TOTALS[profile]
    except (KeyError, TypeError):
        pass
    df = query(
        profile,
        f"""
        SELECT rank, step, category, CAST(sum(n) AS BIGINT) AS count, sum(dur_ns) AS total_ns
        FROM ({_category_sql()}) GROUP BY ALL ORDER BY rank, step, category""",
    )
    try:
        _CATEGORY_TOTALS[profile] = df
    except TypeError:
        pass
    return df


_CATEGORY_TOTALS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


_CAT_COLUMNS = {
    "rank": "rank id",
    "step": "step number",
    "category": "kernel category: " + ", ".join(CATEGORIES),
    "count": "number of device tasks of the category in the step",
    "total_us": "summed duration of those tasks",
    "avg_us": "total_us / count",
    "share_of_compute_ratio": "total_us / summed duration of all compute kernels of the step; "
    "null for communication and memory",
    "share_of_step_ratio": "total_us / step_us (device step); overlapping tasks can add up to more than 1",
}


@analysis(
    "time_by_category",
    title="Device time by kernel category",
    chart=Chart("bar", "category", ("total_us",), title="Device time by category (us)"),
    columns=_CAT_COLUMNS,
)
def time_by_category(profile) -> pd.DataFrame:
    """Per rank, step and kernel category (matmul, convolution, vector, format conversion,
    AI CPU, communication, memory, other): task count, summed time, and its share of the
    compute time and of the step.  Categories follow :mod:`profinsight.analyses.categories`;
    GPU traces come out as matmul/convolution/vector (compute), communication and memory."""
    g = _category_totals(profile)
    cols = list(_CAT_COLUMNS)
    if g.empty:
        return pd.DataFrame(
            {
                c: pd.Series(dtype=t)
                for c, t in zip(cols, ("Int32", "Int64", "string", "Int64", "Float64", "Float64", "Float64", "Float64"))
            }
        )
    df = g.copy()
    is_compute = df["category"].isin(COMPUTE_CATEGORIES)
    by_step = [df["rank"], df["step"]]
    compute_ns = df["total_ns"].where(is_compute, 0).groupby(by_step, dropna=False).transform("sum")
    df["count"] = df["count"].astype("Int64")
    df["total_us"] = df["total_ns"].astype("Float64") / 1e3
    df["avg_us"] = df["total_us"] / df["count"]
    share = (df["total_ns"] / compute_ns.where(compute_ns > 0)).where(is_compute)
    df["share_of_compute_ratio"] = share.astype("Float64")
    b = breakdown(profile)[["rank", "step", "step_us"]]
    df = df.merge(b, on=["rank", "step"], how="left")
    df["share_of_step_ratio"] = (df["total_us"] / df["step_us"].where(df["step_us"] > 0)).astype("Float64")
    df = df.sort_values(["rank", "step", "total_us", "category"], ascending=[True, True, False, True], kind="stable")
    return df[cols].reset_index(drop=True)
