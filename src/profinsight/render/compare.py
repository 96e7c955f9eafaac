"""Compare output, for the notebook and for a page on disk: a run-vs-run
:class:`~profinsight.comparison.core.Comparison` (verdicts, the runs table, an inline SVG
waterfall per pair and the biggest op changes) and a framework-vs-framework
:class:`~profinsight.comparison.framework.FrameworkComparison`.

The comparison objects sit below this layer, so their ``_repr_html_`` reaches these functions
through the ``comparison_html`` / ``framework_html`` slots of :mod:`profinsight.hooks`
(filled by :func:`profinsight.render.install`); the CLI imports them directly.
"""

from __future__ import annotations

import html

import pandas as pd

from .styles import page
from .svg import svg_waterfall

__all__ = ["comparison_html", "comparison_page", "framework_html", "framework_page", "svg_waterfall"]


def _table(df: pd.DataFrame, max_rows: int = 30) -> str:
    return df.head(max_rows).to_html(
        index=False, border=0, na_rep="", float_format=lambda v: f"{v:,.3f}", classes="profinsight-table"
    )


def comparison_html(cmp) -> str:
    """A :class:`~profinsight.comparison.core.Comparison`: verdicts, the runs table, one
    waterfall per pair and the op types that changed most per pair."""
    e = html.escape
    parts = [
        f"<div class='profinsight-comparison'><div style='font-weight:600;margin:4px 0'>"
        f"Comparison: {e(' → '.join(cmp.names))}</div>"
    ]
    parts.append("<ul>" + "".join(f"<li>{e(v)}</li>" for v in cmp.verdicts()) + "</ul>")
    steps = cmp.steps()[
        [
            "run",
            "step_us",
            "computing_us",
            "comm_not_overlapped_us",
            "free_us",
            "preparing_us",
            "busy_ratio",
            "peak_allocated_bytes",
            "delta_vs_base_us",
            "speedup_vs_base_x",
        ]
    ]
    parts.append(_table(steps))
    wf = cmp.waterfall()
    for _, g in wf.groupby("pair", sort=False):
        parts.append(svg_waterfall(g))
    for _, g in cmp.ops("type").groupby("pair", sort=False):
        parts.append(
            f"<div style='font-weight:600;margin:6px 0 2px'>Op types that changed most: "
            f"{e(str(g['pair'].iloc[0]))}</div>"
        )
        cols = [
            "type",
            "status",
            "from_count",
            "to_count",
            "from_total_us",
            "to_total_us",
            "delta_total_us",
            "delta_avg_us",
        ]
        parts.append(_table(g[g["status"] != "unchanged"][cols], 15))
    parts.append("</div>")
    return "".join(parts)


def comparison_page(cmp) -> str:
    """``profinsight compare A B -o cmp.html``: :func:`comparison_html` as a standalone page in
    the shared style."""
    return page("profinsight comparison", comparison_html(cmp))


def framework_html(cmp) -> str:
    """A :class:`~profinsight.comparison.framework.FrameworkComparison`: the verdict, the two
    runs' modes and the framework ops that differ most."""
    e = html.escape
    cols = ["op", "status", "from_count", "to_count", "from_avg_us", "to_avg_us", "delta_avg_us", "ratio_x", "lost_us"]
    tab = (
        cmp.ops()[cols]
        .head(30)
        .to_html(index=False, border=0, na_rep="", float_format=lambda v: f"{v:,.2f}", classes="profinsight-table")
    )
    return (
        f"<div class='profinsight-comparison'><div style='font-weight:600'>Framework ops: "
        f"{e(cmp.names[0])} vs {e(cmp.names[1])}</div><p>{e(cmp.verdict())}</p>"
        + cmp.modes().to_html(index=False, border=0)
        + tab
        + "</div>"
    )


def framework_page(cmp) -> str:
    """``profinsight compare --framework A B -o cmp.html``: :func:`framework_html` as a page."""
    return page("profinsight comparison", framework_html(cmp))
