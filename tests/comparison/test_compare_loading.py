"""``compare`` imports its runs side by side: every path is resolved first, then the ranks of all
of them go to the loader in one call (so they can be imported in parallel), and the comparison
is the one that loading each path on its own gives.  A loaded profile passed in stays as it is."""

from __future__ import annotations

import os

import pandas as pd
import pytest

import profinsight
from profinsight import api
from profinsight.errors import NotAProfile, ProfileError

RUN = "ascend_pt/text_level1"
KINETO = ("kineto/gpu_2rank_rank0.json.gz", "kineto/gpu_2rank_rank1.json.gz")


@pytest.fixture
def loader_calls(monkeypatch):
    """Every call of the loader that ``compare`` makes: the paths of the sources it was given."""
    calls = []
    real = api.load_sources

    def counted(sources, progress=None, workers=None):
        calls.append(([s.path for s in sources], workers))
        return real(sources, progress=progress, workers=workers)

    monkeypatch.setattr(api, "load_sources", counted)
    return calls


def test_both_paths_go_to_the_loader_in_one_call(fixtures, loader_calls):
    a, b = fixtures / RUN / "rank0_ascend_pt", fixtures / RUN / "rank1_ascend_pt"
    cmp = profinsight.compare(a, b, names=["r0", "r1"])
    assert loader_calls == [([a, b], None)]
    assert [p.ranks for p in cmp.profiles] == [[0], [1]]
    # the same comparison as of the two runs loaded one after the other
    alone = profinsight.compare(profinsight.load(a), profinsight.load(b), names=["r0", "r1"])
    pd.testing.assert_frame_equal(cmp.steps(), alone.steps())
    pd.testing.assert_frame_equal(cmp.ops(), alone.ops())
    assert cmp.verdicts() == alone.verdicts()
    # each run's own step: the Stage of its rank's step_trace_time.csv (the vendor rounds to 0.5 us)
    st = cmp.steps().set_index("run")
    assert st.loc["r0", "step_us"] == pytest.approx(136581.0, abs=0.25)
    assert st.loc["r1", "step_us"] == pytest.approx(131912.5, abs=0.25)


def test_a_loaded_profile_stays_as_it_is(fixtures, loader_calls):
    a, b = fixtures / RUN / "rank0_ascend_pt", fixtures / RUN / "rank1_ascend_pt"
    first = profinsight.load(a)
    loader_calls.clear()
    cmp = profinsight.compare(first, b)
    assert cmp.profiles[0] is first
    assert loader_calls == [([b], None)]
    assert cmp.names == ["rank0_ascend_pt", "rank1_ascend_pt"]


def test_a_rank_named_twice_is_imported_once(fixtures, loader_calls):
    a = fixtures / KINETO[0]
    cmp = profinsight.compare(a, a, workers=2)
    assert loader_calls == [([a], 2)]
    one, two = cmp.profiles
    assert one._ranks[0] is not two._ranks[0]
    assert one._ranks[0].parquet_path == two._ranks[0].parquet_path
    assert cmp.names == ["gpu_2rank_rank0.json.gz", "gpu_2rank_rank0.json.gz#1"]
    pd.testing.assert_frame_equal(one.table("device_tasks"), two.table("device_tasks"))


def test_a_wrong_path_or_count_of_names_fails_before_anything_is_imported(fixtures, tmp_path, loader_calls):
    missing = tmp_path / "no_such_run"
    with pytest.raises(NotAProfile) as alone:
        profinsight.load(missing)
    with pytest.raises(NotAProfile) as err:
        profinsight.compare(fixtures / RUN / "rank0_ascend_pt", missing)
    assert str(err.value) == str(alone.value) and err.value.fix == alone.value.fix
    with pytest.raises(ProfileError, match=r"^3 names for 2 runs$"):
        profinsight.compare(fixtures / RUN / "rank0_ascend_pt", fixtures / RUN / "rank1_ascend_pt", names="abc")
    assert loader_calls == []


def test_the_runs_are_imported_side_by_side(fixtures, monkeypatch):
    """Two local workers: this process imports one run, a spawned process the other, and the
    tables are those of a plain load."""
    paths = [fixtures / p for p in KINETO]
    cmp = profinsight.compare(*paths, workers=2)
    by = [p._ranks[0].loaded_by for p in cmp.profiles]
    assert [b["pid"] == os.getpid() for b in by] == [True, False]
    monkeypatch.setenv("PROFINSIGHT_CACHE", os.environ["PROFINSIGHT_CACHE"] + "_plain")
    for prof, path in zip(cmp.profiles, paths):
        plain = profinsight.load(path)
        assert plain._ranks[0].loaded_by["pid"] == os.getpid()
        for name in ("device_tasks", "host_ops", "comm_ops", "steps"):
            pd.testing.assert_frame_equal(prof.table(name), plain.table(name))


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_forked_and_spawned_workers_import_the_same(fixtures, monkeypatch, method):
    """The worker is forked where this process runs no other thread (the command line), spawned
    otherwise: both give the tables of a plain load."""
    import multiprocessing as mp

    from profinsight.store import loader

    monkeypatch.setattr(loader, "_worker_context", lambda: mp.get_context(method))
    paths = [fixtures / p for p in KINETO]
    cmp = profinsight.compare(*paths, workers=2)
    assert [p._ranks[0].loaded_by["pid"] == os.getpid() for p in cmp.profiles] == [True, False]
    monkeypatch.setenv("PROFINSIGHT_CACHE", os.environ["PROFINSIGHT_CACHE"] + "_plain")
    for prof, path in zip(cmp.profiles, paths):
        plain = profinsight.load(path)
        for name in ("device_tasks", "host_ops", "api_calls", "launches", "steps"):
            pd.testing.assert_frame_equal(prof.table(name), plain.table(name))


def test_a_worker_is_forked_only_where_no_other_thread_runs():
    import threading

    from profinsight.store import loader

    if threading.active_count() == 1:
        assert loader._worker_context().get_start_method() == "fork"
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert loader._worker_context().get_start_method() == "spawn"
    finally:
        stop.set()
        other.join()


def test_output_buffered_before_a_forked_worker_is_printed_once(fixtures, tmp_path):
    """A forked child flushes its copy of the parent's stdout buffer as it ends, so the buffer
    must be written out before the fork (multiprocessing does) -- and no warning about the fork
    reaches the user."""
    import subprocess
    import sys

    code = (
        "import sys; from profinsight.store import loader; print('before the workers'); "
        "assert loader._worker_context().get_start_method() == 'fork'; "
        "import profinsight; profinsight.compare(*sys.argv[1:], workers=2)"
    )
    env = dict(os.environ, PROFINSIGHT_CACHE=str(tmp_path / "cache"))
    out = subprocess.run(
        [sys.executable, "-c", code, *(str(fixtures / p) for p in KINETO)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == "before the workers\n"
    assert "fork" not in out.stderr


def test_more_runs_than_workers_share_the_two_workers(fixtures, monkeypatch):
    """Three runs on two workers (this process and one spawned, each taking the next run when it
    is free): every run is imported by one of the two and holds the tables of a plain load."""
    paths = [fixtures / p for p in (*KINETO, "kineto/compare_base.json.gz")]
    cmp = profinsight.compare(*paths, workers=2)
    pids = {p._ranks[0].loaded_by["pid"] for p in cmp.profiles}
    assert os.getpid() in pids and len(pids) <= 2
    monkeypatch.setenv("PROFINSIGHT_CACHE", os.environ["PROFINSIGHT_CACHE"] + "_plain")
    for prof, path in zip(cmp.profiles, paths):
        pd.testing.assert_frame_equal(prof.table("device_tasks"), profinsight.load(path).table("device_tasks"))
