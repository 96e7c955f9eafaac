"""The guided report in the terminal: ``profinsight analyze PATH... [--format table|json|md]
[-o FILE] [--lang en|zh]`` — (1) operator summary, (2) timeline gaps, (3) utilisation, (4) memory
and communication, then the verdict and the actions ranked by recoverable time.

Load errors come first: when an import failed (an ``error`` diagnostic), the terminal and
Markdown forms say so before anything else, the report is left out when no table loaded at all
(an empty report would read as "nothing stands out"), and the exit status is 1.  The JSON form
always carries every diagnostic.  Warnings (cells that did not convert, rows dropped, files
missing) do not stop the report, but the terminal and Markdown forms end with one line that
counts them and names the command that lists them, so a report built on damaged input never
reads as if the input were whole."""

from __future__ import annotations

from .. import diagnostics as dg
from .common import (
    add_output,
    add_paths,
    dumps,
    emit,
    load_profile,
    make_console,
    output_format,
    paths,
    read_ahead,
    warnings_line,
)

HELP = "guided report: findings, verdict and actions ranked by recoverable time"
FORMATS = ["table", "json", "md"]


def add_arguments(p) -> None:
    add_paths(p)
    add_output(p, FORMATS)
    p.add_argument("--lang", choices=["en", "zh"], help="language (default: from the locale)")
    p.add_argument("--top", type=int, default=10, help="operators in the summary (default 10)")


def run(args) -> int:
    read_ahead(args)  # before the imports below: they leave a core idle
    from rich.markup import escape

    from ..advisor import guided_report
    from ..render.text import markdown, render_terminal

    prof = load_profile(args)
    errors = [d for d in prof.diagnostics if d.severity == "error"]
    loaded = any(prof.row_counts().values())
    rep = guided_report(prof, args.lang, top=args.top) if loaded or not errors else None
    fmt = output_format(args, FORMATS)
    tail = warnings_line(prof.diagnostics, paths(args), args.lang)
    if fmt == "json":
        out = dict(rep or {})
        out["import_failed"] = bool(errors)
        out["diagnostics"] = [d.to_dict() for d in prof.diagnostics]
        emit(dumps(out), args)
    elif fmt == "md":
        head = "".join(f"- **{d.severity.upper()}** `{d.code}`{_rank(d)}: {d.message}\n" for d in errors)
        text = f"# Import failed\n\n{head}\n{_after(loaded)}\n" if errors else ""
        emit(text + (markdown(rep) if rep is not None else "") + (f"\n{tail}\n" if tail else ""), args)
    else:
        console = make_console(args, 120)
        if errors:
            console.print("[bold red]Import failed[/]")
            for d in errors:
                console.print(f"[bold red]ERROR[/] {escape(d.code)}{_rank(d)}: {escape(d.message)}")
                if d.file:
                    console.print(f"      file: {escape(d.file)}")
            console.print(_after(loaded))
        if rep is not None:
            render_terminal(rep, console)
        if tail:
            console.print(f"[yellow]{escape(tail)}[/]", soft_wrap=True)  # the command stays whole
        if args.output:
            emit(console.export_text(), args)
    return 1 if dg.worst(prof.diagnostics) == "error" else 0


def _rank(d: dg.Diagnostic) -> str:
    return f" rank {d.rank}" if d.rank is not None else ""


def _after(loaded: bool) -> str:
    if loaded:
        return "The report below covers only what loaded; `profinsight doctor PATH` lists every problem."
    return "Nothing loaded, so there is no report; `profinsight doctor PATH` lists every problem."
