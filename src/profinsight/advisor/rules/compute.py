"""Compute: layout conversions, AI CPU fallbacks, compute-bound steps.

See :mod:`profinsight.advisor.rules.base` for how a rule is declared; the conditions are
documented in docs/advisor.md."""

from __future__ import annotations

import pandas as pd

from .base import Context, Hit, by_share, col_sum, num, r3, rule, where_in_code


# --- compute ---------------------------------------------------------------------------------
@rule(
    "format_conversion",
    severity="medium",
    category="compute",
    thresholds={"min_share_of_compute": 0.05},
    ascend_only=True,
    basis="tasks",
    reads=(("format_conversions", {}),),
)
def format_conversion(ctx: Context, th: dict):
    """Layout-conversion kernels (TransData, TransposeD, Cast-for-format ...) take a notable share
    of compute.  Recoverable: their device time (removing a conversion removes its kernel)."""
    fc = ctx.view("format_conversions")
    if not len(fc):
        return None
    share_c = col_sum(fc, "share_of_compute_ratio")
    ranks = max(len(ctx.profile.ranks), 1)
    if share_c < th["min_share_of_compute"]:
        return None
    total = col_sum(fc, "total_us")
    by_type = {}
    for typ, g in fc.groupby("type", sort=False):
        by_type[str(typ)] = {
            "count": int(col_sum(g, "count")),
            "total_us": r3(col_sum(g, "total_us")),
            "share_of_compute_ratio": round(col_sum(g, "share_of_compute_ratio"), 6),
            "share_of_step_ratio": round(col_sum(g, "share_of_step_ratio"), 6),
        }
    top_type = max(by_type, key=lambda k: by_type[k]["total_us"])
    rows = [
        {
            k: (r3(v) if isinstance(v, float) else (None if pd.isna(v) else (int(v) if k == "count" else str(v))))
            for k, v in r.items()
            if k in ("type", "input_formats", "output_formats", "count", "total_us", "host_op")
        }
        for _, r in fc.head(5).iterrows()
    ]
    host_ops = sorted({str(h) for h in fc["host_op"].dropna()} if "host_op" in fc.columns else set())[:8]
    recoverable = ctx.per_task_step(total)
    # of the steps of the ranks that have kernels (the analysis divides by every rank's step)
    share_s = recoverable / max(ctx.task_step_us, 1e-9)
    evidence = {
        "by_type": by_type,
        "top_groups": rows,
        "host_ops": host_ops,
        "ranks": ranks,
        "share_of_compute_ratio": round(share_c, 6),
        "share_of_step_ratio": round(share_s, 6),
    }
    values = {
        "share_compute": share_c,
        "share_step": share_s,
        "top_type": top_type,
        "top_share": by_type[top_type]["share_of_compute_ratio"],
        "ms": recoverable / 1e3,
        "host_ops": ", ".join(host_ops[:4]) or "-",
    }
    where = where_in_code(ctx, top_type)
    if where is None:
        return Hit(values, evidence, recoverable, None, by_share(share_s, 0.2, 0.05))
    evidence["where"] = {**where, "share": round(where["share"], 6), "kernel_type": top_type}
    values.update(where_module=where["module"], where_phase=where["phase"], where_share=where["share"])
    values["where_line"] = where["line"] or "-"
    return Hit(values, evidence, recoverable, "located", by_share(share_s, 0.2, 0.05))


@rule(
    "ai_cpu",
    severity="medium",
    category="compute",
    thresholds={"min_share_of_compute": 0.05},
    ascend_only=True,
    basis="tasks",
)
def ai_cpu(ctx: Context, th: dict):
    """Operators running on the AI CPU (often int64 / double fallbacks) take a notable share of
    compute.  Recoverable: their device time (upper bound: the AI Core version is not free)."""
    dt = ctx.table("device_tasks", ("kind", "core", "dur_ns", "type", "input_dtypes"))
    k = dt[(dt["kind"] == "kernel")]
    total = float(pd.to_numeric(k["dur_ns"], errors="coerce").fillna(0).sum())
    cpu = k[k["core"].fillna("") == "AI_CPU"]
    if total <= 0 or not len(cpu):
        return None
    cpu_ns = float(pd.to_numeric(cpu["dur_ns"], errors="coerce").fillna(0).sum())
    share = cpu_ns / total
    if share < th["min_share_of_compute"]:
        return None
    g = cpu.assign(dur=pd.to_numeric(cpu["dur_ns"], errors="coerce").fillna(0)).groupby("type", dropna=False)
    ops = []
    for typ, part in sorted(g, key=lambda kv: -kv[1]["dur"].sum())[:8]:
        dtypes = sorted({str(x) for x in part["input_dtypes"].dropna()} if "input_dtypes" in part.columns else set())
        ops.append(
            {
                "type": str(typ),
                "count": int(len(part)),
                "total_us": r3(part["dur"].sum() / 1e3),
                "input_dtypes": dtypes[:4],
            }
        )
    wide = sum(
        1
        for o in ops
        if any(("INT64" in d.upper() or "DOUBLE" in d.upper() or "FLOAT64" in d.upper()) for d in o["input_dtypes"])
    )
    recoverable = ctx.per_task_step(cpu_ns / 1e3)
    values = {"share": share, "ms": recoverable / 1e3, "ops": ", ".join(o["type"] for o in ops[:4]), "n_wide": wide}
    return Hit(
        values,
        {"ops": ops, "share_of_compute_ratio": round(share, 6)},
        recoverable,
        "dtype" if wide else None,
        by_share(recoverable / max(ctx.task_step_us, 1e-9), 0.2, 0.05),
    )


@rule(
    "compute_bound",
    severity="medium",
    category="compute",
    thresholds={"min_busy_ratio": 0.9, "min_compute_ratio": 0.7, "top_kernels_share": 0.5},
    reads=(("utilization", {}),),
)
def compute_bound(ctx: Context, th: dict):
    """The device is busy computing almost all the step and a few kernels dominate: tune those
    kernels.  Recoverable time is not estimated (it depends on the kernel's attainable speed)."""
    u = ctx.view("utilization")
    if not len(u):
        return None
    span = col_sum(u, "span_us")
    busy, comp = col_sum(u, "busy_us") / max(span, 1e-9), col_sum(u, "computing_us") / max(span, 1e-9)
    if busy < th["min_busy_ratio"] or comp < th["min_compute_ratio"]:
        return None
    ops = ctx.view("op_summary", by="type")
    top = ops.head(5)
    top_share = col_sum(top, "share_of_compute_ratio")
    if top_share < th["top_kernels_share"]:
        return None
    kernels = [
        {
            "type": str(r["type"]),
            "count": int(num(r["count"])),
            "total_us": r3(r["total_us"]),
            "share_of_compute_ratio": round(num(r["share_of_compute_ratio"]), 6),
        }
        for _, r in top.iterrows()
    ]
    values = {
        "busy": busy,
        "compute": comp,
        "top_share": top_share,
        "kernels": ", ".join(k["type"] for k in kernels[:3]),
    }
    return Hit(values, {"busy_ratio": round(busy, 6), "compute_ratio": round(comp, 6), "top_kernels": kernels}, None)
