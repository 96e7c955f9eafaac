"""Ranks of one multi-card run side by side: ``profinsight ranks PATH``.  Per-rank step
breakdown and communication wait, the slow ranks with evidence, and load imbalance.  Ranks load
in parallel local processes, or on a Dask cluster with ``--scheduler ADDRESS``."""

from __future__ import annotations

from .common import add_paths, dumps, emit, make_console, output_format, paths

HELP = "ranks side by side: slow-rank detection with evidence, load imbalance"
FORMATS = ["table", "json", "html"]


def add_arguments(p) -> None:
    add_paths(p)
    p.add_argument("--scheduler", metavar="ADDRESS", help="load ranks on this Dask scheduler (tcp://host:8786)")
    p.add_argument("--workers", type=int, help="local processes to load ranks with (default: one per CPU)")
    p.add_argument("--threshold", type=float, default=3.0, help="MADs above the median to call a rank slow")
    p.add_argument("--lang", choices=["en", "zh"], help="language of the verdict (default: from the locale)")
    p.add_argument("--format", choices=FORMATS, help="output format (default: table)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (format from its extension)")


def run(args) -> int:
    from ..api import load_parallel, ranks_report

    ps = paths(args)
    prof = load_parallel(
        ps[0] if len(ps) == 1 else ps, scheduler=args.scheduler, prefer=args.prefer, workers=args.workers
    )
    rep = ranks_report(prof, threshold=args.threshold, lang=getattr(args, "lang", None))
    fmt = output_format(args, FORMATS)
    if fmt == "json":
        emit(dumps(rep.to_dict()), args)
        return 0
    if fmt == "html":
        from ..render.ranks import ranks_page

        emit(ranks_page(rep), args)
        return 0
    from rich.table import Table

    console = make_console(args, 150)
    for title, df in (
        ("Ranks (per-step means, us)", rep.summary().drop(columns=["label"])),
        ("Load imbalance", rep.imbalance()),
        ("Slow links", rep.slow_links().drop(columns=["evidence", "label"])),
    ):
        if df.empty:
            continue
        t = Table(title=title, box=None, header_style="bold")
        for c in df.columns:
            t.add_column(str(c), justify="right")
        for _, r in df.iterrows():
            t.add_row(*(f"{v:,.1f}" if isinstance(v, float) else str(v) for v in r))
        console.print(t)
    console.print(rep.verdict())
    if args.output:
        emit(console.export_text(), args)
    return 0
