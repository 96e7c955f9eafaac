"""The guided report in words on profiles without steps: the recoverable time is said in ms
without a share of a step that does not exist (these shipped fixtures crashed `analyze` and
`report` with a TypeError before)."""

from __future__ import annotations

import pytest

import profinsight
from profinsight.advisor import guided_report
from profinsight.cli import main
from profinsight.render.report import recoverable_words
from profinsight.render.text import markdown

#: (fixture, whether an action without a share of step is expected): rank_non_gpu's only
#: candidate, the data loader, is 0.094% of its host step and stays silent
NO_STEPS = [("kineto/gpu_cupti_counters.json.gz", True), ("kineto/rank_non_gpu.json.gz", False)]


def test_recoverable_words():
    assert recoverable_words({"recoverable_us": 1234.5, "share_of_step_ratio": 0.056}, "en") == "1.23 ms (5.6% of step)"
    assert recoverable_words({"recoverable_us": 1234.5, "share_of_step_ratio": None}, "en") == "1.23 ms"
    assert recoverable_words({"recoverable_us": None}, "en") == "not estimated"


@pytest.mark.parametrize(("rel", "has_unshared"), NO_STEPS)
def test_analyze_and_report_speak_of_profiles_without_steps(fixtures, rel, has_unshared, tmp_path, capsys):
    path = str(fixtures / rel)
    rep = guided_report(profinsight.load(path), "en")
    unshared = [a for a in rep["actions"] if a.get("share_of_step_ratio") is None]
    assert bool(unshared) is has_unshared
    md = markdown(rep)
    for a in unshared:
        assert f"{a['title']}: {a['recoverable_us'] / 1e3:,.2f} ms\n" in md + "\n"
    assert main(["analyze", path]) == 0
    out = capsys.readouterr().out
    assert out.startswith("profinsight analyze: guided report")  # the command's own name, not "report"
    assert all(a["title"] in out for a in rep["actions"])
    assert main(["report", path, "-o", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text()
    assert all(f"{a['recoverable_us'] / 1e3:,.2f} ms</li>" in page for a in unshared)
