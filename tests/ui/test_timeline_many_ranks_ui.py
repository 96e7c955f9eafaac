"""The multi-rank timeline of a run of more ranks than check boxes fit (10 generated copies of the
real text_level1 rank, served in full): the Ranks panel picks ranks by a text of ranges, says how
many are shown, refuses a text that names no rank, offers per-rank offsets only for a few ranks,
and the choice travels in the link."""

from __future__ import annotations

import sys

import pytest
from _support import REPO

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def base(serve, tmp_path_factory, fixtures):  # fixtures: the generator repeats a fixture rank
    sys.path.insert(0, str(REPO / "benchmarks"))
    from generate import generate_ascend

    out = tmp_path_factory.mktemp("ranks10")
    generate_ascend(0, out, ranks=10, copies=1, check=False, link=True)
    return serve(out / "ascend")


def _hook(page, expr):
    return page.evaluate(f"() => window.profinsightTimeline.{expr}")


def _open(page, url):
    page.goto(url)
    page.wait_for_selector(".pi-tl[data-state='ready']", timeout=180_000)
    page.wait_for_function("() => window.profinsightTimeline.idle()", timeout=60_000)


def _rank_rows(page):
    return [r["rank"] for r in _hook(page, "tracks()") if r["kind"] == "rank"]


def test_many_ranks_are_picked_by_ranges(base, page, shot):
    _open(page, f"{base}/#ascend/timeline")
    assert _rank_rows(page) == list(range(10))
    page.click(".pi-tl-ranks-btn")
    # one text field instead of ten check boxes
    assert page.locator(".pi-tl-rank-box").count() == 0
    assert page.input_value(".pi-tl-ranks-pick") == "0-9"
    assert page.inner_text(".pi-tl-ranks-count") == "10 of 10 ranks"
    assert page.locator(".pi-tl-offset").count() == 0
    assert page.inner_text(".pi-tl-offsets-note") == "show 8 ranks or fewer to adjust their offsets"
    page.fill(".pi-tl-ranks-pick", "7, 2-4")
    page.press(".pi-tl-ranks-pick", "Enter")
    page.wait_for_function("() => window.profinsightTimeline.shownRanks().length === 4")
    assert _hook(page, "shownRanks()") == [2, 3, 4, 7]
    assert _rank_rows(page) == [2, 3, 4, 7]
    assert page.input_value(".pi-tl-ranks-pick") == "2-4, 7"
    assert page.inner_text(".pi-tl-ranks-count") == "4 of 10 ranks"
    assert page.eval_on_selector_all(".pi-tl-offset", "es => es.map(e => e.dataset.rank)") == ["2", "3", "4", "7"]
    page.wait_for_function("() => location.hash.includes('ranks=2%2C3%2C4%2C7')")
    # a text that names no rank of the run is said, and changes nothing
    page.fill(".pi-tl-ranks-pick", "12-20")
    page.press(".pi-tl-ranks-pick", "Enter")
    assert page.inner_text(".pi-tl-ranks-error") == "“12-20” names no rank of this run (its ranks: 0-9)"
    assert _hook(page, "shownRanks()") == [2, 3, 4, 7]
    page.fill(".pi-tl-ranks-pick", "2-4, 7")
    page.press(".pi-tl-ranks-pick", "Enter")
    shot(page, "timeline_many_ranks_picker")
    # the link opens the same ranks
    other = page.context.new_page()
    _open(other, page.url)
    assert _hook(other, "shownRanks()") == [2, 3, 4, 7] and _rank_rows(other) == [2, 3, 4, 7]
    other.click(".pi-tl-ranks-btn")
    assert other.input_value(".pi-tl-ranks-pick") == "2-4, 7"
    other.close()
    # All shows every rank again
    page.click(".pi-tl-ranks-all")
    assert _hook(page, "shownRanks()") == list(range(10))
    assert page.input_value(".pi-tl-ranks-pick") == "0-9"
    assert page.errors == []
