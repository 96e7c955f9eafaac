"""Options and helpers every subcommand shares: PATH arguments, loading with a progress bar,
output formats."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ProfileError
from ..samples import sample_path

if TYPE_CHECKING:  # rich costs ~80 ms to import: only commands that print pay for it
    from rich.console import Console

OUTPUT_SUFFIXES = {".json": "json", ".csv": "csv", ".html": "html", ".md": "md", ".txt": "table"}


def add_paths(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="profile: a *_ascend_pt folder, a folder of rank folders, or Kineto trace file(s); "
        "several PATHs form one run",
    )
    p.add_argument("--sample", action="store_true", help="use the bundled real sample profile")
    p.add_argument("--prefer", choices=["db", "text"], help="export to read when a folder has both")


def add_output(p: argparse.ArgumentParser, formats: list[str]) -> None:
    p.add_argument("--format", choices=formats, help=f"output format (default: {formats[0]})")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (format from its extension)")


def output_format(args, formats: list[str]) -> str:
    if args.format:
        return args.format
    if args.output:
        fmt = OUTPUT_SUFFIXES.get(Path(args.output).suffix.lower())
        if fmt in formats:
            return fmt
    return formats[0]


def paths(args) -> list[str]:
    if args.sample:
        return [str(sample_path())]
    if not args.paths:
        raise ProfileError(
            "no PATH given",
            fix="pass a profile folder or trace file, or --sample (doctor --env checks the installation)",
        )
    from ..collection.registry import resolve_name  # a registered experiment's name; a real path wins

    return [resolve_name(p) or p for p in args.paths]


def read_ahead(args) -> None:
    """Where the command names one trace file or one torch_npu rank folder, begin reading its trace
    now, on the core its module imports leave idle (:func:`..importers.chrome_trace.scan_ahead`:
    a Kineto trace's or trace_view.json's events, which the import then takes instead of reading
    them).  Called first thing by the commands whose imports come before the load, and by
    :func:`load_profile` for every other (a trace is read ahead once); the load frees whatever its
    import did not take.  Not where the trace was cached (:func:`..store.root.seen`): a warm
    command would read it for nothing."""
    given = getattr(args, "paths", None) or []
    if getattr(args, "sample", False) or len(given) != 1:
        return
    try:
        target, form = Path(given[0]), "kineto"
        if target.is_dir():  # a torch_npu rank folder: its trace_view.json (importers/ascend_text)
            out = target if target.name == "ASCEND_PROFILER_OUTPUT" else target / "ASCEND_PROFILER_OUTPUT"
            if any(out.glob("*.db")):  # the DB export is read first, and it reads no trace_view.json
                return
            target, form = out / "trace_view.json", "ascend"
        elif target.suffix != ".json":
            return
        from ..store.root import seen

        if not target.is_file() or seen(target):  # cached: the import will not read it
            return
        from ..importers import chrome_trace

        chrome_trace.scan_ahead(target, form)
    except Exception:  # noqa: BLE001 - reading ahead only ever saves time: the load reads it all
        return


def load_profile(args):
    """Load the run named on the command line; on a terminal with a progress line that says what
    the import is doing (:mod:`.loading`)."""
    from ..importers._common import mark_busy

    mark_busy()  # unless the command marked it as it started: the imports below fill the window
    read_ahead(args)  # every command that loads: while the imports below load (once per trace)
    from rich.console import Console

    from ..api import load
    from ..importers.chrome_trace import drop_ahead

    ps = paths(args)
    target = ps[0] if len(ps) == 1 else ps
    console = Console(stderr=True)
    try:
        if not console.is_terminal:
            return load(target, prefer=args.prefer)
        from .loading import load_with_progress

        return load_with_progress(target, console, prefer=args.prefer, lang=getattr(args, "lang", None))
    finally:
        drop_ahead()  # what no import took: the profile came from the cache


def emit(text: str, args) -> None:
    """Write ``text`` to -o FILE or stdout."""
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def dumps(data) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, default=str)


def make_console(args, width: int = 110) -> Console:
    """A console that prints to the terminal, or records silently when -o FILE is given."""
    import io

    from rich.console import Console

    return Console(record=True, width=width, highlight=False, file=io.StringIO() if args.output else None)


def warnings_line(diags, targets, lang: str | None = None) -> str:
    """One line, in ``lang``, that counts the warnings about the input by code and names the
    ``doctor`` command (on ``targets``, the paths as given) that lists them with their files and
    fixes; empty when there are none.  A report on damaged input must not read as if the input
    were whole, and only ``--format json`` and ``doctor`` list the warnings themselves."""
    import shlex

    from .. import diagnostics as dg
    from ..i18n import t

    counts = dg.by_code(diags, "warning")
    if not counts:
        return ""
    n = sum(counts.values())
    target = " ".join(shlex.quote(str(p)) for p in targets)
    key = "report.input_warnings.line.one" if n == 1 else "report.input_warnings.line.many"
    return t(key, lang, n=n, codes=dg.codes_text(counts), target=target)
