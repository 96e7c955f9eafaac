"""Evidence-gated advisor rules (issue 17): a rule names a cause only on the data that shows it,
compile / dispatch on the critical path is a finding of its own, each idle gap names the API call
in progress, and per-step figures divide by the steps of the ranks the data comes from."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

import profinsight
from profinsight.advisor import evaluate
from profinsight.advisor.rules import Context
from profinsight.testing import profile_from_tables

US = 1000
L1 = "ascend_pt/text_level1"


@pytest.fixture(scope="module")
def level1(fixtures):
    return profinsight.load(fixtures / L1)


def _by_rule(profile):
    return {f["rule"]: f for f in evaluate(profile, "en")[0]}


def _reference_overlap(calls: pd.DataFrame, gaps: pd.DataFrame) -> float:
    """Σ over the outermost compile calls of their overlap with the rank's gaps (plain loops)."""
    total = 0
    for rank, cs in calls.groupby("rank"):
        cs = cs.sort_values("start_ns")
        outer, end = [], -1
        for s, d in zip(cs["start_ns"], cs["dur_ns"]):
            if s + d <= end:
                continue  # nested inside an earlier call (opCompile inside aclopCompileAndExecute)
            outer.append((s, s + d))
            end = max(end, s + d)
        for gs, ge in zip(gaps.loc[gaps["rank"] == rank, "start_ns"], gaps.loc[gaps["rank"] == rank, "end_ns"]):
            for s, e in outer:
                total += max(0, min(e, ge) - max(s, gs))
    return total / 1e3


def test_each_idle_gap_names_the_api_call_in_progress(level1):
    g = level1.idle_gaps()
    r0 = g[g["rank"] == 0].iloc[0]  # the longest gap of rank 0
    assert r0["dur_us"] == pytest.approx(1318.826)
    assert r0["host_api"] == "aclopCompileAndExecute" and r0["host_api_overlap_us"] == pytest.approx(1126.091)
    r1 = g[g["rank"] == 1].iloc[0]
    assert (r1["dur_us"], r1["host_api"], r1["host_api_overlap_us"]) == (1348.567, "aclopCompileAndExecute", 1080.892)


def test_compile_dispatch_fires_on_aclop_compile_and_execute(level1):
    f = _by_rule(level1)["compile_dispatch"]
    api = level1.table("api_calls")
    r0 = api[(api["rank"] == 0) & (api["name"] == "aclopCompileAndExecute")]
    assert len(r0) == 19 and r0["dur_ns"].sum() == 14_049_230  # 14.05 ms on rank 0
    ev = f["evidence"]
    assert ev["calls"]["aclopCompileAndExecute"] == {"calls": 38, "total_us": 28692.6}
    assert ev["calls"]["opCompile"]["calls"] == 38
    names = api["name"].astype(str)
    calls = api[
        names.isin(["aclopCompileAndExecute", "aclopCompile", "opCompile"])
        | names.str.match(r"aclnn.*GetWorkspaceSize$")
    ]
    critical = _reference_overlap(calls, level1.idle_gaps(min_us=50.0))
    assert ev["critical_us"] == pytest.approx(critical, abs=1e-3) == pytest.approx(7461.691, abs=1e-3)
    assert f["recoverable_us"] == pytest.approx(critical / 2, abs=1e-3)  # per rank-step, 2 ranks
    assert ev["longest_gaps"][0]["host_api"] == "aclopCompileAndExecute"
    assert "19 aclopCompileAndExecute calls per step" in f["message"]
    assert "set_compile_mode(jit_compile=False)" in f["change"]


def test_compile_dispatch_stays_silent_without_api_calls_or_compiles(fixtures, tmp_path):
    level0 = profinsight.load(fixtures / "ascend_pt/text_level0")
    assert "compile_dispatch" not in _by_rule(level0)
    p = _kernel_details_only(fixtures, tmp_path)
    assert "compile_dispatch" not in _by_rule(p)


def _kernel_details_only(fixtures, tmp_path):
    out = tmp_path / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    shutil.copy(fixtures / L1 / "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", out)
    return profinsight.load(tmp_path / "rank0_ascend_pt")


def test_idle_gaps_without_host_data_say_the_cause_is_unknown(fixtures, tmp_path):
    p = _kernel_details_only(fixtures, tmp_path)
    f = _by_rule(p)["idle_gaps"]
    assert f["recoverable_us"] is None and f["evidence"]["ranks_without_host_data"] == [0]
    assert "cause unknown: host data missing" in f["message"]
    assert "dispatching" not in f["message"] and "TASK_QUEUE_ENABLE" not in f["change"]
    # the full export of the same rank has the host data: there the dispatch claim stands
    full = _by_rule(profinsight.load(fixtures / L1 / "rank0_ascend_pt"))["idle_gaps"]
    assert "dispatching" in full["message"] and full["recoverable_us"] > 0


def test_idle_gaps_per_step_on_a_partial_export(fixtures):
    """qwen3: ranks 0 and 2 have device tasks, 1 and 3 only the vendor's step figures.  The gaps
    (of ranks 0 and 2) are per task-derived rank-step: 16.5% of the step, not 8.2%."""
    p = profinsight.load(fixtures / "ascend_llm/qwen3_level2_4rank")
    ctx = Context(p)
    assert sorted(ctx.task_steps["rank"]) == [0, 2] and len(ctx.steps) == 4
    g = p.idle_gaps(min_us=50.0)
    total = g["dur_us"].sum()
    step = (810022.36 + 809803.2) / 2  # device steps of ranks 0 and 2 (step_trace_time Stage)
    f = _by_rule(p)["idle_gaps"]
    assert f["message"].startswith(f"The device idles {total / 2 / step:.1%} of the step") and "16.5%" in f["message"]
    assert f["recoverable_us"] is None  # no host data on any rank: no cause, no recoverable time


def test_recoverable_time_of_a_task_rule_per_task_rank_step():
    """Rank 0 has kernels (10% on the AI CPU), rank 1 only the vendor's figures: the AI CPU time
    is per step of rank 0, and its share of rank 0's step."""
    tasks = [
        dict(
            rank=0,
            device=0,
            stream=1,
            kind="kernel",
            name=f"K{i}",
            type="Add",
            core="AI_VECTOR_CORE",
            start_ns=i * 100 * US,
            dur_ns=100 * US,
            step=1,
        )
        for i in range(9)
    ] + [
        dict(
            rank=0,
            device=0,
            stream=1,
            kind="kernel",
            name="NonZero",
            type="NonZero",
            core="AI_CPU",
            start_ns=900 * US,
            dur_ns=100 * US,
            step=1,
        )
    ]
    steps = pd.DataFrame(
        [
            dict(rank=0, step=1, host_start_ns=0, host_end_ns=1000 * US),
            dict(
                rank=1,
                step=1,
                host_start_ns=0,
                host_end_ns=2000 * US,
                vendor_stage_ns=2000 * US,
                vendor_computing_ns=1500 * US,
                vendor_free_ns=500 * US,
                vendor_comm_not_overlapped_ns=0,
            ),
        ]
    )
    p = profile_from_tables({"device_tasks": pd.DataFrame(tasks), "steps": steps}, fmt="ascend_text")
    sb = p.step_breakdown().set_index("rank")
    assert list(sb["source"]) == ["tasks", "vendor_summary"]
    f = _by_rule(p)["ai_cpu"]
    assert f["recoverable_us"] == pytest.approx(100.0)  # not 50: rank 1 has no kernels to count
    assert f["share_of_step_ratio"] == pytest.approx(0.1)  # of rank 0's 1,000 us step


def test_cpu_run_ahead_splits_host_side_preparing(fixtures):
    """resnet50_tb_plugin_2021: each host step (6..10) starts while the device still runs the
    previous step: run-ahead = previous step's device end − host start, from the steps table."""
    p = profinsight.load(fixtures / "kineto/legacy/resnet50_tb_plugin_2021.json.gz")
    st = p.table("steps").sort_values("step")
    ahead = ((st["device_end_ns"].shift(1) - st["host_start_ns"]) / 1e3).iloc[1:].tolist()
    assert ahead == [7109.0, 14759.0, 13684.0, 15789.0, 8644.0]
    prep = p.step_breakdown().sort_values("step")["preparing_us"].iloc[1:].tolist()
    f = _by_rule(p)["cpu_run_ahead"]
    rows = f["evidence"]["per_rank_step"]
    assert [r["cpu_run_ahead_us"] for r in rows] == ahead and [r["preparing_us"] for r in rows] == prep
    assert f["severity"] == "info" and f["recoverable_us"] is None
    assert f["evidence"]["share_of_preparing_ratio"] == round(sum(ahead) / sum(prep), 6)
    assert "In 5 of 5 steps" in f["message"] and "healthy, not overhead" in f["message"]


def test_cpu_run_ahead_stays_silent(fixtures, level1):
    # the json_array trace starts every host step after the device finished the previous one
    p = profinsight.load(fixtures / "kineto/legacy/resnet50_json_array.json.gz")
    assert "cpu_run_ahead" not in _by_rule(p)
    assert "cpu_run_ahead" not in _by_rule(level1)  # one step: no previous step to run ahead of


def test_timestamp_sanity_on_files_of_two_collections(fixtures, tmp_path, level1):
    """text_level0's kernel_details.csv beside text_level1's trace_view.json: the kernels end
    57.3 minutes before the host activity starts.  The host rules step aside."""
    out = tmp_path / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    shutil.copy(fixtures / "ascend_pt/text_level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", out)
    shutil.copy(fixtures / L1 / "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json", out)
    p = profinsight.load(tmp_path / "rank0_ascend_pt")
    dt = p.table("device_tasks")
    k = dt[dt["kind"].isin(["kernel", "communication"])]
    host_start = min(p.table("host_ops")["start_ns"].min(), p.table("api_calls")["start_ns"].min())
    apart = (host_start - (k["start_ns"] + k["dur_ns"]).max()) / 1e9
    findings, notes = evaluate(p, "en")
    f = {x["rule"]: x for x in findings}["timestamp_sanity"]
    assert f["evidence"]["per_rank"][0]["apart_s"] == pytest.approx(apart, abs=1e-3) == pytest.approx(3439.689)
    assert "57.3 minutes before the host activity" in f["message"] and f["severity"] == "high"
    assert not {"idle_gaps", "stream_sync", "compile_dispatch"} & {x["rule"] for x in findings}
    assert {"idle_gaps", "stream_sync", "compile_dispatch"} <= {n["rule"] for n in notes}
    assert "timestamp_sanity" not in _by_rule(level1)
