"""``benchmarks/proctree.py``: the process tree and its resident memory, as psutil finds them."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import proctree  # noqa: E402

#: a child that starts a grandchild holding 64 MB, says both pids, then waits to be killed
_TREE = """
import subprocess, sys, time
kid = subprocess.Popen([sys.executable, "-c", "import sys, time; b = bytearray(64 << 20); print('ok', flush=True); time.sleep(60)"],
                       stdout=subprocess.PIPE, text=True)
assert kid.stdout.readline().strip() == "ok"
print(kid.pid, flush=True)
time.sleep(60)
"""


@pytest.mark.skipif(proctree.children(os.getpid()) is None, reason="/proc lists no children here")
def test_the_tree_and_its_memory_are_psutils():
    child = subprocess.Popen([sys.executable, "-c", _TREE], stdout=subprocess.PIPE, text=True)
    try:
        grandchild = int(child.stdout.readline())
        assert proctree.children(child.pid) == [grandchild]
        ps = psutil.Process(child.pid)
        assert [p.pid for p in ps.children(recursive=True)] == [grandchild]
        ours = proctree.tree_rss(child.pid)
        theirs = sum(p.memory_info().rss for p in [ps, *ps.children(recursive=True)])
        assert ours >= 64 << 20  # the grandchild's bytearray is counted
        assert abs(ours - theirs) < 2 << 20  # read a moment apart: the same pages
        assert proctree.rss(grandchild) >= 64 << 20
        # this process's tree holds the child and the grandchild
        assert {child.pid, grandchild} <= set(proctree.children(os.getpid()))
    finally:
        for p in psutil.Process(child.pid).children(recursive=True):
            p.kill()
        child.kill()
        child.wait()


def test_an_ended_process_has_nothing():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    time.sleep(0.05)
    assert proctree.rss(p.pid) == 0
    assert proctree.tree_rss(p.pid) == 0


def test_without_children_files_psutil_answers(monkeypatch):
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; b = bytearray(32 << 20); print('ok', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "ok"
        monkeypatch.setattr(proctree, "children", lambda pid: None)
        ps = psutil.Process(child.pid)
        got = proctree.tree_rss(child.pid, ps)
        assert got >= 32 << 20
        assert abs(got - ps.memory_info().rss) < 2 << 20  # a process without children: its own RSS
        assert proctree.tree_rss(child.pid) == pytest.approx(got, abs=2 << 20)  # psutil made on demand
    finally:
        child.kill()
        child.wait()
