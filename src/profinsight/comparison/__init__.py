"""Compare runs (baseline -> changed runs, one object for a series) and ranks of one run.

>>> cmp = profinsight.compare("base_ascend_pt", "opt1_ascend_pt", "opt2_ascend_pt")
>>> cmp.steps(); cmp.waterfall(); cmp.ops(by="type"); cmp.summary(); cmp.verdicts()
>>> from profinsight.comparison import ranks_report
>>> ranks_report(p).slow_ranks()
"""

from __future__ import annotations

from .core import COMPONENTS, Comparison, compare, run_stats

__all__ = [
    "compare",
    "Comparison",
    "COMPONENTS",
    "run_stats",
    "ranks_report",
    "rank_summary",
    "slow_ranks",
    "slow_links",
    "FrameworkComparison",
]


def __getattr__(name):
    if name in ("ranks_report", "rank_summary", "slow_ranks", "RanksReport", "load_imbalance", "slow_links"):
        from . import ranks

        return getattr(ranks, name)
    if name in ("FrameworkComparison", "framework_ops", "DEFAULT_ALIASES"):
        from . import framework

        return getattr(framework, name)
    raise AttributeError(name)
