"""Small ranks (together under ``PARALLEL_MIN_BYTES``) are imported side by side on threads of
this process, not one after the other: each rank's tables, diagnostics and the order in which
the loader reports them are the ones a serial import gives."""

from __future__ import annotations

import threading

import pytest

from profinsight.api import resolve_run
from profinsight.store import loader

QWEN = "ascend_llm/qwen3_level2_4rank"


def _tables(rank: loader.LoadedRank) -> dict:
    entry = rank.cached
    assert entry is not None, "a small rank's import is cached like any other"
    return {name: entry.read(name) for name in entry.row_counts}


def _load(sources, monkeypatch, tmp_path, name: str, workers=None):
    monkeypatch.setenv("PROFINSIGHT_CACHE", str(tmp_path / name))
    seen = []
    return loader.load_sources(sources, lambda done, total, what: seen.append((done, total, what)), workers), seen


@pytest.mark.parametrize(
    "paths",
    [
        (QWEN,),
        ("kineto/gpu_2rank_rank0.json.gz", "kineto/gpu_2rank_rank1.json.gz"),
    ],
    ids=["ascend_4rank", "kineto_2files"],
)
def test_small_ranks_import_on_threads_as_a_serial_import_would(fixtures, monkeypatch, tmp_path, paths):
    sources = tuple(s for p in paths for s in resolve_run(fixtures / p).sources)
    assert len(sources) >= 2
    assert loader._source_bytes(sources) < loader.PARALLEL_MIN_BYTES
    monkeypatch.setattr(loader.os, "cpu_count", lambda: 2)  # the rule, whatever cores CI has
    threads = []
    real = loader._import_and_store

    def counted(source, threads_=None, **kw):
        threads.append((threading.current_thread().name, threads_))
        return real(source, threads_, **kw)

    monkeypatch.setattr(loader, "_import_and_store", counted)
    side, side_progress = _load(sources, monkeypatch, tmp_path, "threads")
    assert len(threads) == len(sources)
    assert all(name.startswith("profinsight-import") and share == 1 for name, share in threads), threads

    threads.clear()
    alone, alone_progress = _load(sources, monkeypatch, tmp_path, "serial", workers=1)
    assert [name for name, _ in threads] == [threading.current_thread().name] * len(sources)

    assert [r.rank for r in side] == [r.rank for r in alone]
    assert [[d.to_dict() for d in r.diagnostics] for r in side] == [[d.to_dict() for d in r.diagnostics] for r in alone]
    for a, b in zip(side, alone):
        ta, tb = _tables(a), _tables(b)
        assert sorted(ta) == sorted(tb)
        for name in ta:
            assert ta[name].equals(tb[name]), f"rank {a.rank}: {name} differs"
    # progress arrives in source order, one rank at a time, the same lines as a serial load
    assert side_progress == alone_progress
    assert side_progress[-1][:2] == (len(sources), len(sources))
    # the DuckDB threads of later imports are the machine's again
    from profinsight.importers import _common

    assert _common._RANK_THREADS is None


def test_one_rank_or_a_given_worker_count_is_not_threaded(fixtures, monkeypatch, tmp_path):
    sources = tuple(resolve_run(fixtures / QWEN).sources)
    monkeypatch.setattr(loader.os, "cpu_count", lambda: 2)
    called = []
    monkeypatch.setattr(loader, "_threads_side_by_side", lambda *a, **k: called.append(a))
    _load(sources[:1], monkeypatch, tmp_path, "one")
    _load(sources, monkeypatch, tmp_path, "workers1", workers=1)
    assert called == []
