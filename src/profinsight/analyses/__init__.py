"""Analyses: pure functions (profile, parameters) -> one table, registered once.

See :mod:`profinsight.analyses.registry`.  Each module registers its analyses with
``@analysis(...)``; ``Profile`` gains a method per analysis and the CLI a ``view`` form.
"""

from .registry import ANALYSES, Analysis, Chart, Param, all_analyses, analysis, get

__all__ = ["ANALYSES", "Analysis", "Chart", "Param", "all_analyses", "analysis", "get"]
