"""Write the experiment record of registered runs: for each NAME in order (one round each) what
was run, headline numbers, before/after against the previous round, the step breakdown and top
operators (inline SVG in HTML, tables in Markdown) and the advisor's findings.
``profinsight record baseline aligned-formats -o record.html`` (or ``.md``)."""

from __future__ import annotations

from .common import add_output, dumps, emit, output_format

HELP = "write the experiment record of registered runs (HTML or Markdown)"
FORMATS = ["md", "html", "json"]


def add_arguments(p) -> None:
    p.add_argument("names", nargs="+", metavar="NAME", help="registered experiment names, one round each, in order")
    p.add_argument(
        "--experiments",
        metavar="FOLDER",
        help="experiments folder (default: $PROFINSIGHT_EXPERIMENTS or ./profinsight-experiments)",
    )
    p.add_argument("--lang", choices=["en", "zh"], help="language (default: the locale)")
    p.add_argument("--top", type=int, default=10, help="operators shown per round (default 10)")
    add_output(p, FORMATS)


def run(args) -> int:
    from ..collection import record

    data = record.build(args.names, folder=args.experiments, lang=args.lang, top=args.top)
    fmt = output_format(args, FORMATS)
    if fmt == "html":
        text = record.render_html(data)
    elif fmt == "json":
        text = dumps(data)
    else:
        text = record.render_markdown(data)
    emit(text, args)
    return 0
