"""The advisor names the slow rank *and* the parallel group it holds back: ``group_slow_rank`` on
a hand-made 4-rank trace (one DP group of four, rank 3 computes 500 us longer and the others wait
for it), silent when nobody waits; and ``slow_rank`` names the group in its message."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from profinsight.advisor import evaluate
from profinsight.testing import profile_from_tables

US = 1000


def trace(extra_us: int, n_ranks: int = 4):
    tasks, ops = [], []
    for r in range(n_ranks):
        c = 1000 + (extra_us if r == n_ranks - 1 else 0)
        tasks += [
            dict(
                rank=r,
                device=r,
                stream=1,
                kind="kernel",
                name="K",
                type="Add",
                core="AI_CORE",
                start_ns=0,
                dur_ns=c * US,
                step=1,
            ),
            dict(
                rank=r,
                device=r,
                stream=1,
                kind="communication",
                name="hcom_allReduce__1_1_1",
                type="hcom_allReduce_",
                core="HCCL",
                start_ns=c * US,
                dur_ns=(2000 - c) * US,
                step=1,
            ),
        ]
        wait = 1500 + extra_us - c  # everyone waits for the last to arrive (rank 3)
        ops.append(
            dict(
                rank=r,
                step=1,
                name="hcom_allReduce__1_1_1",
                type="hcom_allReduce_",
                group="g7",
                start_ns=c * US,
                dur_ns=(2000 - c) * US,
                wait_ns=(wait - 500) * US,
                bytes=8,
            )
        )
    steps = [
        dict(rank=r, step=1, host_start_ns=0, host_end_ns=2000 * US, device_start_ns=0, device_end_ns=2000 * US)
        for r in range(n_ranks)
    ]
    meta = {
        "metadata": {
            "parallel_group_info": {"group_name_1": {"group_name": "dp", "global_ranks": list(range(n_ranks))}}
        }
    }
    info = pd.DataFrame({"rank": list(range(n_ranks)), "extra": [json.dumps(meta)] * n_ranks})
    tables = {
        "device_tasks": pd.DataFrame(tasks),
        "steps": pd.DataFrame(steps),
        "comm_ops": pd.DataFrame(ops),
        "run_info": info,
    }
    return profile_from_tables(tables, fmt="ascend_text")


def fired(p, rule):
    findings, _ = evaluate(p, "en", {}, only=(rule,))
    return {f["rule"]: f for f in findings}.get(rule)


def test_group_slow_rank_names_rank_and_group():
    f = fired(trace(500), "group_slow_rank")
    g = f["evidence"]["groups"][0]
    assert (g["group"], g["names"], g["ranks"], g["slow_rank"]) == ("g7", "dp", "0, 1, 2, 3", 3)
    assert g["waited_for_us"] == pytest.approx(500.0)  # each of ranks 0-2 waited 500 us more than rank 3
    assert f["recoverable_us"] == pytest.approx(500.0)
    assert "rank 3" in f["message"] and "group g7 (dp; ranks 0, 1, 2, 3)" in f["message"]


def test_slow_rank_says_which_group_it_holds_back():
    f = fired(trace(500), "slow_rank")
    assert f["evidence"]["groups"][0]["group"] == "g7"
    assert "It holds back group g7 (dp; ranks 0, 1, 2, 3)" in f["message"]
    assert "0.50 ms per step for it" in f["message"]


def test_group_slow_rank_silent_when_nobody_waits():
    assert fired(trace(0), "group_slow_rank") is None
    assert fired(trace(500, n_ranks=1), "group_slow_rank") is None


def test_fires_on_the_qwen3_pipeline(fixtures):
    import profinsight

    p = profinsight.load(fixtures / "ascend_llm/qwen3_level2_4rank")
    f = fired(p, "group_slow_rank")
    held = [(g["slow_rank"], g["ranks"], g["names"]) for g in f["evidence"]["groups"]]
    assert held == [(3, "1, 3", "embd, mp, pp"), (2, "0, 2", "embd, mp, pp")]
    assert f["evidence"]["groups"][0]["waited_for_us"] == pytest.approx(163646.84, abs=1e-6)


def test_the_summary_tier_names_the_same_ranks_and_groups(fixtures):
    """From each rank's own summaries (no trace parsed) the advisor names the same slow rank of the
    same group with the same wait as from the traces."""
    import profinsight

    p = profinsight.load(fixtures / "ascend_llm/qwen3_level2_4rank", tier="summary")
    assert p.format == "cluster" and p.table("device_tasks").empty
    f = fired(p, "group_slow_rank")
    held = [(g["slow_rank"], g["ranks"], g["names"]) for g in f["evidence"]["groups"]]
    assert held == [(3, "1, 3", "embd, mp, pp"), (2, "0, 2", "embd, mp, pp")]
    assert f["evidence"]["groups"][0]["waited_for_us"] == pytest.approx(163646.84, abs=1e-6)
    assert "rank 3" in f["message"] and "embd, mp, pp; ranks 1, 3" in f["message"]
