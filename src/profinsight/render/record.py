"""The experiment record drawn: one self-contained HTML page (shared page style, inline SVG
charts, no script, no external URL) and the same content as Markdown, whose charts become
tables.  The data comes from :func:`profinsight.collection.record.build` (plain JSON-able
dicts); nothing here loads a profile or runs an analysis.  Also the summary of one collection
(:func:`collection_html`, the notebook display of ``profinsight.collect``).
"""

from __future__ import annotations

import html
import math

import pandas as pd

from ..i18n import t
from ..registry import get as analysis
from .styles import page
from .svg import render_svg

#: the step breakdown columns the record's table shows (the chart reads the analysis's own)
STEP_TABLE = ["rank", "step", "step_us", "computing_us", "comm_not_overlapped_us", "free_us"]


def _f(v):
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _fmt(v, kind: str = "us") -> str:
    v = _f(v)
    if v is None:
        return "—"
    if kind == "ratio":
        return f"{v:.1%}"
    if kind == "bytes":
        return f"{v / 2**20:,.1f} MiB"
    return f"{v:,.1f}"


def _delta(row) -> str:
    d = row["delta"]
    if d is None:
        return "—"
    if row["kind"] == "ratio":
        return f"{100 * d:+.1f} pp"
    if row["kind"] == "bytes":
        s = f"{d / 2**20:+,.1f} MiB"
    else:
        s = f"{d:+,.1f}"
    return s + (f" ({row['delta_ratio']:+.1%})" if row.get("delta_ratio") is not None else "")


def _what(r: dict, lang: str) -> list[tuple[str, str]]:
    commit = (r["git_commit"] or "—")[:12] + (" +dirty" if r.get("git_dirty") else "")
    params = ", ".join(f"{k}={v}" for k, v in (r["params"] or {}).items()) or "—"
    return [
        (t("record.created", lang), r["created"] or "—"),
        (t("record.notes", lang), r["notes"] or "—"),
        (t("record.params", lang), params),
        (t("record.tags", lang), ", ".join(r["tags"]) or "—"),
        (t("record.git", lang), commit),
        (t("record.path", lang), r["path"]),
    ]


def _headline(r: dict, lang: str) -> list[tuple[str, str]]:
    h = r["headline"]
    step = _fmt(h.get("step_us")) + (" (host)" if h.get("step_source") == "host_step_us" else "")
    top = h.get("top_op_type") or "—"
    if h.get("top_op_share_of_compute_ratio") is not None:
        top += f" ({_fmt(h['top_op_share_of_compute_ratio'], 'ratio')} {t('record.of_compute', lang)})"
    return [
        (t("record.step_us", lang), step),
        (t("record.busy", lang), _fmt(h.get("busy_ratio"), "ratio")),
        (t("record.compute", lang), _fmt(h.get("compute_ratio"), "ratio")),
        (t("record.top_op", lang), top),
        (t("record.top_finding", lang), h.get("top_finding") or "—"),
    ]


def render_html(data: dict) -> str:
    """One self-contained HTML page (inline CSS and SVG; no script, no external URL)."""
    lang, e = data["lang"], html.escape
    out = [
        f"<h1>{e(t('record.title', lang))}</h1>",
        f"<p class='muted'>{e(t('record.rounds', lang))}: {e(' → '.join(r['name'] for r in data['rounds']))}</p>",
    ]

    def kv(rows):
        return "<table>" + "".join(f"<tr><th>{e(k)}</th><td>{e(str(v))}</td></tr>" for k, v in rows) + "</table>"

    for r in data["rounds"]:
        out.append(f"<h2 id='round-{r['round']}'>{e(t('record.round', lang))} {r['round']}: {e(r['name'])}</h2>")
        out.append(f"<h3>{e(t('record.what', lang))}</h3>{kv(_what(r, lang))}")
        if r["load_error"]:
            out.append(f"<p class='err'>{e(t('record.load_error', lang))}: {e(r['load_error'])}</p>")
        out.append(f"<h3>{e(t('record.headline', lang))}</h3>{kv(_headline(r, lang))}")
        ba = r.get("before_after")
        if ba:
            out.append(f"<h3>{e(t('record.before_after', lang))}: {e(ba['from'])} → {e(ba['to'])}</h3>")
            if ba["rows"]:
                body = []
                for row in ba["rows"]:
                    good = (
                        row["delta"] is not None
                        and row["delta"] != 0
                        and ((row["delta"] > 0) == (row["kind"] == "ratio"))
                    )
                    cls = "" if row["delta"] in (None, 0) else (" better" if good else " worse")
                    body.append(
                        f"<tr><td>{e(row['metric'])}</td><td class='n'>{_fmt(row['before'], row['kind'])}</td>"
                        f"<td class='n'>{_fmt(row['after'], row['kind'])}</td>"
                        f"<td class='n{cls}'>{e(_delta(row))}</td></tr>"
                    )
                out.append(
                    f"<table><tr><th>{e(t('record.metric', lang))}</th><th>{e(ba['from'])}</th>"
                    f"<th>{e(ba['to'])}</th><th>Δ</th></tr>{''.join(body)}</table>"
                )
            if ba.get("verdict"):
                out.append(f"<p>{e(ba['verdict'])}</p>")
            if ba.get("error"):
                out.append(f"<p class='muted'>{e(t('record.no_compare', lang))}: {e(ba['error'])}</p>")
        if r["steps"]:
            out.append(f"<h3>{e(t('record.steps', lang))}</h3>")
            out.append(render_svg(pd.DataFrame(r["steps"]), analysis("step_breakdown").chart))
            rows = "".join(
                f"<tr><td>{s.get('rank')}</td><td>{s.get('step')}</td>"
                + "".join(f"<td class='n'>{_fmt(s.get(c))}</td>" for c in STEP_TABLE[2:])
                + "</tr>"
                for s in r["steps"]
            )
            out.append("<table><tr>" + "".join(f"<th>{c}</th>" for c in STEP_TABLE) + f"</tr>{rows}</table>")
        if r["ops"]:
            out.append(f"<h3>{e(t('record.ops', lang))}</h3>")
            out.append(render_svg(pd.DataFrame(r["ops"]), analysis("op_summary").chart))
        out.append(f"<h3>{e(t('record.findings', lang))}</h3>")
        if r["findings"]:
            items = []
            for f in r["findings"]:
                rec = (
                    f" — {t('label.recoverable', lang)} {f['recoverable_us'] / 1e3:,.2f} ms {t('label.per_step', lang)}"
                    if f.get("recoverable_us")
                    else ""
                )
                items.append(
                    f"<li><span class='sev-{e(f['severity'])}'>[{e(t('severity.' + f['severity'], lang))}]</span> "
                    f"<b>{e(f['title'])}</b>{e(rec)}<br>{e(f['message'])}<br>"
                    f"<i>{e(t('label.change', lang))}:</i> {e(f['change'])}</li>"
                )
            out.append(f"<ul>{''.join(items)}</ul>")
        else:
            out.append(f"<p class='muted'>{e(t('label.no_findings', lang))}</p>")
    return page(t("record.title", lang), "".join(out), lang)


def _md_cell(v) -> str:
    return str(v).replace("|", "\\|").replace("\n", " ")


def _md_table(head: list[str], rows: list[list]) -> list[str]:
    return [
        "| " + " | ".join(map(_md_cell, head)) + " |",
        "|" + "---|" * len(head),
        *["| " + " | ".join(map(_md_cell, r)) + " |" for r in rows],
        "",
    ]


def render_markdown(data: dict) -> str:
    """The record as Markdown; the charts' data as tables."""
    lang = data["lang"]
    out = [
        f"# {t('record.title', lang)}",
        "",
        f"{t('record.rounds', lang)}: {' → '.join(r['name'] for r in data['rounds'])}",
        "",
    ]
    for r in data["rounds"]:
        out += [f"## {t('record.round', lang)} {r['round']}: {r['name']}", "", f"### {t('record.what', lang)}", ""]
        out += _md_table(["", ""], [list(x) for x in _what(r, lang)])
        if r["load_error"]:
            out += [f"**{t('record.load_error', lang)}**: {r['load_error']}", ""]
        out += [f"### {t('record.headline', lang)}", ""] + _md_table(["", ""], [list(x) for x in _headline(r, lang)])
        ba = r.get("before_after")
        if ba:
            out += [f"### {t('record.before_after', lang)}: {ba['from']} → {ba['to']}", ""]
            if ba["rows"]:
                out += _md_table(
                    [t("record.metric", lang), ba["from"], ba["to"], "Δ"],
                    [
                        [x["metric"], _fmt(x["before"], x["kind"]), _fmt(x["after"], x["kind"]), _delta(x)]
                        for x in ba["rows"]
                    ],
                )
            if ba.get("verdict"):
                out += [ba["verdict"], ""]
            if ba.get("error"):
                out += [f"{t('record.no_compare', lang)}: {ba['error']}", ""]
        if r["steps"]:
            out += [f"### {t('record.steps', lang)}", ""]
            out += _md_table(
                STEP_TABLE,
                [[s.get("rank"), s.get("step")] + [_fmt(s.get(c)) for c in STEP_TABLE[2:]] for s in r["steps"]],
            )
        if r["ops"]:
            out += [f"### {t('record.ops', lang)}", ""]
            out += _md_table(
                ["type", "count", "total_us", "share_of_compute_ratio"],
                [
                    [
                        o.get("type"),
                        o.get("count"),
                        _fmt(o.get("total_us")),
                        _fmt(o.get("share_of_compute_ratio"), "ratio"),
                    ]
                    for o in r["ops"]
                ],
            )
        out += [f"### {t('record.findings', lang)}", ""]
        if r["findings"]:
            for f in r["findings"]:
                rec = (
                    f" — {t('label.recoverable', lang)} {f['recoverable_us'] / 1e3:,.2f} ms {t('label.per_step', lang)}"
                    if f.get("recoverable_us")
                    else ""
                )
                out.append(
                    f"- **[{t('severity.' + f['severity'], lang)}] {f['title']}**{rec}: {f['message']} "
                    f"*{t('label.change', lang)}:* {f['change']}"
                )
            out.append("")
        else:
            out += [t("label.no_findings", lang), ""]
    return "\n".join(out)


def collection_html(s: dict) -> str:
    """The summary of one collection (``Collection.summary()``: name, path, headline numbers)
    as a small key/value table."""
    e = html.escape
    rows = "".join(
        f"<tr><th style='text-align:left'>{e(str(k))}</th><td>{e(_short(v))}</td></tr>"
        for k, v in s.items()
        if v is not None
    )
    return f"<div class='profinsight-collection'><b>profinsight collection</b><table>{rows}</table></div>"


def _short(v) -> str:
    if isinstance(v, float):
        return f"{v:,.4f}" if abs(v) < 10 else f"{v:,.1f}"
    return str(v)
