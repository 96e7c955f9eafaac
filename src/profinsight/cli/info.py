"""Show what was loaded: format, ranks, steps, devices, rows per table and the doctor's
findings in short."""

from __future__ import annotations

from .common import add_output, add_paths, dumps, emit, load_profile, make_console, output_format

HELP = "what was loaded (ranks, steps, tables, diagnostics)"
FORMATS = ["table", "json"]


def add_arguments(p) -> None:
    add_paths(p)
    add_output(p, FORMATS)


def run(args) -> int:
    prof = load_profile(args)
    s = prof.summary()
    if output_format(args, FORMATS) == "json":
        s["diagnostics_list"] = [d.to_dict() for d in prof.diagnostics]
        emit(dumps(s), args)
        return 0
    console = make_console(args, 100)
    console.print(f"[bold]{s['path']}[/bold]")
    lvl = f" {s['level']}" if s["level"] else ""
    console.print(
        f"format [bold]{s['format']}{lvl}[/bold]   ranks [bold]{', '.join(map(str, s['ranks']))}[/bold]"
        f"   steps [bold]{', '.join(map(str, s['steps'])) or 'none'}[/bold]"
        + (f"   device [bold]{', '.join(s['device_names'])}[/bold]" if s["device_names"] else "")
    )
    from rich.table import Table

    t = Table("table", "rows", title=None, box=None)
    for name, n in s["tables"].items():
        t.add_row(name, f"{n:,}" if n else "[dim]0[/dim]")
    console.print(t)
    d = s["diagnostics"]
    console.print(
        f"diagnostics: {d['error']} errors, {d['warning']} warnings, {d['info']} notes"
        " (details: profinsight doctor PATH)"
    )
    if args.output:
        emit(console.export_text(), args)
    return 0
