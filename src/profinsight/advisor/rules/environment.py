"""Configuration: environment variables that slow a run or change the allocator.

See :mod:`profinsight.advisor.rules.base` for how a rule is declared; the conditions are
documented in docs/advisor.md."""

from __future__ import annotations

from .base import Context, Hit, rule


# --- configuration -----------------------------------------------------------------------------
@rule("env_launch_blocking", severity="high", category="data_host", ascend_only=True)
def env_launch_blocking(ctx: Context, th: dict):
    """``ASCEND_LAUNCH_BLOCKING=1`` makes every launch synchronous: the host waits for each kernel."""
    v = ctx.env().get("ASCEND_LAUNCH_BLOCKING", {})
    ranks = sorted(r for r, x in v.items() if x.strip() == "1")
    if not ranks:
        return None
    return Hit({"ranks": ", ".join(map(str, ranks))}, {"env": {"ASCEND_LAUNCH_BLOCKING": "1"}, "ranks": ranks}, None)


@rule("env_log_level", severity="medium", category="data_host", thresholds={"max_verbose_level": 1}, ascend_only=True)
def env_log_level(ctx: Context, th: dict):
    """``ASCEND_GLOBAL_LOG_LEVEL`` at debug (0) or info (1) writes logs on the hot path."""
    v = ctx.env().get("ASCEND_GLOBAL_LOG_LEVEL", {})
    bad = {r: x for r, x in v.items() if x.strip().isdigit() and int(x) <= th["max_verbose_level"]}
    if not bad:
        return None
    level = sorted(set(bad.values()))[0]
    return Hit(
        {"level": level, "ranks": ", ".join(map(str, sorted(bad)))},
        {"env": {"ASCEND_GLOBAL_LOG_LEVEL": level}, "ranks": sorted(bad)},
        None,
    )


@rule("env_alloc_conf", severity="low", category="memory", ascend_only=True)
def env_alloc_conf(ctx: Context, th: dict):
    """``PYTORCH_NPU_ALLOC_CONF`` is set without ``expandable_segments:True``."""
    v = ctx.env().get("PYTORCH_NPU_ALLOC_CONF", {})
    bad = {r: x for r, x in v.items() if "expandable_segments:true" not in x.replace(" ", "").lower()}
    if not bad:
        return None
    val = sorted(set(bad.values()))[0]
    return Hit({"value": val}, {"env": {"PYTORCH_NPU_ALLOC_CONF": val}, "ranks": sorted(bad)}, None)
