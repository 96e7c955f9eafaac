"""Registers ``advise`` as an analysis (``p.advise(lang=None, thresholds=None)``,
``profinsight view advise PATH``)."""

from __future__ import annotations

from ..registry import Param, analysis
from . import FINDING_COLUMNS
from . import advise as _advise


@analysis(
    "advise",
    title="Advisor findings",
    params=(
        Param("lang", str, None, ("en", "zh"), "language of the words (default: the locale)"),
        Param("thresholds", dict, None, None, 'overrides, e.g. {"format_conversion.min_share_of_compute": 0.05}'),
    ),
    columns={c: c for c in FINDING_COLUMNS},
    cache=False,  # its words follow the locale; the findings under them are kept once (advisor._hits)
)
def advise(profile, lang=None, thresholds=None):
    """Findings of the advisor's rules: evidence, recoverable time per step, the change to make."""
    return _advise(profile, lang, thresholds)
