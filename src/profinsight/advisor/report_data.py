"""The four sections of the guided report (operators, timeline gaps, utilisation, memory and
communication) as JSON-able rows taken from the analyses."""

from __future__ import annotations

import json

import pandas as pd


def records(df: pd.DataFrame, cols: list[str] | None = None, n: int | None = None) -> list[dict]:
    if df is None or not len(df):
        return []
    if cols:
        df = df[[c for c in cols if c in df.columns]]
    if n:
        df = df.head(n)
    return json.loads(df.to_json(orient="records", default_handler=str))


def _at_ms(ctx, gaps: pd.DataFrame) -> pd.DataFrame:
    """The gaps with ``at_ms``: where each starts, in ms from the device start of its step
    (None where the step or its start is unknown)."""
    if not len(gaps):
        return gaps
    steps = ctx.table("steps")
    out = gaps.copy()
    if not len(steps):
        out["at_ms"] = None
        return out
    start = steps["device_start_ns"].where(steps["device_start_ns"].notna(), steps["host_start_ns"])
    starts = {
        (int(r), int(s)): v for r, s, v in zip(steps["rank"], steps["step"], start) if pd.notna(s) and pd.notna(v)
    }
    out["at_ms"] = [
        round((int(g) - starts[(int(r), int(s))]) / 1e6, 3) if pd.notna(s) and (int(r), int(s)) in starts else None
        for r, s, g in zip(out["rank"], out["step"], out["start_ns"])
    ]
    return out


#: above this many rank-steps the report lists per rank the mean step and the longest rank-steps,
#: not every one (a 454-step capture printed 908 rows nobody reads, and took seconds to draw)
MAX_STEP_ROWS = 20
LONGEST_STEPS = 10


def _steps_shown(sb: pd.DataFrame, u: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The step breakdown and utilisation rows the report shows: all of them up to
    :data:`MAX_STEP_ROWS`, else per rank its mean over the steps (``step`` = "mean of N") followed
    by the :data:`LONGEST_STEPS` longest rank-steps in rank and step order."""
    if len(sb) <= MAX_STEP_ROWS:
        return sb, u
    step_us = pd.to_numeric(sb["step_us"], errors="coerce").astype("float64")
    longest = sb.loc[step_us.nlargest(LONGEST_STEPS).index].sort_values(["rank", "step"], kind="stable")
    keys = set(zip(longest["rank"], longest["step"]))

    def means(df: pd.DataFrame) -> pd.DataFrame:
        num = [c for c in df.columns if c not in ("rank", "step") and pd.api.types.is_numeric_dtype(df[c])]
        g = df.groupby("rank", sort=True)
        m = g[num].mean().reset_index() if num else g.size().reset_index()[["rank"]]
        m.insert(1, "step", [f"mean of {n}" for n in g.size()])
        return m

    def pick(df: pd.DataFrame) -> pd.DataFrame:
        rows = df[[(r, s) in keys for r, s in zip(df["rank"], df["step"])]] if len(df) else df
        out = pd.concat([means(df), rows.astype({"step": "object"})], ignore_index=True) if len(df) else df
        return out

    return pick(sb), pick(u)


#: the analyses :func:`sections` reads that no rule does, with the parameters it reads them with:
#: the guided report has them computed beside the rules (:func:`.core.hits`, ``warm``)
WARM = (("op_summary", (("by", "type"),)),)


def sections(ctx, top: int = 10) -> dict:
    ops = ctx.view("op_summary", by="type")
    gaps = ctx.view("idle_gaps", min_us=50.0)
    by_act = (
        gaps.groupby(["rank", "host_activity"])["dur_us"]
        .agg(["count", "sum"])
        .reset_index()
        .rename(columns={"sum": "dur_us"})
        if len(gaps)
        else pd.DataFrame()
    )
    mem = ctx.view("memory_peaks", top=1)
    if len(mem):
        mem = mem[(mem["kind"] == "peak_allocated") & mem["component"].isin(["PTA", "GE", "CUDA", "CPU"])].copy()
        # one unit per table: MiB for both sizes, never raw bytes beside MiB
        mem["reserved_mib"] = pd.to_numeric(mem["reserved_bytes"], errors="coerce").astype("Float64") / 2**20
        who = mem["ops"].astype("string")
        mem["ops"] = who.where(who.str.len() <= 60, who.str.slice(0, 59) + "…")
    steps_rows, util_rows = _steps_shown(ctx.view("step_breakdown"), ctx.view("utilization"))
    return {
        "operators": records(
            ops, ["type", "core", "count", "total_us", "avg_us", "share_of_compute_ratio", "share_of_step_ratio"], top
        ),
        "steps": records(
            steps_rows,
            ["rank", "step", "step_us", "computing_us", "comm_not_overlapped_us", "free_us", "preparing_us"],
        ),
        "gaps_by_activity": records(by_act),
        # start_ns / end_ns locate a gap for links and the report's timeline excerpt; tables a
        # person reads show at_ms (from the start of its step) instead of epoch nanoseconds
        "gaps": records(
            _at_ms(ctx, gaps.head(5)),
            [
                "rank",
                "step",
                "at_ms",
                "start_ns",
                "end_ns",
                "dur_us",
                "host_activity",
                "host_op",
                "host_api",
                "next_task",
            ],
            5,
        ),
        "utilization": records(
            util_rows,
            [
                "rank",
                "step",
                "busy_ratio",
                "compute_ratio",
                "cube_busy_ratio",
                "vector_busy_ratio",
                "pmu_aic_mac_ratio",
                "pmu_aic_mte2_ratio",
            ],
        ),
        "memory": records(mem, ["rank", "component", "kind", "allocated_mib", "reserved_mib", "ops"]),
        "communication": records(
            ctx.view("comm_summary"),
            [
                "rank",
                "type",
                "count",
                "elapse_us",
                "transit_us",
                "wait_us",
                "idle_us",
                "wait_ratio",
                "bandwidth_gbps",
                "overlapped_us",
            ],
        ),
    }
