"""Run one analysis and print its table: ``profinsight view NAME PATH... [--param value ...]``.
The analysis' parameters become options (``--by type``, ``--top 20``).  Load errors go to stderr
before the result (:mod:`._load_errors`); warnings about the input, counted in one line, after it
(stdout stays the result alone, for a pipe)."""

from __future__ import annotations

import argparse

from .. import diagnostics as dg
from ..errors import ProfileError
from . import _load_errors
from .common import add_paths, dumps, emit, load_profile, make_console, output_format, paths, warnings_line

HELP = "run one analysis (op_summary, step_breakdown, ...) and print its table"
FORMATS = ["table", "json", "csv", "html", "md"]


def _param_line(prm: dict) -> str:
    choices = f" {{{', '.join(map(str, prm['choices']))}}}" if prm["choices"] else ""
    return f"--{prm['name'].replace('_', '-')} {prm['type']}{choices} (default {prm['default']!r})"


def analyses_help() -> str:
    """Every registered analysis with its parameters (``view --help``), from the registry's index:
    no analysis is imported to answer."""
    from .analyses_index import entries

    lines = ["analyses (parameters as --NAME VALUE or -p NAME=VALUE):"]
    for name, a in sorted(entries().items()):
        lines.append(f"  {name:20} {a['title']}")
        for prm in a["params"]:
            lines.append(f"  {'':20}   {_param_line(prm)}")
    return "\n".join(lines) + "\n"


class _ViewHelp(argparse.HelpFormatter):
    """The usual help, then the analyses of the registry (read only when help is shown)."""

    def format_help(self) -> str:
        return super().format_help() + "\n" + analyses_help()


def add_arguments(p) -> None:
    p.formatter_class = _ViewHelp
    p.add_argument("analysis", metavar="ANALYSIS", nargs="?", help="analysis name (profinsight view --list lists them)")
    p.add_argument("--list", action="store_true", help="list every registered analysis with its parameters and exit")
    add_paths(p)
    p.add_argument("--format", choices=FORMATS, help="output format (default: table)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (format from its extension)")
    p.add_argument(
        "--columns",
        metavar="A,B,...",
        help="table: show these columns, in this order (default: the key columns and as many as fit the terminal)",
    )
    p.add_argument("--lang", choices=["en", "zh"], help="language of the words in the result (advise)")
    p.add_argument(
        "--param",
        "-p",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="analysis parameter, e.g. -p by=type -p top=20 (also --NAME VALUE)",
    )


def run(args) -> int:
    if args.list or args.analysis in ("list", "--list"):
        from .analyses_index import entries  # the registry's index: nothing heavy is imported

        for name, a in sorted(entries().items()):
            print(f"{name:20} {a['title']}")
            if args.list:  # the long form: parameters too, as the registry declares them
                for prm in a["params"]:
                    print(f"{'':22}{_param_line(prm)}")
        return 0
    if args.analysis is None:
        raise ProfileError(
            "no analysis named", fix="profinsight view --list shows them; then: profinsight view NAME PATH"
        )
    from .common import read_ahead

    read_ahead(args)  # before the registry's imports: they leave a core idle
    from ..registry import get

    a = get(args.analysis)
    params = _params(a, args)
    if getattr(args, "lang", None) and any(p.name == "lang" for p in a.params):
        params.setdefault("lang", args.lang)
    prof = load_profile(args)
    fmt = output_format(args, FORMATS)
    failed = _load_errors.say(prof, getattr(args, "lang", None))
    import pandas as pd

    if failed and not _load_errors.loaded(prof):  # nothing to show but the errors, said above
        if fmt == "json":
            emit(dumps(_json(a, params, pd.DataFrame(), prof)), args)
        return 1
    plain = pd.DataFrame(a.run(prof, **params))
    if fmt == "json":
        emit(dumps(_json(a, params, plain, prof)), args)
    elif fmt == "csv":
        emit(plain.to_csv(index=False), args)
    elif fmt == "html":
        from ..render.notebook import render_html

        emit(f"<!doctype html><meta charset='utf-8'><title>{a.title}</title>" + render_html(plain, a, params), args)
    elif fmt == "md":
        emit(_markdown(plain), args)
    elif a.name == "advise":
        _findings(plain, args)
    else:
        _table(plain, a, args)
    if fmt != "json":  # the JSON form carries every diagnostic; stdout stays the result alone
        line = warnings_line(prof.diagnostics, paths(args), getattr(args, "lang", None))
        if line:
            import sys

            print(line, file=sys.stderr)
    return 1 if failed else 0


def _json(a, params: dict, plain, prof) -> dict:
    """The JSON form: the rows, and always the load's diagnostics (errors first)."""
    order = {s: -i for i, s in enumerate(dg.SEVERITIES)}  # error, warning, info
    diags = sorted(prof.diagnostics, key=lambda d: order.get(d.severity, 1))
    return {
        "analysis": a.name,
        "params": params,
        "import_failed": bool(_load_errors.errors(prof)),
        "rows": plain.to_dict(orient="records"),
        "diagnostics": [d.to_dict() for d in diags],
    }


def _params(a, args) -> dict:
    out = {}
    known = {p.name for p in a.params}
    items = list(args.param) + list(getattr(args, "extra", []) or [])
    for item in items:
        if "=" not in item:
            raise ProfileError(f"parameter {item!r} must be NAME=VALUE", fix=f"parameters: {', '.join(known)}")
        k, v = item.split("=", 1)
        out[k.strip().replace("-", "_")] = None if v.lower() in ("none", "null", "") else v
    return out


def _markdown(df) -> str:
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(_fmt(v) for v in r) + " |")
    return "\n".join(lines) + "\n"


def _fmt(v) -> str:
    import pandas as pd

    if v is None or (not isinstance(v, str) and pd.isna(v)):
        return ""
    if isinstance(v, float):
        return f"{v:,.3f}"
    return str(v).replace("|", "/").replace("\n", " ")


def terminal_width() -> int:
    """The terminal's width (``COLUMNS`` or the tty), kept between 80 and 200 characters."""
    import shutil

    return max(80, min(shutil.get_terminal_size((120, 40)).columns, 200))


def _table(df, a, args) -> None:
    from rich.table import Table

    from ..render.terminal import layout

    width = terminal_width()
    cols = [c.strip() for c in args.columns.split(",") if c.strip()] if getattr(args, "columns", None) else None
    try:
        lay = layout(df, width, cols)
    except KeyError as exc:
        raise ProfileError(
            f"{a.name} has no column(s) {', '.join(exc.args[0])}", fix=f"columns: {', '.join(map(str, df.columns))}"
        ) from None
    console = make_console(args, width)
    t = Table(title=a.title, box=None, header_style="bold")
    for h, al in zip(lay["headers"], lay["align"]):
        t.add_column(h, justify=al, overflow="ellipsis", no_wrap=True)
    for row in lay["rows"]:
        t.add_row(*row)
    console.print(t)
    notes = []
    if lay["transposed"]:
        notes.append("one line per column (the result has few rows)")
    if lay["hidden"]:
        notes.append(f"{len(lay['hidden'])} more column(s): {', '.join(lay['hidden'])} (--columns A,B or --format csv)")
    if lay["more_rows"]:
        notes.append(f"{lay['more_rows']:,} more rows (use --format csv)")
    for n in notes:
        console.print(f"[dim]{n}[/dim]", overflow="fold")
    if args.output:
        emit(console.export_text(), args)


def _findings(df, args) -> None:
    """``view advise``: numbered findings (title, severity, recoverable time, message, change),
    then the rules that do not apply, in one line each.  The recoverable time is of what the
    advisor says in the ``basis`` column: "step", or "capture" where the profile records no step."""
    import pandas as pd
    from rich.markup import escape

    from ..i18n import t

    console = make_console(args, terminal_width())
    fired = df[df["severity"] != "not_applicable"]
    basis = "capture" if "basis" in df.columns and (df["basis"] == "capture").any() else "step"
    if not len(fired):
        console.print("No rule fired: nothing stands out against the thresholds.")
    for i, (_, f) in enumerate(fired.iterrows(), 1):
        rec = f["recoverable_us"]
        share = f["share_of_step_ratio"]
        of = f" ({share:.1%} {t('share_of.' + basis, 'en')})" if pd.notna(share) else ""
        gain = (
            f"recoverable {rec / 1e3:,.2f} ms {t('per.' + basis, 'en')}{of}"
            if pd.notna(rec)
            else "recoverable time not estimated"
        )
        console.print(f"[bold]{i}. {escape(f['title'])}[/bold] \\[{f['severity']}] — {gain}")
        console.print(f"   {f['message']}", overflow="fold")
        if f["change"]:
            console.print(f"   [italic]Change:[/italic] {f['change']}", overflow="fold")
    na = df[df["severity"] == "not_applicable"]
    if len(na):
        console.print(f"[dim]Not applicable: {', '.join(na['rule'])} ({na['message'].iloc[0]})[/dim]", overflow="fold")
    if args.output:
        emit(console.export_text(), args)
