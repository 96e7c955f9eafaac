"""The run entry of the summary tier (store/run_cache.py) and the kept walk of discovery: a second
open of an unchanged run reads one cache entry instead of every rank folder, gives exactly what
a fresh read gives (tables, diagnostics, analyses), and is read again when a rank's file changes
or a rank is added.  On the real Qwen3 run (4 ranks) and on a generated run with real groups."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

import profinsight
from profinsight import discovery
from profinsight.schema import TABLES
from profinsight.store import kept_runs, loader, run_cache

RUN = "ascend_llm/qwen3_level2_4rank"
ANALYSES = ("step_breakdown", "rank_summary", "slow_ranks", "slow_links", "rank_steps", "parallel_groups")


@pytest.fixture
def reads(monkeypatch):
    """How many ranks the importer read (a run entry that answers reads none)."""
    seen = []
    real = loader.load_ranks

    def counting(sources):
        seen.extend(sources)
        return real(sources)

    monkeypatch.setattr(loader, "load_ranks", counting)
    return seen


@pytest.fixture
def qwen(fixtures, tmp_path):
    """A copy of the Qwen3 run whose files the tests may touch (the fixture is never changed)."""
    dst = tmp_path / "qwen3"
    shutil.copytree(fixtures / RUN, dst)
    return dst


def _fresh(path, monkeypatch):
    """``path`` in the summary tier read with the cache off: every rank read from its files."""
    with monkeypatch.context() as m:
        m.setenv("PROFINSIGHT_CACHE", "off")
        return profinsight.load(path, tier="summary")


def _assert_same(cached, fresh):
    assert cached.ranks == fresh.ranks
    assert cached.format == fresh.format == "cluster"
    assert [d.to_dict() for d in cached.diagnostics] == [d.to_dict() for d in fresh.diagnostics]
    assert cached.row_counts() == fresh.row_counts()
    for name in TABLES:
        a, b = cached.arrow(name), fresh.arrow(name)
        assert a.schema.equals(b.schema), name
        assert a.equals(b), name
    for name in ANALYSES:
        x, y = cached.view(name), fresh.view(name)
        assert x.equals(y), name
        assert list(x.dtypes) == list(y.dtypes), name
    # SQL reads the entry's Parquet files as it reads the ranks' tables
    q = "select rank, count(*) n, sum(dur_ns) d from comm_ops group by rank order by rank"
    assert cached.sql(q).equals(fresh.sql(q))


def test_qwen3_second_open_reads_the_run_entry_and_equals_a_fresh_read(qwen, reads, monkeypatch):
    first = profinsight.load(qwen, tier="summary")
    assert len(reads) == 4  # the four rank folders, read once
    key = run_cache.run_key(first.run.sources)
    entry = run_cache.lookup(key)
    assert entry is not None and entry.ranks == [0, 1, 2, 3]
    assert entry.folder.parent.parent == Path(os.environ["PROFINSIGHT_CACHE"])  # in the cache, not beside the data
    assert not any(p.name.startswith(run_cache.PREFIX) for p in qwen.rglob("*"))
    _assert_same(first, _fresh(qwen, monkeypatch))

    reads.clear()
    run_cache._live.clear()  # as a new process would: the entry is read from disk
    second = profinsight.load(qwen, tier="summary")
    assert reads == []  # no rank folder read: the run entry answered
    assert second._shared is not None and second._shared.folder == entry.folder
    _assert_same(second, _fresh(qwen, monkeypatch))
    assert run_cache.lookup(key) is second._shared  # a third open in this process shares its tables
    # the analyses of the second open came from the files the first one wrote beside the entry
    assert second._results.stats["computed"] == 0 and second._results.stats["disk"] >= len(ANALYSES)
    # one rank on its own still reads its own rows
    r2 = second._ranks[2]
    assert r2.read("comm_ops").equals(first._ranks[2].read("comm_ops"))
    assert set(r2.read("comm_ops").column("rank").to_pylist()) == {2}


def test_a_touched_rank_file_reads_the_run_again(qwen, reads, monkeypatch):
    profinsight.load(qwen, tier="summary")
    csv = qwen / "rank_1_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv"
    st = csv.stat()
    before = run_cache.run_key(profinsight.api.summary_run(profinsight.api.resolve_run(qwen)).sources)
    reads.clear()
    os.utime(csv, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    again = profinsight.load(qwen, tier="summary")
    assert len(reads) == 4  # the whole run read again: its entry no longer matches
    assert run_cache.run_key(again.run.sources) != before
    _assert_same(again, _fresh(qwen, monkeypatch))
    # a changed value is seen, not served from the old entry
    rows = csv.read_text().splitlines()
    head, first = rows[0].split(","), rows[1].split(",")
    first[head.index("Computing")] = str(float(first[head.index("Computing")]) + 5000.0)
    csv.write_text("\n".join([rows[0], ",".join(first), *rows[2:]]) + "\n")
    changed = profinsight.load(qwen, tier="summary").step_breakdown().set_index("rank")
    old = again.step_breakdown().set_index("rank")
    assert changed.loc[1, "computing_us"] == pytest.approx(old.loc[1, "computing_us"] + 5000.0, abs=1e-3)


def test_cache_off_keeps_the_ranks_in_memory(qwen, reads, monkeypatch):
    monkeypatch.setenv("PROFINSIGHT_CACHE", "off")
    p = profinsight.load(qwen, tier="summary")
    q = profinsight.load(qwen, tier="summary")
    assert len(reads) == 8 and p._shared is None and q._shared is None


def test_progress_is_reported_while_the_ranks_are_read(qwen, monkeypatch):
    monkeypatch.setattr(loader, "READ_CHUNK", 1)
    seen = []
    profinsight.load(qwen, tier="summary", progress=lambda d, t, what: seen.append((d, t)))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    seen.clear()
    profinsight.load(qwen, tier="summary", progress=lambda d, t, what: seen.append((d, t, what)))
    assert seen == [(4, 4, "cached")]


@pytest.mark.slow
@pytest.mark.usefixtures("fixtures")  # the generator repeats a fixture rank
def test_generated_groups_equal_from_the_run_entry(tmp_path, reads, monkeypatch):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from generate import generate_ascend

    info = generate_ascend(0, tmp_path, ranks=16, copies=1, check=False, group_size=8, slow_us=10_000, link=True)
    run = tmp_path / "ascend"
    first = profinsight.load(run, tier="summary")
    n = len(reads)
    assert n == 16
    second = profinsight.load(run, tier="summary")
    assert len(reads) == n and second._shared is not None
    _assert_same(second, _fresh(run, monkeypatch))
    g = second.parallel_groups().set_index("group")
    assert {h: int(g.loc[h, "slow_rank"]) for h in info["groups"]["slow_ranks"]} == info["groups"]["slow_ranks"]
    assert set(second.slow_ranks()["rank"]) == set(info["groups"]["slow_ranks"].values())
    assert first.parallel_groups().equals(second.parallel_groups())


def test_discovery_keeps_a_large_walk_until_a_folder_changes(qwen, monkeypatch):
    monkeypatch.setattr(kept_runs, "KEEP_MIN_SOURCES", 4)
    runs = kept_runs.discover_kept(qwen)
    assert runs == discovery.discover(qwen)
    walks = []
    real = discovery._Walk.visit

    def visit(self, p, depth):
        walks.append(p)
        return real(self, p, depth)

    monkeypatch.setattr(discovery._Walk, "visit", visit)
    assert kept_runs.discover_kept(qwen) == runs  # answered from the kept walk
    assert walks == []
    # a rank's file changed: the walk runs again
    csv = qwen / "rank_3_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv"
    st = csv.stat()
    os.utime(csv, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert kept_runs.discover_kept(qwen) == runs
    assert walks
    # a new rank folder: the run's folder changed, the walk finds it
    walks.clear()
    assert kept_runs.discover_kept(qwen) == runs and walks == []
    shutil.copytree(qwen / "rank_3_ascend_pt", qwen / "rank_3_copy_ascend_pt")
    again = kept_runs.discover_kept(qwen)
    assert walks and again != runs and again == discovery.discover(qwen)


def test_a_small_walk_is_not_kept(qwen, monkeypatch):
    assert kept_runs.KEEP_MIN_SOURCES > 4
    kept_runs.discover_kept(qwen)
    walks = []
    real = discovery._Walk.visit
    monkeypatch.setattr(discovery._Walk, "visit", lambda self, p, d: walks.append(p) or real(self, p, d))
    kept_runs.discover_kept(qwen)
    assert walks


def test_a_damaged_entry_is_read_again(qwen, reads):
    p = profinsight.load(qwen, tier="summary")
    entry = run_cache.lookup(run_cache.run_key(p.run.sources))
    (entry.folder / "meta.json").write_text("{not json")
    run_cache._live.clear()  # a new process: the entry this one read is not in memory
    reads.clear()
    q = profinsight.load(qwen, tier="summary")
    assert len(reads) == 4
    assert q.arrow("comm_ops").equals(p.arrow("comm_ops"))
