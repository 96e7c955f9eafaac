"""Compare a baseline run with one or more changed runs: ``profinsight compare A B [C ...]``.
Each PATH is one run.  Prints the step time per run, the waterfall of each pair (consecutive
runs and base -> last) and a verdict in words; ``--format json`` / ``-o cmp.html`` for files."""

from __future__ import annotations

from ..errors import ProfileError
from .common import dumps, emit, make_console, output_format, warnings_line

HELP = "compare runs: baseline -> changed runs (step delta, waterfall, op changes, verdict)"
FORMATS = ["table", "json", "html"]


def add_arguments(p) -> None:
    p.add_argument("paths", nargs="*", metavar="PATH", help="one run per PATH: baseline first")
    p.add_argument(
        "--name",
        action="append",
        default=None,
        metavar="NAME",
        help="label of each run, in order (default: folder names)",
    )
    p.add_argument("--prefer", choices=["db", "text"], help="export to read when a folder has both")
    p.add_argument("--by", choices=["type", "name"], default="type", help="group op changes by op type or name")
    p.add_argument(
        "--mode",
        choices=["device", "framework"],
        default="device",
        help="device: kernels and step waterfall; framework: align two runs whose kernels differ "
        "(GPU vs NPU) at the framework-op level",
    )
    p.add_argument("--aliases", metavar="CSV", help="framework mode: extra op-name aliases (columns name,canonical)")
    p.add_argument(
        "--phase",
        action="append",
        choices=["forward", "backward", "optimizer", "communication"],
        help="framework mode: phases to compare (default: forward)",
    )
    p.add_argument("--scheduler", metavar="ADDRESS", help="load ranks on this Dask scheduler (tcp://host:8786)")
    p.add_argument(
        "--workers",
        type=int,
        help="local processes to load ranks with (small runs: threads; 1 imports one after the other)",
    )
    p.add_argument("--lang", choices=["en", "zh"], help="language of the verdicts (default: from the locale)")
    p.add_argument("--format", choices=FORMATS, help="output format (default: table)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (format from its extension)")


def run(args) -> int:
    if len(args.paths) < 2:
        raise ProfileError(
            "compare needs at least two PATHs (baseline first)", fix="profinsight compare BASE CHANGED [CHANGED2 ...]"
        )
    if args.name and len(args.name) != len(args.paths):
        raise ProfileError(f"{len(args.name)} --name for {len(args.paths)} PATHs")
    from ..api import compare

    mode = getattr(args, "mode", "device") or "device"
    if mode == "framework" and len(args.paths) != 2:
        raise ProfileError(
            "--mode framework compares exactly two PATHs", fix="profinsight compare GPU_RUN NPU_RUN --mode framework"
        )
    cmp = compare(
        *args.paths,
        names=args.name or _names(args.paths),
        prefer=args.prefer,
        mode=mode,
        aliases=getattr(args, "aliases", None),
        phases=tuple(getattr(args, "phase", None) or ("forward",)),
        scheduler=getattr(args, "scheduler", None),
        workers=getattr(args, "workers", None),
        **({"lang": args.lang} if mode == "device" and getattr(args, "lang", None) else {}),
    )
    fmt = output_format(args, FORMATS)
    if mode == "framework":
        _framework(cmp, args, fmt)
        return 0
    if fmt == "json":
        emit(dumps(_with_diagnostics(cmp)), args)
    elif fmt == "html":
        from ..render.compare import comparison_page

        emit(comparison_page(cmp), args)
    else:
        _table(cmp, args)
    return 0


def _names(paths) -> list[str]:
    """Folder names; parent/name where names repeat (rank0_ascend_pt of several runs)."""
    from pathlib import Path

    ps = [Path(p).resolve() for p in paths]
    names = [p.name or str(p) for p in ps]
    if len(set(names)) < len(names):
        names = [f"{p.parent.name}/{p.name}" for p in ps]
    return names


def _table(cmp, args) -> None:
    from rich.markup import escape
    from rich.table import Table

    from ..i18n import t as say

    lang = getattr(cmp, "lang", None)
    console = make_console(args, 140)
    t = Table(title=say("compare.table.steps", lang), box=None, header_style="bold")
    cols = [
        "run",
        "step_us",
        "computing_us",
        "comm_not_overlapped_us",
        "free_us",
        "preparing_us",
        "busy_ratio",
        "delta_vs_base_us",
        "speedup_vs_base_x",
    ]
    steps = cmp.steps()
    if steps["step_us"].isna().all():  # no run records a device step: say the host step, no NaN rows
        _host_steps(cmp, console)
    else:
        for c in cols:
            t.add_column(c, justify="left" if c == "run" else "right")
        for _, r in steps.iterrows():
            t.add_row(str(r["run"]), *(_num(r[c], ",.3f") for c in cols[1:]))
        console.print(t)
    for pair, g in cmp.waterfall().groupby("pair", sort=False):
        if g["from_step_us"].isna().all() and g["to_step_us"].isna().all():
            continue  # nothing to split without device steps (the verdict below says so)
        w = Table(title=say("compare.table.waterfall", lang, pair=pair), box=None, header_style="bold")
        for c in ("component", "from_us", "to_us", "delta_us"):
            w.add_column(c, justify="left" if c == "component" else "right")
        for _, r in g.iterrows():
            name = r["label"] if r["in_step"] else f"[dim]{r['label']}[/dim]"
            w.add_row(name, _num(r["from_us"], ",.1f"), _num(r["to_us"], ",.1f"), _num(r["delta_us"], "+,.1f"))
        w.add_row(
            f"[bold]{say('compare.table.step', lang)}[/bold]",
            _num(g["from_step_us"].iloc[0], ",.1f"),
            _num(g["to_step_us"].iloc[0], ",.1f"),
            _num(g["to_step_us"].iloc[0] - g["from_step_us"].iloc[0], "+,.1f"),
        )
        console.print(w)
    by = getattr(args, "by", "type")
    o = cmp.ops(by=by)
    for pair, g in o.groupby("pair", sort=False):
        g = g[g["status"] != "unchanged"].head(10)
        if g.empty:
            continue
        ot = Table(title=say("compare.table.ops", lang, by=by, pair=pair), box=None, header_style="bold")
        for c in (by, "status", "from_count", "to_count", "from_total_us", "to_total_us", "delta_total_us"):
            ot.add_column(c, justify="left" if c in (by, "status") else "right", overflow="fold")
        for _, r in g.iterrows():
            ot.add_row(
                str(r[by])[:60],
                r["status"],
                f"{r['from_count']:,.1f}",
                f"{r['to_count']:,.1f}",
                f"{r['from_total_us']:,.1f}",
                f"{r['to_total_us']:,.1f}",
                f"{r['delta_total_us']:+,.1f}",
            )
        console.print(ot)
    for v in cmp.verdicts():
        console.print(v)
    for name, prof, path in zip(cmp.names, cmp.profiles, args.paths):  # each run's own warnings
        line = warnings_line(getattr(prof, "diagnostics", []), [path], lang)
        if line:
            console.print(f"[yellow]{escape(f'{name}: {line}')}[/]", soft_wrap=True)
    if args.output:
        emit(console.export_text(), args)


def _num(v, spec: str) -> str:
    """A figure, or "-" where the run has none (never "nan")."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return "-"
    return "-" if f != f else format(f, spec)


def _host_steps(cmp, console) -> None:
    """Runs without a device step (CPU-only captures): their host step (ProfilerStep) per run,
    the figure the verdict compares."""
    from rich.table import Table

    from ..i18n import t as say

    title = say("compare.table.host_steps", getattr(cmp, "lang", None))
    t = Table(title=title, box=None, header_style="bold")
    for c in ("run", "host_step_us", "steps", "delta_vs_base_us"):
        t.add_column(c, justify="left" if c == "run" else "right")
    means = []
    for name, st in zip(cmp.names, cmp.stats):
        sm = st["samples"]
        vals = sm["samples_us"] if sm["basis"] == "host" else []
        means.append(sum(vals) / len(vals) if vals else float("nan"))
        t.add_row(str(name), _num(means[-1], ",.1f"), str(len(vals)), _num(means[-1] - means[0], "+,.1f"))
    console.print(t)


def _with_diagnostics(cmp) -> dict:
    """The comparison as data, with each run's load diagnostics (they always travel with the figures)."""
    out = dict(cmp.to_dict())
    names = list(getattr(cmp, "names", []) or [])
    profiles = list(getattr(cmp, "profiles", []) or [])
    out["diagnostics"] = {
        (names[i] if i < len(names) else str(i)): [d.to_dict() for d in p.diagnostics] for i, p in enumerate(profiles)
    }
    return out


def _framework(cmp, args, fmt) -> None:
    if fmt == "json":
        emit(dumps(_with_diagnostics(cmp)), args)
        return
    if fmt == "html":
        from ..render.compare import framework_page

        emit(framework_page(cmp), args)
        return
    from rich.table import Table

    console = make_console(args, 140)
    a, b = cmp.names
    t = Table(title=f"Framework ops, {a} vs {b} (device time)", box=None, header_style="bold")
    cols = ["op", "status", "from_count", "to_count", "from_avg_us", "to_avg_us", "ratio_x", "lost_us"]
    for c in cols:
        t.add_column(c, justify="left" if c in ("op", "status") else "right", overflow="fold")
    for _, r in cmp.ops().head(25).iterrows():
        t.add_row(
            str(r["op"])[:50], str(r["status"]), *("" if r[c] != r[c] else f"{float(r[c]):,.2f}" for c in cols[2:])
        )
    console.print(t)
    console.print(cmp.verdict())
    if args.output:
        emit(console.export_text(), args)
