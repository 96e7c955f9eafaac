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
    p.add_argument(
        "--deep",
        action="store_true",
        help="with --env: also import each of the engine's libraries (slower; catches a broken binary install)",
    )
    p.add_argument("--lang", choices=["en", "zh"], help="language of the messages (default: from the locale)")


def run(args) -> int:
    if args.env:
        diags = environment_checks(deep=args.deep)
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


#: the engine's libraries: the distribution name and the module it is imported as
ENGINE_LIBRARIES = (
    ("pyarrow", "pyarrow"),
    ("duckdb", "duckdb"),
    ("pandas", "pandas"),
    ("orjson", "orjson"),
    ("rich", "rich"),
    ("platformdirs", "platformdirs"),
    ("tornado", "tornado"),
)


def environment_checks(deep: bool = False) -> list[dg.Diagnostic]:
    """Is the installation sound: Python, the engine's libraries, a writable cache, the JupyterLab
    extension, torch / torch_npu / CANN and the environment variables that affect profiling.

    The libraries are checked from their installed metadata (present, findable, the version
    profinsight asks for) without importing them, so the check answers at start-up speed;
    ``deep`` also imports each one (about a second in all), which is what catches a binary
    package that is installed but cannot load (a wheel for another CPU or Python)."""
    import os
    import sys
    import tempfile

    from .._version import __version__
    from ..store.root import cache_root

    out = [dg.info("version", f"profinsight {__version__} on Python {sys.version.split()[0]}")]
    wanted = _requirements()
    for dist, module in ENGINE_LIBRARIES:
        out.append(_library_check(dist, module, wanted.get(dist), deep))
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


_REINSTALL = "pip install --force-reinstall profinsight"


def _library_check(dist: str, module: str, spec: str | None, deep: bool) -> dg.Diagnostic:
    """One engine library: installed (metadata), findable on ``sys.path``, of a version ``spec``
    allows; imported as well when ``deep``."""
    import importlib.util
    import time

    version = _installed_version(dist)
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if version is None or not found:
        return dg.error(
            "dependency-missing",
            f"{module} is not installed" + ("" if version is None else f" where Python looks ({dist} {version})"),
            fix=_REINSTALL,
        )
    if spec and not _satisfies(version, spec):
        return dg.error(
            "dependency-version", f"{dist} {version} is installed; profinsight needs {dist}{spec}", fix=_REINSTALL
        )
    if not deep:
        return dg.info("dependency", f"{dist} {version}")
    import importlib

    t0 = time.perf_counter()
    try:
        importlib.import_module(module)
    except Exception as exc:  # noqa: BLE001 - a library that fails to load is the finding
        return dg.error("dependency-missing", f"{module} cannot be imported: {exc}", fix=_REINSTALL)
    return dg.info("dependency", f"{dist} {version} (imports in {time.perf_counter() - t0:.2f} s)")


def _requirements() -> dict[str, str]:
    """``{distribution: version spec}`` of profinsight's own requirements (no extras)."""
    import re

    from .env_checks import dist_metadata

    out = {}
    for req in (dist_metadata("profinsight") or {}).get("Requires-Dist", []):
        if ";" in req:  # an extra's or a platform's requirement
            continue
        m = re.match(r"\s*([A-Za-z0-9_.-]+)\s*(?:\[[^\]]*\])?\s*(.*)", req)
        if m:
            out[m.group(1).lower().replace("_", "-")] = m.group(2).strip().strip("()")
    return out


def _installed_version(dist: str) -> str | None:
    from .env_checks import _version

    return _version(dist)


def _satisfies(version: str, spec: str) -> bool:
    """Whether ``version`` meets every clause of ``spec`` (``>=14``, ``>=2.3,<3``, ``==0.17.6``):
    release numbers compared as integers; a clause this cannot read is taken as met."""
    import operator
    import re

    ops = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt, "==": operator.eq}

    def release(v: str) -> tuple[int, ...]:
        return tuple(int(x) for x in re.findall(r"\d+", v.split("+")[0])[:3])

    have = release(version)
    for clause in filter(None, (c.strip() for c in spec.split(","))):
        m = re.match(r"(>=|<=|==|>|<)\s*([0-9][0-9.]*)", clause)
        if not m:
            continue
        need = release(m.group(2))
        width = max(len(have), len(need))
        if not ops[m.group(1)](have + (0,) * (width - len(have)), need + (0,) * (width - len(need))):
            return False
    return True
