"""The viewer on a format added in this round, in a real browser: current CANN's
``mindstudio_profiler_output/`` layout (two devices sharing one sliced timeline, op types from
op_summary; built from the real msprof collection as tests/importers/test_msprof_output.py
builds it).  The HTTP routes of every fixture are checked in tests/surfaces/test_every_fixture.py;
this is the one look at the page."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "importers"))

import test_msprof_output as built  # noqa: E402

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def two_devices(fixtures, tmp_path_factory):
    (src,) = (fixtures / "msprof" / "prof_timeline_2023").iterdir()
    return built.build_two_devices(src, tmp_path_factory.mktemp("ui-mpo"))


def test_an_msprof_output_folder_opens_in_the_viewer(serve, page, two_devices, shot):
    base = serve(two_devices)
    page.goto(base + "/")
    page.wait_for_selector(".pi-tab[data-view='timeline']")
    assert page.inner_text(".pi-profile-info").startswith("msprof · 2 rank(s), 10 step(s)")
    assert not page.query_selector(".pi-diag-worst-error")
    page.click(".pi-tab[data-view='operators']")
    page.wait_for_selector(".pi-op-table tbody tr", timeout=60_000)
    text = page.inner_text(".pi-pane-operators")
    assert "Cast" in text  # op types from op_summary, not only kernel names
    shot(page, "msprof_output_operators")
    page.click(".pi-tab[data-view='timeline']")
    page.wait_for_selector(".pi-tl[data-state='ready']", timeout=60_000)
    page.wait_for_function("() => window.profinsightTimeline && window.profinsightTimeline.idle()", timeout=20_000)
    rows = page.evaluate("() => window.profinsightTimeline.tracks()")
    ranks = [r["label"] for r in rows if r["kind"] == "rank"]
    units = {r["label"] for r in rows if r["kind"] == "unit"}
    assert ranks == ["Rank 0", "Rank 1"], ranks
    assert any("HCCL" in u or "Communication" in u for u in units), units
    shot(page, "msprof_output_timeline")
    assert page.errors == []
