"""Check a profile and explain every problem: missing or empty files and the views they
disable, collection switches that were off, truncated files, mixed runs, version mismatches.
Exit 0 when there are no errors, 1 when there are, 2 when the input cannot be read at all."""

from __future__ import annotations

from .. import diagnostics as dg
from ..errors import MixedRuns
from .common import add_output, add_paths, dumps, emit, load_profile, make_console, output_format

HELP = "check a profile and explain every problem (exit 1 on errors)"
FORMATS = ["table", "json"]
_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def add_arguments(p) -> None:
    add_paths(p)
    add_output(p, FORMATS)
    p.add_argument("--env", action="store_true", help="check the installation instead of a profile (no PATH)")
    p.add_argument("--lang", choices=["en", "zh"], help="language of the messages (default: from the locale)")


def run(args) -> int:
    if args.env:
        diags = environment_checks()
        _print(diags, args)
        return 1 if dg.worst(diags) == "error" else 0
    try:
        prof = load_profile(args)
    except MixedRuns as exc:
        diags = [dg.error("mixed-runs", str(exc).splitlines()[0], file=exc.file, fix=exc.fix)]
        diags += [dg.info("run-found", r.label, file=str(r.root)) for r in exc.runs]
        _print(diags, args)
        return 1
    diags = prof.diagnostics
    _print(diags, args)
    return 1 if dg.worst(diags) == "error" else 0


def _localized(diags, lang: str | None) -> list[dg.Diagnostic]:
    """The diagnostics with message and fix in ``lang`` where the catalogue knows their shape."""
    from dataclasses import replace

    from ..i18n import resolve_lang
    from ..i18n.diagnostics import localize

    lang = resolve_lang(lang)
    out = []
    for d in diags:
        message, fix = localize(d.code, d.message, d.fix, lang)
        out.append(replace(d, message=message, fix=fix))
    return out


def _print(diags, args) -> None:
    diags = _localized(diags, getattr(args, "lang", None))
    if output_format(args, FORMATS) == "json":
        emit(dumps([d.to_dict() for d in diags]), args)
        return
    from rich.markup import escape

    console = make_console(args, 110)
    if not diags:
        console.print("[green]no problems found[/green]")
    order = {"error": 0, "warning": 1, "info": 2}
    for d in sorted(diags, key=lambda d: order[d.severity]):
        rank = f" rank {d.rank}" if d.rank is not None else ""
        console.print(f"[{_STYLE[d.severity]}]{d.severity.upper():7}[/] {escape(d.code)}{rank}: {escape(d.message)}")
        if d.file:
            console.print(f"         file: {escape(d.file)}")
        if d.fix:
            console.print(f"         fix:  {escape(d.fix)}")
    counts = {s: sum(1 for d in diags if d.severity == s) for s in dg.SEVERITIES}
    console.print(f"{counts['error']} errors, {counts['warning']} warnings, {counts['info']} notes")
    if args.output:
        emit(console.export_text(), args)


def environment_checks() -> list[dg.Diagnostic]:
    """Is the installation sound: Python, the engine's libraries, a writable cache, the JupyterLab
    extension, torch / torch_npu / CANN and the environment variables that affect profiling."""
    import importlib
    import os
    import sys
    import tempfile

    from .._version import __version__
    from ..store.cache import cache_root

    out = [dg.info("version", f"profinsight {__version__} on Python {sys.version.split()[0]}")]
    for mod in ("pyarrow", "duckdb", "pandas", "orjson", "rich", "platformdirs"):
        try:
            m = importlib.import_module(mod)
            out.append(dg.info("dependency", f"{mod} {_dist_version(mod, m)}"))
        except ImportError as exc:
            out.append(
                dg.error(
                    "dependency-missing",
                    f"{mod} cannot be imported: {exc}",
                    fix="pip install --force-reinstall profinsight",
                )
            )
    root = cache_root()
    if root is None:
        out.append(
            dg.info("cache-off", "the table cache is switched off (PROFINSIGHT_CACHE=off): every load imports again")
        )
    else:
        try:
            root.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=root):
                pass
            out.append(dg.info("cache", f"cache folder {root} is writable", file=root))
        except OSError as exc:
            out.append(
                dg.warning(
                    "cache-not-writable",
                    f"cannot write to the cache folder {root}: {exc.strerror}",
                    file=root,
                    fix="set PROFINSIGHT_CACHE to a writable folder; profiles still load, but every open imports again",
                )
            )
    if os.environ.get("PROFINSIGHT_FIXTURES"):
        out.append(dg.info("fixtures", f"PROFINSIGHT_FIXTURES={os.environ['PROFINSIGHT_FIXTURES']}"))
    from .env_checks import environment_extra_checks  # JupyterLab extension, torch / torch_npu / CANN, env vars

    out += environment_extra_checks()
    return out


def _dist_version(name: str, module) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return getattr(module, "__version__", "?")
