"""The experiment record: the page a team reviews after a series of tuning rounds.

``build(names)`` turns registered experiments (in the order given: one round each) into plain,
JSON-able data — what was run (name, time, notes, parameters, git commit, path), headline numbers
(step time, utilisation, top operator, top finding), the step breakdown and top-10 operators, the
advisor's findings, and the before/after table against the previous round (``profinsight.compare``
when both profiles load).  ``render_html`` and ``render_markdown`` only draw that data: the HTML
page is self-contained (inline CSS and SVG, no script, no external URL); the Markdown form shows
the charts' data as tables.  Words come from :mod:`profinsight.i18n` (``record.*``).
"""

from __future__ import annotations

import html
import json
import math

import pandas as pd

from ..errors import ProfileError
from ..i18n import resolve_lang, t
from . import registry

STEP_COLUMNS = [
    "rank",
    "step",
    "step_us",
    "computing_us",
    "comm_not_overlapped_us",
    "free_us",
    "preparing_us",
    "host_step_us",
    "label",
]
OP_COLUMNS = ["type", "core", "count", "total_us", "avg_us", "share_of_compute_ratio", "share_of_step_ratio", "label"]
FINDING_KEYS = ("rule", "severity", "title", "message", "recoverable_us", "share_of_step_ratio", "change")
#: (stat key, label key, kind) of the before/after table
COMPARED = (
    ("step_us", "us"),
    ("computing_us", "us"),
    ("comm_not_overlapped_us", "us"),
    ("free_us", "us"),
    ("preparing_us", "us"),
    ("busy_ratio", "ratio"),
    ("compute_ratio", "ratio"),
    ("peak_allocated_bytes", "bytes"),
)


def _records(df, cols) -> list[dict]:
    if df is None or not len(df):
        return []
    df = pd.DataFrame(df)[[c for c in cols if c in df.columns]]
    return json.loads(df.to_json(orient="records", default_handler=str))


def _f(v):
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _round(name: str, i: int, folder, lang: str, top: int) -> tuple[dict, object]:
    row = registry.get(name, folder)
    if row is None:
        raise ProfileError(f"no experiment named {name!r}", fix="profinsight experiments lists the registered runs")
    r = {
        "round": i + 1,
        "name": row["name"],
        "id": row["id"],
        "created": row["created"],
        "notes": row.get("notes"),
        "tags": row.get("tags") or [],
        "params": row.get("params") or {},
        "git_commit": row.get("git_commit"),
        "git_dirty": row.get("git_dirty"),
        "path": row["path"],
        "backend": row.get("backend"),
        "headline": {
            k: row.get(k)
            for k in (
                "step_us",
                "step_source",
                "busy_ratio",
                "compute_ratio",
                "top_op_type",
                "top_op_share_of_compute_ratio",
                "top_finding",
            )
        },
        "steps": [],
        "ops": [],
        "findings": [],
        "load_error": None,
    }
    try:
        from ..api import load

        profile = load(row["path"])
    except Exception as exc:  # noqa: BLE001 - a round that cannot load still shows what was run
        r["load_error"] = str(exc)
        return r, None
    h = r["headline"]
    sb = profile.step_breakdown()
    r["steps"] = _records(sb, STEP_COLUMNS)
    h["step_us"], h["step_source"] = registry.mean_step(profile)
    u = profile.utilization()
    h["busy_ratio"], h["compute_ratio"] = registry._mean(u, "busy_ratio"), registry._mean(u, "compute_ratio")
    ops = profile.op_summary(by="type", top=top)
    r["ops"] = _records(ops, OP_COLUMNS)
    if r["ops"]:
        h["top_op_type"] = r["ops"][0]["type"]
        h["top_op_share_of_compute_ratio"] = r["ops"][0].get("share_of_compute_ratio")
    try:
        from ..advisor import evaluate

        findings, _ = evaluate(profile, lang)
        r["findings"] = [{k: f.get(k) for k in FINDING_KEYS} for f in findings]
        h["top_finding"] = findings[0]["title"] if findings else None
    except Exception as exc:  # noqa: BLE001
        r["findings_error"] = str(exc)
    return r, profile


def _before_after(prev: dict, cur: dict, prev_p, cur_p) -> dict:
    out = {"from": prev["name"], "to": cur["name"], "rows": [], "verdict": None, "error": None}
    if prev_p is None or cur_p is None:
        out["error"] = "profile not loaded"
        rows_from = {
            "step_us": prev["headline"].get("step_us"),
            "busy_ratio": prev["headline"].get("busy_ratio"),
            "compute_ratio": prev["headline"].get("compute_ratio"),
        }
        rows_to = {
            "step_us": cur["headline"].get("step_us"),
            "busy_ratio": cur["headline"].get("busy_ratio"),
            "compute_ratio": cur["headline"].get("compute_ratio"),
        }
    else:
        try:
            from ..api import compare

            cmp = compare(prev_p, cur_p, names=[f"{prev['round']}:{prev['name']}", f"{cur['round']}:{cur['name']}"])
            rows_from, rows_to = cmp.stats[0], cmp.stats[1]
            s = cmp.summary()
            out["verdict"] = str(s["verdict"].iloc[0]) if len(s) else None
        except Exception as exc:  # noqa: BLE001
            out["error"] = str(exc)
            return out
    for key, kind in COMPARED:
        a, b = _f(rows_from.get(key)), _f(rows_to.get(key))
        if a is None and b is None:
            continue
        d = None if a is None or b is None else b - a
        out["rows"].append(
            {
                "metric": key,
                "kind": kind,
                "before": a,
                "after": b,
                "delta": d,
                "delta_ratio": (d / a) if d is not None and a else None,
            }
        )
    return out


def build(names, folder=None, lang: str | None = None, top: int = 10) -> dict:
    """The record of the registered experiments ``names`` (one round each, in order) as plain data."""
    names = list(names)
    if not names:
        raise ProfileError(
            "record needs at least one experiment name", fix="profinsight record baseline tuned -o record.html"
        )
    lang = resolve_lang(lang)
    rounds, profiles = [], []
    for i, name in enumerate(names):
        r, p = _round(name, i, folder, lang, top)
        if rounds:
            r["before_after"] = _before_after(rounds[-1], r, profiles[-1], p)
        rounds.append(r)
        profiles.append(p)
    return {"lang": lang, "folder": str(registry.experiments_folder(folder)), "rounds": rounds}


# --- rendering ---------------------------------------------------------------------------------
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


_CSS = """body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:32px}
h3{font-size:15px;margin-bottom:4px}table{border-collapse:collapse;margin:6px 0;font-size:13px}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}th{background:#f4f4f4}
td.n{text-align:right;font-variant-numeric:tabular-nums}.better{color:#17803d}.worse{color:#b3261e}
.sev-high{color:#b3261e;font-weight:600}.sev-medium{color:#a15c00}.sev-low,.sev-info{color:#555}
.err{color:#b3261e}.muted{color:#666}"""


def render_html(data: dict) -> str:
    """One self-contained HTML page (inline CSS and SVG; no script, no external URL)."""
    from ..registry import get as analysis
    from ..render.notebook import render_svg

    lang, e = data["lang"], html.escape
    out = [
        f"<!DOCTYPE html><html lang='{lang}'><head><meta charset='utf-8'><title>{e(t('record.title', lang))}</title>"
        f"<style>{_CSS}</style></head><body><h1>{e(t('record.title', lang))}</h1>",
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
                + "".join(f"<td class='n'>{_fmt(s.get(c))}</td>" for c in STEP_COLUMNS[2:6])
                + "</tr>"
                for s in r["steps"]
            )
            out.append("<table><tr>" + "".join(f"<th>{c}</th>" for c in STEP_COLUMNS[:6]) + f"</tr>{rows}</table>")
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
    out.append("</body></html>")
    return "".join(out)


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
                STEP_COLUMNS[:6],
                [[s.get("rank"), s.get("step")] + [_fmt(s.get(c)) for c in STEP_COLUMNS[2:6]] for s in r["steps"]],
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
