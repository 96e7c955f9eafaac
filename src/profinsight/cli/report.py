"""The guided report as one self-contained offline HTML file: ``profinsight report PATH...
-o report.html [--lang en|zh]``.  This module only reads the arguments and builds the report's
data (:func:`profinsight.advisor.guided_report`); the page is drawn by the render layer
(:mod:`profinsight.render.report`), in the style every profinsight page shares.  Load errors
come first, on stderr and at the top of the page, and the exit status is then 1."""

from __future__ import annotations

from . import _load_errors
from .common import add_paths, emit, load_profile, read_ahead

HELP = "write the guided report as one self-contained HTML file"
FORMATS = ["html"]


def add_arguments(p) -> None:
    add_paths(p)
    p.add_argument("--format", choices=FORMATS, help="output format (default: html)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (default: stdout)")
    p.add_argument("--lang", choices=["en", "zh"], help="language (default: from the locale)")
    p.add_argument("--top", type=int, default=10, help="operators in the summary (default 10)")


def run(args) -> int:
    read_ahead(args)  # before the imports below: they leave a core idle
    from ..advisor import guided_report
    from ..render.report import render_html

    prof = load_profile(args)
    failed = _load_errors.say(prof, args.lang)
    # where nothing loaded, a report would read as "nothing stands out": the page says the errors only
    rep = guided_report(prof, args.lang, top=args.top) if _load_errors.loaded(prof) or not failed else None
    emit(render_html(rep, prof, lang=args.lang), args)
    return 1 if failed else 0
