"""The Ranks view's rank x step heat map and parallel groups in a real browser, on the real
Qwen3 run (TP1 / PP2 / DP2): every cell of the heat map's table equals ``rank_steps`` (formatted
as the viewer formats it), the ranks are grouped by their data-parallel group, the figure picker
switches to computing and communication wait, each cell says which tier its figures came from,
and the groups section names the rank each pipeline group waits for."""

from __future__ import annotations

import pytest
from _support import REPO, fmt_duration

import profinsight

pytestmark = pytest.mark.browser
RUN = "qwen3_level2_4rank"


def fmt_us(us: float) -> str:
    return fmt_duration(us * 1e3)


@pytest.fixture(scope="module")
def qwen(fixtures):
    return fixtures / "ascend_llm" / RUN


@pytest.fixture(scope="module")
def base(serve, qwen):
    return serve(qwen)


def grid(page):
    """{rank: (group, [cell texts], [tiers])} of the heat map's table, in row order."""
    return page.eval_on_selector(
        ".pi-pane-ranks .pi-heat-grid",
        """t => Array.from(t.querySelectorAll('tbody tr')).map(tr => [Number(tr.dataset.rank),
              tr.children[0].textContent, Array.from(tr.querySelectorAll('td[data-step]')).map(td => td.textContent),
              Array.from(tr.querySelectorAll('td[data-step]')).map(td => td.dataset.source)])""",
    )


def cell_point(box: dict, row: int, rows: int) -> tuple[float, float]:
    """A point inside heat-map row ``row`` of ``rows`` (the map is one canvas, ./widgets/heatgrid.ts:
    rows under a 34 px header, 8 px below them), right of the labels, left of the colour scale."""
    return box["x"] + box["width"] - 200, box["y"] + 34 + (row + 0.5) * (box["height"] - 42) / rows


def hover_cell(page, row: int, rows: int):
    """Scroll the heat map into view, hover row ``row`` of ``rows``: (the point, its tooltip)."""
    canvas = page.locator(".pi-pane-ranks .pi-heat-chart canvas")
    canvas.wait_for(timeout=90_000)
    canvas.scroll_into_view_if_needed()
    cell = cell_point(canvas.bounding_box(), row, rows)
    page.mouse.move(*cell)
    tip = page.locator(".pi-pane-ranks .pi-heatgrid-tip")
    tip.wait_for(state="visible")
    return cell, tip


def test_rank_step_heatmap_grouped_by_parallel_group(base, page, qwen, shot):
    rs = profinsight.load(qwen).rank_steps()
    page.goto(f"{base}/#{RUN}/ranks")
    page.wait_for_selector(".pi-pane-ranks .pi-heat-grid tbody tr", timeout=90_000)
    page.wait_for_timeout(200)
    rows = grid(page)
    assert [r[0] for r in rows] == [0, 1, 2, 3]
    assert [r[1] for r in rows] == ["dp_cp [0, 1]", "dp_cp [0, 1]", "dp, dp_cp [2, 3]", "dp, dp_cp [2, 3]"]
    by = rs.set_index("rank")
    for metric in ("step_us", "computing_us", "comm_wait_us"):
        page.select_option(".pi-pane-ranks .pi-heat-metric", metric)
        page.wait_for_timeout(100)
        assert [r[2] for r in grid(page)] == [[fmt_us(by.loc[k, metric])] for k in range(4)]
    assert [r[3][0] for r in grid(page)] == ["tasks", "vendor_summary", "tasks", "vendor_summary"]
    assert page.get_attribute(".pi-pane-ranks .pi-ranks-tier", "data-tier") == "full"
    assert page.query_selector(".pi-pane-ranks .pi-open-rank") is None  # every rank is loaded in full
    assert page.is_visible(".pi-pane-ranks .pi-heat-chart canvas")
    slow = page.eval_on_selector_all(".pi-pane-ranks .pi-group-slow", "els => els.map(e => e.dataset.rank)")
    assert sorted(slow) == ["2", "3"]
    assert "Rank 2 holds back group embd, mp, pp (ranks 0, 2)" in page.inner_text(".pi-pane-ranks")
    page.select_option(".pi-pane-ranks .pi-heat-metric", "comm_wait_us")
    page.locator(".pi-pane-ranks .pi-heat-chart").scroll_into_view_if_needed()
    # the map is one canvas (./widgets/heatgrid.ts): 4 rows of 24 px under a 34 px header, the
    # colour scale in the right 120 px; a point in rank 2's row, right of the labels, hovers its cell
    row2, tip = hover_cell(page, 2, 4)
    box = page.locator(".pi-pane-ranks .pi-heat-chart canvas").bounding_box()
    assert tip.inner_text().split("\n") == [
        "rank 2 · step 13",
        f"Communication wait {fmt_us(by.loc[2, 'comm_wait_us'])}",
        "dp, dp_cp [2, 3]",
        "from: tasks",
        "Click: this step on the timeline",
    ]
    shot(page, "view_ranks_heatmap")
    page.mouse.move(box["x"] + 2, box["y"] + 2)  # over the labels: no cell, no tooltip
    tip.wait_for(state="hidden")
    # rank 1's step comes from the vendor's summary: no window, its cell says no click and opens nothing
    row1 = cell_point(box, 1, 4)
    page.mouse.move(*row1)
    tip.wait_for(state="visible")
    assert tip.inner_text().split("\n")[-1] == "from: vendor_summary"
    page.mouse.click(*row1)
    page.wait_for_timeout(400)
    assert page.evaluate("location.hash") == f"#{RUN}/ranks"
    # rank 2's cell opens the timeline on rank 2's step 13 (its device window, with the view's margin)
    page.mouse.click(*row2)
    page.wait_for_function(f"() => location.hash.startsWith('#{RUN}/timeline')")
    q = dict(kv.split("=") for kv in page.evaluate("location.hash").split("?", 1)[1].split("&"))
    assert q["rank"] == "2"
    lo, hi = int(q["start"]), int(q["end"])
    start, end = int(by.loc[2, "start_ns"]), int(by.loc[2, "end_ns"])
    assert (start, end) == (1764246877074017600, 1764246877883820800)
    assert lo <= start < end <= hi and hi - lo <= 1.3 * (end - start)
    assert page.errors == []


def test_a_loaded_run_opens_its_view_without_the_first_paint(base, page):
    """Opened again once the server holds the run (a reload, a second window), the viewer asks
    ``status`` first and goes straight to the view: neither the run's summary (0.8 MB and 0.4 s of
    charts on 1,024 ranks, thrown away at once) nor the ranks-ready paint is fetched."""
    page.goto(f"{base}/#{RUN}/ranks")
    page.wait_for_selector(".pi-pane-ranks .pi-heat-chart canvas", timeout=90_000)
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url.split("?")[0].rsplit("/", 1)[-1]))
    page.reload()
    page.wait_for_selector(".pi-pane-ranks .pi-heat-chart canvas", timeout=90_000)
    assert "status" in asked and RUN in asked
    assert "summary" not in asked and "ready" not in asked
    assert {"rank_summary", "slow_ranks", "slow_links", "rank_steps", "parallel_groups"} <= set(asked)
    assert page.errors == []


def test_the_view_says_its_tier_and_opens_a_rank_in_full(serve, qwen, page, monkeypatch):
    """Served above the summary bar (moved to 2 ranks) the Ranks view says every figure comes from
    the ranks' summaries, and a slow rank's button opens that rank alone, in full, on its timeline."""
    monkeypatch.setenv("PROFINSIGHT_SUMMARY_RANKS", "2")
    monkeypatch.setenv("PROFINSIGHT_BACKGROUND_RANKS", "0")
    base = serve(qwen)
    page.goto(f"{base}/#{RUN}/ranks")
    page.wait_for_selector(".pi-pane-ranks .pi-heat-grid tbody tr", timeout=90_000)
    assert page.get_attribute(".pi-pane-ranks .pi-ranks-tier", "data-tier") == "summary"
    assert "no full import was made" in page.inner_text(".pi-pane-ranks .pi-ranks-tier")
    page.click(".pi-pane-ranks .pi-group-slow .pi-open-rank[data-rank='2']")
    page.wait_for_function("() => /^#rank_2_ascend_pt[^/]*\\/timeline/.test(location.hash)", timeout=60_000)
    # a cell of the heat map opens its rank in full too: rank 3, the last row
    page.goto(f"{base}/#{RUN}/ranks")
    cell, tip = hover_cell(page, 3, 4)
    assert tip.inner_text().split("\n")[0] == "rank 3 · step 13"
    assert tip.inner_text().split("\n")[-1] == "Click: open rank 3 in full, on its timeline"
    page.mouse.click(*cell)
    page.wait_for_function("() => /^#rank_3_ascend_pt[^/]*\\/timeline/.test(location.hash)", timeout=60_000)
    assert page.errors == []


@pytest.mark.usefixtures("fixtures")  # the generator repeats a fixture rank
def test_a_large_job_draws_what_stands_out(serve, page, tmp_path_factory, shot):
    """66 generated ranks (33 groups of 2, one slowed per group; summary tier above 16 ranks): the
    bars show the 64 ranks farthest from the median, the group and slow-rank cards stop at 16 and
    name the rest, the heat map draws every rank without its table, and nothing fails."""
    import sys

    sys.path.insert(0, str(REPO / "benchmarks"))
    from generate import generate_ascend

    out = tmp_path_factory.mktemp("ranks66")
    info = generate_ascend(0, out, ranks=66, copies=1, check=False, group_size=2, slow_us=10_000, link=True)
    base = serve(out / "ascend")
    page.goto(f"{base}/#ascend/ranks")
    page.wait_for_selector(".pi-pane-ranks .pi-heat-chart canvas", timeout=90_000)
    assert page.get_attribute(".pi-pane-ranks .pi-ranks-tier", "data-tier") == "summary"
    assert page.inner_text(".pi-pane-ranks .pi-ranks-top").startswith("The 64 of 66 ranks farthest from the median")
    assert page.locator(".pi-pane-ranks .pi-group-slow").count() == 16
    more = page.locator(".pi-pane-ranks .pi-ranks-more").first.inner_text()
    held = sorted(info["groups"]["slow_ranks"].values())
    assert more.startswith("17 more: rank(s) ") and all(str(r) in more for r in held[-5:])
    assert page.query_selector(".pi-pane-ranks .pi-heat-grid") is None  # 66 ranks: the chart carries the figures
    # the wheel zooms into a band of ranks around the pointer, a drag moves it, a double-click shows all
    heat = page.locator(".pi-pane-ranks .pi-heat-chart")
    assert heat.get_attribute("data-band") == "0-65"
    heat.scroll_into_view_if_needed()
    box = page.locator(".pi-pane-ranks .pi-heat-chart canvas").bounding_box()
    mid = (box["x"] + box["width"] / 2, box["y"] + 34 + (box["height"] - 42) / 2)
    page.mouse.move(*mid)
    for _ in range(6):
        page.mouse.wheel(0, -100)
        page.wait_for_timeout(50)
    page.wait_for_function("() => document.querySelector('.pi-pane-ranks .pi-heat-chart').dataset.band !== '0-65'")
    lo, hi = map(int, heat.get_attribute("data-band").split("-"))
    # 66 x 0.8^6 = 17.3 rows (partly shown at the edges), around the middle rank
    assert 17 <= hi - lo + 1 <= 19 and lo <= 33 <= hi
    page.mouse.move(*mid)
    page.locator(".pi-pane-ranks .pi-heatgrid-tip").wait_for(state="visible")
    shot(page, "view_ranks_heatmap_zoomed")
    page.mouse.down()
    page.mouse.move(mid[0], mid[1] + 200, steps=4)  # drag down: earlier ranks come into view
    page.mouse.up()
    page.wait_for_function(
        f"() => Number(document.querySelector('.pi-pane-ranks .pi-heat-chart').dataset.band.split('-')[0]) < {lo}"
    )
    page.mouse.dblclick(*mid)
    page.wait_for_function("() => document.querySelector('.pi-pane-ranks .pi-heat-chart').dataset.band === '0-65'")
    assert page.errors == []


def test_the_timeline_of_a_summary_tier_run_opens_a_rank_in_full(serve, qwen, page, monkeypatch):
    """The Timeline of a run read from its summaries says it holds no timeline and lists the ranks
    imported in the background (most suspicious first: rank 3, the one its pipeline group waits for
    longest); picking rank 2 opens its folder alone, in full, and its timeline draws."""
    monkeypatch.setenv("PROFINSIGHT_SUMMARY_RANKS", "2")
    monkeypatch.setenv("PROFINSIGHT_BACKGROUND_RANKS", "1")
    base = serve(qwen)
    page.goto(f"{base}/#{RUN}/timeline")
    page.wait_for_selector(".pi-tl-summary-panel", timeout=90_000)
    assert "holds no timeline" in page.inner_text(".pi-tl-summary-panel")
    assert page.eval_on_selector_all(".pi-open-suspicious .pi-open-rank", "bs => bs.map(b => b.dataset.rank)") == ["3"]
    page.select_option(".pi-open-rank-pick", "2")
    page.click(".pi-open-rank-go")
    page.wait_for_function("() => /^#rank_2_ascend_pt[^/]*\\/timeline/.test(location.hash)", timeout=60_000)
    page.wait_for_selector(".pi-tl[data-state='ready']", timeout=90_000)
    page.wait_for_load_state("networkidle")  # the idle-gap marks asked after the first paint have come
    assert page.errors == []


def test_a_cluster_summary_cell_opens_nothing(serve, page, fixtures):
    """msprof-analyze's cluster output holds no rank's traces: its cells say no click and a click
    leaves the view where it is (a summary tier of rank folders opens the rank in full)."""
    base = serve(fixtures / "cluster_analysis" / "cluster_analysis_output")
    page.goto(f"{base}/#cluster_analysis_output/ranks")
    cell, tip = hover_cell(page, 4, 16)
    assert tip.inner_text().split("\n") == ["rank 4 · step 2", "Step time 289.8 ms", "from: vendor_summary"]
    page.mouse.click(*cell)
    page.wait_for_timeout(600)
    assert page.evaluate("location.hash") == "#cluster_analysis_output/ranks"
    assert page.locator(".pi-pane-ranks .pi-open-rank").count() == 0
    assert page.errors == []
