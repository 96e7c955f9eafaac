"""The links ``profinsight mcp`` hands out open the viewer at the finding: a real ``profinsight
serve`` of the sample, ``viewer_link(rule=...)`` pointed at it, and the page it opens shows the
timeline zoomed to the finding's evidence window (with the view's 10 % margin)."""

from __future__ import annotations

import shutil

import pytest

from profinsight.agents import make_session
from profinsight.samples import sample_path

pytestmark = pytest.mark.browser
SAMPLE = "rank0_ascend_pt"


def test_viewer_link_opens_the_finding_window(serve, page, tmp_path, shot):
    shutil.copytree(sample_path(), tmp_path / SAMPLE)
    base = serve(tmp_path / SAMPLE)
    session = make_session([tmp_path], viewer_url=base + "/")
    got = session.viewer_link(SAMPLE, rule="idle_gaps")
    w = got["window"]
    page.goto(got["standalone"])
    page.wait_for_selector(".pi-tl[data-state='ready']", timeout=30_000)
    page.wait_for_function("() => window.profinsightTimeline && window.profinsightTimeline.idle()", timeout=20_000)
    origin = int(page.evaluate("() => window.profinsightTimeline.origin()"))
    shown = page.evaluate("() => window.profinsightTimeline.visibleWindow()")
    span = w["end_ns"] - w["start_ns"]
    assert span > 0  # a link is shown exactly as given (no margin: that is for jumps between views)
    assert shown["start_ns"] == pytest.approx(w["start_ns"] - origin, abs=2)
    assert shown["end_ns"] == pytest.approx(w["end_ns"] - origin, abs=2)
    shot(page, "agents_viewer_link")
    assert page.errors == []
