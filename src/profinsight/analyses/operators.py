"""Operator views: where device time goes per operator, which layout conversions run, and the
single longest kernels.

``op_summary`` is the profinsight form of torch_npu's ``op_statistic.csv`` (device side, grouped
by type and core) and ``operator_details.csv`` (host side, per framework op), with more ways to
group.  ``format_conversions`` lists every layout-conversion kernel (TransData & co., see
:mod:`profinsight.analyses.categories`) with the framework op that caused it.  ``top_kernels``
gives the N longest single kernels as evidence.

Device-side figures are DuckDB queries over the canonical tables; the host op tree (nesting,
self and subtree times where the source lacks them) is NumPy over whole arrays.  No Python loop
per task or op.

Denominators (../CONTRACT.md):
- ``share_of_compute_ratio``: the **sum of durations** of the compute kernels (``kind =
  'kernel'``) of the ranks and steps in scope — op_statistic.csv's ``Ratio(%)`` divided by
  100.  It equals ``computing_us`` of ``step_breakdown`` when no two kernels of a rank run at the
  same time (the vendor's Computing is the union of the intervals); shares then add up to 1.
- ``share_of_step_ratio``: divided by the sum of ``step_us`` (the vendor's Stage) over the ranks
  and steps in scope (:func:`profinsight.analyses.steps.step_totals`).  Empty when the profile
  has no steps.  Kernels outside any step count in the totals but no step time stands
  against them: filter with ``step=N`` for exact step shares.
"""

from __future__ import annotations

import weakref

import numpy as np
import pandas as pd

from ..errors import ProfileError
from ..registry import Chart, Param, analysis
from ._sql import query, scope
from .categories import category_sql

#: device_tasks kinds per ``kinds`` choice: compute kernels only (op_statistic.csv) or the rows
#: of kernel_details.csv (compute kernels + one row per communication op)
KINDS = {"compute": ("kernel",), "all": ("kernel", "communication")}
#: group keys per ``by`` on the device side (the leading columns of the result)
DEVICE_KEYS = {
    "name": ("name", "type", "core"),
    "type": ("type", "core"),
    "name_shape": ("name", "input_shapes", "type", "core"),
    "core": ("core",),
}
#: group keys per ``by`` on the host side
HOST_KEYS = {"name": ("name",), "name_shape": ("name", "input_shapes")}
#: device task kinds whose time counts as "device time" of a host op (the vendor counts kernels,
#: communication ops and memory copies; the internal tasks of a collective are inside their op)
HOST_DEVICE_KINDS = ("kernel", "communication", "memcpy", "memset")


# --- shared helpers -------------------------------------------------------------------------


def _scope(rank, step, alias: str = "") -> str:
    """SQL conditions (`` AND ...``) for the rank/step filters (integers, inlined)."""
    return " AND " + scope(rank, step, alias)


def _format_conversion_sql() -> str:
    """Predicate: the kernel is a layout conversion (the rules of :mod:`.categories`)."""
    return category_sql() + " = 'format_conversion'"


def _in(values) -> str:
    return ", ".join(f"'{v}'" for v in values)


def _compute_ns(profile, rank, step) -> int:
    """Σ duration of the compute kernels in scope (the share_of_compute_ratio denominator)."""
    cond = _scope(rank, step)
    df = query(profile, f"SELECT sum(dur_ns)::BIGINT AS n FROM device_tasks WHERE kind = 'kernel'{cond}")
    v = df["n"].iloc[0]
    return 0 if pd.isna(v) else int(v)


#: step_totals per profile (a profile's tables never change once loaded)
_STEP_TOTALS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _step_us(profile, rank, step) -> float | None:
    """Σ step_us over the ranks and steps in scope (the share_of_step_ratio denominator)."""
    st = _STEP_TOTALS.get(profile)
    if st is None:
        from .steps import step_totals

        st = _STEP_TOTALS[profile] = step_totals(profile)
    if rank is not None:
        st = st[st["rank"] == int(rank)]
    if step is not None:
        st = st[st["step"] == int(step)]
    total = pd.to_numeric(st["step_us"], errors="coerce").astype("float64").sum(skipna=True)
    return float(total) if total > 0 else None


def _n_ranks(profile, rank) -> int:
    return 1 if rank is not None else len(profile.ranks)


def _share(values: pd.Series, denominator: float | None) -> pd.Series:
    out = pd.to_numeric(values, errors="coerce").astype("Float64")
    if not denominator:
        return pd.Series(pd.NA, index=values.index, dtype="Float64")
    return out / denominator


def _finish(df: pd.DataFrame, columns: list[str], top, several_ranks: bool) -> pd.DataFrame:
    cols = [c for c in columns if several_ranks or c != "ranks"]
    df = df[cols]
    if top is not None:
        df = df.head(int(top))
    return df.reset_index(drop=True)


def _check_top(top):
    if top is not None and int(top) < 1:
        raise ProfileError(f"top must be at least 1, not {top}")


# --- op_summary ----------------------------------------------------------------------------

_OP_SUMMARY_COLUMNS = {
    "name": "operator (kernel) name; by=name / name_shape",
    "input_shapes": "input shapes, tensors separated by ';'; by=name_shape",
    "type": "operator type (TransData, MatMulV2, ...); device side",
    "core": "accelerator core (AI_CORE, AI_VECTOR_CORE, MIX_AIV, AI_CPU, DSA_SQE, HCCL; GPU, NCCL); device side",
    "count": "number of calls (device: kernels; host: op instances)",
    "total_us": "device: Σ kernel duration (us); total = count × avg, so a cheap op called often can lead",
    "avg_us": "device: total_us / count",
    "min_us": "device: shortest call",
    "max_us": "device: longest call",
    "host_total_us": "host: Σ host duration of the op (includes its children)",
    "host_self_us": "host: Σ host duration minus direct children",
    "device_self_us": "host: Σ device time of the tasks the op launched itself",
    "device_total_us": "host: Σ device time of the tasks of the op and of the ops it called",
    "avg_host_total_us": "host: host_total_us / count",
    "avg_device_total_us": "host: device_total_us / count",
    "share_of_compute_ratio": (
        "compute-kernel time of the row / Σ compute-kernel time in scope "
        "(host: kernels of the op and its callees); empty for communication rows"
    ),
    "share_of_step_ratio": "total_us (host: device_total_us) / Σ step_us of the ranks and steps in scope",
    "ranks": "number of ranks where the row occurs (only when several ranks are in scope)",
    "label": "the group as one text (chart label)",
}


@analysis(
    "op_summary",
    title="Operator summary",
    params=(
        Param(
            "by",
            str,
            "name",
            choices=("name", "type", "name_shape", "core"),
            help="group by kernel name, (type, core), (name, input shapes) or core",
            # host framework ops have a name and shapes, no op type or core
            requires=(("type", "where", ("device",)), ("core", "where", ("device",))),
        ),
        Param("where", str, "device", choices=("device", "host"), help="device kernels or host framework ops"),
        Param("top", int, None, help="keep the first N rows"),
        Param("step", int, None, help="only step N"),
        Param("rank", int, None, help="only rank R"),
        Param(
            "kinds",
            str,
            "compute",
            choices=("compute", "all"),
            help="device: compute kernels only (op_statistic.csv) or also communication ops",
            # the host side counts every task an op launched: the choice has no meaning there
            requires=(("all", "where", ("device",)),),
        ),
    ),
    chart=Chart("bar", "label", ("total_us", "device_total_us"), title="Total time (us)"),
    columns=_OP_SUMMARY_COLUMNS,
)
def op_summary(profile, by="name", where="device", top=None, step=None, rank=None, kinds="compute"):
    """Operators sorted by total time: count, total, average, min, max and their share of
    compute and of the step.

    ``where="device"`` (default) groups device kernels by ``by``: ``name`` (one row per kernel
    name, type and core), ``type`` (per type and core, as op_statistic.csv), ``name_shape``
    (name and input shapes) or ``core``.  Only compute kernels count unless ``kinds="all"``,
    which adds the communication ops (the rows of kernel_details.csv).

    ``where="host"`` gives one row per framework op name (as operator_details.csv, summed):
    host total/self time and the device time of the tasks the op launched itself
    (``device_self_us``) or through the ops it called (``device_total_us``); sorted by
    ``device_total_us``.  Nested ops each count their callees' device time, so the host shares
    do not add up to 1.

    The total is count × average: an op that costs 2 us but runs 10,000 times (20 ms) tops an op
    that costs 5 ms and runs twice.  Look at ``count`` and ``avg_us`` before optimising the top
    row: many cheap calls ask for fusion or fewer launches, few expensive ones for a faster kernel.
    """
    _check_top(top)
    if where == "host":
        if by not in HOST_KEYS:
            raise ProfileError(
                f"op_summary(where='host') groups by name or name_shape, not {by!r}",
                fix="use by='name' or by='name_shape' (type and core exist on the device side)",
            )
        if kinds != "compute":
            raise ProfileError(
                f"op_summary(where='host') counts the device time of every task an op launched, kinds={kinds!r} "
                "has no meaning there",
                fix="leave kinds out with where='host'; kinds='all' is for where='device'",
            )
        return _host_summary(profile, by, top, step, rank)
    return _device_summary(profile, by, top, step, rank, kinds)


def _device_summary(profile, by, top, step, rank, kinds) -> pd.DataFrame:
    keys = DEVICE_KEYS[by]
    k = ", ".join(keys)
    cond = _scope(rank, step)
    label = {
        "name": "coalesce(name, '?')",
        "type": "coalesce(type, '?') || ' (' || coalesce(core, '?') || ')'",
        "name_shape": "coalesce(name, '?') || ' [' || coalesce(input_shapes, '') || ']'",
        "core": "coalesce(core, '?')",
    }[by]
    sql = f"""
    SELECT {k}, count(*)::BIGINT AS count,
           sum(dur_ns) / 1e3 AS total_us, sum(dur_ns) / count(*) / 1e3 AS avg_us,
           min(dur_ns) / 1e3 AS min_us, max(dur_ns) / 1e3 AS max_us,
           sum(dur_ns) FILTER (WHERE kind = 'kernel') / 1e3 AS compute_us,
           count(DISTINCT rank)::BIGINT AS ranks, any_value({label}) AS label
    FROM device_tasks
    WHERE kind IN ({_in(KINDS[kinds])}) AND dur_ns IS NOT NULL{cond}
    GROUP BY {k}
    ORDER BY total_us DESC, {", ".join(f"{c} NULLS LAST" for c in keys)}"""
    df = query(profile, sql)
    df["share_of_compute_ratio"] = _share(df["compute_us"], _compute_ns(profile, rank, step) / 1e3)
    df["share_of_step_ratio"] = _share(df["total_us"], _step_us(profile, rank, step))
    cols = [
        *keys,
        "count",
        "total_us",
        "avg_us",
        "min_us",
        "max_us",
        "share_of_compute_ratio",
        "share_of_step_ratio",
        "ranks",
        "label",
    ]
    return _finish(df, cols, top, _n_ranks(profile, rank) > 1)


def host_tree(profile, rank: int | None = None) -> pd.DataFrame:
    """One row per host range (``host_ops`` of category op or annotation) with what the op
    tree gives, computed from the canonical tables for sources that lack the vendor's columns.

    Columns: ``rank, op_id, thread, category, name, input_shapes, step, start_ns, dur_ns``,
    the recorded ``host_self_ns, device_self_ns, device_total_ns`` (null where the source has
    none), and ``launched_ns`` / ``launched_kernel_ns`` (device time / compute-kernel time of the
    tasks the op launched itself, from ``launches``), ``subtree_ns`` / ``subtree_kernel_ns`` (the
    same over the op and every op nested in it), ``self_fallback_ns`` (host duration minus the
    direct children) and ``depth`` (0 = outermost).

    Ops nest per (rank, thread) by their intervals.  Sorted by (start, duration descending), the
    ops nested in an op are the rows right after it that start before it ends, so every subtree
    is a contiguous run found with one binary search, its sums are differences of prefix sums,
    depth is a running count of open runs, and the direct children of an op are the rows one
    level deeper inside its run.  All of it is NumPy over whole arrays (a loop per thread, none
    per op).
    """
    only = "" if rank is None else f" AND o.rank = {int(rank)}"
    only_l = "" if rank is None else f" AND rank = {int(rank)}"
    df = query(
        profile,
        f"""
    WITH lk AS (SELECT DISTINCT rank, host_op_id, task_uid FROM launches WHERE host_op_id IS NOT NULL{only_l}),
    dev AS (
        SELECT lk.rank, lk.host_op_id AS op_id,
               sum(t.dur_ns) FILTER (WHERE t.kind IN ({_in(HOST_DEVICE_KINDS)}))::BIGINT AS launched_ns,
               sum(t.dur_ns) FILTER (WHERE t.kind = 'kernel')::BIGINT AS launched_kernel_ns
        FROM lk JOIN device_tasks t ON t.rank = lk.rank AND t.task_uid = lk.task_uid
        GROUP BY lk.rank, lk.host_op_id)
    SELECT o.rank, o.op_id, coalesce(o.thread, -1) AS thread, o.category, o.name, o.input_shapes, o.step,
           o.start_ns, o.dur_ns, o.host_self_ns, o.device_self_ns, o.device_total_ns,
           coalesce(d.launched_ns, 0) AS launched_ns, coalesce(d.launched_kernel_ns, 0) AS launched_kernel_ns
    FROM host_ops o LEFT JOIN dev d ON d.rank = o.rank AND d.op_id = o.op_id
    WHERE o.category IN ('op', 'annotation') AND o.start_ns IS NOT NULL AND o.dur_ns IS NOT NULL{only}
    ORDER BY o.rank, thread, o.start_ns, o.dur_ns DESC, o.op_id""",
    )
    n = len(df)
    start = df["start_ns"].to_numpy("int64")
    dur = np.maximum(df["dur_ns"].to_numpy("int64"), 0)
    launched = df["launched_ns"].to_numpy("int64")
    kernel = df["launched_kernel_ns"].to_numpy("int64")
    last = np.arange(n, dtype=np.int64)  # index of the last row of each op's subtree
    # rows of one (rank, thread) are contiguous (the ORDER BY); find each group's bounds
    key = pd.MultiIndex.from_arrays([df["rank"].to_numpy(), df["thread"].to_numpy()]) if n else None
    bounds = np.flatnonzero(~key.duplicated()) if n else np.array([], dtype=np.int64)
    for lo, hi in zip(bounds, list(bounds[1:]) + [n]):
        s = start[lo:hi]
        end = s + np.maximum(dur[lo:hi] - 1, 0)  # an op starting where another ends is its sibling
        last[lo:hi] = np.maximum(np.searchsorted(s, end, side="right") - 1 + lo, np.arange(lo, hi))
    idx = np.arange(n, dtype=np.int64)
    subtree, subtree_kernel = (_run_sums(v, idx, last) for v in (launched, kernel))
    # depth: how many earlier runs cover the row (+1 after an op, -1 after its run)
    has = last > idx
    marks = np.bincount(idx[has] + 1, minlength=n + 1) - np.bincount(last[has] + 1, minlength=n + 1)
    depth = np.cumsum(marks)[:n]
    # direct children of i: rows in (i, last_i] at depth_i + 1; order rows by (depth, index)
    ckey = depth * (n + 1) + idx
    order = np.argsort(ckey, kind="stable")
    csum = np.concatenate([[0], np.cumsum(dur[order])])
    sk = ckey[order]
    lo_k = np.searchsorted(sk, (depth + 1) * (n + 1) + idx, side="right")
    hi_k = np.searchsorted(sk, (depth + 1) * (n + 1) + last, side="right")
    children = csum[hi_k] - csum[lo_k]
    df["subtree_ns"] = subtree
    df["subtree_kernel_ns"] = subtree_kernel
    df["self_fallback_ns"] = dur - children
    df["depth"] = depth
    return df


def _run_sums(values: np.ndarray, idx: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Σ values[i..last_i] for every i (prefix-sum differences)."""
    c = np.concatenate([[0], np.cumsum(values)])
    return c[last + 1] - c[idx]


def _host_summary(profile, by, top, step, rank) -> pd.DataFrame:
    keys = list(HOST_KEYS[by])
    t = host_tree(profile, rank)
    t = t[(t["category"] == "op") & ~t["name"].fillna("").str.startswith("ProfilerStep#")]
    if step is not None:
        t = t[t["step"] == int(step)]
    x = pd.DataFrame({k: t[k].astype(object).where(t[k].notna(), None) for k in keys})
    x["rank"] = t["rank"].to_numpy()
    x["host_total_ns"] = t["dur_ns"].astype("float64")
    x["host_self_ns"] = t["host_self_ns"].fillna(t["self_fallback_ns"]).astype("float64")
    x["device_self_ns"] = t["device_self_ns"].fillna(t["launched_ns"]).astype("float64")
    x["device_total_ns"] = t["device_total_ns"].fillna(t["subtree_ns"]).astype("float64")
    x["compute_ns"] = t["subtree_kernel_ns"].astype("float64")
    g = x.groupby(keys, dropna=False, sort=False)
    df = g[["host_total_ns", "host_self_ns", "device_self_ns", "device_total_ns", "compute_ns"]].sum() / 1e3
    df.columns = ["host_total_us", "host_self_us", "device_self_us", "device_total_us", "compute_us"]
    df["count"] = g.size()
    df["ranks"] = g["rank"].nunique()
    df = df.reset_index()
    df = df.sort_values(
        ["device_total_us", "host_total_us", *keys],
        ascending=[False, False] + [True] * len(keys),
        na_position="last",
        kind="stable",
    ).reset_index(drop=True)
    for k in keys:
        df[k] = df[k].astype("string")
    df["count"] = df["count"].astype("Int64")
    df["ranks"] = df["ranks"].astype("Int64")
    for c in ("host_total_us", "host_self_us", "device_self_us", "device_total_us", "compute_us"):
        df[c] = df[c].astype("Float64")
    df["avg_host_total_us"] = df["host_total_us"] / df["count"]
    df["avg_device_total_us"] = df["device_total_us"] / df["count"]
    df["share_of_compute_ratio"] = _share(df["compute_us"], _compute_ns(profile, rank, step) / 1e3)
    df["share_of_step_ratio"] = _share(df["device_total_us"], _step_us(profile, rank, step))
    df["label"] = (
        df["name"].fillna("?") if by == "name" else df["name"].fillna("?") + " [" + df["input_shapes"].fillna("") + "]"
    )
    cols = [
        *keys,
        "count",
        "host_total_us",
        "host_self_us",
        "device_self_us",
        "device_total_us",
        "avg_host_total_us",
        "avg_device_total_us",
        "share_of_compute_ratio",
        "share_of_step_ratio",
        "ranks",
        "label",
    ]
    return _finish(df, cols, top, _n_ranks(profile, rank) > 1)


# --- format_conversions -------------------------------------------------------------------

_FC_KEYS = ("type", "input_formats", "output_formats", "input_shapes", "output_shapes")
_FC_COLUMNS = {
    "type": "conversion kernel type (TransData, TransposeD, Cast with differing formats, ...)",
    "input_formats": "input formats (NCHW, NC1HWC0, FRACTAL_Z, ND ...), ';'-separated per tensor",
    "output_formats": "output formats",
    "input_shapes": "input shapes",
    "output_shapes": "output shapes",
    "count": "number of conversion kernels in the group",
    "total_us": "Σ duration (us)",
    "avg_us": "total_us / count",
    "share_of_compute_ratio": "total_us / Σ compute-kernel time in scope",
    "share_of_step_ratio": "total_us / Σ step_us of the ranks and steps in scope",
    "host_op": "the framework op that launched these kernels most often (launches -> host_ops); empty when unlinked",
    "ranks": "number of ranks where the group occurs (only when several ranks are in scope)",
    "label": "'type in -> out' (chart label)",
}


@analysis(
    "format_conversions",
    title="Format conversions",
    params=(
        Param("top", int, None, help="keep the first N rows"),
        Param("step", int, None, help="only step N"),
        Param("rank", int, None, help="only rank R"),
    ),
    chart=Chart("bar", "label", ("total_us",), title="Layout-conversion time (us)"),
    columns=_FC_COLUMNS,
)
def format_conversions(profile, top=None, step=None, rank=None):
    """Every layout-conversion kernel (TransData, TransposeD, ... and Cast whose input and output
    formats differ), grouped by type, formats and shapes: count, time, share of compute and of
    the step, and the framework op that caused it.

    Conversions between the framework's layout (NCHW, ND) and the NPU's internal ones
    (NC1HWC0, FRACTAL_Z) run before and after operators that want another layout; a
    TransData before every convolution is the classic sign of a layout mismatch.
    ``share_of_compute_ratio`` summed over the rows is the share of compute spent converting.
    """
    _check_top(top)
    cond = _scope(rank, step)
    k = ", ".join(_FC_KEYS)
    sql = f"""
    WITH t AS (
        SELECT rank, task_uid, dur_ns, {k},
               dense_rank() OVER (ORDER BY {", ".join(f"{c} NULLS LAST" for c in _FC_KEYS)}) AS gid
        FROM device_tasks
        WHERE kind = 'kernel' AND dur_ns IS NOT NULL AND {_format_conversion_sql()}{cond}),
    g AS (
        SELECT gid, {k}, count(*)::BIGINT AS count, sum(dur_ns) / 1e3 AS total_us,
               sum(dur_ns) / count(*) / 1e3 AS avg_us, count(DISTINCT rank)::BIGINT AS ranks
        FROM t GROUP BY gid, {k}),
    -- the conversions' launches first, on their own: over tables held in memory (no statistics)
    -- the planner joined the conversions to host_ops on rank alone before the launches, a
    -- product of both tables (82 s instead of 0.04 s on a 100 MB rank)
    tl AS MATERIALIZED (
        SELECT t.gid, l.rank, l.task_uid, l.host_op_id
        FROM t JOIN launches l ON l.rank = t.rank AND l.task_uid = t.task_uid),
    lk AS (
        SELECT DISTINCT tl.gid, tl.rank, tl.task_uid, h.name
        FROM tl JOIN host_ops h ON h.rank = tl.rank AND h.op_id = tl.host_op_id
        WHERE h.name IS NOT NULL),
    hop AS (
        SELECT gid, name AS host_op FROM (
            SELECT gid, name, row_number() OVER (PARTITION BY gid ORDER BY count(*) DESC, name) AS r
            FROM lk GROUP BY gid, name)
        WHERE r = 1)
    SELECT g.*, hop.host_op,
           coalesce(g.type, '?') || ' ' || coalesce(g.input_formats, '?') || ' -> '
           || coalesce(g.output_formats, '?') AS label
    FROM g LEFT JOIN hop USING (gid)
    ORDER BY total_us DESC, gid"""
    df = query(profile, sql)
    df["share_of_compute_ratio"] = _share(df["total_us"], _compute_ns(profile, rank, step) / 1e3)
    df["share_of_step_ratio"] = _share(df["total_us"], _step_us(profile, rank, step))
    cols = [
        *_FC_KEYS,
        "count",
        "total_us",
        "avg_us",
        "share_of_compute_ratio",
        "share_of_step_ratio",
        "host_op",
        "ranks",
        "label",
    ]
    return _finish(df, cols, top, _n_ranks(profile, rank) > 1)


# --- top_kernels --------------------------------------------------------------------------

_TOP_COLUMNS = {
    "rank": "rank id",
    "step": "step number (empty outside any step)",
    "name": "kernel name",
    "type": "operator type",
    "core": "accelerator core",
    "input_shapes": "input shapes",
    "output_shapes": "output shapes",
    "start_ns": "kernel start, epoch ns (find it on the timeline)",
    "dur_us": "kernel duration (us)",
    "share_of_compute_ratio": "dur_us / Σ compute-kernel time in scope",
}


@analysis(
    "top_kernels",
    title="Longest kernels",
    params=(
        Param("top", int, 20, help="how many kernels"),
        Param("step", int, None, help="only step N"),
        Param("rank", int, None, help="only rank R"),
    ),
    chart=Chart("bar", "name", ("dur_us",), title="Longest kernels (us)"),
    columns=_TOP_COLUMNS,
)
def top_kernels(profile, top=20, step=None, rank=None):
    """The N longest single compute kernels, longest first, with where they ran and when."""
    _check_top(top)
    cond = _scope(rank, step)
    limit = "" if top is None else f" LIMIT {int(top)}"
    sql = f"""
    SELECT rank, step, name, type, core, input_shapes, output_shapes, start_ns, dur_ns / 1e3 AS dur_us
    FROM device_tasks WHERE kind = 'kernel' AND dur_ns IS NOT NULL{cond}
    ORDER BY dur_ns DESC, start_ns, rank{limit}"""
    df = query(profile, sql)
    df["share_of_compute_ratio"] = _share(df["dur_us"], _compute_ns(profile, rank, step) / 1e3)
    return df[list(_TOP_COLUMNS)].reset_index(drop=True)
