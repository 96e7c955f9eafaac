"""What the AI Core units did per kernel: the PMU ratios the profiler recorded (Ascend
``--aic-metrics`` PipeUtilization and friends) and the bound type they imply.

A ratio is the time a unit (cube MAC, vector, scalar, MTE1/2/3 data movers, fixpipe) was busy
over the kernel's time on its core.  The bound rule is the vendor's own (msprof-analyze advisor,
computation analysis, operator checkers): a kernel is **bound** by a unit whose ratio is more than
80 % (``mte2 bound: mte2 ratio is more than 80%``); when none of the mte, cube, vector and scalar
ratios is more than 80 % it is **no bound** (``operator no bound``: the unit pipelines wait on
each other, and the operator's tiling is what to tune).  docs/views/aicore.md cites them.
"""

from __future__ import annotations

import pandas as pd

from ..registry import Chart, analysis
from ._sql import query
from .steps import COMPUTE, IN_STEP

#: a unit ratio above this bounds the kernel (msprof-analyze advisor's operator checkers: 80 %)
BOUND_RATIO = 0.8

#: bound type -> the PMU ratio columns that measure it (cube core aic_*, vector core aiv_*)
UNITS = {
    "cube": ("pmu_aic_mac_ratio",),
    "vector": ("pmu_aiv_vec_ratio",),
    "scalar": ("pmu_aic_scalar_ratio", "pmu_aiv_scalar_ratio"),
    "mte1": ("pmu_aic_mte1_ratio",),
    "mte2": ("pmu_aic_mte2_ratio", "pmu_aiv_mte2_ratio"),
    "mte3": ("pmu_aiv_mte3_ratio",),
    "fixpipe": ("pmu_aic_fixpipe_ratio",),
}
#: the ratio columns the view shows, in this order, where the profile records them
RATIOS = tuple(c for cols in UNITS.values() for c in cols) + ("pmu_aic_icache_miss_rate", "pmu_aiv_icache_miss_rate")

_COLUMNS = {
    "rank": "rank id",
    "name": "kernel name",
    "type": "op type",
    "core": "core type (AI_CORE = cube, AI_VECTOR_CORE = vector, MIX_AIC / MIX_AIV = both)",
    "count": "launches",
    "total_us": "summed kernel duration",
    "avg_us": "total_us / count",
    "bound": "the unit whose ratio is above 80 % (the highest when several are): cube, vector, scalar, "
    "mte1, mte2, mte3, fixpipe; `none` when no ratio is above 80 % (the vendor's 'operator no bound'); "
    "null when the kernel has no PMU data",
    "bound_ratio": "the ratio that decided `bound` (the highest unit ratio)",
    "pmu_*": "each recorded PMU ratio, weighted over the launches as in utilization: pmu_aic_* by the "
    "kernels' cube time, pmu_aiv_* by their vector time",
}


@analysis(
    "kernel_pmu",
    title="AI Core PMU ratios and bound type per kernel",
    chart=Chart("bar", "name", ("total_us",), title="Kernel time by name (us)"),
    columns=_COLUMNS,
)
def kernel_pmu(profile) -> pd.DataFrame:
    """Per rank and kernel (name, type, core): launches, time, the PMU ratios averaged over the
    launches (each weighted by the time the kernel spent on the unit the ratio measures, as
    ``utilization`` does per step) and the bound type they imply (a unit above 80 %, else
    ``none``; the vendor's advisor rule).  Longest total first.  Empty where no kernel records a
    PMU ratio (a GPU trace, an Ascend collection without ``aic_metrics``)."""
    cols = list(query(profile, "SELECT * FROM device_tasks LIMIT 0").columns)
    ratios = [c for c in RATIOS if c in cols]
    if not ratios:
        return pd.DataFrame(columns=["rank", "name", "type", "core", "count", "total_us", "avg_us", "bound"])
    sel = "".join(
        f", sum({c} * {_weight(c, cols)}) FILTER (WHERE {c} IS NOT NULL)"
        f" / nullif(sum({_weight(c, cols)}) FILTER (WHERE {c} IS NOT NULL), 0) AS {c}"
        for c in ratios
    )
    has_any = " OR ".join(f"{c} IS NOT NULL" for c in ratios)
    df = query(
        profile,
        f"""SELECT rank, name, type, core, count(*) AS count, sum(dur_ns) / 1e3 AS total_us,
                   sum(dur_ns) / 1e3 / count(*) AS avg_us{sel}
            FROM device_tasks WHERE {COMPUTE} AND {IN_STEP} AND ({has_any})
            GROUP BY rank, name, type, core ORDER BY total_us DESC, rank, name""",
    )
    per_unit = pd.DataFrame(
        {
            u: df[[c for c in ucols if c in ratios]].astype("float64").max(axis=1)
            for u, ucols in UNITS.items()
            if any(c in ratios for c in ucols)
        }
    )
    top = per_unit.max(axis=1)
    recorded = top.notna()
    unit = per_unit[recorded].idxmax(axis=1).reindex(df.index)
    best_unit = unit.where(top > BOUND_RATIO, "none").where(recorded)
    best = top
    df.insert(7, "bound", best_unit.astype("string"))
    df.insert(8, "bound_ratio", best.astype("Float64"))
    return df


def _weight(col: str, cols: list[str]) -> str:
    for unit in ("aic", "aiv"):
        total = f"pmu_{unit}_total_time_ns"
        if col.startswith(f"pmu_{unit}_") and total in cols:
            return f"coalesce({total}, dur_ns)"
    return "dur_ns"
