"""Rich display of analysis results and profiles in a notebook: static HTML (a table plus an
inline SVG chart) that survives a saved notebook, and a
``application/vnd.profinsight.analysis+json`` payload that the JupyterLab extension renders
interactively.  Building data and drawing never mix: analyses return plain DataFrames; this
module only draws them (the model reaches it through :mod:`profinsight.hooks`).
"""

from __future__ import annotations

import html
import json
import math

import pandas as pd

MIME = "application/vnd.profinsight.analysis+json"
_PALETTE = (
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
_MAX_HTML_ROWS = 50


def payload(df: pd.DataFrame, analysis, params: dict) -> dict:
    """JSON payload for interactive renderers: schema, rows (capped), chart spec."""
    rows = json.loads(df.head(5000).to_json(orient="records", date_format="iso", default_handler=str))
    chart = None if analysis is None or analysis.chart is None else analysis.chart.spec()
    return {
        "analysis": getattr(analysis, "name", None),
        "title": getattr(analysis, "title", None),
        "params": {k: v for k, v in params.items()},
        "columns": [str(c) for c in df.columns],
        "dtypes": [str(t) for t in df.dtypes],
        "rows": rows,
        "total_rows": int(len(df)),
        "chart": chart,
    }


def render_html(df: pd.DataFrame, analysis=None, params: dict | None = None) -> str:
    e = html.escape
    title = e(analysis.title) if analysis is not None else ""
    args = ", ".join(f"{k}={v!r}" for k, v in (params or {}).items())
    head = (
        f"<div style='font-weight:600;margin:4px 0'>{title} <code style='font-weight:400'>{e(args)}</code></div>"
        if title
        else ""
    )
    svg = ""
    if analysis is not None and analysis.chart is not None and len(df):
        try:
            svg = render_svg(df, analysis.chart)
        except (KeyError, TypeError, ValueError, IndexError):
            svg = ""
    footer = ""
    if getattr(analysis, "name", None) == "advise" and "severity" in df.columns:
        df, footer = _not_applicable_footer(df, (params or {}).get("lang"))
    shown = df.head(_MAX_HTML_ROWS)
    more = f"<div style='color:#666'>{len(df) - len(shown):,} more rows</div>" if len(df) > len(shown) else ""
    table = _short_cells(shown).to_html(
        index=False, border=0, na_rep="", float_format=lambda v: f"{v:,.3f}", classes="profinsight-table", max_cols=40
    )
    return f"<div class='profinsight-result'>{head}{svg}{table}{more}{footer}</div>"


#: longest cell text shown in the HTML table (evidence JSON, call stacks): the DataFrame and the
#: MIME payload keep the full value
_MAX_CELL = 240


def _short_cells(df: pd.DataFrame) -> pd.DataFrame:
    """Long text cells cut for display, so one evidence column cannot swamp the table."""
    out = df
    for c in df.columns:
        if df[c].dtype == object or str(df[c].dtype) in ("string", "str"):
            col = df[c].astype("object")
            long = col.map(lambda v: isinstance(v, str) and len(v) > _MAX_CELL)
            if long.any():
                if out is df:
                    out = df.copy()
                out[c] = col.map(lambda v: v[:_MAX_CELL] + " …" if isinstance(v, str) and len(v) > _MAX_CELL else v)
    return out


def _not_applicable_footer(df: pd.DataFrame, lang=None) -> tuple[pd.DataFrame, str]:
    """``advise()``: the findings table without the ``not_applicable`` rows, and one footer line
    listing those rules with the reason."""
    na = df[df["severity"] == "not_applicable"]
    if not len(na):
        return df, ""
    from ..i18n import t

    reasons = list(dict.fromkeys(str(m) for m in na["message"]))
    text = f"{t('section.not_applicable', lang)}: {', '.join(str(r) for r in na['rule'])} ({'; '.join(reasons)})"
    return (
        df[df["severity"] != "not_applicable"],
        f"<div class='profinsight-footer' style='color:#666;margin-top:4px'>{html.escape(text)}</div>",
    )


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
    labels = [str(v) for v in data[chart.x]] if chart.x in data.columns else [str(i) for i in data.index]
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


def result_bundle(df: pd.DataFrame, analysis, params: dict) -> dict:
    """The MIME bundle of an analysis result: HTML, plain text and the interactive payload."""
    return {
        "text/html": render_html(df, analysis, params),
        "text/plain": repr(df),
        MIME: payload(df, analysis, params),
    }


def profile_html(profile) -> str:
    """A loaded profile as HTML: path, format, ranks, steps, rows per table, diagnostics."""
    s = profile.summary()
    e = html.escape
    head = (
        f"<b>profinsight profile</b> <code>{e(s['path'])}</code><br>"
        f"format <b>{e(s['format'])}</b>{' ' + e(s['level']) if s['level'] else ''} · "
        f"ranks <b>{e(', '.join(map(str, s['ranks'])))}</b> · "
        f"steps <b>{e(', '.join(map(str, s['steps'])) or 'none')}</b>"
    )
    rows = "".join(f"<tr><td>{e(k)}</td><td style='text-align:right'>{v:,}</td></tr>" for k, v in s["tables"].items())
    diags = "".join(
        f"<li><b>{e(d.severity)}</b> <code>{e(d.code)}</code> {e(d.message)}"
        f"{' <i>' + e(d.fix) + '</i>' if d.fix else ''}</li>"
        for d in profile.diagnostics
    )
    return (
        f"<div class='profinsight-profile'>{head}"
        f"<table><thead><tr><th>table</th><th>rows</th></tr></thead><tbody>{rows}</tbody></table>"
        f"<details><summary>{len(profile.diagnostics)} diagnostics</summary><ul>{diags}</ul></details></div>"
    )


def profile_bundle(profile) -> dict:
    """The MIME bundle of a profile: HTML, plain text and the summary as JSON."""
    return {
        "text/html": profile_html(profile),
        "text/plain": repr(profile),
        "application/vnd.profinsight.profile+json": json.loads(json.dumps(profile.summary(), default=str)),
    }
