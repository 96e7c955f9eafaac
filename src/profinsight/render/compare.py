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
import math

import pandas as pd

from .styles import PALETTE, page
from .svg import svg_waterfall

__all__ = [
    "comparison_html",
    "comparison_page",
    "framework_html",
    "framework_page",
    "human_table",
    "svg_steps",
    "svg_waterfall",
    "waterfall_html",
]


def _table(df: pd.DataFrame, max_rows: int = 30) -> str:
    return df.head(max_rows).to_html(
        index=False, border=0, na_rep="", float_format=lambda v: f"{v:,.3f}", classes="profinsight-table"
    )


#: column -> the words a person reads in the comparison tables (glossary words for the step parts)
HEADERS = {
    "run": "run",
    "step_us": "step",
    "computing_us": "compute",
    "comm_not_overlapped_us": "communication not overlapped",
    "free_us": "device idle",
    "preparing_us": "host-side preparing",
    "busy_ratio": "device busy",
    "peak_allocated_bytes": "peak allocated",
    "delta_vs_base_us": "change vs base",
    "speedup_vs_base_x": "speed-up vs base",
    "type": "op type",
    "status": "status",
    "from_count": "calls before",
    "to_count": "calls after",
    "from_total_us": "time before",
    "to_total_us": "time after",
    "delta_total_us": "change",
    "delta_avg_us": "change per call",
    "component": "part of the step",
    "label": "part of the step",
    "from_us": "before",
    "to_us": "after",
    "delta_us": "change",
    "in_step": "in the step",
    "share_of_step_delta_ratio": "share of the step change",
}


def _duration(us, signed: bool = False) -> str:
    """Microseconds in the unit that reads: 12.3 ms, 450.0 us, 1.23 s (signed: +1.2 ms)."""
    if us is None or (isinstance(us, float) and math.isnan(us)):
        return ""
    a = abs(us)
    text = f"{us / 1e6:,.3f} s" if a >= 1e6 else f"{us / 1e3:,.2f} ms" if a >= 1e3 else f"{us:,.1f} us"
    return ("+" if signed and us > 0 else "") + text


def _human(col: str, v) -> str:
    """One cell with its unit, by the column name's convention (CONTRACT.md)."""
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if col.endswith("_us"):
        return _duration(float(v), signed=col.startswith("delta"))
    if col.endswith("_ratio"):
        return f"{float(v):.1%}"
    if col.endswith("_bytes"):
        return f"{float(v) / 2**30:,.2f} GiB" if abs(float(v)) >= 2**30 else f"{float(v) / 2**20:,.1f} MiB"
    if col.endswith("_x"):
        return f"{float(v):,.3f}x"
    if isinstance(v, float):
        return f"{int(v):,}" if v.is_integer() else f"{v:,.2f}"
    return str(v)


def human_table(df: pd.DataFrame, cols: list[str], max_rows: int = 30) -> str:
    """``df[cols]`` as an HTML table with the words of :data:`HEADERS` and units in the cells."""
    e = html.escape
    cols = [c for c in cols if c in df.columns]
    head = "".join(
        f"<th style='text-align:{'left' if c in ('run', 'type', 'status', 'label', 'component') else 'right'};"
        f"padding:2px 8px' title='{e(c)}'>{e(HEADERS.get(c, c))}</th>"
        for c in cols
    )
    rows = []
    for r in df.head(max_rows).to_dict("records"):
        cells = "".join(
            f"<td style='text-align:{'left' if c in ('run', 'type', 'status', 'label', 'component') else 'right'};"
            f"padding:2px 8px;white-space:nowrap'>{e(_human(c, r.get(c)))}</td>"
            for c in cols
        )
        rows.append(f"<tr>{cells}</tr>")
    more = f"<div style='color:#666'>{len(df) - max_rows:,} more rows</div>" if len(df) > max_rows else ""
    return (
        f"<table class='profinsight-table' style='border-collapse:collapse;font-size:12px'><thead><tr>{head}"
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>{more}"
    )


#: the parts of a step, stacked in the runs chart (they add up to the step when bubble is 0)
STEP_PARTS = ("computing_us", "comm_not_overlapped_us", "free_us")


def svg_steps(steps: pd.DataFrame, width: int = 640) -> str:
    """One stacked bar per run: compute, communication not overlapped and device idle per step,
    with the step time at the end of the bar (ms)."""
    e = html.escape
    if not len(steps):
        return ""
    totals = [float(steps["step_us"].iloc[i] or 0) for i in range(len(steps))]
    vmax = max(totals + [1e-9])
    label_w, bar_h, right = 220, 22, 80
    plot = width - label_w - right
    h = bar_h * len(steps) + 44
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{h}' font-family='sans-serif' font-size='11'>"
        "<text x='4' y='12' font-weight='600'>step per run (mean per rank-step)</text>"
    ]
    for i, r in enumerate(steps.to_dict("records")):
        y0 = 20 + i * bar_h
        out.append(f"<text x='{label_w - 6}' y='{y0 + 13}' text-anchor='end'>{e(str(r['run'])[:34])}</text>")
        x = float(label_w)
        for j, c in enumerate(STEP_PARTS):
            v = float(r.get(c) or 0)
            w = plot * max(v, 0) / vmax
            out.append(
                f"<rect x='{x:.1f}' y='{y0 + 2}' width='{w:.1f}' height='{bar_h - 6}' fill='{PALETTE[j]}'>"
                f"<title>{e(HEADERS[c])}: {e(_duration(v))}</title></rect>"
            )
            x += w
        out.append(f"<text x='{x + 4:.1f}' y='{y0 + 13}' fill='#444'>{e(_duration(totals[i]))}</text>")
    lx = label_w
    for j, c in enumerate(STEP_PARTS):
        out.append(
            f"<rect x='{lx}' y='{h - 15}' width='10' height='10' fill='{PALETTE[j]}'/>"
            f"<text x='{lx + 13}' y='{h - 6}'>{e(HEADERS[c])}</text>"
        )
        lx += 24 + 6 * len(HEADERS[c])
    out.append("</svg>")
    return "".join(out)


def waterfall_html(wf: pd.DataFrame) -> str:
    """``Comparison.waterfall()`` in a notebook: one waterfall chart per pair, then the table
    with the parts' names and their times in ms / us."""
    parts = ["<div class='profinsight-waterfall' style='font-family:system-ui,sans-serif'>"]
    for _, g in wf.groupby("pair", sort=False):
        parts.append(svg_waterfall(g))
    parts.append(
        human_table(wf, ["pair", "label", "from_us", "to_us", "delta_us", "share_of_step_delta_ratio", "in_step"])
    )
    parts.append("</div>")
    return "".join(parts)


def comparison_html(cmp) -> str:
    """A :class:`~profinsight.comparison.core.Comparison`: verdicts, the runs as a chart and a
    table in people's words, one waterfall per pair and the op types that changed most per
    pair.  Static HTML and inline SVG only (a saved notebook, GitHub, VS Code)."""
    e = html.escape
    parts = [
        f"<div class='profinsight-comparison' style='font-family:system-ui,sans-serif'>"
        f"<div style='font-weight:600;margin:4px 0'>Comparison: {e(' → '.join(cmp.names))}</div>"
    ]
    parts.append("<ul>" + "".join(f"<li>{e(v)}</li>" for v in cmp.verdicts()) + "</ul>")
    steps = cmp.steps()
    parts.append(svg_steps(steps))
    parts.append(
        human_table(
            steps,
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
            ],
        )
    )
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
        parts.append(human_table(g[g["status"] != "unchanged"], cols, 15))
    parts.append(_input_warnings(cmp))
    parts.append("</div>")
    return "".join(parts)


def _input_warnings(cmp) -> str:
    """Each run's warnings about its input (cells set to null, rows set aside, files missing),
    listed under the run's name: the figures above are of what loaded."""
    from .. import diagnostics as dg
    from ..i18n import t
    from .report import diagnostic_items

    e = html.escape
    runs = [
        (name, [d for d in getattr(p, "diagnostics", []) if d.severity == "warning"])
        for name, p in zip(cmp.names, cmp.profiles)
    ]
    runs = [(name, warns) for name, warns in runs if warns]
    if not runs:
        return ""
    lang = getattr(cmp, "lang", None)
    body = "".join(
        f"<div style='margin:4px 0 2px'><b>{e(str(name))}</b> "
        f"({e(dg.codes_text(dg.by_code(warns, 'warning')))})</div><ul>{diagnostic_items(warns)}</ul>"
        for name, warns in runs
    )
    return (
        f"<div class='input-warnings'><div style='font-weight:600;margin:6px 0 2px'>"
        f"{e(t('report.input_warnings', lang))}</div>{body}</div>"
    )


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
