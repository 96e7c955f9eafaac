"""The command's start-up stays light: ``--help``, a subcommand's ``--help``, ``view list`` /
``view --list`` / ``view --help`` (the analyses with their parameters) and ``doctor --env`` import
none of the engine's heavy libraries (each of pandas, pyarrow, duckdb costs 100-400 ms; rich
~80 ms), so they answer at Python's start-up speed.  Checked by the modules a child process ends
up holding, not by a timer: a timer would pass or fail with the machine's load."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("pandas", "pyarrow", "duckdb", "numpy", "rich", "tornado", "asyncio")

_PROBE = """
import contextlib, io, json, sys
from profinsight.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        main({argv!r})
    except SystemExit:
        pass
print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))
"""


def _loaded(argv: list[str]) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(argv=argv)], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return set(json.loads(out.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["--version"],
        ["analyze", "--help"],
        ["doctor", "--help"],
        [],
        ["view", "--help"],
        ["view", "list"],
        ["view", "--list"],
    ],
)
def test_help_imports_nothing_heavy(argv):
    loaded = _loaded(argv)
    assert not loaded & set(HEAVY), f"profinsight {' '.join(argv)} imported {sorted(loaded & set(HEAVY))}"


def test_doctor_env_checks_the_engine_without_importing_it():
    """``doctor --env`` reads the libraries' installed metadata (rich prints its table);
    ``--deep`` imports each one, which is what proves a binary wheel loads."""
    loaded = _loaded(["doctor", "--env"])
    assert not loaded & {"pandas", "pyarrow", "duckdb", "numpy", "tornado", "jupyter_server"}, sorted(loaded)
    assert {"pandas", "pyarrow", "duckdb"} <= _loaded(["doctor", "--env", "--deep"])


def test_view_lists_the_registry_through_its_index():
    """``view list`` reads analyses.json, a copy of the registry: it must equal the live registry
    (regenerate with ``python -m profinsight.cli.analyses_index`` after adding or changing an
    analysis)."""
    from profinsight.cli import analyses_index

    live = analyses_index.from_registry()
    assert analyses_index.entries() == json.loads(analyses_index.render(live)), (
        "analyses.json is stale: run python -m profinsight.cli.analyses_index"
    )
    assert analyses_index.INDEX.read_text(encoding="utf-8") == analyses_index.render(live)
    assert {"op_summary", "idle_gaps", "advise", "step_breakdown"} <= set(live)


def test_installed_versions_read_as_importlib_metadata_reads_them():
    from importlib.metadata import version

    from profinsight.cli.doctor import _requirements, _satisfies
    from profinsight.cli.env_checks import _version

    for dist in ("pyarrow", "duckdb", "pandas", "orjson", "rich", "platformdirs", "tornado", "profinsight"):
        assert _version(dist) == version(dist)
    assert _version("no-such-distribution-here") is None
    assert _requirements()["pyarrow"] == ">=14" and _requirements()["duckdb"] == ">=2.0"
    assert _satisfies("26.0.1", ">=14") and _satisfies("2.3.0", ">=2.3,<3") and _satisfies("2.13.0+cpu", "==2.13.0")
    assert not _satisfies("13.9", ">=14") and not _satisfies("3.0", ">=2.3,<3")


_BLAS_PROBE = """
import contextlib, io, json, os, sys
sys.argv = ["profinsight"] + {argv!r}
from profinsight.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        main({main_argv})
    except SystemExit:
        pass
import numpy
print(json.dumps([os.environ.get("OPENBLAS_NUM_THREADS"), len(os.listdir("/proc/self/task"))]))
"""


def _blas(main_argv: str, env_value: str | None = None) -> tuple[str | None, int]:
    import os

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if env_value is not None:
        env["OPENBLAS_NUM_THREADS"] = env_value
    out = subprocess.run(
        [sys.executable, "-c", _BLAS_PROBE.format(argv=["--version"], main_argv=main_argv)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=env,
    ).stdout
    value, threads = json.loads(out.strip().splitlines()[-1])
    return value, threads


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="threads counted in /proc")
def test_the_command_runs_numpy_without_a_spinning_blas_pool():
    """The command's own process (``main()`` with no argv: the console script, ``python -m``)
    asks OpenBLAS for one thread before NumPy loads: its pool spins on a core the import's
    DuckDB threads need.  So NumPy then runs on the main thread alone."""
    assert _blas("") == ("1", 1)


def test_a_users_blas_setting_and_a_notebooks_process_are_left_alone():
    """A number the user set wins; ``main([...])`` called from a program (a notebook, a test)
    changes nothing in that program's environment."""
    assert _blas("", "3")[0] == "3"
    assert _blas("['--version']")[0] is None


_SETTINGS_PROBE = """
import contextlib, gc, io, json, sys
import profinsight.cli as cli
for name in ("serve", "mcp", "info"):  # the command's own work is not what is checked here
    cli.COMMANDS[name].run = lambda args: 0
cli.end_process = lambda code: None  # the process goes on to say what it holds
sys.argv = ["profinsight"] + {argv!r}
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    cli.main({main_argv})
print(json.dumps([gc.get_threshold()[0], sys.getswitchinterval()]))
"""


def _settings(argv: list[str], main_argv: str = "") -> tuple[int, float]:
    """(the young generation's collection threshold, the switch interval) of a process that ran
    the command."""
    out = subprocess.run(
        [sys.executable, "-c", _SETTINGS_PROBE.format(argv=argv, main_argv=main_argv)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    threshold, interval = json.loads(out.strip().splitlines()[-1])
    return threshold, interval


def test_a_one_shot_command_collects_cycles_rarely_and_hands_the_lock_over_quickly():
    """A one-shot command's own process collects the young generation every 200,000 objects
    (its 230-250 default collections cost a cold ``analyze`` 0.05-0.1 s and freed nothing that
    matters) and hands the interpreter lock over every 1 ms, not 5 (its threads' native work
    waited for it); a server keeps Python's defaults, and so does a program that calls
    ``main([...])``."""
    import gc

    from profinsight.cli import GC_YOUNG, SWITCH_INTERVAL_S

    default = (gc.get_threshold()[0], sys.getswitchinterval())
    assert GC_YOUNG == 200_000 != default[0]
    assert SWITCH_INTERVAL_S == 0.001 != default[1]
    assert _settings(["info", "."]) == (GC_YOUNG, SWITCH_INTERVAL_S)
    assert _settings(["serve", "."]) == default
    assert _settings(["mcp"]) == default
    assert _settings(["info", "."], main_argv="['info', '.']") == default


_MARK_PROBE = """
import json, sys
from profinsight import _cores, cli
seen = []
_mark = _cores.mark
_cores.mark = lambda *a: (seen.append(sorted(m for m in ("pandas", "pyarrow", "duckdb") if m in sys.modules)), _mark(*a))
cli.COMMANDS["info"].run = lambda args: print(json.dumps([seen, _cores.MARK[0] is not None])) or 0
cli.end_process = lambda code: None
sys.argv = ["profinsight", "info", "."]
cli.main({main_argv})
"""


@pytest.mark.parametrize(("main_argv", "marked"), [("", [[]]), ("['info', '.']", [])])
def test_a_one_shot_command_begins_the_busy_cores_window_before_its_heavy_imports(main_argv, marked):
    """The window over which an import reads how busy the cores are begins as the command's own
    process starts, before pandas, pyarrow or DuckDB are imported: those imports fill it, so an
    import on a machine whose load average reads 1 or more never sleeps for it (it slept 32-63 ms
    when the window began where the profile starts to load).  A program that calls ``main([...])``
    marks it only where it loads a profile."""
    out = subprocess.run(
        [sys.executable, "-c", _MARK_PROBE.format(main_argv=main_argv)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert json.loads(out.strip().splitlines()[-1]) == [marked, bool(marked)]


# A program that runs the command as its console script does (``main()`` with no argv: the
# command's own process), with an atexit hook and an object in ``sys.modules`` whose finalizer
# only the interpreter's teardown calls (it clears the modules).
_ENDING = """
import atexit, os, sys, threading, time
from profinsight.cli import main

class Teardown:
    def __del__(self, write=os.write):  # os.write: sys.stdout may be gone by then
        write(1, b"torn down\\n")

sys.modules["profinsight_test_teardown"] = Teardown()  # dropped when the interpreter clears its modules
atexit.register(lambda: print("atexit hook ran", flush=True))
if {thread!r}:
    threading.Thread(target=lambda: (time.sleep(0.3), print("thread finished", flush=True))).start()
sys.argv = ["profinsight", *{argv!r}]
sys.exit(main())
"""


def _end(argv: list[str], thread: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", _ENDING.format(argv=argv, thread=thread)], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(("argv", "code"), [(["view", "list"], 0), (["analyze", "/no/such/profile"], 2)])
def test_a_command_ends_its_process_once_its_output_and_hooks_are_done(argv, code):
    """The command's process ends without the interpreter's teardown (20-25 ms of a cold
    ``analyze``), after its output is flushed and its atexit hooks ran, with its exit status."""
    done = _end(argv)
    assert done.returncode == code, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "atexit hook ran"
    assert "torn down" not in lines  # no teardown: the process ended at once
    if code == 0:
        assert any(line.startswith("op_summary") for line in lines)  # the output came before the end
    else:
        assert "no such file or folder" in done.stderr


def test_a_command_with_another_thread_running_ends_as_python_does():
    """Where another thread still runs, Python ends the process as usual: the thread finishes,
    the hooks run, the interpreter tears down."""
    done = _end(["view", "list"], thread=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert {"thread finished", "atexit hook ran", "torn down"} <= set(lines)
    assert lines.index("thread finished") < lines.index("atexit hook ran")


def test_a_program_that_calls_main_with_arguments_keeps_its_process():
    """``main([...])`` (a notebook, a test) returns its status and the program goes on."""
    prog = "from profinsight.cli import main; import contextlib, io\n"
    prog += "with contextlib.redirect_stdout(io.StringIO()):\n    code = main(['view', 'list'])\n"
    prog += "print('still here', code)"
    done = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "still here 0", done.stderr
