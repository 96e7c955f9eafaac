"""Everything about the ranks of one loaded profile in one object (:class:`RanksReport`): the
rank analyses of :mod:`profinsight.analyses.ranks` and a verdict in words.  Loading a path with
its ranks in parallel is the facade's (:func:`profinsight.api.ranks_report`).
"""

from __future__ import annotations

import html

import pandas as pd

from .. import hooks
from ..analyses.ranks import COMPONENTS, load_imbalance, rank_summary, slow_links, slow_ranks
from ..i18n import resolve_lang, t

__all__ = ["COMPONENTS", "RanksReport", "load_imbalance", "rank_summary", "slow_links", "slow_ranks"]


class RanksReport:
    """Everything about the ranks of one profile: ``summary()``, ``slow_ranks()``,
    ``imbalance()``, ``verdict()``, ``to_dict()``, rich display."""

    def __init__(self, profile, threshold: float = 3.0, min_share: float = 0.02, lang: str | None = None):
        self.profile = profile
        self.threshold, self.min_share = threshold, min_share
        self.lang = resolve_lang(lang)

    def summary(self) -> pd.DataFrame:
        return pd.DataFrame(rank_summary(self.profile))

    def slow_ranks(self) -> pd.DataFrame:
        return pd.DataFrame(slow_ranks(self.profile, self.threshold, self.min_share))

    def imbalance(self) -> pd.DataFrame:
        return load_imbalance(self.profile)

    def slow_links(self, max_ratio: float = 0.5) -> pd.DataFrame:
        return pd.DataFrame(slow_links(self.profile, max_ratio))

    def verdict(self) -> str:
        links = self.slow_links()
        tail = (f" {t('ranks.slow_links', self.lang)} " + " ".join(links["evidence"])) if not links.empty else ""
        return self._rank_verdict() + tail

    def _rank_verdict(self) -> str:
        n = len(self.profile.ranks)
        if n < 2:
            return t("ranks.one", self.lang)
        sr = self.slow_ranks()
        if sr.empty:
            if n < 3:
                return t("ranks.too_few", self.lang, n=n)
            return t("ranks.none_stands_out", self.lang, n=n, threshold=self.threshold)
        return " ".join(sr["evidence"])

    def to_dict(self) -> dict:
        import json

        rec = lambda df: json.loads(df.to_json(orient="records", default_handler=str))  # noqa: E731
        return {
            "ranks": self.profile.ranks,
            "summary": rec(self.summary()),
            "slow_ranks": rec(self.slow_ranks()),
            "imbalance": rec(self.imbalance()),
            "slow_links": rec(self.slow_links()),
            "verdict": self.verdict(),
        }

    def _repr_html_(self) -> str:
        # drawn by the render layer (above this one), lent through the hooks table
        draw = hooks.get("ranks_html")
        return draw(self) if draw is not None else f"<pre>{html.escape(repr(self))}</pre>"

    def __repr__(self) -> str:
        return f"<RanksReport ranks={self.profile.ranks}>\n  {self.verdict()}"
