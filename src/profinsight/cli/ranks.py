"""Ranks of one multi-card run side by side: ``profinsight ranks PATH``.  Per-rank step
breakdown and communication wait, the slow ranks with evidence, and load imbalance.  Ranks load
in parallel local processes, or on a Dask cluster with ``--scheduler ADDRESS``."""

from __future__ import annotations

from .common import add_paths, dumps, emit, make_console, output_format, paths

HELP = "ranks side by side: slow-rank detection with evidence, load imbalance"
FORMATS = ["table", "json", "html"]
_GROUP_COLUMNS = (
    "group",
    "ranks",
    "names",
    "n_ops",
    "comm_us",
    "wait_us",
    "slow_rank",
    "waited_for_us",
    "waited_for_share_of_step_ratio",
    "computing_spread_us",
    "imbalance_share_of_step_ratio",
)


def add_arguments(p) -> None:
    add_paths(p)
    p.add_argument("--scheduler", metavar="ADDRESS", help="load ranks on this Dask scheduler (tcp://host:8786)")
    p.add_argument("--workers", type=int, help="local processes to load ranks with (default: one per CPU)")
    p.add_argument("--threshold", type=float, default=3.0, help="MADs above the median to call a rank slow")
    p.add_argument(
        "--tier",
        choices=["auto", "summary", "full"],
        default="auto",
        help="summary: every rank from its own summaries (step_trace_time.csv, communication*.json), no trace "
        "parsed; full: every rank's traces imported; auto (default): summary where every rank has its summaries",
    )
    p.add_argument("--lang", choices=["en", "zh"], help="language of the verdict (default: from the locale)")
    p.add_argument("--format", choices=FORMATS, help="output format (default: table)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (format from its extension)")


def _summary_run(ps, args):
    """The run of ``ps`` with every rank in the summary tier (importers.cluster), or None where
    the run is not torch_npu rank folders that all hold their summaries."""
    from dataclasses import replace

    from ..api import resolve_run
    from ..importers.cluster import summary_sources

    run = resolve_run(ps[0] if len(ps) == 1 else ps, prefer=args.prefer)
    if run.format not in ("ascend_text", "ascend_db") or len(run.sources) < 2:
        return None
    sources = summary_sources(run.sources)
    return replace(run, format="cluster", sources=sources) if sources else None


def run(args) -> int:
    from ..api import load, load_parallel, ranks_report

    ps = paths(args)
    target = _summary_run(ps, args) if args.tier != "full" else None
    if target is None and args.tier == "summary":
        from ..errors import ProfileError

        raise ProfileError(
            f"{ps[0]}: not every rank folder has its summaries (ASCEND_PROFILER_OUTPUT/step_trace_time.csv); "
            "run without --tier summary to import the traces"
        )
    if target is not None and not args.scheduler:  # a few KB per rank: processes would cost more than they save
        prof = load(target)
    else:
        prof = load_parallel(
            target or (ps[0] if len(ps) == 1 else ps),
            scheduler=args.scheduler,
            prefer=args.prefer,
            workers=args.workers,
        )
    rep = ranks_report(prof, threshold=args.threshold, lang=getattr(args, "lang", None))
    fmt = output_format(args, FORMATS)
    if fmt == "json":  # the load's diagnostics always travel with the figures
        emit(dumps({**rep.to_dict(), "diagnostics": [d.to_dict() for d in prof.diagnostics]}), args)
        return 0
    if fmt == "html":
        from ..render.ranks import ranks_page

        emit(ranks_page(rep), args)
        return 0
    from rich.table import Table

    from ..render.ranks import figure_text

    console = make_console(args, 150)
    groups = rep.groups()
    for title, df in (
        ("Ranks (per-step means, us)", rep.summary().drop(columns=["label"])),
        ("Load imbalance", rep.imbalance()),
        ("Parallel layout (profiler_metadata.json)", rep.layout()),
        (
            "Parallel groups (HCCL groups by their ranks)",
            groups[[c for c in _GROUP_COLUMNS if c in groups.columns]],
        ),
        ("Pipeline bubble per stage", rep.bubbles()),
        ("Slow links (bandwidth-bound transfers, >= 1 MB)", rep.slow_links().drop(columns=["evidence", "label"])),
        (
            "Latency-bound transfers (< 1 MB): time per transfer, not a bandwidth",
            rep.link_latency().drop(columns=["evidence", "label", "op_types"]).head(10),
        ),
    ):
        if df.empty:
            continue
        t = Table(title=title, box=None, header_style="bold")
        for c in df.columns:
            t.add_column(str(c), justify="right")
        for _, r in df.iterrows():
            t.add_row(*(figure_text(v, str(c)) for c, v in r.items()))
        console.print(t)
    console.print(rep.verdict())
    if args.output:
        emit(console.export_text(), args)
    return 0
