"""Reading a Kineto trace ahead of a command's imports (``chrome_trace.scan_ahead``): the import
takes the events read ahead instead of reading them, and its tables are exactly those of an import
that read the file itself; whatever does not match (a file changed since, another array start,
another process) is not used, and a cached trace is not read ahead at all."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _support import missing

from profinsight.importers import chrome_trace, load_rank
from profinsight.importers.chrome_trace import _native
from profinsight.importers.kineto import sniff

TRACE = Path("kineto") / "gpu_2rank_rank0.json.gz"  # under the fixtures


@pytest.fixture(autouse=True)
def _small_reads_ahead(monkeypatch):
    if not _native.available():
        missing("the trace scanner is not built (pip install -e . compiles it; it needs a C compiler)")
    monkeypatch.delenv(_native.ENV, raising=False)
    monkeypatch.setattr(_native, "AHEAD_MIN_BYTES", 0)  # the fixtures are small
    yield
    _native.drop_ahead()


@pytest.fixture
def trace(fixtures, tmp_path, monkeypatch) -> Path:
    """The real two-rank GPU trace's rank 0, plain (a read ahead maps the file), its last third
    left to the import."""
    path = tmp_path / "rank0.pt.trace.json"
    path.write_bytes(gzip.decompress((fixtures / TRACE).read_bytes()))
    monkeypatch.setattr(_native, "AHEAD_TAIL", path.stat().st_size // 3)
    return path


def _tables(path: Path) -> dict:
    source = sniff(path)
    data = load_rank(source)
    assert not [d for d in data.diagnostics if d.severity == "error"]
    return data.tables


def _reads(monkeypatch) -> list:
    """The ``early`` argument of every table the scanner makes (None: it read all the bytes)."""
    seen, real = [], _native._read

    def read(*args, **kwargs):
        seen.append(args[7] if len(args) > 7 else kwargs.get("early"))
        return real(*args, **kwargs)

    monkeypatch.setattr(_native, "_read", read)
    return seen


def test_the_import_takes_what_was_read_ahead_and_makes_the_same_tables(trace, monkeypatch):
    expected = _tables(trace)
    reads = _reads(monkeypatch)
    assert chrome_trace.scan_ahead(trace)
    got = _tables(trace)
    assert len(reads) == 1 and reads[0] is not None
    at, part = reads[0]
    size, lo = trace.stat().st_size, trace.read_bytes().index(b"[", trace.read_bytes().index(b'"traceEvents"'))
    # the read ahead stopped at an event start in the last third, and the import read the rest
    assert size - size // 3 <= lo + at < size and trace.read_bytes()[lo + at : lo + at + 1] == b"{"
    # of the trace's 4,855 events, 3,495 were read ahead (the import read the other 1,360)
    assert part.rows == 3495
    assert got.keys() == expected.keys()
    for name, table in expected.items():
        assert got[name].equals(table), name
    assert not _native._AHEAD  # taken


def test_a_trace_read_in_batches_takes_its_first_batch_read_ahead(trace, monkeypatch):
    """A trace larger than one and a half batches (1 GB: 128 MB batches) is read ahead up to where
    the import's first batch ends, and the import reads the rest batch by batch."""
    expected = _tables(trace)
    monkeypatch.setattr(_native, "BATCH_BYTES", trace.stat().st_size // 4)
    reads = _reads(monkeypatch)
    assert chrome_trace.scan_ahead(trace)
    got = _tables(trace)
    assert len(reads) >= 4 and reads[0] is not None and reads[1:] == [None] * (len(reads) - 1)
    for name, table in expected.items():
        assert got[name].equals(table), name


def test_the_cache_says_which_traces_it_holds_before_any_importer_loads(trace):
    import profinsight
    from profinsight.store import prune
    from profinsight.store.root import SEEN, cache_root, seen

    assert not seen(trace)
    profinsight.load(trace).row_counts()
    assert seen(trace)
    st = trace.stat()
    os.utime(trace, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert not seen(trace)  # another file now, as far as the cache knows
    profinsight.load(trace).row_counts()
    assert seen(trace)
    prune.prune(max_bytes=0, keep_recent_s=-1.0)  # the entry goes: the mark says so by itself
    assert not seen(trace) and (cache_root() / SEEN).is_dir()
    profinsight.load(trace).row_counts()
    prune.clear()
    assert not seen(trace) and not (cache_root() / SEEN).exists()


def test_a_torch_npu_trace_view_read_ahead_gives_the_same_tables(fixtures, monkeypatch):
    """trace_view.json (a bare array, with the counter events' args pairs the Ascend import reads
    beside the trace's columns) of a real rank: read ahead from its first byte, the same tables."""
    import profinsight
    from profinsight.schema import TABLES

    monkeypatch.setenv("PROFINSIGHT_CACHE", "off")
    rank = fixtures / "ascend_pt" / "text_level1" / "rank0_ascend_pt"
    trace = rank / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    monkeypatch.setattr(_native, "AHEAD_TAIL", trace.stat().st_size // 3)
    expected = profinsight.load(rank)
    reads = _reads(monkeypatch)
    assert chrome_trace.scan_ahead(trace, "ascend")
    got = profinsight.load(rank)
    assert len(reads) == 1 and reads[0] is not None and reads[0][1].rows > 0
    for name in TABLES:
        assert got.arrow(name).equals(expected.arrow(name)), name
    assert got.row_counts() == expected.row_counts() and got.row_counts()["device_tasks"] > 0
    assert [d.code for d in got.diagnostics] == [d.code for d in expected.diagnostics]


def test_the_ascend_columns_read_ahead_are_the_importers(fixtures):
    from profinsight.importers.ascend_text import _trace

    assert chrome_trace.ASCEND_EXTRA == {"args_entries": _native.entries("args", ("ph", "C"))} == _trace.EXTRA
    kineto_file = fixtures / "ascend_pt" / "text_level1" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    assert not chrome_trace.scan_ahead(kineto_file / "trace_view.json")  # a bare array is no Kineto object


def test_a_file_changed_after_the_read_ahead_is_read_again(trace, monkeypatch):
    expected = _tables(trace)
    assert chrome_trace.scan_ahead(trace)
    job = next(iter(_native._AHEAD.values()))
    job.done.wait(30)
    text = trace.read_bytes()
    trace.write_bytes(text.replace(b'"ph": "X"', b'"ph":  "X"', 1))  # one more byte, the same events
    reads = _reads(monkeypatch)
    got = _tables(trace)
    assert reads == [None]  # read whole: the read ahead was of another file
    for name, table in expected.items():
        assert got[name].equals(table), name
    _native.drop_ahead()
    assert job.part is None  # freed


def test_only_a_plain_trace_object_large_enough_is_read_ahead(fixtures, tmp_path, trace, monkeypatch):
    gz = tmp_path / "t.json.gz"
    gz.write_bytes((fixtures / TRACE).read_bytes())
    bare = tmp_path / "bare.json"
    bare.write_bytes(b'[{"ph": "X", "name": "a", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]')
    assert not chrome_trace.scan_ahead(gz)
    assert not chrome_trace.scan_ahead(bare)
    assert not chrome_trace.scan_ahead(tmp_path / "missing.json")
    monkeypatch.setattr(_native, "AHEAD_MIN_BYTES", trace.stat().st_size)
    assert not chrome_trace.scan_ahead(trace)
    monkeypatch.setenv(_native.ENV, "0")  # the scanner switched off: nothing reads ahead either
    monkeypatch.setattr(_native, "AHEAD_MIN_BYTES", 0)
    assert not chrome_trace.scan_ahead(trace)
    assert not _native._AHEAD


def test_a_read_ahead_nobody_takes_is_freed(trace):
    assert chrome_trace.scan_ahead(trace)
    job = next(iter(_native._AHEAD.values()))
    chrome_trace.drop_ahead()  # while it may still be reading
    assert job.done.wait(30)
    assert job.unwanted and job.part is None and not _native._AHEAD


def test_a_forked_process_reads_the_file_itself(trace):
    """A child forked while the parent read ahead has no such thread: it never waits for one."""
    if not hasattr(os, "fork"):
        pytest.skip("no fork here")
    assert chrome_trace.scan_ahead(trace)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os._exit(0 if not _native._AHEAD and _native._take_ahead(open(trace, "rb"), {}, 0) is None else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_the_cli_reads_ahead_only_what_the_cache_does_not_hold(trace, tmp_path):
    """``analyze`` of a cold trace reads it ahead and prints what an import without that prints;
    once cached (the cache's ``.seen`` says so before any importer loads), it does not."""
    env = dict(os.environ, PROFINSIGHT_CACHE=str(tmp_path / "cache"), PYTHONHASHSEED="0")
    probe = (
        "import sys, runpy\n"
        "from profinsight.importers.chrome_trace import _native\n"
        "import os\n"
        "_native.AHEAD_MIN_BYTES = int(os.environ.get('AHEAD_MIN', '0'))\n"
        f"_native.AHEAD_TAIL = {trace.stat().st_size // 3}\n"
        "began = []\n"
        "real = _native.scan_ahead\n"
        "_native.scan_ahead = lambda *a: began.append(real(*a)) or began[-1]\n"
        "import atexit\n"
        "atexit.register(lambda: sys.stderr.write(f'READ-AHEAD {began}\\n'))\n"
        "sys.argv = ['profinsight', 'analyze', sys.argv[1], '--format', 'json']\n"
        "runpy.run_module('profinsight', run_name='__main__')\n"
    )

    def run(extra: dict) -> tuple[str, str]:
        out = subprocess.run(
            [sys.executable, "-c", probe, str(trace)], env=env | extra, capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout, out.stderr

    cold, err = run({})
    assert "READ-AHEAD [True, True]" in err  # the command asks before its imports, the load again
    plain, err = run({"PROFINSIGHT_CACHE": "off", "AHEAD_MIN": str(1 << 40)})
    assert "READ-AHEAD [False, False]" in err and cold == plain
    time.sleep(0.01)
    warm, err = run({})
    assert "READ-AHEAD []" in err and warm == cold


def test_which_commands_arguments_are_read_ahead(fixtures, tmp_path, monkeypatch):
    """One Kineto file, one torch_npu text rank folder (or its ASCEND_PROFILER_OUTPUT) are read
    ahead; two paths, a DB export's folder (read by the DB importer), --sample and anything the
    cache holds are not."""
    from argparse import Namespace

    from profinsight.cli.common import read_ahead

    began = []
    monkeypatch.setattr(chrome_trace, "scan_ahead", lambda path, form="kineto": began.append((path, form)))
    kineto = tmp_path / "t.json"
    kineto.write_bytes(b'{"traceEvents": []}')
    text = fixtures / "ascend_pt" / "text_level1" / "rank0_ascend_pt"
    db = next((fixtures / "ascend_pt" / "db_level1").glob("*_ascend_pt"))
    trace_view = text / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"

    def ahead(*paths, sample=False):
        began.clear()
        read_ahead(Namespace(paths=list(paths), sample=sample))
        return began[:]

    assert ahead(str(kineto)) == [(kineto, "kineto")]
    assert ahead(str(text)) == [(trace_view, "ascend")]
    assert ahead(str(text / "ASCEND_PROFILER_OUTPUT")) == [(trace_view, "ascend")]
    assert ahead(str(db)) == []
    assert ahead(str(kineto), str(text)) == []
    assert ahead(str(kineto), sample=True) == []
    assert ahead(str(tmp_path / "missing.json")) == []
    from profinsight.store.root import cache_root, mark_seen

    entry = cache_root() / "v0" / "an-entry"
    entry.mkdir(parents=True)
    mark_seen([kineto], entry)
    assert ahead(str(kineto)) == [(kineto, "kineto")]  # an entry not yet complete
    (entry / "meta.json").write_text("{}")
    assert ahead(str(kineto)) == []


def test_a_trace_is_read_ahead_once_however_often_asked(trace):
    assert chrome_trace.scan_ahead(trace)
    job = next(iter(_native._AHEAD.values()))
    assert chrome_trace.scan_ahead(trace)  # the load asks again after the command did
    assert list(_native._AHEAD.values()) == [job] and not job.unwanted
