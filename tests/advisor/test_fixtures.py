"""The advisor on the real fixtures: the Level1 communication trap, the format-conversion share,
a Kineto GPU trace, and the analyze / report commands."""

from __future__ import annotations

import csv
import json
import re
from decimal import Decimal

import pytest

import profinsight as pi
from profinsight.advisor import guided_report
from profinsight.cli import main


@pytest.fixture(scope="module")
def level1(fixtures):
    return pi.load(fixtures / "ascend_pt/text_level1")


@pytest.fixture(scope="module")
def report(level1):
    return guided_report(level1, "en")


def _comm_json(fixtures, rank):
    path = next((fixtures / "ascend_pt/text_level1").glob(f"rank{rank}_*/ASCEND_PROFILER_OUTPUT/communication.json"))
    data = json.loads(path.read_text())
    tot = {"Transit Time(ms)": 0.0, "Wait Time(ms)": 0.0, "Idle Time(ms)": 0.0, "Elapse Time(ms)": 0.0}
    for step in data.values():
        for group in step.values():
            for name, op in group.items():
                if name == "Total Op Info":
                    continue
                for key in tot:
                    tot[key] += op["Communication Time Info"][key]
    return tot


def test_communication_finding_says_the_collectives_wait(report, fixtures):
    # findings are ordered by recoverable time (one order everywhere): the idle gaps (21.7 ms per
    # step) come before the communication finding, whose recoverable time the compute bounds
    assert [f["rule"] for f in report["findings"]][:2] == ["idle_gaps", "communication_overlap"]
    assert [a["rule"] for a in report["actions"]] == [f["rule"] for f in report["findings"] if f["recoverable_us"]]
    top = {f["rule"]: f for f in report["findings"]}["communication_overlap"]
    assert report["verdict"]["type"] == "communication"
    s = top["evidence"]["split"]
    vendor = [_comm_json(fixtures, r) for r in (0, 1)]
    for ours, key in (("transit_us", "Transit Time(ms)"), ("wait_us", "Wait Time(ms)"), ("idle_us", "Idle Time(ms)")):
        assert s[ours] == pytest.approx(sum(v[key] for v in vendor) * 1000, rel=1e-4)
    assert s["idle_ratio"] > 0.9 and s["transit_ratio"] < 0.05
    msg = top["message"]
    transit_ms = sum(v["Transit Time(ms)"] for v in vendor) / 2
    assert f"transit only {transit_ms:.1f} ms" in msg
    assert "slower rank or host outside the loaded ranks" in msg
    # recoverable bounded by the compute not yet overlapped (step_breakdown, mean of the 2 ranks)
    assert top["recoverable_us"] == pytest.approx(((8873.737 - 4028.673) + (8878.275 - 4016.231)) / 2, abs=0.01)
    assert top["share_of_step_ratio"] < 0.05


def test_format_conversion_share(report, fixtures):
    f = {x["rule"]: x for x in report["findings"]}["format_conversion"]
    rows = []
    for r in (0, 1):
        path = next((fixtures / "ascend_pt/text_level1").glob(f"rank{r}_*/ASCEND_PROFILER_OUTPUT/kernel_details.csv"))
        rows += list(csv.DictReader(path.open()))
    compute = sum(Decimal(x["Duration(us)"]) for x in rows if not x["Type"].startswith("hcom"))
    trans = sum(Decimal(x["Duration(us)"]) for x in rows if x["Type"] == "TransData")
    share = float(trans / compute)
    assert 0.155 < share < 0.165
    assert f["evidence"]["by_type"]["TransData"]["share_of_compute_ratio"] == pytest.approx(share, rel=1e-4)
    assert f"TransData alone {share:.1%}" in f["message"]
    assert f["share_of_step_ratio"] == pytest.approx(f["evidence"]["share_of_step_ratio"], rel=1e-3)
    assert f["share_of_step_ratio"] < 0.02 and f"{f['share_of_step_ratio']:.1%} of the step" in f["message"]


def test_kineto_gpu_report_and_silent_ascend_rules(fixtures):
    p = pi.load(fixtures / "kineto/gpu_alexnet.json.gz")
    rep = guided_report(p, "en")
    fired = {f["rule"] for f in rep["findings"]}
    na = {n["rule"] for n in rep["not_applicable"]}
    assert {"format_conversion", "ai_cpu", "online_compile", "env_launch_blocking"} <= na
    assert not fired & na and "idle_gaps" in fired
    df = p.advise(lang="zh")
    assert set(df[df.severity == "not_applicable"].rule) == na


@pytest.mark.slow
def test_cli_analyze_json_and_report_html(fixtures, tmp_path, capsys):
    path = fixtures / "ascend_pt/text_level1"
    assert main(["analyze", str(path), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["findings"][0]["rule"] == "idle_gaps" and data["actions"]  # ordered by recoverable time
    out = tmp_path / "report.html"
    assert main(["report", str(path), "-o", str(out), "--lang", "zh"]) == 0
    text = out.read_text(encoding="utf-8")
    assert "<svg" in text and "结论" in text and "<script" not in text
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", text)
    assert main(["analyze", str(path), "-o", str(tmp_path / "a.md")]) == 0
    assert "## " in (tmp_path / "a.md").read_text(encoding="utf-8")
    assert main(["analyze", str(tmp_path / "missing")]) == 2
