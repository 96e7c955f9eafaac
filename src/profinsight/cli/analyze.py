"""The guided report in the terminal: ``profinsight analyze PATH... [--format table|json|md]
[-o FILE] [--lang en|zh]`` — (1) operator summary, (2) timeline gaps, (3) utilisation, (4) memory
and communication, then the verdict and the actions ranked by recoverable time."""

from __future__ import annotations

from .common import add_output, add_paths, dumps, emit, load_profile, make_console, output_format

HELP = "guided report: findings, verdict and actions ranked by recoverable time"
FORMATS = ["table", "json", "md"]


def add_arguments(p) -> None:
    add_paths(p)
    add_output(p, FORMATS)
    p.add_argument("--lang", choices=["en", "zh"], help="language (default: from the locale)")
    p.add_argument("--top", type=int, default=10, help="operators in the summary (default 10)")


def run(args) -> int:
    from ..advisor import guided_report

    prof = load_profile(args)
    rep = guided_report(prof, args.lang, top=args.top)
    fmt = output_format(args, FORMATS)
    if fmt == "json":
        emit(dumps(rep), args)
    elif fmt == "md":
        emit(markdown(rep), args)
    else:
        console = make_console(args, 120)
        render_terminal(rep, console)
        if args.output:
            emit(console.export_text(), args)
    return 0


def _fmt(v, col: str = "") -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.1%}" if col.endswith("_ratio") else f"{v:,.1f}"
    return str(v)


def _rows(rows: list[dict]):
    cols = list(rows[0]) if rows else []
    return cols, [[_fmt(r.get(c), c) for c in cols] for r in rows]


def _rec(f, t, lang) -> str:
    if f.get("recoverable_us") is None:
        return t("label.not_estimated", lang)
    return f"{f['recoverable_us'] / 1e3:,.2f} ms ({f['share_of_step_ratio']:.1%} {t('label.of_step', lang)})"


SECTIONS = (
    ("section.operators", ("operators",)),
    ("section.gaps", ("steps", "gaps_by_activity", "gaps")),
    ("section.utilization", ("utilization",)),
    ("section.memory", ("memory",)),
    ("section.communication", ("communication",)),
)
SEV_STYLE = {"high": "bold red", "medium": "yellow", "low": "cyan", "info": "dim"}


def render_terminal(rep: dict, console) -> None:
    from rich.markup import escape
    from rich.panel import Panel
    from rich.table import Table

    from ..i18n import t

    lang = rep["lang"]
    p = rep["profile"]
    console.print(
        f"[bold]{t('report.title', lang)}[/bold]  {p['path']}  ({p['format']} {p.get('level') or ''}, "
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
    console.print(Panel(f"[bold]{v.get('title', v['text'])}[/bold]\n{v['text']} {v.get('detail', '')}".strip()))
    console.rule(f"[bold]{t('section.findings', lang)}")
    if not rep["findings"]:
        console.print(t("label.no_findings", lang))
    for i, f in enumerate(rep["findings"], 1):
        sev = f["severity"]
        console.print(
            f"[{SEV_STYLE.get(sev, 'default')}]{i}. \\[{t('severity.' + sev, lang)}] {escape(f['title'])}[/]"
            f"  ({t('category.' + f['category'], lang)}; {t('label.recoverable', lang)} {_rec(f, t, lang)})"
        )
        console.print(f"   {escape(f['message'])}")
        console.print(f"   [bold]{t('label.change', lang)}:[/bold] {escape(f['change'])}")
    console.rule(f"[bold]{t('section.actions', lang)}")
    for i, a in enumerate(rep["actions"], 1):
        console.print(f"{i}. {a['title']}: {_rec(a, t, lang)}")
    if rep["not_applicable"]:
        console.rule(f"[dim]{t('section.not_applicable', lang)}")
        for n in rep["not_applicable"]:
            console.print(f"[dim]{n['rule']}: {n['reason']}[/dim]")


def markdown(rep: dict) -> str:
    from ..i18n import t

    lang = rep["lang"]
    out = [f"# {t('report.title', lang)}", "", f"`{rep['profile']['path']}`", ""]
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
        f"**{v.get('title', '')}** — {v['text']} {v.get('detail', '')}",
        "",
        f"## {t('section.findings', lang)}",
        "",
    ]
    for i, f in enumerate(rep["findings"], 1):
        out += [
            f"{i}. **{f['title']}** ({t('severity.' + f['severity'], lang)}; {t('label.recoverable', lang)} "
            f"{_rec(f, t, lang)})  ",
            f"   {f['message']}  ",
            f"   *{t('label.change', lang)}:* {f['change']}",
        ]
    out += ["", f"## {t('section.actions', lang)}", ""]
    out += [f"{i}. {a['title']}: {_rec(a, t, lang)}" for i, a in enumerate(rep["actions"], 1)]
    return "\n".join(out) + "\n"
