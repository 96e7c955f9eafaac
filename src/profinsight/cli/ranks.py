"""Ranks of one multi-card run side by side: ``profinsight ranks PATH``.  Per-rank step
breakdown and communication wait, the slow ranks with evidence, and load imbalance.  Ranks load
in parallel local processes, or on a Dask cluster with ``--scheduler ADDRESS``."""

from __future__ import annotations

import sys

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
        help="summary: every rank from its own summaries (step_trace_time.csv, communication*.json, or the DB "
        "export's analysis.db), no trace parsed; for a Kineto job a pre-pass over the traces (steps, device tasks, "
        "collectives); full: every rank's traces imported; auto (default): summary where the run has it",
    )
    p.add_argument("--lang", choices=["en", "zh"], help="language of the verdict (default: from the locale)")
    p.add_argument("--format", choices=FORMATS, help="output format (default: table)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (format from its extension)")


#: bumped when the report's content changes: a stored report of another version is never read
REPORT_VERSION = "4"  # 4: the load's diagnostics; 3: the verdict counts the groups and slow ranks past 16
_SECTIONS = (
    # (title, key of RanksReport.to_dict, columns left out, columns kept (None: all), rows at most)
    ("Ranks (per-step means, us)", "summary", ("label",), None, None),
    ("Load imbalance", "imbalance", (), None, None),
    ("Parallel layout (profiler_metadata.json)", "layout", (), None, None),
    ("Parallel groups (HCCL groups by their ranks)", "groups", (), _GROUP_COLUMNS, None),
    ("Pipeline bubble per stage", "pipeline_bubbles", (), None, None),
    ("Slow links (bandwidth-bound transfers, >= 1 MB)", "slow_links", ("evidence", "label"), None, None),
    (
        "Latency-bound transfers (< 1 MB): time per transfer, not a bandwidth",
        "link_latency",
        ("evidence", "label", "op_types"),
        None,
        10,
    ),
)


def run(args) -> int:
    from pathlib import Path

    from ..i18n import resolve_lang
    from ..store import report_cache

    ps = paths(args)
    fmt = output_format(args, FORMATS)
    lang = resolve_lang(getattr(args, "lang", None))
    question = {
        "paths": [str(Path(p).resolve()) for p in ps],
        "tier": args.tier,
        "prefer": args.prefer,
        "threshold": args.threshold,
        "lang": lang,
    }
    if fmt != "html" and not args.scheduler:
        # unchanged files, same question: the report as it was built (every input re-stat'ed)
        hit = report_cache.lookup("ranks", REPORT_VERSION, question)
        if hit is not None:
            return _print(hit, fmt, args)
    from ..api import load_parallel, ranks_report, resolve_run, tiered

    run = tiered(resolve_run(ps[0] if len(ps) == 1 else ps, prefer=args.prefer), args.tier)
    if args.scheduler and run.format == "cluster":
        print(
            "profinsight: the summary tier is read in this process (a few KB a rank); "
            "--scheduler is used with --tier full",
            file=sys.stderr,
        )
    seen = report_cache.witness(run)  # before reading: a file changed meanwhile is never answered
    prof = load_parallel(run, scheduler=args.scheduler, workers=args.workers)
    rep = ranks_report(prof, threshold=args.threshold, lang=lang)
    if fmt == "html":
        from ..render.ranks import ranks_page

        emit(ranks_page(rep), args)
        return 0
    # the load's diagnostics always travel with the figures (JSON and the stored report)
    out = {**rep.to_dict(), "diagnostics": [d.to_dict() for d in prof.diagnostics]}
    if not any(d.severity == "error" for d in prof.diagnostics):  # a failed rank is tried again next time
        report_cache.store("ranks", REPORT_VERSION, question, seen, out)
    return _print(out, fmt, args)


#: rows of a table before the rest are left to the JSON output
MAX_ROWS = 64


def _farthest(rows: list[dict]) -> tuple[list[dict], str]:
    """The :data:`MAX_ROWS` rows that stand out most, in their own order, and how they were
    chosen: the largest distance from the median (``*_vs_median_us`` of a rank), the longest
    wait for one rank (``waited_for_us`` of a group), else the first ones."""
    keys = [k for k in rows[0] if k.endswith("_vs_median_us")]
    how = "farthest from the median"
    if not keys:
        keys, how = [k for k in ("waited_for_us",) if k in rows[0]], "waited for longest"
    if not keys:
        return rows[:MAX_ROWS], "first"

    def far(r):
        return max((abs(r[k]) for k in keys if isinstance(r.get(k), (int, float))), default=0.0)

    keep = sorted(range(len(rows)), key=lambda i: (-far(rows[i]), i))[:MAX_ROWS]
    return [rows[i] for i in sorted(keep)], how


def _print(rep: dict, fmt: str, args) -> int:
    """The report (``RanksReport.to_dict()``, built now or stored) as JSON or as tables."""
    if fmt == "json":
        emit(dumps(rep), args)
        return 0
    from rich.table import Table

    from ..render.ranks import figure_text

    console = make_console(args, 150)
    for title, key, drop, keep, most in _SECTIONS:
        rows = rep.get(key) or []
        if not rows:
            continue
        if most is None and len(rows) > MAX_ROWS:  # a 1,024-rank job at a glance; the JSON has every row
            left = len(rows) - MAX_ROWS
            rows, how = _farthest(rows)
            which = f"the first {MAX_ROWS}" if how == "first" else f"the {MAX_ROWS} {how}"
            title = f"{title}: {which} of {len(rows) + left} ({left} more in --format json)"
        cols = [c for c in rows[0] if c not in drop and (keep is None or c in keep)]
        if keep is not None:
            cols = [c for c in keep if c in cols]
        t = Table(title=title, box=None, header_style="bold")
        for c in cols:
            t.add_column(str(c), justify="right")
        for r in rows[:most]:
            t.add_row(*(figure_text(r.get(c), c) for c in cols))
        console.print(t)
    console.print(rep["verdict"])
    if args.output:
        emit(console.export_text(), args)
    return 0
