"""List the registered experiments (runs collected with profinsight.collect or registered with
profinsight.register): name, when, path and headline metrics.  PATH is the experiments folder
(default: $PROFINSIGHT_EXPERIMENTS, else ./profinsight-experiments)."""

from __future__ import annotations

from .common import add_output, dumps, emit, make_console, output_format

HELP = "list registered experiments (name, time, path, headline metrics)"
FORMATS = ["table", "json", "csv"]
_SHOWN = ("id", "name", "created", "step_us", "busy_ratio", "top_op_type", "top_finding", "git_commit", "notes", "path")


def add_arguments(p) -> None:
    p.add_argument(
        "folder",
        nargs="?",
        metavar="PATH",
        help="experiments folder (default: $PROFINSIGHT_EXPERIMENTS or ./profinsight-experiments)",
    )
    add_output(p, FORMATS)


def run(args) -> int:
    from ..collection import registry

    rows = registry.rows(args.folder)
    fmt = output_format(args, FORMATS)
    if fmt == "json":
        emit(dumps(rows), args)
        return 0
    if fmt == "csv":
        from ..collection import experiments

        emit(experiments(args.folder).to_csv(index=False), args)
        return 0
    from rich.table import Table

    console = make_console(args, 160)
    if not rows:
        console.print(f"no experiments registered in {registry.experiments_folder(args.folder)}")
    else:
        t = Table(*_SHOWN, box=None)
        for r in rows:
            cells = []
            for k in _SHOWN:
                v = r.get(k)
                if k == "step_us" and v is not None:
                    v = f"{v:,.1f}" + (" (host)" if r.get("step_source") == "host_step_us" else "")
                elif k == "busy_ratio" and v is not None:
                    v = f"{v:.1%}"
                elif k == "git_commit" and v:
                    v = v[:10] + ("+dirty" if r.get("git_dirty") else "")
                elif k == "notes" and v:
                    v = v.splitlines()[0][:40]
                cells.append("" if v is None else str(v))
            t.add_row(*cells)
        console.print(t)
    if args.output:
        emit(console.export_text(), args)
    return 0
