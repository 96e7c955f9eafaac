"""Host and data: online compilation, idle gaps and what the host did, synchronisation, tiny kernels, data loading, Python GC.

See :mod:`profinsight.advisor.rules.base` for how a rule is declared; the conditions are
documented in docs/advisor.md."""

from __future__ import annotations

import pandas as pd

from .base import Context, Hit, Th, by_share, col_sum, num, r3, rule


@rule(
    "online_compile",
    severity="medium",
    category="data_host",
    thresholds={"min_share_of_step": 0.02},
    ascend_only=True,
    basis="tasks",
)
def online_compile(ctx: Context, th: dict):
    """Operators compiled online during the measured steps (``opCompile`` inside
    ``aclopCompileAndExecute``), often because of dynamic shapes.  Recoverable: the compile time."""
    api = ctx.table("api_calls", ("name", "dur_ns"))
    if not len(api):
        return None
    names = api["name"].fillna("")
    comp = api[names == "opCompile"]
    if not len(comp):
        comp = api[names == "aclopCompileAndExecute"]
    if not len(comp):
        return None
    comp_us = float(pd.to_numeric(comp["dur_ns"], errors="coerce").fillna(0).sum()) / 1e3
    per = ctx.per_task_step(comp_us)
    share = per / max(ctx.task_step_us, 1e-9)
    if share < th["min_share_of_step"]:
        return None
    dt = ctx.table("device_tasks", ("op_state",))
    dyn = int((dt.get("op_state", pd.Series(dtype=str)).fillna("") == "dynamic").sum())
    calls = int((names == "aclopCompileAndExecute").sum())
    values = {"ms": per / 1e3, "share": share, "calls": calls, "dynamic": dyn}
    return Hit(
        values,
        {"compile_us": r3(comp_us), "aclopCompileAndExecute_calls": calls, "dynamic_kernels": dyn},
        per,
        None,
        by_share(share, 0.2, 0.05),
    )


# --- host / data ------------------------------------------------------------------------------
HOST_BOUND = ("launch", "python")


@rule(
    "idle_gaps",
    severity="medium",
    category="data_host",
    thresholds={"min_share_of_step": 0.10, "min_gap_us": 50.0, "high_share_of_step": 0.30},
    basis="tasks",
    reads=(("idle_gaps", {"min_us": Th("min_gap_us")}),),
)
def idle_gaps(ctx: Context, th: dict):
    """The device sits idle in long gaps for a notable share of the step.  The
    gaps are split by what the host did: loading data (data-starved), dispatching or Python
    (launch or host bound), or nothing recorded; synchronisation gaps are the ``stream_sync``
    rule.  A cause is named only on its evidence: where the gaps' ranks record no host activity
    at all the finding says the cause is unknown and what to collect (variant ``no_host``); where
    the host recorded nothing during most of the gap time it says so (``unexplained``) — neither
    claims a recoverable time.  Recoverable otherwise: the gap time of the dominant class.  The
    device cannot idle longer than its free time: where the gaps that start in the steps add up to
    more (a gap runs on past its step's last task into the next), the classes are scaled down to
    the steps' free time.  Each listed gap names the API call in progress during it."""
    g = ctx.view("idle_gaps", min_us=float(th["min_gap_us"]))
    if not len(g):
        return None
    split = {k: r3(v) for k, v in g.groupby("host_activity")["dur_us"].sum().items()}
    data = split.get("data_loading", 0.0)
    host = sum(split.get(k, 0.0) for k in HOST_BOUND)
    unexplained = split.get("idle", 0.0)
    total = data + host + unexplained
    free = col_sum(ctx.task_steps, "free_us")
    if 0 < free < total:
        f = free / total
        data, host, unexplained, total = data * f, host * f, unexplained * f, free
    share = ctx.per_task_step(total) / max(ctx.task_step_us, 1e-9)
    if share < th["min_share_of_step"]:
        return None
    blind = sorted({int(r) for r in g["rank"]} - ctx.host_ranks)
    if unexplained > max(data, host):
        variant, recoverable = ("no_host" if blind else "unexplained"), None
    else:
        variant = "data" if data >= host else "launch"
        recoverable = ctx.per_task_step(data if variant == "data" else host)
    top = [_gap_row(r) for _, r in g.head(5).iterrows()]
    ops = [t["host_op"] for t in top if t["host_op"]]
    apis = [f"{t['host_api']} ({t['host_api_overlap_us']:,.0f} of {t['dur_us']:,.0f} us)" for t in top if t["host_api"]]
    values = {
        "share": share,
        "gap_ms": ctx.per_task_step(total) / 1e3,
        "data_ms": ctx.per_task_step(data) / 1e3,
        "host_ms": ctx.per_task_step(host) / 1e3,
        "none_ms": ctx.per_task_step(unexplained) / 1e3,
        "n": round(len(g) / ctx.n_task_steps),
        "ops": ", ".join(dict.fromkeys(ops[:3])) or "-",
        "apis": "; ".join(apis[:3]) or "-",
        "ranks": ", ".join(map(str, blind)) or "-",
        "ascend": ctx.is_ascend,
        "min_us": float(th["min_gap_us"]),
        # what the share is of, worded per language: the step, or the capture where none was recorded
        **ctx.denominator(),
    }
    if not ctx.is_ascend and variant in ("data", "launch"):
        variant += "_gpu"
    sev = "high" if share >= th["high_share_of_step"] else "medium"
    evidence = {"split_us": split, "longest_gaps": top, "gaps": int(len(g)), "ranks_without_host_data": blind}
    return Hit(values, evidence, recoverable, variant, sev)


def _gap_row(r) -> dict:
    def opt(k):
        return None if k not in r or pd.isna(r[k]) else str(r[k])

    ov = r["host_api_overlap_us"] if "host_api_overlap_us" in r else None
    return {
        "rank": int(r["rank"]),
        "step": None if pd.isna(r["step"]) else int(r["step"]),
        "start_ns": int(r["start_ns"]),
        "end_ns": int(r["end_ns"]),
        "dur_us": r3(r["dur_us"]),
        "host_activity": str(r["host_activity"]),
        "host_op": opt("host_op"),
        "host_api": opt("host_api"),
        "host_api_overlap_us": None if ov is None or pd.isna(ov) else r3(ov),
        "next_task": opt("next_task"),
    }


@rule(
    "stream_sync",
    severity="medium",
    category="data_host",
    thresholds={"min_share_of_step": 0.05, "min_gap_us": 50.0},
    basis="tasks",
    reads=(("idle_gaps", {"min_us": Th("min_gap_us")}),),
)
def stream_sync(ctx: Context, th: dict):
    """The device idles while the host waits for it (``aten::item``, ``.cpu()``, stream or device
    synchronize) right after launching work.  Recoverable: those gaps."""
    g = ctx.view("idle_gaps", min_us=float(th["min_gap_us"]))
    if not len(g):
        return None
    s = g[g["host_activity"] == "synchronization"]
    per = ctx.per_task_step(col_sum(s, "dur_us"))
    free = ctx.per_task_step(col_sum(ctx.task_steps, "free_us"))
    per = min(per, free) if free > 0 else per  # the device idles no longer than its free time
    share = per / max(ctx.task_step_us, 1e-9)
    if not len(s) or share < th["min_share_of_step"]:
        return None
    ops = s["host_op"].dropna().astype(str).value_counts().head(5)
    values = {"ms": per / 1e3, "share": share, "n": int(len(s)), "ops": ", ".join(ops.index)}
    return Hit(
        values,
        {"gaps": int(len(s)), "host_ops": {k: int(v) for k, v in ops.items()}},
        per,
        None,
        by_share(share, 0.2, 0.05),
    )


@rule(
    "tiny_kernels",
    severity="medium",
    category="data_host",
    thresholds={"min_short_ratio": 0.5, "min_kernels": 100},
    basis="tasks",
    reads=(("launch_stats", {}),),
)
def tiny_kernels(ctx: Context, th: dict):
    """Many kernels are shorter than the host call that launches them: the device finishes work
    faster than the host issues it (dispatch bound).  Recoverable: short kernels × median launch
    time (the launches fusion or graph mode removes), at most the step's free time."""
    ls = ctx.view("launch_stats")
    if not len(ls):
        return None
    kernels, short = col_sum(ls, "kernels"), col_sum(ls, "short_kernels")
    n = max(int((pd.to_numeric(ls["kernels"], errors="coerce").fillna(0) > 0).sum()), 1)  # rank-steps with kernels
    if kernels / n < th["min_kernels"] or short / max(kernels, 1) < th["min_short_ratio"]:
        return None
    launch = float(pd.to_numeric(ls["median_launch_us"], errors="coerce").median())
    free = col_sum(ctx.task_steps, "free_us")
    recoverable = min(short * num(launch), free) / n
    values = {
        "short": int(short / n),
        "kernels": int(kernels / n),
        "ratio": short / max(kernels, 1),
        "launch_us": num(launch),
        "kernel_us": num(pd.to_numeric(ls["median_kernel_us"], errors="coerce").median()),
    }
    return Hit(
        values,
        {"per_rank_step": ls.drop(columns=["label"], errors="ignore").to_dict(orient="records")},
        recoverable,
        "gpu" if not ctx.is_ascend else None,
    )


@rule(
    "dataloader",
    severity="medium",
    category="data_host",
    thresholds={"min_share_of_step": 0.05},
    reads=(("dataloader", {}),),
)
def dataloader(ctx: Context, th: dict):
    """The training thread waits for the DataLoader while the device is idle.  Recoverable: the
    device-idle part of data loading, at most the step.  The share is of the device step, or of
    the host step (``ProfilerStep#``) where the profile records no device step — never of a step
    that is not there."""
    d = ctx.view("dataloader")
    if not len(d):
        return None
    idle = col_sum(d, "device_idle_during_us")
    per = idle / max(len(d), 1)
    step, variant = ctx.step_us, None
    if step <= 0 and "host_step_us" in d.columns:
        host = pd.to_numeric(d["host_step_us"], errors="coerce")
        step, variant = (float(host.mean()), "host") if host.notna().any() else (0.0, None)
    if step <= 0:
        return None  # no step of any kind: a share of nothing says nothing
    per = min(per, step)
    share = per / step
    if share < th["min_share_of_step"]:
        return None
    values = {"ms": per / 1e3, "share": share}
    return Hit(
        values,
        {"per_rank_step": d.drop(columns=["label"], errors="ignore").to_dict(orient="records")},
        per,
        variant,
        by_share(share, 0.2, 0.05),
    )


# --- host: Python garbage collection -------------------------------------------------------------
@rule(
    "python_gc",
    severity="medium",
    category="data_host",
    thresholds={"min_share_of_step": 0.02, "min_pause_us": 10000.0},
    basis="tasks",
)
def python_gc(ctx: Context, th: dict):
    """Python's garbage collector stops the training thread: GC pauses recorded in the profile
    (``trace_slices`` of the ``Python GC`` process / ``GC_RECORD``, category ``gc``) take at least
    ``min_share_of_step`` of the step, or one pause lasts ``min_pause_us`` or more.  Recoverable:
    the GC time per step, at most the step's free time (a pause costs only where the device starves)."""
    ts = ctx.table("trace_slices", ("process", "cat", "name", "start_ns", "dur_ns", "rank"))
    if not len(ts):
        return None
    proc = ts["process"].fillna("").astype(str) if "process" in ts.columns else pd.Series("", index=ts.index)
    cat = ts["cat"].fillna("").astype(str) if "cat" in ts.columns else pd.Series("", index=ts.index)
    gc = ts[proc.str.contains("Python GC", case=False) | (cat.str.lower() == "gc")]
    dur = pd.to_numeric(gc["dur_ns"], errors="coerce").fillna(0) if len(gc) else pd.Series(dtype=float)
    if not len(gc) or dur.sum() <= 0:
        return None
    total_us = float(dur.sum()) / 1e3
    per = ctx.per_task_step(total_us)
    share = per / max(ctx.task_step_us, 1e-9)
    longest = float(dur.max()) / 1e3
    if share < th["min_share_of_step"] and longest < th["min_pause_us"]:
        return None
    recoverable = min(per, ctx.per_task_step(col_sum(ctx.task_steps, "free_us")))
    values = {
        "n": round(len(gc) / ctx.n_task_steps, 1),
        "ms": per / 1e3,
        "share": share,
        "longest_ms": longest / 1e3,
        "rec_ms": recoverable / 1e3,
    }
    return Hit(
        values,
        {
            "pauses": int(len(gc)),
            "gc_us": r3(total_us),
            "longest_us": r3(longest),
            "share_of_step_ratio": round(share, 6),
        },
        recoverable,
        None,
        by_share(share, 0.1, 0.02),
    )
