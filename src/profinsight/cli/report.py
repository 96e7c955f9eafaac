"""The guided report as one self-contained offline HTML file: ``profinsight report PATH...
-o report.html [--lang en|zh]``.  Inline CSS and SVG only — no script, no external URL."""

from __future__ import annotations

import html

from ..errors import ProfileError
from .common import add_paths, emit, load_profile

HELP = "write the guided report as one self-contained HTML file"
FORMATS = ["html"]

_CSS = """body{font-family:sans-serif;margin:24px;max-width:1200px;color:#222}
h1{font-size:22px}h2{font-size:17px;border-bottom:1px solid #ddd;padding-bottom:3px;margin-top:28px}
table{border-collapse:collapse;font-size:12px;margin:6px 0}td,th{padding:2px 8px;border-bottom:1px solid #eee;text-align:left}
.f{border-left:4px solid #999;padding:4px 10px;margin:10px 0}.high{border-color:#e15759}.medium{border-color:#f28e2b}
.low{border-color:#4e79a7}.info{border-color:#bab0ac}.verdict{background:#f5f5f5;padding:10px;font-size:15px}
code{background:#f3f3f3;padding:1px 3px}.dim{color:#777}"""


def add_arguments(p) -> None:
    add_paths(p)
    p.add_argument("--format", choices=FORMATS, help="output format (default: html)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (default: stdout)")
    p.add_argument("--lang", choices=["en", "zh"], help="language (default: from the locale)")
    p.add_argument("--top", type=int, default=10, help="operators in the summary (default 10)")


def run(args) -> int:
    from ..advisor import guided_report

    prof = load_profile(args)
    rep = guided_report(prof, args.lang, top=args.top)
    emit(render_html(rep, prof), args)
    return 0


def _table(rows: list[dict]) -> str:
    e = html.escape
    if not rows:
        return "<p class='dim'>-</p>"
    cols = list(rows[0])

    def cell(v, c):
        if v is None:
            return ""
        if isinstance(v, float):
            return f"{v:.1%}" if c.endswith("_ratio") else f"{v:,.1f}"
        return e(str(v))

    head = "".join(f"<th>{e(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{cell(r.get(c), c)}</td>" for c in cols) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _chart(rows, x, ys, stacked=False) -> str:
    import pandas as pd

    from ..registry import Chart
    from ..render.notebook import render_svg

    if not rows:
        return ""
    try:
        return render_svg(pd.DataFrame(rows), Chart("stacked" if stacked else "bar", x, tuple(ys)))
    except (KeyError, TypeError, ValueError, IndexError):
        return ""


def timeline_svg(profile, rep: dict, width: int = 1100) -> str:
    """A static excerpt of the device timeline around the top evidence: one row per stream,
    one rect per task.  The window is the longest gap or the top finding's longest collective,
    widened on both sides."""
    e = html.escape
    gaps = rep["sections"].get("gaps") or []
    rank, lo, hi = None, None, None
    top = rep["findings"][0] if rep["findings"] else None
    if top and top["rule"] == "communication_overlap":
        c = profile.sql("SELECT rank, start_ns, dur_ns FROM comm_ops ORDER BY dur_ns DESC LIMIT 1")
        if len(c):
            rank, lo, hi = int(c["rank"][0]), int(c["start_ns"][0]), int(c["start_ns"][0] + c["dur_ns"][0])
    if lo is None and gaps:
        g = gaps[0]
        rank, lo, hi = g["rank"], int(g["start_ns"]), int(g["end_ns"])
    if lo is None:
        return ""
    pad = max((hi - lo) // 2, 200_000)
    lo, hi = lo - pad, hi + pad
    tasks = profile.sql(
        f"SELECT stream, kind, name, start_ns, dur_ns FROM device_tasks WHERE rank = {int(rank)} "
        f"AND kind IN ('kernel','communication','memcpy','memset') AND start_ns < {hi} AND start_ns + dur_ns > {lo} "
        f"ORDER BY start_ns LIMIT 4000"
    )
    if not len(tasks):
        return ""
    streams = sorted({int(s) if s is not None and str(s) != "<NA>" else -1 for s in tasks["stream"]})
    colors = {"kernel": "#4e79a7", "communication": "#e15759", "memcpy": "#59a14f", "memset": "#edc948"}
    row_h, label_w = 22, 110
    plot = width - label_w - 10
    h = row_h * len(streams) + 30
    span = hi - lo
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{h}' font-family='sans-serif' font-size='11'>"
    ]
    for i, s in enumerate(streams):
        lane = "communication" if s == -1 else f"stream {s}"  # collectives carry no stream id
        out.append(
            f"<text x='{label_w - 6}' y='{i * row_h + 15}' text-anchor='end'>rank {rank} {lane}</text>"
            f"<line x1='{label_w}' x2='{width - 10}' y1='{i * row_h + row_h - 2}' y2='{i * row_h + row_h - 2}' stroke='#eee'/>"
        )
    for _, r in tasks.iterrows():
        s = int(r["stream"]) if str(r["stream"]) != "<NA>" else -1
        x0 = max(int(r["start_ns"]), lo)
        x1 = min(int(r["start_ns"]) + int(r["dur_ns"]), hi)
        x = label_w + plot * (x0 - lo) / span
        w = max(plot * (x1 - x0) / span, 0.8)
        y = streams.index(s) * row_h + 3
        out.append(
            f"<rect x='{x:.1f}' y='{y}' width='{w:.1f}' height='{row_h - 7}' fill='{colors.get(r['kind'], '#999')}'>"
            f"<title>{e(str(r['name']))} {int(r['dur_ns']) / 1e3:,.1f} us</title></rect>"
        )
    out.append(
        f"<text x='{label_w}' y='{h - 6}'>0</text><text x='{width - 10}' y='{h - 6}' text-anchor='end'>"
        f"{span / 1e6:,.2f} ms</text></svg>"
    )
    return "".join(out)


def render_html(rep: dict, profile) -> str:
    from ..i18n import t
    from .analyze import SECTIONS

    e = html.escape
    lang = rep["lang"]
    p = rep["profile"]
    parts = [
        f"<!doctype html><html lang='{lang}'><head><meta charset='utf-8'><title>{e(t('report.title', lang))}</title>"
        f"<style>{_CSS}</style></head><body><h1>{e(t('report.title', lang))}</h1>"
        f"<p><code>{e(str(p['path']))}</code> · {e(str(p['format']))} {e(str(p.get('level') or ''))} · "
        f"ranks {e(', '.join(map(str, p['ranks'])))} · steps {e(', '.join(map(str, p['steps'])) or '-')}</p>"
    ]
    v = rep["verdict"]
    parts.append(
        f"<h2 id='verdict'>{e(t('section.verdict', lang))}</h2><div class='verdict'><b>{e(v.get('title', ''))}</b>"
        f" — {e(v['text'])} {e(v.get('detail', ''))}</div>"
    )
    parts.append(f"<h2 id='findings'>{e(t('section.findings', lang))}</h2>")
    if not rep["findings"]:
        parts.append(f"<p>{e(t('label.no_findings', lang))}</p>")
    for f in rep["findings"]:
        rec = (
            t("label.not_estimated", lang)
            if f["recoverable_us"] is None
            else f"{f['recoverable_us'] / 1e3:,.2f} ms ({f['share_of_step_ratio']:.1%} {t('label.of_step', lang)})"
        )
        parts.append(
            f"<div class='f {e(f['severity'])}'><b>{e(f['title'])}</b> "
            f"<span class='dim'>[{e(t('severity.' + f['severity'], lang))} · {e(t('category.' + f['category'], lang))}"
            f" · {e(t('label.recoverable', lang))} {e(rec)}]</span><p>{e(f['message'])}</p>"
            f"<p><b>{e(t('label.change', lang))}:</b> {e(f['change'])}</p></div>"
        )
    parts.append(
        f"<h2 id='actions'>{e(t('section.actions', lang))}</h2><ol>"
        + "".join(
            f"<li>{e(a['title'])}: {a['recoverable_us'] / 1e3:,.2f} ms ({a['share_of_step_ratio']:.1%})</li>"
            for a in rep["actions"]
        )
        + "</ol>"
    )
    svg = timeline_svg(profile, rep)
    if svg:
        parts.append(f"<h2 id='timeline'>{e(t('section.timeline', lang))}</h2>{svg}")
    charts = {
        "operators": ("type", ("total_us",), False),
        "steps": ("rank", ("computing_us", "comm_not_overlapped_us", "free_us"), True),
        "communication": ("rank", ("transit_us", "wait_us", "idle_us"), True),
    }
    for key, names in SECTIONS:
        parts.append(f"<h2>{e(t(key, lang))}</h2>")
        for name in names:
            rows = rep["sections"][name]
            if name in charts:
                x, ys, st = charts[name]
                lab = [
                    dict(r, label=f"r{r.get('rank')} {r.get('type') or r.get('step') or ''}")
                    if name != "operators"
                    else r
                    for r in rows
                ]
                parts.append(_chart(lab, "label" if name != "operators" else x, ys, st))
            parts.append(_table(rows))
    if rep["not_applicable"]:
        parts.append(
            f"<h2>{e(t('section.not_applicable', lang))}</h2><ul>"
            + "".join(f"<li><code>{e(n['rule'])}</code> {e(n['reason'])}</li>" for n in rep["not_applicable"])
            + "</ul>"
        )
    parts.append("</body></html>")
    out = "".join(parts)
    if "src='http" in out or 'src="http' in out or "href='http" in out or 'href="http' in out:
        raise ProfileError("report would reference an external URL")
    return out
