"""The compare verdict that knows its noise (issue 17): step samples aligned by step id, Welch's
95 % interval of the difference of means, and the comparability checks, on real multi-step pairs.
The expected noise is computed here from the fixtures' step times with the statistics module (a
reference formula, not the code under test)."""

from __future__ import annotations

import json
import math
import statistics

import pytest

import profinsight
from profinsight.comparison.noise import noise_of, t95

LEGACY = "kineto/legacy"
#: device steps (us) of the six ProfilerSteps (5..10) of each ResNet50 trace (step_breakdown)
TB_PLUGIN_2021 = [166203.0, 118260.0, 109028.0, 110819.0, 113663.0, 119746.0]
JSON_ARRAY = [210967.0, 156725.0, 157589.0, 153866.0, 165448.0, 159130.0]


def _welch(a, b):
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    return statistics.mean(b) - statistics.mean(a), math.sqrt(va + vb), df


@pytest.fixture(scope="module")
def resnet(fixtures):
    return profinsight.compare(
        fixtures / LEGACY / "resnet50_tb_plugin_2021.json.gz",
        fixtures / LEGACY / "resnet50_json_array.json.gz",
        names=["tb_plugin_2021", "json_array"],
        lang="en",
    )


def test_resnet50_pair_is_a_regression_beyond_noise(resnet):
    delta, se, df = _welch(TB_PLUGIN_2021, JSON_ARRAY)
    assert df == pytest.approx(9.999, abs=1e-3)  # -> t quantile of df 9 (rounded down): 2.262
    v = resnet.noise_verdicts()[0]
    assert v["kind"] == "regression" and v["basis"] == "device"
    assert (v["from_steps"], v["to_steps"]) == (6, 6)
    assert v["from_step_ids"] == v["to_step_ids"] == [5, 6, 7, 8, 9, 10]
    assert v["delta_us"] == pytest.approx(44334.333, abs=1e-3) == pytest.approx(delta, abs=1e-3)
    assert v["noise_us"] == pytest.approx(2.262 * se, abs=1e-3)
    assert v["noise_us"] == pytest.approx(28294.316, abs=1e-3)
    assert v["comparability"] == []
    assert v["text"] == (
        "json_array vs tb_plugin_2021: regression: the device step grew by 44,334.3 us (+36.1%), more "
        "than the run-to-run noise of ±28,294.3 us (95%, 6 vs 6 steps)."
    )
    # the words after the noise sentence say where the time went, without a negative "gain"
    text = resnet.verdicts()[0]
    assert "yet the step grew by 44,334.3 us" in text and "gained -" not in text


def test_the_same_run_twice_is_within_noise(fixtures):
    p = profinsight.load(fixtures / LEGACY / "resnet50_tb_plugin_2021.json.gz")
    v = profinsight.compare(p, p, names=["a", "b"], lang="en").noise_verdicts()[0]
    _, se, _ = _welch(TB_PLUGIN_2021, TB_PLUGIN_2021)
    assert v["kind"] == "neutral" and v["delta_us"] == 0.0
    assert v["noise_us"] == pytest.approx(2.228 * se, abs=1e-3)  # df 10 exactly
    assert v["text"].startswith("b vs a: within noise: the device step changed by +0.0 us")


def test_one_step_per_side_is_inconclusive(fixtures):
    cmp = profinsight.compare(
        fixtures / "ascend_pt/text_level0", fixtures / "ascend_pt/text_level1", names=["l0", "l1"], lang="en"
    )
    v = cmp.noise_verdicts()[0]
    assert v["kind"] == "inconclusive" and v["noise_us"] is None and (v["from_steps"], v["to_steps"]) == (1, 1)
    assert "1 vs 1 steps give no run-to-run noise" in v["text"]
    assert v["comparability"] == []


def test_rank_sets_that_differ_refuse_a_verdict(fixtures):
    cmp = profinsight.compare(
        fixtures / "ascend_pt/text_level1", fixtures / "ascend_pt/text_level1/rank0_ascend_pt", lang="en"
    )
    v = cmp.noise_verdicts()[0]
    assert v["kind"] == "inconclusive"
    assert [(w["code"], w["blocking"]) for w in v["comparability"]] == [("ranks", True)]
    assert "different rank sets ({0, 1} vs {0})" in v["text"]


def test_different_hardware_and_program_are_named(fixtures):
    cmp = profinsight.compare(
        fixtures / "kineto/gpu_alexnet.json.gz", fixtures / "kineto/amd_mi250.json.gz", names=["a100", "mi250"]
    )
    v = cmp.noise_verdicts()[0]
    codes = {w["code"]: w for w in v["comparability"]}
    assert set(codes) == {"hardware", "model"} and v["kind"] == "inconclusive"
    assert codes["hardware"]["message"] == "different hardware (NVIDIA A100-PG509-200 vs AMD Radeon Graphics)"
    assert not codes["hardware"]["blocking"] and codes["model"]["blocking"]
    assert "match only 21%" in codes["model"]["message"]


def test_cpu_only_runs_compare_on_the_host_step(fixtures):
    p = profinsight.load(fixtures / "kineto/cpu_only.json.gz")
    cmp = profinsight.compare(p, p, names=["a", "b"], lang="en")
    v = cmp.noise_verdicts()[0]
    assert v["basis"] == "host" and v["kind"] == "inconclusive" and v["delta_us"] == 0.0
    assert "host step (ProfilerStep; no device step recorded)" in v["text"]
    assert "nan" not in cmp.verdicts()[0]


def test_noise_edge_cases():
    assert math.isnan(noise_of([1.0], [2.0])[1])
    assert noise_of([1.0, 1.0], [2.0, 2.0])[:2] == (1.0, 0.0)
    assert t95(1) == 12.706 and t95(11) == 2.228 and t95(500) == 1.96


def test_cli_compare_json_verdicts_and_lang(fixtures, capsys):
    from profinsight.cli import main

    a, b = fixtures / LEGACY / "resnet50_tb_plugin_2021.json.gz", fixtures / LEGACY / "resnet50_json_array.json.gz"
    assert main(["compare", str(a), str(b), "--format", "json", "--lang", "zh"]) == 0
    d = json.loads(capsys.readouterr().out)
    (v,) = d["verdicts"]
    assert {"kind", "delta_us", "noise_us", "text", "comparability"} <= set(v)
    assert v["kind"] == "regression" and v["delta_us"] == pytest.approx(44334.333, abs=1e-3)
    assert v["text"].startswith("resnet50_json_array.json.gz 对比 resnet50_tb_plugin_2021.json.gz：性能回退")
    assert main(["compare", str(a), str(b)]) == 0
    assert "regression: the device step grew by 44,334.3 us" in capsys.readouterr().out.replace("\n", " ")


def test_ranks_and_check_speak_the_chosen_language(fixtures, capsys):
    from profinsight.cli import main

    assert main(["ranks", str(fixtures / "ascend_pt/text_level1"), "--lang", "zh"]) == 0
    assert "2 个 rank：太少，无法判定慢 rank" in capsys.readouterr().out
    base, test = fixtures / "kineto/compare_base.json.gz", fixtures / "kineto/compare_test.json.gz"
    args = ["check", str(test), "--baseline", str(base), "--max-step-regression", "5%"]
    assert main([*args, "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert (
        "平均迭代（step_us）78,559.0 us，基线 137,016.5 us：-42.7%，在 5.0% 的预算内" in out and "所有预算均满足" in out
    )
    assert main([*args, "--lang", "en"]) == 0
    assert "-42.7% within the 5.0% budget" in capsys.readouterr().out
