"""Everything about the ranks of one loaded profile in one object (:class:`RanksReport`): the
rank analyses of :mod:`profinsight.analyses.ranks` and a verdict in words.  Loading a path with
its ranks in parallel is the facade's (:func:`profinsight.api.ranks_report`).
"""

from __future__ import annotations

import html

import pandas as pd

from .. import hooks
from ..analyses.links import link_latency
from ..analyses.parallel import parallel_groups, parallel_layout, pipeline_bubbles, wait_chain
from ..analyses.ranks import COMPONENTS, load_imbalance, rank_summary, slow_links, slow_ranks
from ..i18n import resolve_lang, t

__all__ = ["COMPONENTS", "RanksReport", "load_imbalance", "rank_summary", "slow_links", "slow_ranks"]


#: sentences of one kind in the verdict before the rest are counted in one
MAX_SENTENCES = 16


class RanksReport:
    """Everything about the ranks of one profile: ``summary()``, ``slow_ranks()``,
    ``imbalance()``, ``verdict()``, ``to_dict()``, rich display."""

    def __init__(self, profile, threshold: float = 3.0, min_share: float = 0.02, lang: str | None = None):
        self.profile = profile
        self.threshold, self.min_share = threshold, min_share
        self.lang = resolve_lang(lang)
        self._memo: dict = {}  # each table is computed once: the verdict, JSON and HTML reuse them

    def _once(self, key, make) -> pd.DataFrame:
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key].copy()

    def summary(self) -> pd.DataFrame:
        return self._once("summary", lambda: pd.DataFrame(rank_summary(self.profile)))

    def slow_ranks(self) -> pd.DataFrame:
        return self._once("slow_ranks", lambda: pd.DataFrame(slow_ranks(self.profile, self.threshold, self.min_share)))

    def imbalance(self) -> pd.DataFrame:
        return self._once("imbalance", lambda: load_imbalance(self.profile))

    def slow_links(self, max_ratio: float = 0.5) -> pd.DataFrame:
        return self._once(("slow_links", max_ratio), lambda: pd.DataFrame(slow_links(self.profile, max_ratio)))

    def link_latency(self) -> pd.DataFrame:
        """The links' latency-bound (small) transfers, reported as time per transfer."""
        return self._once("link_latency", lambda: pd.DataFrame(link_latency(self.profile)))

    def layout(self) -> pd.DataFrame:
        """The declared parallel groups (profiler_metadata.json) with the HCCL hashes of each."""
        return self._once("layout", lambda: parallel_layout(self.profile))

    def groups(self) -> pd.DataFrame:
        """One row per HCCL group: its names, slow rank, imbalance (``parallel_groups``)."""
        return self._once("groups", lambda: pd.DataFrame(parallel_groups(self.profile, self.min_share)))

    def wait_chain(self) -> pd.DataFrame:
        return self._once("wait_chain", lambda: pd.DataFrame(wait_chain(self.profile)))

    def bubbles(self) -> pd.DataFrame:
        return self._once("bubbles", lambda: pd.DataFrame(pipeline_bubbles(self.profile)))

    def verdict(self) -> str:
        links = self.slow_links()
        tail = (f" {t('ranks.slow_links', self.lang)} " + " ".join(links["evidence"])) if not links.empty else ""
        return self._rank_verdict() + self._group_verdict() + tail

    def _group_verdict(self) -> str:
        g = self.groups()
        g = g[g["slow_rank"].notna()] if not g.empty else g
        if g.empty:
            return ""
        ids = [int(r) for r in g["slow_rank"]]
        return " In the parallel groups: " + self._capped(list(g["evidence"]), ids, "groups")

    def _capped(self, sentences: list[str], ids: list, what: str) -> str:
        """At most :data:`MAX_SENTENCES` sentences, then one that counts and names the rest (a
        1,024-rank job has 128 groups: the verdict is read, the JSON holds every one)."""
        if len(sentences) <= MAX_SENTENCES:
            return " ".join(sentences)
        rest = sorted(ids[MAX_SENTENCES:]) if all(isinstance(i, int) for i in ids) else ids[MAX_SENTENCES:]
        more = t(
            "ranks.more", self.lang, n=len(rest), what=t(f"ranks.more.{what}", self.lang), ids=", ".join(map(str, rest))
        )
        return " ".join(sentences[:MAX_SENTENCES]) + " " + more

    def _rank_verdict(self) -> str:
        n = len(self.profile.ranks)
        if n < 2:
            return t("ranks.one", self.lang)
        sr = self.slow_ranks()
        if sr.empty:
            if n < 3:
                return t("ranks.too_few", self.lang, n=n)
            return t("ranks.none_stands_out", self.lang, n=n, threshold=self.threshold)
        return self._capped(list(sr["evidence"]), list(sr["rank"]), "ranks")

    def to_dict(self) -> dict:
        import json

        rec = lambda df: json.loads(df.to_json(orient="records", default_handler=str))  # noqa: E731
        return {
            "ranks": self.profile.ranks,
            "summary": rec(self.summary()),
            "slow_ranks": rec(self.slow_ranks()),
            "imbalance": rec(self.imbalance()),
            "slow_links": rec(self.slow_links()),
            "link_latency": rec(self.link_latency()),
            "layout": rec(self.layout()),
            "groups": rec(self.groups()),
            "wait_chain": rec(self.wait_chain()),
            "pipeline_bubbles": rec(self.bubbles()),
            "verdict": self.verdict(),
        }

    def _repr_html_(self) -> str:
        # drawn by the render layer (above this one), lent through the hooks table
        draw = hooks.get("ranks_html")
        return draw(self) if draw is not None else f"<pre>{html.escape(repr(self))}</pre>"

    def __repr__(self) -> str:
        return f"<RanksReport ranks={self.profile.ranks}>\n  {self.verdict()}"
