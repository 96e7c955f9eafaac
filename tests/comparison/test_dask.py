"""The 2-rank text fixture loaded on a real dask.distributed.LocalCluster (2 worker processes)
through ``ranks_report(path, client=, tier="full")`` and ``compare(..., client=)``: every rank is
imported on a worker (its pid and address are recorded and checked: the test fails if the local
path is taken) and the tables equal a plain local load.  An unreachable scheduler is a clear
error, and the summary tier never touches Dask."""

from __future__ import annotations

import os
import socket
import time

import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")

import profinsight  # noqa: E402
from profinsight.api import connect, ranks_report  # noqa: E402
from profinsight.errors import ProfileError  # noqa: E402

RUN = "ascend_pt/text_level1"


@pytest.mark.slow
def test_local_cluster_runs_every_rank_on_a_worker(fixtures, tmp_path, monkeypatch):
    dask_cache = tmp_path / "dask_cache"
    monkeypatch.setenv("PROFINSIGHT_CACHE", str(dask_cache))  # the workers inherit it
    t0 = time.perf_counter()
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        rep = ranks_report(fixtures / RUN, client=client, tier="full")
        pids = client.run(os.getpid)  # worker address -> its pid
        cmp = profinsight.compare(
            fixtures / RUN / "rank0_ascend_pt", fixtures / RUN / "rank1_ascend_pt", client=client, names=["r0", "r1"]
        )
    by = [r.loaded_by for r in rep.profile._ranks]
    assert all(b is not None and b["worker"] in pids for b in by), by  # ran on a worker of this cluster...
    assert all(b["pid"] == pids[b["worker"]] != os.getpid() for b in by), (by, pids)  # ...in its process
    assert any(dask_cache.rglob("*.parquet"))  # the workers imported and stored the ranks
    monkeypatch.setenv("PROFINSIGHT_CACHE", str(tmp_path / "local_cache"))
    local = profinsight.load(fixtures / RUN)
    assert all(r.loaded_by is None or r.loaded_by["worker"] is None for r in local._ranks)
    assert rep.profile.ranks == local.ranks == [0, 1]
    for name in ("device_tasks", "host_ops", "comm_ops", "comm_links", "steps"):
        pd.testing.assert_frame_equal(rep.profile.table(name), local.table(name))
    pd.testing.assert_frame_equal(rep.summary(), ranks_report(local).summary())
    plain = profinsight.compare(
        fixtures / RUN / "rank0_ascend_pt", fixtures / RUN / "rank1_ascend_pt", names=["r0", "r1"]
    )
    pd.testing.assert_frame_equal(cmp.steps(), plain.steps())
    assert time.perf_counter() - t0 < 120


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_scheduler_is_a_clear_error(fixtures, monkeypatch, capsys):
    from profinsight.cli import main

    address = f"tcp://127.0.0.1:{_closed_port()}"
    with pytest.raises(ProfileError, match="could not reach the Dask scheduler") as err:
        connect(address, timeout=1)
    assert address in str(err.value) and "dask scheduler" in err.value.fix
    monkeypatch.setenv("PROFINSIGHT_DASK_TIMEOUT", "1")
    assert main(["ranks", str(fixtures / RUN), "--tier", "full", "--scheduler", address]) == 2
    out = capsys.readouterr().err
    assert "could not reach the Dask scheduler" in out and "Traceback" not in out and "internal error" not in out


class _NoDask:
    """A client that fails the test if anything is sent to it."""

    def __getattr__(self, name):
        raise AssertionError(f"the summary tier used Dask ({name})")


def test_the_summary_tier_never_uses_dask(fixtures):
    rep = ranks_report(fixtures / "ascend_llm/qwen3_level2_4rank", client=_NoDask())
    assert rep.profile.format == "cluster" and rep.profile.ranks == [0, 1, 2, 3]
    assert set(rep.profile.step_breakdown()["source"]) == {"vendor_summary"}
    assert all(r.loaded_by is None for r in rep.profile._ranks)
