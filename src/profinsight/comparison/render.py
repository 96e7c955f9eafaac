"""Static HTML for a :class:`~profinsight.comparison.core.Comparison`: verdicts, the runs table,
an inline SVG waterfall per pair and the biggest op changes (survives a saved notebook)."""

from __future__ import annotations

import html

import pandas as pd

_GOOD, _BAD, _INFO, _TOTAL = "#59a14f", "#e15759", "#bab0ac", "#4e79a7"


def svg_waterfall(wf: pd.DataFrame, width: int = 640) -> str:
    """Horizontal waterfall of one pair: each in-step component floats from the running sum of
    the earlier ones (green = time saved, red = time added), the last bar is the step change;
    the out-of-step preparing row is drawn grey, apart."""
    e = html.escape
    inside = wf[wf["in_step"]]
    outside = wf[~wf["in_step"]]
    total = float(inside["delta_us"].sum())
    cum, spans = 0.0, []
    for _, r in inside.iterrows():
        d = float(r["delta_us"])
        spans.append((r["label"], cum, cum + d, _GOOD if d < 0 else _BAD))
        cum += d
    spans.append(("step change", 0.0, total, _TOTAL))
    for _, r in outside.iterrows():
        d = float(r["delta_us"]) if pd.notna(r["delta_us"]) else 0.0
        spans.append((r["label"], 0.0, d, _INFO))
    lo = min([0.0] + [min(a, b) for _, a, b, _ in spans])
    hi = max([0.0] + [max(a, b) for _, a, b, _ in spans])
    rng = (hi - lo) or 1.0
    bar_h, label_w, right = 18, 230, 90
    plot_w = width - label_w - right
    h = bar_h * len(spans) + 30
    x = lambda v: label_w + plot_w * (v - lo) / rng  # noqa: E731
    title = (
        f"{wf['from_run'].iloc[0]} → {wf['to_run'].iloc[0]}: step {wf['from_step_us'].iloc[0]:,.1f} → "
        f"{wf['to_step_us'].iloc[0]:,.1f} us"
    )
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{h}' font-family='sans-serif' "
        f"font-size='11'><text x='4' y='12' font-weight='600'>{e(title)}</text>",
        f"<line x1='{x(0):.1f}' y1='18' x2='{x(0):.1f}' y2='{h - 4}' stroke='#999'/>",
    ]
    for k, (label, a, b, color) in enumerate(spans):
        y0 = 20 + k * bar_h
        x0, x1 = sorted((x(a), x(b)))
        out.append(f"<text x='{label_w - 6}' y='{y0 + 12}' text-anchor='end'>{e(str(label)[:38])}</text>")
        out.append(
            f"<rect x='{x0:.1f}' y='{y0 + 2}' width='{max(x1 - x0, 0.5):.1f}' height='{bar_h - 5}' "
            f"fill='{color}'><title>{e(str(label))}: {b - a:+,.3f} us</title></rect>"
        )
        out.append(f"<text x='{max(x0, x1) + 4:.1f}' y='{y0 + 12}' fill='#444'>{b - a:+,.1f}</text>")
    out.append("</svg>")
    return "".join(out)


def _table(df: pd.DataFrame, max_rows: int = 30) -> str:
    return df.head(max_rows).to_html(
        index=False, border=0, na_rep="", float_format=lambda v: f"{v:,.3f}", classes="profinsight-table"
    )


def comparison_html(cmp) -> str:
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
    return (
        "<!doctype html><meta charset='utf-8'><title>profinsight comparison</title>"
        "<style>body{font-family:sans-serif} table{border-collapse:collapse;font-size:12px} "
        "td,th{padding:2px 6px;text-align:right}</style>" + comparison_html(cmp)
    )
