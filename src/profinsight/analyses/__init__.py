"""Analyses: pure functions (profile, parameters) -> one table, registered once.

Importing this package registers every one-profile analysis (the rank analyses included) in
:mod:`profinsight.registry`, in the order surfaces list them; ``Profile`` gains a method per
analysis and the CLI a ``view`` form.
"""

from . import (  # noqa: F401 - registers the analyses
    aicore,
    attribution,
    communication,
    gaps,
    links,
    memory,
    operators,
    parallel,
    rank_steps,
    ranks,
    steps,
)

__all__ = [
    "operators",
    "steps",
    "aicore",
    "gaps",
    "memory",
    "communication",
    "ranks",
    "parallel",
    "links",
    "rank_steps",
    "attribution",
]
