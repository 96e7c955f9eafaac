"""The ``profinsight`` command: ``profinsight <command> PATH... [options]``.

Each subcommand is one small module with ``add_arguments(parser)`` and ``run(args) -> int``
(memray's habit).  Exit codes: 0 success; 1 the command ran and found errors; 2 bad usage or
unreadable input.  No traceback reaches a user unless ``--debug`` is given.
"""

from __future__ import annotations

import argparse
import os
import sys

from .._version import __version__
from ..errors import ProfileError
from . import analyze, cache, check, compare, doctor, experiments, export, info, mcp, ranks, record, report, serve, view

COMMANDS = {
    "info": info,
    "doctor": doctor,
    "view": view,
    "export": export,
    "experiments": experiments,
    "check": check,
    "compare": compare,
    "ranks": ranks,
    "analyze": analyze,
    "report": report,
    "serve": serve,
    "record": record,
    "mcp": mcp,
    "cache": cache,
}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # exit 2 with a short message, as argparse does, plus a hint
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n(try '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="profinsight", description="Find why a PyTorch model runs slow on Ascend NPUs and GPUs.")
    parser.add_argument("--version", action="version", version=f"profinsight {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, mod in COMMANDS.items():
        p = sub.add_parser(name, help=mod.HELP, description=mod.__doc__)
        p.add_argument("--debug", action="store_true", help="show a traceback on failure")
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def _extra_params(extra: list[str], parser) -> list[str]:
    """``--by type --top 20`` after ``view NAME PATH`` -> ["by=type", "top=20"]."""
    out, i = [], 0
    while i < len(extra):
        tok = extra[i]
        if not tok.startswith("--"):
            parser.error(f"unexpected argument {tok!r}")
        name = tok[2:]
        if "=" in name:
            out.append(name)
            i += 1
        elif i + 1 < len(extra) and not extra[i + 1].startswith("--"):
            out.append(f"{name}={extra[i + 1]}")
            i += 2
        else:
            out.append(f"{name}=true")
            i += 1
    return out


def _error_text(exc: ProfileError, lang: str | None) -> str:
    """The error as the user reads it: message, file and fix, in ``lang`` where the catalogue has it."""
    from ..i18n import MESSAGES, resolve_lang
    from ..i18n.diagnostics import localize_error

    try:
        lang = resolve_lang(lang)
    except ProfileError:
        lang = "en"
    if lang == "en":
        return str(exc)
    message, fix = localize_error(exc.args[0] if exc.args else "", exc.fix, lang)
    if exc.file and exc.file not in message:
        message = f"{message} ({exc.file})"
    return f"{message}\n{MESSAGES[lang]['ui.fix']}: {fix}" if fix else message


def main(argv: list[str] | None = None) -> int:
    """The ``profinsight`` command; ``argv`` None: this program's own arguments (the console
    script and ``python -m profinsight``), after which the process ends."""
    if argv is None:
        quiet_blas()
    code = _main(argv, own_process=argv is None)
    if argv is None:
        # the interpreter's last garbage collection would walk every object of pandas, pyarrow
        # and the analyses (0.07-0.1 s of a cold ``analyze``) only to free memory the process
        # gives back as it ends; finalizers that must run (temporary folders) are atexit hooks
        import gc

        gc.freeze()
        end_process(code)
    return code


def end_process(code: int) -> None:
    """End this command's process now, with exit status ``code``, once its output is written and
    its atexit hooks have run; return (and let Python end it) where that is not safe.

    Why: the interpreter's own ending then tears down every module, the DuckDB connections and
    pyarrow's pools one object at a time, only for the system to free the same memory: 20-25 ms
    of a cold ``analyze`` of the 100 MB profiles after its report was printed.  What must still
    happen happens: the hooks run (temporary folders, a coverage tool's data), the streams are
    flushed.  Python ends the process as usual where another thread still runs (its work is
    joined or cut as Python decides) or where a stream cannot be flushed (a closed pipe: Python
    reports it as it always does)."""
    import atexit
    import threading

    if threading.active_count() > 1 or not 0 <= code <= 255 or not _flushed():
        return
    atexit._run_exitfuncs()
    if _flushed():  # what the hooks printed
        os._exit(code)


def _flushed() -> bool:
    """Whether stdout and stderr took what they held (False: a closed pipe, a closed stream)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return False
    return True


def quiet_blas() -> None:
    """One OpenBLAS thread for this process, unless the user chose a number.

    NumPy starts a pool of OpenBLAS threads when it is imported, and those threads spin on a
    core for a while before they sleep; nothing profinsight computes calls BLAS.  On two cores
    the spin competes with DuckDB's threads: ``import numpy`` alone took 0.22 s CPU against 0.12
    s with one thread, and a cold ``analyze`` of the 100 MB Ascend text profile 0.18 s less CPU
    and 0.09-0.11 s less wall (6 and 5 interleaved pairs).  Only for the command's own process
    (and the import workers it starts): a notebook's NumPy is the user's to configure.
    """
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


#: commands that keep running (a server); the others end once their output is written
LONG_RUNNING = frozenset({"serve", "mcp"})
#: a one-shot command's threshold for collecting the young generation (Python's default: 700)
GC_YOUNG = 200_000


def quiet_gc() -> None:
    """Collect reference cycles every :data:`GC_YOUNG` new container objects instead of every 700.

    Why: a cold ``analyze`` of the 100 MB profiles makes 160-170 k container objects that outlive
    their collection (modules, classes, small pandas frames), so Python's default runs 230-250
    collections, one or two of them full walks of every object of pandas, pyarrow and the
    analyses: 0.05-0.1 s, each holding the interpreter lock that the analysis threads wait for.
    They free almost nothing: the profile's data is Arrow and DuckDB memory, outside the
    collector.  At this threshold such a run collects nothing, and a run that makes far more
    objects still collects.  Only for a one-shot command's own process: a server runs on with
    Python's default, and a notebook's settings are the user's."""
    import gc

    gc.set_threshold(GC_YOUNG, *gc.get_threshold()[1:])


#: a one-shot command's switch interval (s): how long a thread that wants the interpreter lock
#: waits for the thread running Python code to hand it over (Python's default: 0.005)
SWITCH_INTERVAL_S = 0.001


def quick_handoff() -> None:
    """Hand the interpreter lock between threads every :data:`SWITCH_INTERVAL_S` instead of 5 ms.

    Why: a cold ``analyze`` runs several threads whose work is mostly native and lock-free (the
    trace scanner, DuckDB, Arrow, NumPy) between short stretches of Python; a thread back from
    such work waited up to 5 ms for another thread's Python to let the lock go, while its core
    sat idle.  Kineto 100 MB, 10 alternating pairs: 1.68 -> 1.59 s (9 of 10 pairs faster), CPU
    2.38 -> 2.27 s; 0.5 and 0.2 ms gave the same; the Ascend text profile, whose threads wait
    less, the same within noise (8 pairs).  Only for a one-shot command's own process, like
    :func:`quiet_gc`."""
    sys.setswitchinterval(SWITCH_INTERVAL_S)


def _main(argv: list[str] | None, own_process: bool = False) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        if getattr(args, "command", None) != "view":
            parser.parse_args(argv)  # reports the unknown options and exits 2
        args.extra = _extra_params(extra, parser)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    if own_process and args.command not in LONG_RUNNING:
        from .._cores import mark

        mark()  # the window in which an import reads how busy the cores are: the imports fill it
        quiet_gc()
        quick_handoff()
    try:
        return int(args._run(args) or 0)
    except ProfileError as exc:
        if args.debug:
            raise
        print(f"profinsight: {_error_text(exc, getattr(args, 'lang', None))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("profinsight: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - last line of defence: no traceback for users
        if args.debug:
            raise
        print(
            f"profinsight: internal error: {type(exc).__name__}: {exc}\n"
            "Run again with --debug for a traceback and report it.",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
