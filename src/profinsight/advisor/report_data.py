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
    return {
        "operators": records(
            ops, ["type", "core", "count", "total_us", "avg_us", "share_of_compute_ratio", "share_of_step_ratio"], top
        ),
        "steps": records(
            ctx.view("step_breakdown"),
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
            ctx.view("utilization"),
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
