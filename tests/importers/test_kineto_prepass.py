"""The summary tier of a Kineto job: a pre-pass over each rank's trace that builds its steps,
device tasks and collectives only.  On the real 2-rank GPU job they equal the full import's to the
row (the collectives' types come from their host ops there: the kernels are ``ncclKernel_SendRecv``),
and so do the step breakdown, the rank summary and the groups; the host side holds only the step
markers and the collectives' host ops; opening one rank in full drops the tier."""

from __future__ import annotations

import re

import pandas as pd
import pytest

import profinsight
from profinsight.api import rank_run, tier_of

K = "kineto"


@pytest.fixture(scope="module")
def both(fixtures):
    paths = [fixtures / K / "gpu_2rank_rank0.json.gz", fixtures / K / "gpu_2rank_rank1.json.gz"]
    return profinsight.load(paths, tier="summary"), profinsight.load(paths)


def test_steps_tasks_and_collectives_equal_the_full_import(both):
    s, f = both
    assert tier_of(s.run) == "summary" and tier_of(f.run) == "full"
    for name in ("steps", "device_tasks", "comm_ops"):
        pd.testing.assert_frame_equal(s.table(name), f.table(name))
    assert sorted(s.table("comm_ops")["type"].unique()) == ["allgather", "allreduce", "alltoall"]
    pd.testing.assert_frame_equal(s.step_breakdown(), f.step_breakdown())
    pd.testing.assert_frame_equal(s.rank_summary(), f.rank_summary())
    pd.testing.assert_frame_equal(s.parallel_groups(), f.parallel_groups())


def test_only_what_the_cluster_view_needs_is_built(both):
    s, f = both
    counts, full = s.row_counts(), f.row_counts()
    assert counts["launches"] == counts["api_calls"] == counts["trace_slices"] == 0
    assert full["launches"] == 4716 and full["host_ops"] == 4769
    names = s.table("host_ops")["name"]
    assert len(names) == counts["host_ops"] < full["host_ops"]
    assert all(re.match(r"^ProfilerStep#\d+$|^record_param_comms$|^(nccl|rccl|gloo|c10d):", n) for n in names)
    note = next(d for d in s.diagnostics if d.code == "summary-tier")
    assert "pre-pass" in note.message and "2 Kineto ranks" in note.message
    info = s.table("run_info")
    assert list(info["device_name"]) == list(f.table("run_info")["device_name"])


def test_a_rank_opened_alone_is_the_full_import(both):
    s, _ = both
    one = rank_run(s.run, 1)
    assert tier_of(one) == "full" and [src.rank_hint for src in one.sources] == [1]
    assert profinsight.load(one).row_counts()["launches"] > 0
