"""Host dispatch: operator compilation on the critical path and the CPU running ahead of the
device (host-side preparing that is healthy, not overhead).

See :mod:`profinsight.advisor.rules.base` for how a rule is declared; the conditions are
documented in docs/advisor.md."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .base import Context, Hit, by_share, col_sum, r3, rule
from .host import _gap_row

#: runtime / CANN calls that compile or prepare an operator on the host before it can run
COMPILE_EXACT = ("aclopCompileAndExecute", "aclopCompile", "opCompile")
COMPILE_LIKE = "aclnn%GetWorkspaceSize"


@rule(
    "compile_dispatch",
    severity="medium",
    category="data_host",
    thresholds={"min_share_of_step": 0.02, "min_gap_us": 50.0},
    ascend_only=True,
    basis="tasks",
)
def compile_dispatch(ctx: Context, th: dict):
    """Operator compilation or preparation on the host sits on the critical path: the device is
    idle (gaps of at least ``min_gap_us``) while ``aclopCompileAndExecute`` (an operator outside
    the aclnn binary path, compiled or looked up at run time, ``opCompile`` inside it),
    ``aclopCompile`` or ``aclnn*GetWorkspaceSize`` runs, for at least ``min_share_of_step`` of the
    step.  The overlap is measured per call against the union of the rank's idle gaps; nested
    calls (``opCompile`` inside ``aclopCompileAndExecute``) count once.  Recoverable: that
    overlap per step (at most the steps' free time).  Needs the CANN API calls (Level1 or
    above); silent without them, and it cannot tell a compile from an op-cache hit."""
    api = ctx.table("api_calls", ("rank", "thread", "name", "start_ns", "dur_ns"))
    if not len(api):
        return None
    names = api["name"].fillna("").astype(str)
    like = names.str.startswith("aclnn") & names.str.endswith("GetWorkspaceSize")
    calls = api[names.isin(COMPILE_EXACT) | like].dropna(subset=["start_ns", "dur_ns"])
    if not len(calls):
        return None
    g = ctx.view("idle_gaps", min_us=float(th["min_gap_us"]))
    outer = _outermost(calls)
    critical = _overlap_with_gaps(outer, g)
    per = min(ctx.per_task_step(float(critical.sum()) / 1e3), ctx.per_task_step(col_sum(ctx.task_steps, "free_us")))
    share = per / max(ctx.task_step_us, 1e-9)
    if share < th["min_share_of_step"]:
        return None
    dur = pd.to_numeric(calls["dur_ns"], errors="coerce").fillna(0)
    by = calls.assign(dur=dur, kind=names[calls.index].where(~like[calls.index], "aclnn*GetWorkspaceSize"))
    by = by.groupby("kind").agg(calls=("dur", "size"), total_us=("dur", "sum")).sort_values("total_us", ascending=False)
    calls_ev = {str(k): {"calls": int(v["calls"]), "total_us": r3(v["total_us"] / 1e3)} for k, v in by.iterrows()}
    outer_us = float(pd.to_numeric(outer["dur_ns"], errors="coerce").fillna(0).sum()) / 1e3
    worst = g[g["host_api"].isin(list(COMPILE_EXACT)) | g["host_api"].fillna("").str.endswith("GetWorkspaceSize")]
    longest = _gap_row(worst.iloc[0]) if len(worst) else None
    top = by.index[0]
    values = {
        "calls": round(int(by.loc[top, "calls"]) / ctx.n_task_steps),
        "api": str(top),
        "host_ms": ctx.per_task_step(outer_us) / 1e3,
        "host_share": ctx.per_task_step(outer_us) / max(ctx.task_step_us, 1e-9),
        "ms": per / 1e3,
        "share": share,
        "gap_us": longest["dur_us"] if longest else 0.0,
        "gap_api": longest["host_api"] if longest else "-",
        "gap_ov_us": longest["host_api_overlap_us"] if longest else 0.0,
    }
    evidence = {
        "calls": calls_ev,
        "host_us": r3(outer_us),
        "critical_us": r3(float(critical.sum()) / 1e3),
        "longest_gaps": [longest] if longest else [],
        "share_of_step_ratio": round(share, 6),
    }
    return Hit(values, evidence, per, None if longest else "no_gap", by_share(share, 0.1, 0.02))


def _outermost(calls: pd.DataFrame) -> pd.DataFrame:
    """The calls not inside another call of the set on the same rank and thread (vectorised:
    sorted by start, a call is nested when it ends before the running maximum end of those
    before it)."""
    c = calls.assign(s=calls["start_ns"].astype("int64"), e=(calls["start_ns"] + calls["dur_ns"]).astype("int64"))
    keys = ["rank", "thread"] if "thread" in c.columns else ["rank"]
    c = c.sort_values([*keys, "s", "e"], ascending=[*([True] * len(keys)), True, False], kind="stable")
    prev = c.groupby(keys, dropna=False)["e"].transform(lambda x: x.cummax().shift(1))
    return c[~(prev.notna() & (c["e"] <= prev))]


def _overlap_with_gaps(calls: pd.DataFrame, gaps: pd.DataFrame) -> np.ndarray:
    """Per call (ns) its overlap with the union of its rank's gaps: gaps are disjoint, so with
    G(t) = gap time before t the overlap of [s, e) is G(e) - G(s) — two searchsorted per rank."""
    out = np.zeros(len(calls), dtype="float64")
    if not len(gaps):
        return out
    c_rank = calls["rank"].to_numpy("int64")
    c_s = calls["s"].to_numpy("int64")
    c_e = calls["e"].to_numpy("int64")
    for r, part in gaps.groupby("rank"):
        gs = np.sort(part["start_ns"].to_numpy("int64"))
        ge = np.sort(part["end_ns"].to_numpy("int64"))
        cum = np.r_[0, np.cumsum(ge - gs)]

        m = c_rank == int(r)
        if m.any():
            out[m] = _gap_time_before(gs, ge, cum, c_e[m]) - _gap_time_before(gs, ge, cum, c_s[m])
    return out


def _gap_time_before(gs, ge, cum, t):
    """Gap time before each ``t``: whole gaps that started earlier, plus the part of the one it falls in."""
    i = np.searchsorted(gs, t, side="right")  # gaps starting at or before t
    j = np.maximum(i - 1, 0)
    inside = np.clip(t - gs[j], 0, ge[j] - gs[j])
    return cum[j] + np.where(i > 0, inside, 0)


@rule(
    "cpu_run_ahead",
    severity="info",
    category="data_host",
    thresholds={"min_preparing_share_of_step": 0.05, "min_steps_ratio": 0.5},
    basis="tasks",
)
def cpu_run_ahead(ctx: Context, th: dict):
    """Splits host-side preparing (host step start -> the step's first compute or communication
    task) into the CPU run-ahead — the device still runs the previous step's work when the host
    starts this one (previous step's last device task end − host step start, at most the
    preparing) — and the rest, in which the device waits for the host.  Fires when preparing is
    at least ``min_preparing_share_of_step`` of the step and the host runs ahead in at least
    ``min_steps_ratio`` of the steps that have a previous step.  Information: the run-ahead part
    is healthy (the host keeps the device fed) and no change removes it; recoverable time is not
    estimated.  Needs two consecutive steps with host and device times on a rank."""
    st = ctx.table("steps", ("rank", "step", "host_start_ns", "device_end_ns"))
    sb = ctx.task_steps
    if len(st) < 2 or not len(sb) or "preparing_us" not in sb.columns:
        return None
    st = st.dropna(subset=["step"]).sort_values(["rank", "step"])
    prev_end = st.groupby("rank")["device_end_ns"].shift(1)
    st = st.assign(ahead_ns=pd.to_numeric(prev_end - st["host_start_ns"], errors="coerce"))
    st = st[(st["step"] - st.groupby("rank")["step"].shift(1)) == 1]  # consecutive steps only
    rows = st.merge(sb[["rank", "step", "preparing_us", "step_us"]], on=["rank", "step"])
    rows = rows.dropna(subset=["ahead_ns", "preparing_us"])
    if not len(rows):
        return None
    prep = pd.to_numeric(rows["preparing_us"], errors="coerce").astype("float64").clip(lower=0)
    ahead = (rows["ahead_ns"].astype("float64") / 1e3).clip(lower=0).combine(prep, min)
    step = float(pd.to_numeric(rows["step_us"], errors="coerce").mean())
    ahead_steps = int((ahead > 0).sum())
    if prep.mean() < th["min_preparing_share_of_step"] * step or ahead_steps < th["min_steps_ratio"] * len(rows):
        return None
    values = {
        "k": ahead_steps,
        "n": len(rows),
        "prep_ms": prep.mean() / 1e3,
        "prep_share": prep.mean() / max(step, 1e-9),
        "ahead_ms": ahead.mean() / 1e3,
        "ahead_share": ahead.sum() / max(prep.sum(), 1e-9),
        "rest_ms": (prep - ahead).mean() / 1e3,
    }
    evidence = {
        "per_rank_step": [
            {
                "rank": int(r["rank"]),
                "step": int(r["step"]),
                "preparing_us": r3(p),
                "cpu_run_ahead_us": r3(a),
                "device_waits_for_host_us": r3(p - a),
            }
            for (_, r), p, a in zip(rows.iterrows(), prep, ahead)
        ],
        "share_of_preparing_ratio": round(float(values["ahead_share"]), 6),
    }
    return Hit(values, evidence, None)
