"""No temporary folder outlives its import: ``profinsight-duck-*``, ``-out-*``, ``-trace-*`` (and the
DB copy, Kineto and single-file folders) are removed on success, on failure and on interruption,
and those of a run that was killed are removed by the next run's first import."""

from __future__ import annotations

import gzip
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import profinsight
from profinsight.importers import _common, ascend_text, kineto, load_rank

TEXT = ("ascend_pt", "text_level1", "rank0_ascend_pt")
KINETO = ("kineto", "gpu_2rank_rank0.json.gz")
MSPROF = ("msprof", "prof_timeline_2023")
MSPROF_DB = ("msprof", "msprof_db", "msprof_0.db")


@pytest.fixture
def tmpdir_root(tmp_path, monkeypatch) -> Path:
    """A private system temporary directory for the test (what ``$TMPDIR`` sets)."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    monkeypatch.setattr(_common, "_swept", set())
    return root


def left(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith("profinsight-"))


def with_wal(fixtures: Path, tmp_path: Path) -> Path:
    """The msprof DB with a committed change still in its -wal, as a writer leaves the pair (read
    from a temporary copy of DB and WAL)."""
    work, user = tmp_path / "work", tmp_path / "user"
    work.mkdir(), user.mkdir()
    shutil.copyfile(fixtures.joinpath(*MSPROF_DB), work / "msprof_0.db")
    con = sqlite3.connect(work / "msprof_0.db")
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute("UPDATE TASK SET endNs = endNs + 1 WHERE rowid = 1")
    con.commit()
    for name in ("msprof_0.db", "msprof_0.db-wal"):
        shutil.copyfile(work / name, user / name)
    con.close()
    assert (user / "msprof_0.db-wal").stat().st_size > 0
    return user / "msprof_0.db"


@pytest.mark.slow
def test_successful_imports_leave_nothing(fixtures, tmp_path, tmpdir_root):
    paths = [
        fixtures.joinpath(*TEXT),
        fixtures.joinpath(*KINETO),
        fixtures.joinpath(*MSPROF),
        with_wal(fixtures, tmp_path),
    ]
    for path in paths:
        p = profinsight.load(path)
        assert p.ranks, path
        assert left(tmpdir_root) == [], path


def test_a_failed_import_leaves_nothing(fixtures, tmp_path, tmpdir_root, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("an importer bug")

    monkeypatch.setattr(ascend_text._kernels, "load_kernels", broken)
    with pytest.raises(RuntimeError):
        load_rank(ascend_text.sniff(fixtures.joinpath(*TEXT)))
    assert left(tmpdir_root) == []
    # through the public surface the failure is a diagnostic, and still nothing is left
    p = profinsight.load(fixtures.joinpath(*TEXT))
    assert [d.code for d in p.diagnostics if d.severity == "error"] == ["import-failed"]
    assert left(tmpdir_root) == []


def test_an_interrupted_import_leaves_nothing(fixtures, tmpdir_root, monkeypatch):

    def interrupted(*args, **kwargs):
        assert any(n.startswith("profinsight-kineto-") for n in left(tmpdir_root))  # made, in use
        raise KeyboardInterrupt

    monkeypatch.setattr(kineto, "load_rest", interrupted)
    with pytest.raises(KeyboardInterrupt):
        load_rank(kineto.sniff(fixtures.joinpath(*KINETO)))
    assert left(tmpdir_root) == []


def test_kineto_connection_opened_beside_a_failed_read_is_closed(fixtures, tmp_path, tmpdir_root, monkeypatch):
    """The Kineto import opens its DuckDB connection on a thread while the event array is found:
    when finding it fails (an unreadable file) or is interrupted, that connection is closed and
    its spill folder removed; when opening fails as well, the file's own error is what is said."""
    import duckdb

    from profinsight.importers import chrome_trace

    opened = []
    real = kineto._open

    def tracked(*args, **kwargs):
        con = real(*args, **kwargs)
        opened.append(con)
        return con

    monkeypatch.setattr(kineto, "_open", tracked)
    raw = gzip.open(fixtures / "kineto" / "cpu_only.json.gz").read()
    cut = tmp_path / "early.json"
    cut.write_bytes(raw[:4000])  # before "traceEvents": nothing readable
    rd = load_rank(kineto.sniff(cut))
    assert [d.code for d in rd.diagnostics] == ["trace-invalid"]
    assert len(opened) == 1 and left(tmpdir_root) == []
    with pytest.raises(duckdb.ConnectionException):
        opened[0].execute("SELECT 1")  # closed

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(chrome_trace, "extract", stopped)
    with pytest.raises(KeyboardInterrupt):
        load_rank(kineto.sniff(fixtures.joinpath(*KINETO)))
    assert len(opened) == 2 and left(tmpdir_root) == []

    def cannot_open(*args, **kwargs):
        raise RuntimeError("no DuckDB today")

    monkeypatch.undo()  # extract as it is again (this also undoes the private temp dir: set it back)
    monkeypatch.setattr(kineto, "_open", cannot_open)
    monkeypatch.setattr(tempfile, "tempdir", str(tmpdir_root))
    monkeypatch.setattr(_common, "_swept", set())
    rd = load_rank(kineto.sniff(cut))
    assert [d.code for d in rd.diagnostics] == ["trace-invalid"]
    with pytest.raises(RuntimeError, match="no DuckDB today"):
        load_rank(kineto.sniff(fixtures.joinpath(*KINETO)))
    assert left(tmpdir_root) == []


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_the_folders_of_a_killed_run_are_swept_by_the_next_import(fixtures, tmpdir_root):
    env = {**os.environ, "TMPDIR": str(tmpdir_root), "PYTHONPATH": os.pathsep.join(sys.path)}
    code = (
        "import sys, time\n"
        "from profinsight.importers import _common\n"
        "con = _common.duck(); print(_common.temp_dir('out'), flush=True); time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
    try:
        made = proc.stdout.readline().strip()
        assert Path(made).is_dir() and Path(made).parent == tmpdir_root
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    stale = left(tmpdir_root)
    assert sorted(n.split("-")[1] for n in stale) == ["duck", "out"]
    assert all(n.split("-")[2] == str(proc.pid) for n in stale)

    dead = _dead_pid()
    (tmpdir_root / f"profinsight-trace-{dead}-abcd1234").mkdir()
    old = tmpdir_root / "profinsight-duck-oldnaming"  # named before folders carried their pid
    old.mkdir()
    long_ago = time.time() - 2 * _common.LEGACY_STALE_S
    os.utime(old, (long_ago, long_ago))
    (tmpdir_root / "profinsight-duck-recentname").mkdir()  # may belong to a running older version
    live = tmpdir_root / f"profinsight-out-{os.getppid()}-keepme12"  # a live process's folder
    live.mkdir()
    (tmpdir_root / "profinsight-experiments").mkdir()  # not a temporary folder at all

    load_rank(kineto.sniff(fixtures.joinpath(*KINETO)))
    assert left(tmpdir_root) == sorted([live.name, "profinsight-duck-recentname", "profinsight-experiments"])
