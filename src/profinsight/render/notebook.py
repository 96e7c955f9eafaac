"""Rich display of analysis results and profiles in a notebook: static HTML (a table plus an
inline SVG chart) that survives a saved notebook, and a
``application/vnd.profinsight.analysis+json`` payload that the JupyterLab extension renders
interactively.  Building data and drawing never mix: analyses return plain DataFrames; this
module only draws them (the model reaches it through :mod:`profinsight.hooks`).
"""

from __future__ import annotations

import html
import json

import pandas as pd

from ..i18n import t
from .svg import render_svg
from .tree import is_tree, tree_html

__all__ = [
    "MIME",
    "exact_columns",
    "payload",
    "profile_bundle",
    "profile_html",
    "render_html",
    "render_svg",
    "result_bundle",
]

MIME = "application/vnd.profinsight.analysis+json"
_MAX_HTML_ROWS = 50


def payload(df: pd.DataFrame, analysis, params: dict) -> dict:
    """JSON payload for interactive renderers: schema, rows (capped), chart spec."""
    rows = json.loads(
        df.head(5000).to_json(orient="records", date_format="iso", default_handler=str, double_precision=15)
    )
    chart = None if analysis is None or analysis.chart is None else analysis.chart.spec()
    out = {
        "analysis": getattr(analysis, "name", None),
        "title": getattr(analysis, "title", None),
        "params": {k: v for k, v in params.items()},
        "columns": [str(c) for c in df.columns],
        "dtypes": [str(t) for t in df.dtypes],
        "rows": rows,
        "total_rows": int(len(df)),
        "chart": chart,
    }
    exact = exact_columns(df.head(5000))
    if exact:
        out["exact"] = exact
    return out


#: the largest integer a JavaScript number holds exactly
_JS_EXACT = 2**53


def exact_columns(df: pd.DataFrame) -> dict[str, list[str | None]]:
    """Integer columns holding values beyond 2^53 (epoch nanoseconds), as decimal text: JSON
    readers in the browser turn them into doubles and lose the last digits, so the viewer's
    tables and CSV exports take these instead."""
    out: dict[str, list[str | None]] = {}
    for c in df.columns:
        col = df[c]
        if not pd.api.types.is_integer_dtype(col.dtype) or not len(col):
            continue
        big = col.abs().max()
        if pd.isna(big) or int(big) < _JS_EXACT:
            continue
        out[str(c)] = [None if pd.isna(v) else str(int(v)) for v in col.tolist()]
    return out


def render_html(df: pd.DataFrame, analysis=None, params: dict | None = None) -> str:
    e = html.escape
    title = e(analysis.title) if analysis is not None else ""
    args = ", ".join(f"{k}={v!r}" for k, v in (params or {}).items())
    head = (
        f"<div style='font-weight:600;margin:4px 0'>{title} <code style='font-weight:400'>{e(args)}</code></div>"
        if title
        else ""
    )
    if getattr(analysis, "name", None) == "advise" and "severity" in df.columns:
        from .findings import findings_html  # the viewer's finding cards, not a table of dicts

        return f"<div class='profinsight-result'>{head}{findings_html(df, (params or {}).get('lang'))}</div>"
    svg = ""
    if analysis is not None and analysis.chart is not None and len(df):
        try:
            svg = render_svg(df, analysis.chart)
        except (KeyError, TypeError, ValueError, IndexError):
            svg = ""
    footer = ""
    shown = df.head(_MAX_HTML_ROWS)
    more = f"<div style='color:#666'>{len(df) - len(shown):,} more rows</div>" if len(df) > len(shown) else ""
    table = _short_cells(shown).to_html(
        index=False, border=0, na_rep="", float_format=lambda v: f"{v:,.3f}", classes="profinsight-table", max_cols=40
    )
    if is_tree(df):  # module_time: the tree, collapsible, with the table folded under it
        table = f"{tree_html(df)}<details><summary>table</summary>{table}{more}</details>"
        more = ""
    return f"<div class='profinsight-result'>{head}{svg}{table}{more}{footer}</div>"


#: longest cell text shown in the HTML table (evidence JSON, call stacks): the DataFrame and the
#: MIME payload keep the full value
_MAX_CELL = 240


def _short_cells(df: pd.DataFrame) -> pd.DataFrame:
    """Long text cells cut for display, so one evidence column cannot swamp the table; HCCL's
    collective types without their trailing underscore (``hcom_allReduce``)."""
    from .terminal import display_name

    out = df
    for c in df.columns:
        if df[c].dtype == object or str(df[c].dtype) in ("string", "str"):
            col = df[c].astype("object")
            shown = col.map(display_name)
            if not shown.equals(col):
                if out is df:
                    out = df.copy()
                out[c] = col = shown
            long = col.map(lambda v: isinstance(v, str) and len(v) > _MAX_CELL)
            if long.any():
                if out is df:
                    out = df.copy()
                out[c] = col.map(lambda v: v[:_MAX_CELL] + " …" if isinstance(v, str) and len(v) > _MAX_CELL else v)
    return out


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
    # a rank that failed to load is said before anything else, open (not folded away)
    errs = [d for d in profile.diagnostics if d.severity == "error"]
    failed = "".join(
        f"<li><b>error</b> <code>{e(d.code)}</code>{e(f' rank {d.rank}' if d.rank is not None else '')} "
        f"{e(d.message)}{' <i>' + e(d.fix) + '</i>' if d.fix else ''}</li>"
        for d in errs
    )
    failed = (
        f"<div class='profinsight-load-errors' style='color:#b00020'><b>{e(t('report.import_failed'))}</b><ul>{failed}</ul></div>"
        if errs
        else ""
    )
    return (
        f"<div class='profinsight-profile'>{failed}{head}"
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
