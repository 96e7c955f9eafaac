"""Analyses of the ranks of one multi-card run side by side: per-rank step breakdown, communication wait,
slow-rank detection with evidence and load imbalance.

In a synchronous data-parallel job every rank's step ends at the same collective, so the step
time alone does not show the slow rank.  The slow rank computes longer (or idles, or starts its
step late) and therefore *waits less* in the collectives, while its peers wait longer for it.
Detection compares each rank's per-step means of ``computing_us``, ``free_us`` and
``preparing_us`` with the median over ranks, in microseconds and in robust deviations (MADs:
1.4826 · median absolute deviation, floored at 0.2% of the median step and 1 us so that identical
peers do not make every small difference infinite).  A rank is slow on a component when it is at
least ``threshold`` MADs *and* ``min_share`` of the median step above the median; the evidence
names the component, the distance, the steps where it holds, and the rank's communication wait
against the median (shorter = the others waited for it).
"""

from __future__ import annotations

import threading

import pandas as pd

from ..i18n import evidence
from ..registry import Chart, Param, analysis
from .links import slow_links  # noqa: F401 - the rank analyses' links half (re-exported)
from .steps import breakdown

COMPONENTS = ("computing_us", "free_us", "preparing_us")
_MAD = 1.4826

_RANK_COLUMNS = {
    "rank": "rank id",
    "n_steps": "steps of the rank",
    "step_us": "mean device step",
    "computing_us": "mean computing",
    "comm_not_overlapped_us": "mean communication not overlapped",
    "free_us": "mean free",
    "preparing_us": "mean preparing",
    "comm_us": "mean communication (union)",
    "comm_wait_us": "mean per step of the collectives' wait time (comm_ops.wait_ns); where the profile has no "
    "wait times, communication not overlapped",
    **{f"{c[:-3]}_vs_median_us": f"{c} minus the median over ranks" for c in COMPONENTS + ("comm_wait_us",)},
    "label": "'rank N'",
}


_MEMO_LOCK = threading.RLock()


def memo(profile, key: str, make):
    """``make(profile)`` once per profile (kept with its analysis results); ``None`` profiles
    without that store compute each time.  Built under one lock: the server asks for the rank
    analyses in parallel threads, which would otherwise each build the same rows (4x the work on
    1,024 ranks)."""
    store = getattr(profile, "_results", None)
    if store is None:
        return make(profile)
    with _MEMO_LOCK:
        if (key,) not in store:
            store[(key,)] = make(profile)
        return store[(key,)]


def step_figures(profile) -> pd.DataFrame:
    """``steps.breakdown`` of ``profile``, built once for the rank analyses (rank rows, groups,
    bubbles and the rank x step grid each read it); a copy each caller may change."""
    return memo(profile, "_breakdown", breakdown).copy()


def _rows(profile) -> pd.DataFrame:
    """Per rank and step: the breakdown's figures and the communication wait.  Built once per
    profile: rank_summary, slow_ranks, load_imbalance and the parallel groups all start here."""
    return memo(profile, "_rank_rows", _build_rows).copy()


def _build_rows(profile) -> pd.DataFrame:
    b = step_figures(profile)
    rows = b[b["step"].notna()] if b["step"].notna().any() else b
    rows = rows[rows["span_us"].notna()].copy()
    cols = ["step_us", "computing_us", "comm_not_overlapped_us", "free_us", "preparing_us", "comm_us"]
    for c in cols:
        rows[c] = pd.to_numeric(rows[c], errors="coerce").astype("float64")
    rows = rows[["rank", "step", *cols]]
    wait = _comm_wait(profile)
    if wait is not None:
        rows = rows.merge(wait, on=["rank", "step"], how="left")
        rows["comm_wait_us"] = rows["comm_wait_us"].fillna(0.0)
    else:
        rows["comm_wait_us"] = rows["comm_not_overlapped_us"]
    return rows


def _comm_wait(profile):
    c = profile.table("comm_ops")
    if c.empty or "wait_ns" not in c or c["wait_ns"].isna().all():
        return None
    c = c[c["step"].notna()] if c["step"].notna().any() else c
    g = c.groupby(["rank", "step"], dropna=False)["wait_ns"].sum().astype("float64") / 1e3
    return g.rename("comm_wait_us").reset_index()


@analysis(
    "rank_summary",
    title="Ranks side by side",
    chart=Chart(
        "stacked",
        "label",
        ("computing_us", "comm_not_overlapped_us", "free_us"),
        title="Per rank: computing / communication not overlapped / free (us, mean per step)",
    ),
    columns=_RANK_COLUMNS,
)
def rank_summary(profile) -> pd.DataFrame:
    """One row per rank: the per-step means of the step breakdown, the communication wait, and
    each component's distance from the median over ranks (the slow rank computes longer and
    waits less; its peers wait longer)."""
    r = _rows(profile)
    cols = ["step_us", "computing_us", "comm_not_overlapped_us", "free_us", "preparing_us", "comm_us", "comm_wait_us"]
    g = r.groupby("rank")
    out = g[cols].mean().reset_index()
    out.insert(1, "n_steps", g.size().to_numpy())
    for c in COMPONENTS + ("comm_wait_us",):
        out[f"{c[:-3]}_vs_median_us"] = out[c] - out[c].median()
    out["label"] = "rank " + out["rank"].astype(str)
    return out


def _scale(values: pd.Series, floor: float) -> float:
    med = values.median()
    return max(_MAD * float((values - med).abs().median()), floor, 1.0)


@analysis(
    "slow_ranks",
    title="Slow ranks",
    params=(
        Param("threshold", float, 3.0, help="robust deviations (MADs) above the median to call a rank slow"),
        Param("min_share", float, 0.02, help="and at least this share of the median step"),
        Param("lang", str, "en", ("en", "zh"), "language of the evidence sentence (the figures are the same)"),
    ),
    chart=Chart("bar", "label", ("deviation_us",), title="How far above the median (us)"),
    columns={
        "rank": "rank id",
        "component": "computing_us / free_us / preparing_us",
        "value_us": "the rank's mean per step",
        "median_us": "median over ranks",
        "deviation_us": "value_us - median_us",
        "mads": "deviation_us / robust scale (module doc)",
        "deviation_share_of_step_ratio": "deviation_us / median step_us",
        "steps": "steps where the rank is above that step's median by the same criteria",
        "comm_wait_us": "the rank's mean communication wait per step",
        "comm_wait_vs_median_us": "its distance from the median wait (negative: the others waited for it)",
        "evidence": "the finding in words",
        "label": "'rank N component'",
    },
)
def slow_ranks(profile, threshold=3.0, min_share=0.02, lang="en") -> pd.DataFrame:
    """The ranks that hold the others back, with evidence: which component (computing, free,
    preparing), how far above the median over ranks (us and MADs), in which steps, and the rank's
    communication wait against the median — the slow rank waits less, its peers wait longer.
    ``lang`` words the evidence and label (the viewer's Ranks view asks in its language)."""
    r = _rows(profile)
    cols = [
        "rank",
        "component",
        "value_us",
        "median_us",
        "deviation_us",
        "mads",
        "deviation_share_of_step_ratio",
        "steps",
        "comm_wait_us",
        "comm_wait_vs_median_us",
        "evidence",
        "label",
    ]
    if r["rank"].nunique() < 3:
        return pd.DataFrame(columns=cols)
    s = rank_summary(profile)
    med_step = float(s["step_us"].median())
    floor = 0.002 * med_step
    wait_med = float(s["comm_wait_us"].median())
    out = []
    for comp in COMPONENTS:
        vals = s[comp]
        if vals.notna().sum() < 3:  # a median of fewer than three ranks calls no rank slow
            continue
        med = float(vals.median())
        scale = _scale(vals.dropna(), floor)
        for _, row in s.iterrows():
            if pd.isna(row[comp]):  # the rank does not record this component (vendor step figures)
                continue
            dev = float(row[comp]) - med
            mads = dev / scale
            if mads < threshold or dev < min_share * med_step:
                continue
            steps = []
            for step, part in r.groupby("step"):
                pv = part.set_index("rank")[comp]
                if row["rank"] not in pv.index:
                    continue
                d = float(pv[row["rank"]]) - float(pv.median())
                if d / _scale(
                    pv.dropna(), 0.002 * float(part["step_us"].median())
                ) >= threshold and d >= min_share * float(part["step_us"].median()):
                    steps.append(int(step))
            wait_dev = float(row["comm_wait_us"]) - wait_med
            out.append(
                {
                    "rank": int(row["rank"]),
                    "component": comp,
                    "value_us": float(row[comp]),
                    "median_us": med,
                    "deviation_us": dev,
                    "mads": mads,
                    "deviation_share_of_step_ratio": dev / med_step,
                    "steps": ", ".join(map(str, steps)),
                    "comm_wait_us": float(row["comm_wait_us"]),
                    "comm_wait_vs_median_us": wait_dev,
                    "evidence": None,
                    "label": f"rank {int(row['rank'])} {evidence.component(comp, lang)}",
                }
            )
            out[-1]["evidence"] = evidence.slow_rank(out[-1], lang)
    df = pd.DataFrame(out, columns=cols)
    return df.sort_values("deviation_us", ascending=False, kind="stable").reset_index(drop=True)


def load_imbalance(profile) -> pd.DataFrame:
    """Per component (computing, communication not overlapped, free, preparing, comm wait): min,
    median and max over ranks (per-step means), the rank with the max, and the share of the step
    that balancing it would save: ``(max - mean) / mean step``."""
    s = rank_summary(profile)
    s = pd.DataFrame(s)
    mean_step = float(s["step_us"].mean()) if len(s) else float("nan")
    rows = []
    for c in ("computing_us", "comm_not_overlapped_us", "free_us", "preparing_us", "comm_wait_us"):
        v = s[c]
        if v.isna().all():
            continue
        rows.append(
            {
                "component": c,
                "min_us": float(v.min()),
                "median_us": float(v.median()),
                "max_us": float(v.max()),
                "max_rank": int(s.loc[v.idxmax(), "rank"]),
                "spread_us": float(v.max() - v.min()),
                "imbalance_share_of_step_ratio": float((v.max() - v.mean()) / mean_step) if mean_step else None,
            }
        )
    return pd.DataFrame(rows)
