"""The guided report drawn as one self-contained offline HTML page (``profinsight report``):
the verdict, the findings, the actions ranked by recoverable time, a timeline excerpt where the
top finding points, then the operator, step and gap, utilisation, memory and communication
sections with their charts.  Inline CSS and SVG only — no script, no external URL.

Every number on the page comes from the guided report (:func:`profinsight.advisor.guided_report`:
the findings with their evidence, the sections as the registered analyses' rows); the excerpt
comes from the timeline engine's window query (:mod:`profinsight.timeline`), at the page's
resolution, over the window the top finding's evidence names.  This module runs no query of its
own, so the page can never disagree with ``analyze``, ``p.advise()`` or the viewer.
"""

from __future__ import annotations

import html

from .. import diagnostics as dg
from ..errors import ProfileError
from ..i18n import resolve_lang, t
from ..registry import Chart
from .styles import page

#: the report's sections after the findings: (heading key, parts of ``rep["sections"]``), the
#: order ``analyze`` prints them in
SECTIONS = (
    ("section.operators", ("operators",)),
    ("section.gaps", ("steps", "gaps_by_activity", "gaps")),
    ("section.utilization", ("utilization",)),
    ("section.memory", ("memory",)),
    ("section.communication", ("communication",)),
)
#: the parts drawn as a chart above their table: part -> (x, ys, stacked)
CHARTS = {
    "operators": ("type", ("total_us",), False),
    "steps": ("label", ("computing_us", "comm_not_overlapped_us", "free_us"), True),
    "communication": ("label", ("transit_us", "wait_us", "idle_us"), True),
}
#: the excerpt's width in pixels (the page's max width) and the lane label column
WIDTH, LABEL_W = 1100, 150
#: lanes of the excerpt: the timeline units of these kinds (device streams, collectives)
LANE_KINDS = ("device", "communication")


def cell_text(v, col: str = "") -> str:
    """One figure of a report section as text, the same in every form of the report: ratios as
    percentages, other floats with one decimal."""
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.1%}" if col.endswith("_ratio") else f"{v:,.1f}"
    return str(v)


def _cell(v, col: str) -> str:
    return html.escape(cell_text(v, col))


def table_html(rows: list[dict]) -> str:
    """Rows of one section as a table: ratios as percentages, other floats with one decimal."""
    e = html.escape
    if not rows:
        return "<p class='dim'>-</p>"
    cols = [c for c in rows[0] if not c.endswith("_ns")]  # epoch ns locate the row; a person reads at_ms
    head = "".join(f"<th>{e(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{_cell(r.get(c), c)}</td>" for c in cols) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def chart_html(part: str, rows: list[dict]) -> str:
    """The chart of one section part (bars of operators, stacked bars per rank and step or per
    rank and collective type), or "" where the part has none."""
    if part not in CHARTS or not rows:
        return ""
    x, ys, stacked = CHARTS[part]
    if x == "label":
        rows = [dict(r, label=f"r{r.get('rank')} {r.get('type') or r.get('step') or ''}") for r in rows]
    try:
        import pandas as pd  # the page's charts only: the terminal report imports none of it

        from .svg import render_svg

        return render_svg(pd.DataFrame(rows), Chart("stacked" if stacked else "bar", x, tuple(ys)))
    except (KeyError, TypeError, ValueError, IndexError):
        return ""


# --- the timeline excerpt -----------------------------------------------------------------------
def excerpt_window(rep: dict) -> dict | None:
    """Where the excerpt looks: the window of the first finding whose evidence names one (the
    advisor gives every finding a window: its longest gap, the worst step of its per-step
    evidence, else the longest step), else the longest idle gap; ``None`` when neither exists.
    ``{rank, step, start_ns, end_ns, rule}`` (``rule`` None for a gap)."""
    for f in rep["findings"]:
        w = f["evidence"].get("window") if isinstance(f.get("evidence"), dict) else None
        if w and w.get("start_ns") is not None and w.get("end_ns") is not None:
            return {**w, "rule": f["rule"]}
    gaps = rep["sections"].get("gaps") or []
    if gaps:
        g = gaps[0]
        return {
            "rank": g["rank"],
            "step": g.get("step"),
            "start_ns": g["start_ns"],
            "end_ns": g["end_ns"],
            "rule": None,
        }
    return None


def timeline_excerpt(profile, window: dict, width: int = WIDTH) -> dict:
    """The device and communication lanes of ``window``'s rank over the window widened on both
    sides (by half its span, at least 0.2 ms, at most 5 ms), asked of the timeline engine at the
    excerpt's resolution: slices under one pixel come merged, so the excerpt stays small
    whatever the profile.  Plain data for :func:`profinsight.render.svg.svg_lanes`."""
    from .. import timeline

    rank, lo, hi = int(window["rank"]), int(window["start_ns"]), int(window["end_ns"])
    pad = min(max((hi - lo) // 2, 200_000), 5_000_000)
    lo, hi = lo - pad, hi + pad
    tracks = [
        tr
        for r in timeline.tracks(profile)["ranks"]
        if r["rank"] == rank
        for u in r["units"]
        if u["kind"] in LANE_KINDS
        for tr in ({**x, "unit_kind": u["kind"]} for x in u["tracks"])
        if tr["kind"] == "slice"
    ]
    cols = timeline.slice_columns(profile, lo, hi, [tr["id"] for tr in tracks], width - LABEL_W - 10) if tracks else {}
    lanes = []
    for tr in tracks:
        c = cols.get(tr["id"])
        if c is None:
            continue
        slices = [
            {"name": str(n), "start_ns": int(s), "dur_ns": int(d), "count": int(k)}
            for n, s, d, k in zip(c["name"], c["start_ns"], c["dur_ns"], c["count"])
        ]
        lanes.append({"label": f"r{rank} {tr['name']}", "kind": tr["unit_kind"], "slices": slices})
    return {"rank": rank, "step": window.get("step"), "start_ns": lo, "end_ns": hi, "lanes": lanes}


def _excerpt_html(profile, rep: dict, lang: str) -> str:
    window = excerpt_window(rep)
    if window is None:
        return ""
    ex = timeline_excerpt(profile, window)
    from .svg import svg_lanes

    svg = svg_lanes(ex, WIDTH)
    if not svg:
        return ""
    by = next((f["title"] for f in rep["findings"] if f["rule"] == window["rule"]), None)
    step = f", step {window['step']}" if window.get("step") is not None else ""
    where = f"rank {window['rank']}{step}, {(int(window['end_ns']) - int(window['start_ns'])) / 1e6:,.2f} ms"
    caption = f"{html.escape(by)} · {where}" if by else where
    return f"<h2 id='timeline'>{html.escape(t('section.timeline', lang))}</h2><p class='dim'>{caption}</p>{svg}"


# --- the page -----------------------------------------------------------------------------------
def recoverable_words(f: dict, lang: str, basis: str = "step") -> str:
    """``12.34 ms (5.6% of step)``; ``(93.1% of capture)`` where no step was recorded (``basis``
    "capture": the share is of the whole capture), the ms alone when there is nothing to take a
    share of, and "not estimated" when the rule could not estimate it."""
    if f.get("recoverable_us") is None:
        return t("label.not_estimated", lang)
    ms = f"{f['recoverable_us'] / 1e3:,.2f} ms"
    share = f.get("share_of_step_ratio")
    if share is None:
        return ms
    return f"{ms} ({t('label.share_of_' + basis, lang, share=share)})"


def actions_heading(rep: dict) -> str:
    """The Actions heading, naming what its times are of: per step, or over the capture."""
    key = "section.actions.capture" if rep.get("basis") == "capture" else "section.actions"
    return t(key, rep["lang"])


def _finding_html(f: dict, lang: str, basis: str = "step") -> str:
    e = html.escape
    rec = recoverable_words(f, lang, basis)
    return (
        f"<div class='f {e(f['severity'])}'><b>{e(f['title'])}</b> "
        f"<span class='dim'>[{e(t('severity.' + f['severity'], lang))} · {e(t('category.' + f['category'], lang))}"
        f" · {e(t('label.recoverable', lang))} {e(rec)}]</span><p>{e(f['message'])}</p>"
        f"<p><b>{e(t('label.change', lang))}:</b> {e(f['change'])}</p></div>"
    )


def glossary_html(lang: str) -> str:
    """The glossary's terms with their definitions (docs/glossary.md), the page's last section."""
    from ..i18n.glossary import TERMS

    e = html.escape
    items = "".join(f"<dt>{e(t(f'term.{k}', lang))}</dt><dd>{e(t(f'term.{k}.def', lang))}</dd>" for k in TERMS)
    return f"<h2 id='terms'>{e(t('section.terms', lang))}</h2><dl class='terms'>{items}</dl>"


def diagnostic_items(diags) -> str:
    """Load diagnostics as list items, as ``doctor`` gives them: code, rank, message, file, fix."""
    e = html.escape
    return "".join(
        f"<li><b>{e(d.code)}</b>{e(f' rank {d.rank}' if d.rank is not None else '')}: {e(d.message)}"
        f"{'<br><code>' + e(str(d.file)) + '</code>' if d.file else ''}"
        f"{'<br><i>' + e(d.fix) + '</i>' if d.fix else ''}</li>"
        for d in diags
    )


def _load_errors_html(profile, lang: str, partial: bool) -> str:
    """The load errors of ``profile`` (a rank that failed to import), before anything else."""
    e = html.escape
    errs = [d for d in getattr(profile, "diagnostics", []) if d.severity == "error"]
    if not errs:
        return ""
    items = diagnostic_items(errs)
    after = t("report.import_failed.partial" if partial else "report.import_failed.nothing", lang)
    return (
        f"<div class='load-errors' role='alert'><h2 id='import-failed'>{e(t('report.import_failed', lang))}</h2>"
        f"<ul>{items}</ul><p>{e(after)}</p></div>"
    )


def _warnings(profile) -> list:
    return [d for d in getattr(profile, "diagnostics", []) if d.severity == "warning"]


def _input_warnings_note(profile, lang: str) -> str:
    """One line under the profile's line when the load warned about the input: a page sent to a
    colleague must not read as if its input were whole (they cannot run ``doctor`` on it)."""
    counts = dg.by_code(getattr(profile, "diagnostics", []), "warning")
    if not counts:
        return ""
    text = t("report.input_warnings.note", lang, n=sum(counts.values()), codes=dg.codes_text(counts))
    return f"<p class='input-warnings-note'><a href='#input-warnings'>{html.escape(text)}</a></p>"


def _input_warnings_html(profile, lang: str) -> str:
    """Every warning of the load, as ``doctor`` gives it: code, rank, message, file and fix."""
    e = html.escape
    warns = _warnings(profile)
    if not warns:
        return ""
    items = diagnostic_items(warns)
    return f"<h2 id='input-warnings'>{e(t('report.input_warnings', lang))}</h2><ul class='input-warnings'>{items}</ul>"


def render_html(rep: dict | None, profile, lang: str | None = None) -> str:
    """The page of the guided report ``rep`` of ``profile`` (the profile only answers the
    timeline excerpt's window query), its load errors first; ``rep`` None (nothing loaded): the
    errors alone.  Refuses to write a page that names an external URL."""
    e = html.escape
    if rep is None:
        lang = resolve_lang(lang)
        body = f"<h1>{e(t('report.title', lang))}</h1>" + _load_errors_html(profile, lang, False)
        return page(t("report.title", lang), body, lang)
    lang, p, v = rep["lang"], rep["profile"], rep["verdict"]
    parts = [
        f"<h1>{e(t('report.title', lang))}</h1>" + _load_errors_html(profile, lang, True),
        f"<p><code>{e(str(p['path']))}</code> · {e(str(p['format']))} {e(str(p.get('level') or ''))} · "
        f"ranks {e(', '.join(map(str, p['ranks'])))} · steps {e(', '.join(map(str, p['steps'])) or '-')}</p>"
        + _input_warnings_note(profile, lang),
        f"<h2 id='verdict'>{e(t('section.verdict', lang))}</h2><div class='verdict'><b>{e(v.get('title', ''))}</b>"
        f" — {e(v['text'])} {e(v.get('detail', ''))}</div>",
        f"<h2 id='findings'>{e(t('section.findings', lang))}</h2>",
    ]
    if not rep["findings"]:
        parts.append(f"<p>{e(t('label.no_findings', lang))}</p>")
    parts += [_finding_html(f, lang, rep.get("basis", "step")) for f in rep["findings"]]
    parts.append(
        f"<h2 id='actions'>{e(actions_heading(rep))}</h2><ol>"
        + "".join(
            f"<li>{e(a['title'])}: {e(recoverable_words(a, lang, rep.get('basis', 'step')))}"
            + (f"<br><span class='dim'>{e(a['note'])}</span>" if a.get("note") else "")
            + "</li>"
            for a in rep["actions"]
        )
        + "</ol>"
        + (f"<p><b>{e(rep['actions_total']['text'])}</b></p>" if (rep.get("actions_total") or {}).get("text") else "")
    )
    parts.append(_excerpt_html(profile, rep, lang))
    for key, names in SECTIONS:
        parts.append(f"<h2>{e(t(key, lang))}</h2>")
        for name in names:
            rows = rep["sections"][name]
            parts.append(chart_html(name, rows) + table_html(rows))
    if rep["not_applicable"]:
        parts.append(
            f"<h2>{e(t('section.not_applicable', lang))}</h2><ul>"
            + "".join(f"<li><code>{e(n['rule'])}</code> {e(n['reason'])}</li>" for n in rep["not_applicable"])
            + "</ul>"
        )
    parts.append(_input_warnings_html(profile, lang))
    parts.append(glossary_html(lang))
    out = page(t("report.title", lang), "".join(parts), lang)
    if "src='http" in out or 'src="http' in out or "href='http" in out or 'href="http' in out:
        raise ProfileError("report would reference an external URL")
    return out
