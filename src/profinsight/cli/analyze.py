"""The guided report in the terminal: ``profinsight analyze PATH... [--format table|json|md]
[-o FILE] [--lang en|zh]`` — (1) operator summary, (2) timeline gaps, (3) utilisation, (4) memory
and communication, then the verdict and the actions ranked by recoverable time."""

from __future__ import annotations

from ..render.text import markdown, render_terminal
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
