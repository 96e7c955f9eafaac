"""The advisor's rules: small pure functions over the analyses' tables, one module per area
(communication, compute, host, memory, environment, profile quality), registered in :data:`RULES`.

Each rule is declared with :func:`rule` -- an id, a severity, the bottleneck type it points at,
its thresholds (overridable as ``"<rule id>.<name>"``) and whether it needs Ascend data -- and
returns ``None`` (silent) or a :class:`Hit`: the values its messages need, the evidence, the
recoverable time per step and, optionally, a message variant and a severity.  Words live in
:mod:`profinsight.i18n` under ``<rule id>.title`` / ``.message[.variant]`` /
``.change[.variant]``; rules never hold user-facing text.

Per-step figures are means over the (rank, step) rows of ``step_breakdown``: a total over all
ranks and steps divided by their number.  The conditions are documented in docs/advisor.md.

The order of :data:`ORDER` is the registration order: findings with equal recoverable time and
severity keep it, so it is part of the output and is fixed here rather than by import order."""

from __future__ import annotations

from . import communication, compute, dispatch, environment, host, memory, quality  # noqa: F401  (registers the rules)
from .base import RULES, SEVERITIES, Context, Hit, Rule, by_share, col_sum, num, r3, rule

ORDER = (
    "communication_overlap",
    "format_conversion",
    "ai_cpu",
    "online_compile",
    "compile_dispatch",
    "compute_bound",
    "idle_gaps",
    "stream_sync",
    "tiny_kernels",
    "dataloader",
    "cpu_run_ahead",
    "memory_pressure",
    "env_launch_blocking",
    "env_log_level",
    "env_alloc_conf",
    "profile_quality",
    "timestamp_sanity",
    "collective_bandwidth",
    "collective_small_packets",
    "slow_rank",
    "group_slow_rank",
    "slow_link",
    "memory_churn",
    "python_gc",
)

#: the part of the mean step each rule's recoverable time is taken from (step_breakdown's
#: columns): two actions of one pool remove the same time, so the report says they overlap and
#: counts the pool at most once.  Rules that never estimate a recoverable time have none.
POOLS = {
    "online_compile": "free_us",
    "compile_dispatch": "free_us",
    "idle_gaps": "free_us",
    "stream_sync": "free_us",
    "tiny_kernels": "free_us",
    "dataloader": "free_us",
    "memory_churn": "free_us",
    "python_gc": "free_us",
    "communication_overlap": "comm_not_overlapped_us",
    "collective_bandwidth": "comm_not_overlapped_us",
    "collective_small_packets": "comm_not_overlapped_us",
    "slow_rank": "comm_not_overlapped_us",
    "group_slow_rank": "comm_not_overlapped_us",
    "slow_link": "comm_not_overlapped_us",
    "format_conversion": "computing_us",
    "ai_cpu": "computing_us",
}
#: rules that never estimate a recoverable time (their findings carry none)
UNESTIMATED = (
    "cpu_run_ahead",
    "compute_bound",
    "memory_pressure",
    "env_launch_blocking",
    "env_log_level",
    "env_alloc_conf",
    "profile_quality",
    "timestamp_sanity",
)

if set(ORDER) != set(RULES):  # a rule added without a place in ORDER
    raise RuntimeError(f"advisor rules and ORDER differ: {sorted(set(RULES) ^ set(ORDER))}")
if set(POOLS) | set(UNESTIMATED) != set(RULES):  # a rule added without saying what time it recovers
    raise RuntimeError(f"advisor rules without a pool: {sorted(set(RULES) - set(POOLS) - set(UNESTIMATED))}")
_registered = dict(RULES)
RULES.clear()
RULES.update((rid, _registered[rid]) for rid in ORDER)

__all__ = [
    "RULES",
    "ORDER",
    "POOLS",
    "UNESTIMATED",
    "SEVERITIES",
    "Context",
    "Hit",
    "Rule",
    "rule",
    "num",
    "col_sum",
    "by_share",
    "r3",
]
