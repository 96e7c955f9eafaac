"""The guided report as text: the terminal form (rich) of ``profinsight analyze`` and its
Markdown form (``--format md``).  The HTML form is :mod:`profinsight.render.report`; all three
draw the same data (:func:`profinsight.advisor.guided_report`) in the same sections.
"""

from __future__ import annotations

from ..i18n import t
from .report import SECTIONS, actions_heading, cell_text, recoverable_words


def _rows(rows: list[dict]):
    # absolute times in ns (*_ns) locate a row for links and the excerpt; no table a person reads shows them
    cols = [c for c in rows[0] if not c.endswith("_ns")] if rows else []
    return cols, [[cell_text(r.get(c), c) for c in cols] for r in rows]


SEV_STYLE = {"high": "bold red", "medium": "yellow", "low": "cyan", "info": "dim"}


def render_terminal(rep: dict, console) -> None:
    from rich.markup import escape
    from rich.panel import Panel
    from rich.table import Table

    lang = rep["lang"]
    basis = rep.get("basis", "step")
    p = rep["profile"]
    console.print(
        f"[bold]{t('analyze.title', lang)}[/bold]  {p['path']}  ({p['format']} {p.get('level') or ''}, "
        f"ranks {', '.join(map(str, p['ranks']))}, steps {', '.join(map(str, p['steps'])) or '-'})"
    )
    for key, parts in SECTIONS:
        console.rule(f"[bold]{t(key, lang)}")
        for part in parts:
            cols, rows = _rows(rep["sections"][part])
            if not rows:
                console.print(f"[dim]{t('label.none', lang)}[/dim]")
                continue
            tab = Table(box=None, header_style="bold")
            for c in cols:
                tab.add_column(c, overflow="fold", max_width=48)
            for r in rows:
                tab.add_row(*(escape(x) for x in r))
            console.print(tab)
    v = rep["verdict"]
    console.rule(f"[bold]{t('section.verdict', lang)}")
    # the unknown verdict has no title: its one sentence is said once, not as title and text
    head = f"[bold]{v['title']}[/bold]\n" if v.get("title") else ""
    console.print(Panel(f"{head}{v['text']} {v.get('detail', '')}".strip()))
    console.rule(f"[bold]{t('section.findings', lang)}")
    if not rep["findings"]:
        console.print(t("label.no_findings", lang))
    for i, f in enumerate(rep["findings"], 1):
        sev = f["severity"]
        console.print(
            f"[{SEV_STYLE.get(sev, 'default')}]{i}. \\[{t('severity.' + sev, lang)}] {escape(f['title'])}[/]"
            f"  ({t('category.' + f['category'], lang)}; {t('label.recoverable', lang)} {recoverable_words(f, lang, basis)})"
        )
        console.print(f"   {escape(f['message'])}")
        console.print(f"   [bold]{t('label.change', lang)}:[/bold] {escape(f['change'])}")
    console.rule(f"[bold]{actions_heading(rep)}")
    for i, a in enumerate(rep["actions"], 1):
        console.print(f"{i}. {escape(a['title'])}: {recoverable_words(a, lang, basis)}")
        if a.get("note"):  # two actions that remove the same time: not to be added up
            console.print(f"   [dim]{escape(a['note'])}[/dim]")
    if (rep.get("actions_total") or {}).get("text"):
        console.print(f"[bold]{escape(rep['actions_total']['text'])}[/bold]")
    if rep["not_applicable"]:
        console.rule(f"[dim]{t('section.not_applicable', lang)}")
        for n in rep["not_applicable"]:
            console.print(f"[dim]{n['rule']}: {n['reason']}[/dim]")


def markdown(rep: dict) -> str:

    lang = rep["lang"]
    basis = rep.get("basis", "step")
    out = [f"# {t('analyze.title', lang)}", "", f"`{rep['profile']['path']}`", ""]
    for key, parts in SECTIONS:
        out += [f"## {t(key, lang)}", ""]
        for part in parts:
            cols, rows = _rows(rep["sections"][part])
            if rows:
                out += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
                out += ["| " + " | ".join(x.replace("|", "/") for x in r) + " |" for r in rows]
                out.append("")
    v = rep["verdict"]
    out += [
        f"## {t('section.verdict', lang)}",
        "",
        (f"**{v['title']}** — " if v.get("title") else "") + f"{v['text']} {v.get('detail', '')}".strip(),
        "",
        f"## {t('section.findings', lang)}",
        "",
    ]
    for i, f in enumerate(rep["findings"], 1):
        out += [
            f"{i}. **{f['title']}** ({t('severity.' + f['severity'], lang)}; {t('label.recoverable', lang)} "
            f"{recoverable_words(f, lang, basis)})  ",
            f"   {f['message']}  ",
            f"   *{t('label.change', lang)}:* {f['change']}",
        ]
    out += ["", f"## {actions_heading(rep)}", ""]
    for i, a in enumerate(rep["actions"], 1):
        out.append(
            f"{i}. {a['title']}: {recoverable_words(a, lang, basis)}"
            + (f"  \n   *{a['note']}*" if a.get("note") else "")
        )
    if (rep.get("actions_total") or {}).get("text"):
        out += ["", f"**{rep['actions_total']['text']}**"]
    return "\n".join(out) + "\n"
