"""Profile quality: what the collection missed that limits the analysis.

See :mod:`profinsight.advisor.rules.base` for how a rule is declared; the conditions are
documented in docs/advisor.md."""

from __future__ import annotations

import pandas as pd

from .base import Context, Hit, rule

# --- profile quality ----------------------------------------------------------------------------
QUALITY_CODES = (
    "no-call-stacks",
    "no-shapes",
    "no-steps",
    "no-comm-analysis",
    "partial-ranks",
    "no-memory-profile",
    "trace-truncated",
)


@rule("profile_quality", severity="info", category="profile", thresholds={"max_steps": 5})
def profile_quality(ctx: Context, th: dict):
    """What the doctor found that limits the advice (no call stacks, no shapes, no steps, ...),
    and too many profiled steps (large traces, slow tools)."""
    codes = sorted({d.code for d in ctx.profile.diagnostics if d.code in QUALITY_CODES})
    n_steps = len(ctx.profile.steps)
    too_many = n_steps > th["max_steps"]
    if not codes and not too_many:
        return None
    items = codes + (["too-many-steps"] if too_many else [])
    return Hit({"items": ", ".join(items), "steps": n_steps}, {"codes": items, "steps": n_steps}, None)


# --- profile quality: timestamps of different collections ---------------------------------------
@rule("timestamp_sanity", severity="high", category="profile", thresholds={"max_apart_s": 60.0})
def timestamp_sanity(ctx: Context, th: dict):
    """The device's compute / communication tasks and the host's activity (framework ops and API
    calls) of one rank lie more than ``max_apart_s`` apart without overlapping: the files come from
    different collections (a kernel_details.csv of one run beside a trace_view.json of another),
    and every link between host and device — launches, the host activity of the idle gaps, host
    bound or dispatch claims — is meaningless.  No recoverable time: collect again."""
    from ...analyses._sql import query

    span = query(
        ctx.profile,
        """
        WITH d AS (SELECT rank, min(start_ns) AS ds, max(start_ns + dur_ns) AS de FROM device_tasks
                   WHERE kind IN ('kernel', 'communication') AND start_ns IS NOT NULL GROUP BY rank),
        hx AS (SELECT rank, start_ns, dur_ns FROM host_ops UNION ALL SELECT rank, start_ns, dur_ns FROM api_calls),
        h AS (SELECT rank, min(start_ns) AS hs, max(start_ns + coalesce(dur_ns, 0)) AS he FROM hx
              WHERE start_ns IS NOT NULL GROUP BY rank)
        SELECT d.rank, ds, de, hs, he FROM d JOIN h ON h.rank = d.rank ORDER BY d.rank""",
    )
    if not len(span):
        return None
    apart = pd.concat([span["ds"] - span["he"], span["hs"] - span["de"]], axis=1).max(axis=1).astype("float64") / 1e9
    span = span.assign(apart_s=apart)
    bad = span[span["apart_s"] > float(th["max_apart_s"])]
    if not len(bad):
        return None
    rows = [
        {
            "rank": int(r["rank"]),
            "device_start_ns": int(r["ds"]),
            "device_end_ns": int(r["de"]),
            "host_start_ns": int(r["hs"]),
            "host_end_ns": int(r["he"]),
            "apart_s": round(float(r["apart_s"]), 3),
        }
        for _, r in bad.iterrows()
    ]
    values = {
        "ranks": ", ".join(str(r["rank"]) for r in rows),
        "minutes": max(r["apart_s"] for r in rows) / 60.0,
        "which": "before" if int(bad["de"].iloc[0]) < int(bad["hs"].iloc[0]) else "after",
    }
    return Hit(values, {"per_rank": rows}, None)
