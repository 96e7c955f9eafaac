"""``profinsight record``: two registered Kineto runs -> one HTML and one Markdown record with
what was run, headline numbers equal to the step breakdown, before/after, charts and findings."""

from __future__ import annotations

import re

import pytest

import profinsight as pi
from profinsight.cli import main
from profinsight.collection import record


@pytest.fixture(scope="module")
def runs(fixtures, tmp_path_factory):
    folder = tmp_path_factory.mktemp("experiments")
    mp = pytest.MonkeyPatch()
    mp.setenv("PROFINSIGHT_EXPERIMENTS", str(folder))
    base, test = fixtures / "kineto/compare_base.json.gz", fixtures / "kineto/compare_test.json.gz"
    pi.register("baseline", base, notes="first try", params={"batch": 8})
    pi.register("fewer-syncs", test, notes="removed .item()")
    steps = {n: pi.load(p).step_breakdown() for n, p in (("baseline", base), ("fewer-syncs", test))}
    yield folder, steps
    mp.undo()


def _mean_step(sb) -> float:
    return float(sb["step_us"].astype("float64").mean())


def test_record_html(runs, tmp_path, monkeypatch):
    folder, steps = runs
    monkeypatch.setenv("PROFINSIGHT_EXPERIMENTS", str(folder))
    out = tmp_path / "record.html"
    assert main(["record", "baseline", "fewer-syncs", "-o", str(out), "--lang", "en"]) == 0
    page = out.read_text(encoding="utf-8")
    for section in (
        "Experiment record",
        "Round 1: baseline",
        "Round 2: fewer-syncs",
        "What was run",
        "Headline numbers",
        "Before / after: baseline → fewer-syncs",
        "Step breakdown (us)",
        "Top 10 operators by device time (us)",
        "Advisor findings",
        "first try",
        "batch=8",
        "removed .item()",
    ):
        assert section in page, section
    # headline step time and the per-step rows equal step_breakdown
    for sb in steps.values():
        assert f"{_mean_step(sb):,.1f}" in page
        for v in sb["step_us"]:
            assert f"{float(v):,.1f}" in page
    delta = _mean_step(steps["fewer-syncs"]) - _mean_step(steps["baseline"])
    assert f"{delta:+,.1f}" in page
    assert page.count("<svg") == 4  # step breakdown + top operators, per round
    # self-contained: no script, no external resource (the SVG namespace is not a request)
    assert "<script" not in page and not re.search(r"(src|href)\s*=|url\(|@import", page)
    assert set(re.findall(r"https?://[^'\"\s)]+", page)) <= {"http://www.w3.org/2000/svg"}
    assert page.count("class='sev-") >= 2  # findings in each round


def test_record_markdown_and_data(runs, tmp_path, monkeypatch):
    folder, steps = runs
    monkeypatch.setenv("PROFINSIGHT_EXPERIMENTS", str(folder))
    out = tmp_path / "record.md"
    assert main(["record", "baseline", "fewer-syncs", "-o", str(out), "--lang", "en"]) == 0
    md = out.read_text(encoding="utf-8")
    assert md.startswith("# Experiment record")
    assert "## Round 1: baseline" in md and "## Round 2: fewer-syncs" in md and "<svg" not in md
    assert "| step_us |" in md and "### Advisor findings" in md
    for sb in steps.values():
        assert f"| step time (us, mean per step) | {_mean_step(sb):,.1f} |" in md
    data = record.build(["baseline", "fewer-syncs"], lang="zh")
    r1, r2 = data["rounds"]
    assert (r1["round"], r2["round"]) == (1, 2) and "before_after" not in r1
    assert r1["headline"]["step_us"] == pytest.approx(_mean_step(steps["baseline"]))
    ba = {row["metric"]: row for row in r2["before_after"]["rows"]}
    assert ba["step_us"]["after"] == pytest.approx(_mean_step(steps["fewer-syncs"]))
    assert ba["step_us"]["delta"] == pytest.approx(_mean_step(steps["fewer-syncs"]) - _mean_step(steps["baseline"]))
    assert "实验记录" in record.render_markdown(data)


def test_record_unknown_name(runs, monkeypatch, capsys):
    monkeypatch.setenv("PROFINSIGHT_EXPERIMENTS", str(runs[0]))
    assert main(["record", "baseline", "nope"]) == 2
    assert "no experiment named 'nope'" in capsys.readouterr().err
