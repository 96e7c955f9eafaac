"""The chart primitives every render module draws with: bars, stacked bars and lines of an
analysis result (:func:`render_svg`, driven by the analysis's declared :class:`~profinsight.registry.Chart`),
the waterfall of a comparison pair (:func:`svg_waterfall`) and the lanes of a timeline excerpt
(:func:`svg_lanes`).  All are inline SVG strings, so they survive a saved notebook and a page
written to disk; colours come from :mod:`.styles`.
"""

from __future__ import annotations

import html
import math

import pandas as pd

from .styles import BAD, GOOD, INFO, LANE_COLORS, TOTAL
from .styles import PALETTE as _PALETTE
from .terminal import display_name


def render_svg(df: pd.DataFrame, chart, width: int = 640) -> str:
    """Inline SVG of a result: horizontal bars, stacked bars or lines."""
    if chart.kind == "line":
        return _lines(df, chart, width)
    return _bars(df, chart, width, stacked=chart.kind == "stacked")


def _num(v) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return 0.0
    return 0.0 if math.isnan(f) else f


def _bars(df, chart, width, stacked: bool) -> str:
    e = html.escape
    data = df.head(chart.top)
    ys = [y for y in chart.y if y in data.columns]
    if not ys:
        return ""
    labels = [str(display_name(v)) for v in data[chart.x]] if chart.x in data.columns else [str(i) for i in data.index]
    totals = [sum(_num(r[y]) for y in ys) if stacked else _num(r[ys[0]]) for _, r in data.iterrows()]
    vmax = max(totals + [1e-12])
    bar_h, label_w = 16, 200
    plot_w = width - label_w - 90
    h = bar_h * len(data) + 26 + (18 if stacked else 0)
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{h}' font-family='sans-serif' font-size='11'>"
    ]
    for i, (_, r) in enumerate(data.iterrows()):
        y0 = 4 + i * bar_h
        out.append(f"<text x='{label_w - 6}' y='{y0 + 11}' text-anchor='end'>{e(labels[i][:34])}</text>")
        x = label_w
        for j, y in enumerate(ys if stacked else ys[:1]):
            w = plot_w * _num(r[y]) / vmax
            out.append(
                f"<rect x='{x:.1f}' y='{y0 + 1}' width='{max(w, 0):.1f}' height='{bar_h - 3}' "
                f"fill='{_PALETTE[j % len(_PALETTE)]}'><title>{e(y)}: {_num(r[y]):,.3f}</title></rect>"
            )
            x += w
        out.append(f"<text x='{x + 4:.1f}' y='{y0 + 11}' fill='#444'>{totals[i]:,.1f}</text>")
    if stacked:
        lx, ly = label_w, h - 6
        for j, y in enumerate(ys):
            out.append(
                f"<rect x='{lx}' y='{ly - 9}' width='10' height='10' fill='{_PALETTE[j % len(_PALETTE)]}'/>"
                f"<text x='{lx + 13}' y='{ly}'>{e(y)}</text>"
            )
            lx += 18 + 6.5 * len(y)
    out.append("</svg>")
    return "".join(out)


def _lines(df, chart, width, height: int = 200) -> str:
    e = html.escape
    ys = [y for y in chart.y if y in df.columns]
    xs_all = pd.to_numeric(df[chart.x], errors="coerce").astype("float64")
    if xs_all.isna().all() or not ys:
        return ""
    series_cols = [c for c in getattr(chart, "series", ()) if c in df.columns]
    groups = list(df.groupby(series_cols, dropna=False, sort=True)) if series_cols else [((), df)]
    x0, x1 = float(xs_all.min()), float(xs_all.max())
    vmax = max(
        [
            float(pd.to_numeric(df[y], errors="coerce").max())
            for y in ys
            if pd.to_numeric(df[y], errors="coerce").notna().any()
        ]
        + [1e-12]
    )
    pad_l, pad_b = 60, 20
    pw, ph = width - pad_l - 10, height - pad_b - 10
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' font-family='sans-serif' "
        f"font-size='11'><rect x='{pad_l}' y='10' width='{pw}' height='{ph}' fill='none' stroke='#ccc'/>"
        f"<text x='{pad_l - 4}' y='18' text-anchor='end'>{vmax:,.0f}</text>"
        f"<text x='{pad_l - 4}' y='{10 + ph}' text-anchor='end'>0</text>"
    ]
    span = (x1 - x0) or 1.0
    j = 0
    for key, part in groups:
        xs = pd.to_numeric(part[chart.x], errors="coerce").astype("float64")
        order = xs.sort_values().index
        key = key if isinstance(key, tuple) else (key,)
        prefix = " ".join(str(k) for k in key)
        for y in ys:
            v = pd.to_numeric(part[y], errors="coerce").astype("float64")
            pts = " ".join(
                f"{pad_l + pw * (float(xs[i]) - x0) / span:.1f},{10 + ph - ph * _num(v[i]) / vmax:.1f}"
                for i in order
                if not math.isnan(xs[i])
            )
            name = f"{prefix} {y}".strip()
            color = _PALETTE[j % len(_PALETTE)]
            out.append(
                f"<polyline fill='none' stroke='{color}' stroke-width='1.5' points='{pts}'>"
                f"<title>{e(name)}</title></polyline>"
            )
            if j < 6:
                out.append(f"<text x='{pad_l + 8 + 150 * j}' y='{height - 4}' fill='{color}'>{e(name[:24])}</text>")
            j += 1
    out.append("</svg>")
    return "".join(out)


def _ms(us, signed: bool = False) -> str:
    """Microseconds as a person reads them: 1.23 ms, 450.0 us (signed: +1.23 ms)."""
    us = float(us)
    text = f"{us / 1e3:,.2f} ms" if abs(us) >= 1e3 else f"{us:,.1f} us"
    return ("+" if signed and us > 0 else "") + text


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
        spans.append((r["label"], cum, cum + d, GOOD if d < 0 else BAD))
        cum += d
    spans.append(("step change", 0.0, total, TOTAL))
    for _, r in outside.iterrows():
        d = float(r["delta_us"]) if pd.notna(r["delta_us"]) else 0.0
        spans.append((r["label"], 0.0, d, INFO))
    lo = min([0.0] + [min(a, b) for _, a, b, _ in spans])
    hi = max([0.0] + [max(a, b) for _, a, b, _ in spans])
    rng = (hi - lo) or 1.0
    bar_h, label_w, right = 18, 230, 90
    plot_w = width - label_w - right
    h = bar_h * len(spans) + 30
    x = lambda v: label_w + plot_w * (v - lo) / rng  # noqa: E731
    title = (
        f"{wf['from_run'].iloc[0]} → {wf['to_run'].iloc[0]}: step {_ms(wf['from_step_us'].iloc[0])} → "
        f"{_ms(wf['to_step_us'].iloc[0])}"
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
            f"fill='{color}'><title>{e(str(label))}: {_ms(b - a, signed=True)}</title></rect>"
        )
        out.append(f"<text x='{max(x0, x1) + 4:.1f}' y='{y0 + 12}' fill='#444'>{e(_ms(b - a, signed=True))}</text>")
    out.append("</svg>")
    return "".join(out)


def svg_lanes(excerpt: dict, width: int = 1100) -> str:
    """A static excerpt of the timeline: one row per lane, one rect per slice, a 0 .. span axis.

    ``excerpt``: ``{"start_ns", "end_ns", "lanes": [{"label", "kind", "slices": [{"name",
    "start_ns", "dur_ns", "count"}]}]}`` (:func:`profinsight.render.report.timeline_excerpt`
    builds it).  ``kind`` picks the colour; a slice with ``count`` > 1 stands for slices merged
    below one pixel and is drawn in the merged colour."""
    e = html.escape
    lanes = excerpt.get("lanes") or []
    if not lanes:
        return ""
    lo, hi = int(excerpt["start_ns"]), int(excerpt["end_ns"])
    row_h, label_w = 22, 150
    plot = width - label_w - 10
    h = row_h * len(lanes) + 30
    span = max(hi - lo, 1)
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{h}' font-family='sans-serif' font-size='11'>"
    ]
    for i, lane in enumerate(lanes):
        out.append(
            f"<text x='{label_w - 6}' y='{i * row_h + 15}' text-anchor='end'>{e(str(lane['label'])[:26])}</text>"
            f"<line x1='{label_w}' x2='{width - 10}' y1='{i * row_h + row_h - 2}' y2='{i * row_h + row_h - 2}' stroke='#eee'/>"
        )
        for s in lane["slices"]:
            x0, x1 = max(int(s["start_ns"]), lo), min(int(s["start_ns"]) + int(s["dur_ns"]), hi)
            x = label_w + plot * (x0 - lo) / span
            w = max(plot * (x1 - x0) / span, 0.8)
            merged = int(s.get("count") or 1) > 1
            color = LANE_COLORS["merged" if merged else lane["kind"]] if lane["kind"] in LANE_COLORS else INFO
            what = f"{int(s['count'])} slices, longest {s['name']}" if merged else str(s["name"])
            out.append(
                f"<rect x='{x:.1f}' y='{i * row_h + 3}' width='{w:.1f}' height='{row_h - 7}' fill='{color}'>"
                f"<title>{e(what)} {int(s['dur_ns']) / 1e3:,.1f} us</title></rect>"
            )
    out.append(
        f"<text x='{label_w}' y='{h - 6}'>0</text><text x='{width - 10}' y='{h - 6}' text-anchor='end'>"
        f"{span / 1e6:,.2f} ms</text></svg>"
    )
    return "".join(out)
