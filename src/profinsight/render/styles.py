"""The look shared by every page and chart profinsight draws: one colour palette for the SVG
charts, one stylesheet for the self-contained pages (the guided report, the experiment record,
the compare and ranks pages) and one page shell, so that a report, a record and a comparison
opened side by side look like one product.

The stylesheet is inline text (no ``url()``, no ``@import``): a page written to disk must open
offline with nothing fetched.  Notebook output keeps its inline ``style=`` attributes instead,
because a notebook renders cells inside the host page, whose stylesheet we do not own.
"""

from __future__ import annotations

import html

#: series colours of every chart (the Tableau 10 order the viewer uses too)
PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
#: colours with a meaning: time saved, time added, context (out of the step), a total
GOOD, BAD, INFO, TOTAL = "#59a14f", "#e15759", "#bab0ac", "#4e79a7"
#: timeline lanes by what runs on them
LANE_COLORS = {"device": "#4e79a7", "communication": "#e15759", "merged": "#9c755f"}

#: the stylesheet of every standalone page.  Classes: ``.f`` + a severity (a finding box),
#: ``.sev-<severity>`` (a severity word), ``.verdict``, ``.dim``/``.muted`` (secondary text),
#: ``.err``, ``td.n`` (a number), ``.better``/``.worse`` (a change), ``.profinsight-table``
#: (a DataFrame table: numbers right-aligned)
PAGE_CSS = """body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px}h2{font-size:17px;border-bottom:1px solid #ddd;padding-bottom:3px;margin-top:28px}
h3{font-size:15px;margin-bottom:4px}table{border-collapse:collapse;margin:6px 0;font-size:12px}
td,th{border-bottom:1px solid #eee;padding:2px 8px;text-align:left;vertical-align:top}th{background:#f4f4f4}
td.n,.profinsight-table td{text-align:right;font-variant-numeric:tabular-nums}
.better{color:#17803d}.worse{color:#b3261e}
.f{border-left:4px solid #999;padding:4px 10px;margin:10px 0}.f.high{border-color:#e15759}
.f.medium{border-color:#f28e2b}.f.low{border-color:#4e79a7}.f.info{border-color:#bab0ac}
.sev-high{color:#b3261e;font-weight:600}.sev-medium{color:#a15c00}.sev-low,.sev-info{color:#555}
.verdict{background:#f5f5f5;padding:10px;font-size:15px}code{background:#f3f3f3;padding:1px 3px}
.dim,.muted{color:#666}.err{color:#b3261e}"""


def page(title: str, body: str, lang: str = "en") -> str:
    """One self-contained HTML page: the shared stylesheet, ``title`` as the tab title and
    ``body`` (already HTML) as it is."""
    return (
        f"<!DOCTYPE html><html lang='{html.escape(lang)}'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{PAGE_CSS}</style></head><body>{body}</body></html>"
    )
