"""The command's start-up stays light: ``--help`` and a subcommand's ``--help`` import none of the
engine's heavy libraries (each of pandas, pyarrow, duckdb costs 100-400 ms; rich ~80 ms), so they
answer at Python's start-up speed.  Checked by the modules a child process ends up holding, not
by a timer: a timer would pass or fail with the machine's load."""

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


# `view --help` is left out on purpose: it lists every registered analysis with its parameters,
# which needs the analyses (and so pandas) imported
@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["analyze", "--help"], ["doctor", "--help"], []])
def test_help_imports_nothing_heavy(argv):
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(argv=argv)], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    loaded = set(json.loads(out.strip().splitlines()[-1]))
    assert not loaded & set(HEAVY), f"profinsight {' '.join(argv)} imported {sorted(loaded & set(HEAVY))}"
