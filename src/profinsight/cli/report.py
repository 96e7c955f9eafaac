"""The guided report as one self-contained offline HTML file: ``profinsight report PATH...
-o report.html [--lang en|zh]``.  This module only reads the arguments and builds the report's
data (:func:`profinsight.advisor.guided_report`); the page is drawn by the render layer
(:mod:`profinsight.render.report`), in the style every profinsight page shares."""

from __future__ import annotations

from .common import add_paths, emit, load_profile

HELP = "write the guided report as one self-contained HTML file"
FORMATS = ["html"]


def add_arguments(p) -> None:
    add_paths(p)
    p.add_argument("--format", choices=FORMATS, help="output format (default: html)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (default: stdout)")
    p.add_argument("--lang", choices=["en", "zh"], help="language (default: from the locale)")
    p.add_argument("--top", type=int, default=10, help="operators in the summary (default 10)")


def run(args) -> int:
    from ..advisor import guided_report
    from ..render.report import render_html

    prof = load_profile(args)
    rep = guided_report(prof, args.lang, top=args.top)
    emit(render_html(rep, prof), args)
    return 0
