"""Actions that remove the same time say so, and what all of them can remove together is a range
that never exceeds what is there to remove (issue: overlapping recoverable times were added up).

On text_level1 the idle-gaps action (21.66 ms per step) and the compile / dispatch action
(3.73 ms) both take device idle time — the gaps a compile stalls are among the idle gaps — so
each names the other, and together the actions remove between 28.05 ms (the largest of each
pool) and 31.78 ms per step, never more than the pools hold or the step."""

from __future__ import annotations

import pandas as pd
import pytest

import profinsight
from profinsight.advisor import guided_report
from profinsight.advisor.core import overlaps
from profinsight.advisor.rules import POOLS, RULES, UNESTIMATED


@pytest.fixture(scope="module")
def level1(fixtures):
    return profinsight.load(fixtures / "ascend_pt" / "text_level1")


def test_overlapping_actions_name_each_other_on_text_level1(level1):
    rep = guided_report(level1, "en")
    acts = {a["rule"]: a for a in rep["actions"]}
    assert list(acts) == ["idle_gaps", "communication_overlap", "compile_dispatch", "format_conversion"]
    assert acts["idle_gaps"]["overlaps_with"] == ["compile_dispatch"]
    assert acts["compile_dispatch"]["overlaps_with"] == ["idle_gaps"]
    assert acts["communication_overlap"]["overlaps_with"] == [] and acts["communication_overlap"]["note"] == ""
    assert acts["idle_gaps"]["note"] == (
        "overlaps with Operator compile / dispatch on the critical path: both take device idle time, do not add them up"
    )
    total = rep["actions_total"]
    assert total["sum_us"] == pytest.approx(21659.483 + 4853.554 + 3730.845 + 1538.224, abs=1e-3)
    assert total["low_us"] == pytest.approx(21659.483 + 4853.554 + 1538.224, abs=1e-3)  # the largest of each pool
    assert total["high_us"] == pytest.approx(31782.106, abs=1e-3)
    assert total["text"].startswith("Together: between 28.05 and 31.78 ms per step (20.9%–23.7% of the step)")
    zh = guided_report(level1, "zh")
    assert zh["actions"][0]["note"].startswith("与关键路径上的算子编译 / 下发重叠")
    assert zh["actions_total"]["text"].startswith("合计：每步 28.05 到 31.78 ms")


def test_no_pool_is_counted_above_what_it_holds(level1):
    """Each pool's range is capped by its mean per step (device idle 26.21 ms here) and the total
    by the mean step, on the fixture's own figures."""
    guided_report(level1, "en")  # computes the report's plain data once; read back below
    core = level1.remember("advisor.report", {"thresholds": {}, "top": 10}, lambda: None)
    ov = core["overlaps"]
    sb = level1.step_breakdown()
    for g in ov["groups"]:
        assert g["pool_us"] == pytest.approx(float(sb[g["pool"]].astype("float64").mean()), abs=1e-3)
        assert g["low_us"] <= g["together_us"] <= min(g["sum_us"], g["pool_us"]) + 1e-9
    assert ov["total_us"] <= ov["step_us"]


class _Ctx:
    """The two things overlaps() reads of a rule context: the steps and the mean step."""

    def __init__(self, free_us: float, step_us: float):
        self.steps = pd.DataFrame(
            {"step_us": [step_us], "free_us": [free_us], "comm_not_overlapped_us": [0.0], "computing_us": [0.0]}
        )
        self.step_us = step_us


def _hit(rule: str, us: float) -> dict:
    return {"rule": rule, "recoverable_us": us}


def test_a_pool_counts_once_when_its_actions_add_up_to_more_than_it_holds():
    ov = overlaps({"hits": [_hit("idle_gaps", 800.0), _hit("dataloader", 600.0)], "notes": []}, _Ctx(1000.0, 5000.0))
    (g,) = ov["groups"]
    assert (g["low_us"], g["together_us"], g["sum_us"]) == (800.0, 1000.0, 1400.0)
    assert (ov["low_us"], ov["total_us"]) == (800.0, 1000.0)


def test_the_total_never_exceeds_the_step():
    hits = [_hit("idle_gaps", 900.0), _hit("communication_overlap", 900.0)]
    ctx = _Ctx(1000.0, 1200.0)
    ctx.steps["comm_not_overlapped_us"] = [1000.0]
    assert overlaps({"hits": hits, "notes": []}, ctx)["total_us"] == 1200.0


def test_every_rule_says_which_time_it_recovers():
    assert set(POOLS) | set(UNESTIMATED) == set(RULES) and not set(POOLS) & set(UNESTIMATED)


@pytest.mark.slow
@pytest.mark.parametrize(
    "fixture",
    ["ascend_pt/text_level1", "ascend_pt/db_level1", "kineto/gpu_alexnet.json.gz", "kineto/rank_non_gpu.json.gz"],
)
def test_unestimated_rules_never_estimate_and_totals_stay_in_the_step(fixtures, fixture):
    rep = guided_report(profinsight.load(fixtures / fixture), "en")
    for f in rep["findings"]:
        if f["rule"] in UNESTIMATED:
            assert f["recoverable_us"] is None, f["rule"]
    total = rep["actions_total"]
    if rep["actions"]:
        assert total["low_us"] <= total["high_us"] <= total["sum_us"] + 1e-9
        if total["share_of_step_high_ratio"] is not None:
            assert total["share_of_step_high_ratio"] <= 1.0
