"""The 2-rank text fixture loaded on a real dask.distributed.LocalCluster (2 worker processes)
through ``ranks_report(path, client=)`` and ``compare(..., client=)`` equals a plain local load."""

from __future__ import annotations

import time

import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")

import profinsight  # noqa: E402
from profinsight.api import ranks_report  # noqa: E402

RUN = "ascend_pt/text_level1"


@pytest.mark.slow
def test_local_cluster_equals_local_load(fixtures, tmp_path, monkeypatch):
    dask_cache = tmp_path / "dask_cache"
    monkeypatch.setenv("PROFINSIGHT_CACHE", str(dask_cache))  # the workers inherit it
    t0 = time.perf_counter()
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        rep = ranks_report(fixtures / RUN, client=client)
        done = client.run(lambda: True)
        assert len(done) == 2
        cmp = profinsight.compare(
            fixtures / RUN / "rank0_ascend_pt", fixtures / RUN / "rank1_ascend_pt", client=client, names=["r0", "r1"]
        )
    assert any(dask_cache.rglob("*.parquet"))  # the workers imported and stored the ranks
    monkeypatch.setenv("PROFINSIGHT_CACHE", str(tmp_path / "local_cache"))
    local = profinsight.load(fixtures / RUN)
    assert rep.profile.ranks == local.ranks == [0, 1]
    for name in ("device_tasks", "host_ops", "comm_ops", "comm_links", "steps"):
        pd.testing.assert_frame_equal(rep.profile.table(name), local.table(name))
    pd.testing.assert_frame_equal(rep.summary(), ranks_report(local).summary())
    plain = profinsight.compare(
        fixtures / RUN / "rank0_ascend_pt", fixtures / RUN / "rank1_ascend_pt", names=["r0", "r1"]
    )
    pd.testing.assert_frame_equal(cmp.steps(), plain.steps())
    assert time.perf_counter() - t0 < 120
