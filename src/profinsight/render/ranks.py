"""The ranks of one profile (:class:`~profinsight.comparison.ranks.RanksReport`) as HTML: the
verdict in words, then each rank analysis drawn as any analysis result (table + chart), so a
ranks page and ``p.rank_summary()`` in a notebook look the same.

``RanksReport`` sits below this layer: its ``_repr_html_`` reaches :func:`ranks_html` through
the ``ranks_html`` slot of :mod:`profinsight.hooks`; the CLI imports it directly.
"""

from __future__ import annotations

import html

from .styles import page


def figure_text(v, col: str = "") -> str:
    """One figure of a ranks table as text: ratios and shares with four significant digits (a
    2.1% imbalance reads 0.021, never 0.0), other floats with one decimal, empty for a missing one."""
    if v is None or type(v).__name__ == "NAType" or (isinstance(v, float) and v != v):  # pandas' NA, no pandas import
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}" if col.endswith("ratio") or col == "mads" else f"{v:,.1f}"
    return str(v)


def ranks_html(rep) -> str:
    """The verdict, the rank summary, the slow ranks, the imbalance per component, the parallel
    groups (where the profile records its layout or its collectives' groups), the pipeline
    bubble per stage and (when there are any) the slow links."""
    from ..registry import get
    from .notebook import render_html

    links, groups, bubbles = rep.slow_links(), rep.groups(), rep.bubbles()
    return (
        f"<div class='profinsight-ranks'><p>{html.escape(rep.verdict())}</p>"
        + render_html(rep.summary(), get("rank_summary"), {})
        + render_html(rep.slow_ranks(), get("slow_ranks"), {})
        + render_html(rep.imbalance(), None, {})
        + (render_html(groups, get("parallel_groups"), {}) if not groups.empty else "")
        + (render_html(bubbles, get("pipeline_bubbles"), {}) if not bubbles.empty else "")
        + (render_html(links, get("slow_links"), {}) if not links.empty else "")
        + "</div>"
    )


def ranks_page(rep) -> str:
    """``profinsight ranks PATH --format html``: :func:`ranks_html` as a page in the shared style."""
    return page("profinsight ranks", ranks_html(rep))
