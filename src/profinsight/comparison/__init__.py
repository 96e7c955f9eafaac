"""Compare loaded runs (baseline -> changed runs, one object for a series) and ranks of one run.

>>> cmp = profinsight.compare("base_ascend_pt", "opt1_ascend_pt", "opt2_ascend_pt")
>>> cmp.steps(); cmp.waterfall(); cmp.ops(by="type"); cmp.summary(); cmp.verdicts()
>>> profinsight.ranks_report(p).slow_ranks()

The functions that take paths (``compare``, ``ranks_report``) are the facade's
(:mod:`profinsight.api`): this package works on loaded profiles only.
"""

from __future__ import annotations

from .core import COMPONENTS, Comparison, run_stats

__all__ = ["Comparison", "COMPONENTS", "run_stats", "RanksReport", "FrameworkComparison"]


def __getattr__(name):
    if name in ("RanksReport",):
        from . import ranks

        return getattr(ranks, name)
    if name in ("FrameworkComparison", "framework_ops", "DEFAULT_ALIASES"):
        from . import framework

        return getattr(framework, name)
    raise AttributeError(name)
