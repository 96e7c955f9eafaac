"""Profile quality: what the collection missed that limits the analysis.

See :mod:`profinsight.advisor.rules.base` for how a rule is declared; the conditions are
documented in docs/advisor.md."""

from __future__ import annotations

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
