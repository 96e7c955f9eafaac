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
        mem["ops"] = mem["ops"].astype("string").str.slice(0, 60)
    return {
        "operators": records(
            ops, ["type", "core", "count", "total_us", "avg_us", "share_of_compute_ratio", "share_of_step_ratio"], top
        ),
        "steps": records(
            ctx.view("step_breakdown"),
            ["rank", "step", "step_us", "computing_us", "comm_not_overlapped_us", "free_us", "preparing_us"],
        ),
        "gaps_by_activity": records(by_act),
        "gaps": records(
            gaps, ["rank", "step", "start_ns", "end_ns", "dur_us", "host_activity", "host_op", "next_task"], 5
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
        "memory": records(mem, ["rank", "component", "kind", "allocated_mib", "reserved_bytes", "ops"]),
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
