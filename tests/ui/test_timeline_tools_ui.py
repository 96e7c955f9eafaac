"""The Timeline view's tools in a real browser on a real fixture: the hover tooltip, a dragged
range and its per-name statistics (equal to SQL over the same window), markers, the lane
filter, pinning, Ctrl+wheel zoom vs plain-wheel scroll, HCCL planes as their own lanes, and idle
gaps fetched per window."""

from __future__ import annotations

import pytest
from _support import fmt_duration

import profinsight
from profinsight import timeline as tl

RANK0 = ("ascend_pt", "text_level1", "rank0_ascend_pt")
GUTTER = 230
RULER_H, UNIT_H = 26, 22
pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def base(serve, fixtures):
    return serve(fixtures.joinpath(*RANK0))


@pytest.fixture(scope="module")
def prof(fixtures, base):
    return profinsight.load(fixtures.joinpath(*RANK0))


def _open(page, base):
    page.requests = []
    page.on("request", lambda r: page.requests.append(r.url))
    page.goto(f"{base}/#rank0_ascend_pt/timeline")
    page.wait_for_selector(".pi-tl[data-state='ready']", timeout=30_000)
    _settle(page)


def _settle(page):
    page.wait_for_function("() => window.profinsightTimeline && window.profinsightTimeline.idle()", timeout=20_000)
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def _hook(page, expr):
    return page.evaluate(f"() => window.profinsightTimeline.{expr}")


def _box(page):
    return page.locator(".pi-tl-canvas").bounding_box()


def _window_sql(prof, origin, a, b, tracks=None):
    lo, hi = origin + a, origin + b
    where = f"start_ns < {hi} AND (start_ns + dur_ns > {lo} OR start_ns >= {lo})"
    if tracks:
        where += " AND track IN (" + ", ".join(f"'{t}'" for t in tracks) + ")"
    table = tl.index_of(prof).slice_table()
    n, total = prof.connection().sql(f"SELECT count(*), sum(dur_ns) FROM {table} WHERE {where}").fetchall()[0]
    return int(n), int(total or 0)


def test_tooltip_shows_name_and_duration(base, page, prof, shot):
    _open(page, base)
    # the longest kernel of stream 2, zoomed so that it is wide
    k = prof.sql(
        "select name, start_ns, dur_ns from device_tasks where stream = 2 order by dur_ns desc, start_ns limit 1"
    )
    origin = int(_hook(page, "origin()"))
    s, d = int(k["start_ns"][0]) - origin, int(k["dur_ns"][0])
    page.evaluate(f"() => window.profinsightTimeline.setWindow({s - d}, {s + 2 * d})")
    _settle(page)
    x = page.evaluate(f"() => window.profinsightTimeline.xOf({s + d / 2})")
    y = page.evaluate("() => window.profinsightTimeline.yOf('r0/stream/2', 0)")
    box = _box(page)
    page.mouse.move(box["x"] + x, box["y"] + y)
    page.wait_for_selector(".pi-tl-tip:not([hidden])")
    tip = _hook(page, "tooltip()")
    assert tip["name"] == k["name"][0] and tip["dur_ns"] == d and tip["count"] == 1
    assert k["name"][0] in tip["text"] and fmt_duration(d) in tip["text"] and "Stream 2" in tip["text"]
    shot(page, "timeline_tooltip")
    # off the slices the tooltip goes away
    page.mouse.move(box["x"] + 10, box["y"] + 5)
    page.wait_for_selector(".pi-tl-tip", state="hidden")
    assert page.errors == []


def test_ruler_drag_range_stats_equal_sql(base, page, prof, shot):
    _open(page, base)
    box = _box(page)
    w = _hook(page, "visibleWindow()")
    plot = box["width"] - GUTTER
    x0, x1 = GUTTER + 0.3 * plot, GUTTER + 0.6 * plot
    page.mouse.move(box["x"] + x0, box["y"] + 12)  # the ruler
    page.mouse.down()
    page.mouse.move(box["x"] + x1, box["y"] + 12, steps=6)
    page.mouse.up()
    page.wait_for_function("() => window.profinsightTimeline.stats() !== null")
    st = _hook(page, "stats()")
    rng = _hook(page, "range()")
    span = w["end_ns"] - w["start_ns"]
    assert rng["start_ns"] == pytest.approx(w["start_ns"] + 0.3 * span, rel=0.01)
    assert rng["end_ns"] == pytest.approx(w["start_ns"] + 0.6 * span, rel=0.01)
    # the window did not move: a ruler drag selects, it does not pan
    assert _hook(page, "visibleWindow()") == w
    n, total = _window_sql(prof, int(st["origin_ns"]), st["start_ns"], st["end_ns"])
    assert (st["count"], st["total_ns"]) == (n, total) and n > 1000
    # the panel lists the names, longest total first, with formatted times
    rows = page.locator(".pi-tl-range-table tbody tr")
    assert rows.count() == min(100, st["names_total"])
    first = st["names"][0]
    cells = rows.first.locator("td").all_inner_texts()
    assert cells[0] == first["name"] and cells[1] == str(first["count"]) and cells[2] == fmt_duration(first["total_ns"])
    assert page.locator(".pi-tl-range-summary").inner_text().startswith(f"{n:,} slices")
    shot(page, "timeline_range_stats")
    # a name's row jumps to its first slice inside the range (the vendor's "More" list), not to
    # the profile's first: a name that also ran before the range
    table = tl.index_of(prof).slice_table()
    lo = int(st["origin_ns"]) + rng["start_ns"]
    j, name = next(
        (j, x["name"])
        for j, x in enumerate(st["names"][:100])
        if prof.connection()
        .execute(f"select min(start_ns + dur_ns) < {lo} from {table} where name = ?", [x["name"]])
        .fetchall()[0][0]
    )
    assert rows.nth(j).locator("td").first.inner_text() == name
    rows.nth(j).click()
    page.wait_for_function(f"() => window.profinsightTimeline.selected()?.name === {name!r}")
    sel = _hook(page, "selected()")
    assert sel["start_ns"] < rng["end_ns"] and sel["start_ns"] + sel["dur_ns"] > rng["start_ns"]
    _settle(page)
    # Escape clears the range
    page.keyboard.press("Escape")
    assert _hook(page, "range()") is None
    assert page.errors == []


def test_lane_filter_and_shift_drag_box(base, page, prof, shot):
    """A Shift+drag over the rows is a box, as in the vendor's viewer: the statistics count the
    tracks of the rows it spans, equal to SQL over those tracks and that window."""
    _open(page, base)
    page.fill(".pi-tl-filter", "plane")
    _settle(page)
    tracks = [r for r in _hook(page, "tracks()") if r["kind"] == "track"]
    assert [r["label"] for r in tracks] == [f"Plane {i}" for i in range(8)]
    box = _box(page)
    y0, y1 = 200, 260
    page.keyboard.down("Shift")
    page.mouse.move(box["x"] + GUTTER + 100, box["y"] + y0)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] - 40, box["y"] + y1, steps=6)
    page.mouse.up()
    page.keyboard.up("Shift")
    page.wait_for_function("() => window.profinsightTimeline.stats() !== null")
    st = _hook(page, "stats()")
    ids = [r["key"] for r in tracks if r["y"] < y1 and r["y"] + r["h"] > y0]
    assert 1 < len(ids) < 8 and sorted(_hook(page, "range()")["tracks"]) == sorted(ids)
    assert st["tracks"] == len(ids)
    n, total = _window_sql(prof, int(st["origin_ns"]), st["start_ns"], st["end_ns"], ids)
    assert (st["count"], st["total_ns"]) == (n, total) and n > 0
    # the box is in the link
    page.wait_for_function("() => location.hash.includes('rtracks=')")
    shot(page, "timeline_filter_planes_box")
    page.keyboard.press("Escape")
    page.fill(".pi-tl-filter", "")
    _settle(page)
    assert len([r for r in _hook(page, "tracks()") if r["kind"] == "track"]) > 8
    assert page.errors == []


def test_pin_markers_and_wheel(base, page, shot):
    _open(page, base)
    rows = _hook(page, "tracks()")
    plane = next(r for r in rows if r["key"] == "r0/hccl/5")
    box = _box(page)
    if plane["y"] + plane["h"] > box["height"]:
        page.evaluate("() => window.profinsightTimeline.pin('r0/hccl/5')")
    else:
        page.mouse.click(box["x"] + 10, box["y"] + plane["y"] + plane["h"] / 2)  # the pin in its gutter
    _settle(page)
    assert _hook(page, "pinned()") == ["r0/hccl/5"]
    top = _hook(page, "tracks()")[:2]
    assert [r["key"] for r in top] == ["pinned", "r0/hccl/5"] and top[1]["label"] == "R0 · HCCL · Plane 5"
    assert [(r["y"], r["sticky"]) for r in top] == [(RULER_H, True), (RULER_H + UNIT_H, True)]
    # plain wheel scrolls the rows and leaves the window alone; the pinned rows stay where they are
    w = _hook(page, "visibleWindow()")
    y0 = _hook(page, "tracks()")[3]["y"]
    page.mouse.move(box["x"] + 700, box["y"] + 300)
    page.mouse.wheel(0, 600)
    page.wait_for_function(f"() => window.profinsightTimeline.tracks()[3].y < {y0} - 300")
    assert _hook(page, "visibleWindow()") == w
    assert [r["y"] for r in _hook(page, "tracks()")[:2]] == [RULER_H, RULER_H + UNIT_H]
    _settle(page)
    # and they still answer the pointer: the tooltip of a pinned slice after the scroll
    cols = _hook(page, "slices('r0/hccl/5')")
    i = max(range(len(cols["dur_ns"])), key=lambda j: (cols["merged"][j] == 0, cols["dur_ns"][j]))
    s, d = cols["start_ns"][i], cols["dur_ns"][i]
    page.evaluate(f"() => window.profinsightTimeline.setWindow({s - d}, {s + 2 * d})")
    _settle(page)
    x = page.evaluate(f"() => window.profinsightTimeline.xOf({s + d / 2})")
    y = page.evaluate(f"() => window.profinsightTimeline.yOf('r0/hccl/5', {cols['depth'][i]})")
    assert RULER_H + UNIT_H < y < RULER_H + UNIT_H + top[1]["h"]
    page.mouse.move(box["x"] + x, box["y"] + y)
    page.wait_for_selector(".pi-tl-tip:not([hidden])")
    tip = _hook(page, "tooltip()")
    assert tip["dur_ns"] == d and "Plane 5" in tip["text"]
    shot(page, "timeline_pinned_after_scroll")
    page.mouse.move(box["x"] + 700, box["y"] + 300)
    page.evaluate(f"() => window.profinsightTimeline.setWindow({w['start_ns']}, {w['end_ns']})")
    _settle(page)
    # Ctrl+wheel zooms at the cursor
    page.keyboard.down("Control")
    page.mouse.wheel(0, -200)
    page.keyboard.up("Control")
    w2 = _hook(page, "visibleWindow()")
    assert w2["end_ns"] - w2["start_ns"] < 0.9 * (w["end_ns"] - w["start_ns"])
    # M drops a marker at the cursor
    page.keyboard.press("m")
    page.mouse.move(box["x"] + 1000, box["y"] + 300)
    page.keyboard.press("m")
    marks = _hook(page, "markers()")
    pxns = (w2["end_ns"] - w2["start_ns"]) / (box["width"] - GUTTER)
    assert len(marks) == 2 and marks[1] - marks[0] == pytest.approx(300 * pxns, rel=0.02)
    assert page.locator(".pi-tl-markers").inner_text().startswith("⚑1 ")
    # a marker in the list centres the window on it (the vendor's flag list jumps the same way)
    page.click(".pi-tl-marker[data-marker='2']")
    w3 = _hook(page, "visibleWindow()")
    assert (w3["start_ns"] + w3["end_ns"]) / 2 == pytest.approx(marks[1], abs=1)
    assert w3["end_ns"] - w3["start_ns"] == pytest.approx(w2["end_ns"] - w2["start_ns"], rel=1e-9)
    _settle(page)
    shot(page, "timeline_pinned_markers")
    page.click(".pi-tl-markers-clear")
    assert _hook(page, "markers()") == []
    assert page.errors == []


def test_collective_drawn_once_and_gaps_by_window(base, page, prof):
    _open(page, base)
    rows = _hook(page, "tracks()")
    assert not any(r["label"] == "No stream" for r in rows)
    comm = [r for r in rows if r["kind"] == "track" and r["unit"] == "Communication"]
    assert len(comm) == 1
    # idle gaps come per window (start, end, width), never the whole analysis through the paged route
    page.wait_for_function("() => window.profinsightTimeline.gapsInfo() !== null")
    g0 = _hook(page, "gapsInfo()")
    assert g0["total"] == g0["shown"] == len(prof.idle_gaps())
    assert any("/timeline/gaps?" in u and "width=" in u and "start=" in u for u in page.requests)
    assert not any("/analyses/idle_gaps" in u for u in page.requests)
    # a window with more gaps than 2 x width sends the longest and counts all
    w = _hook(page, "visibleWindow()")
    url = (
        f"{base}/api/profiles/rank0_ascend_pt/timeline/gaps?start={int(w['start_ns'])}&end={int(w['end_ns'])}&width=10"
    )
    few = page.evaluate(f"() => fetch('{url}').then(r => r.json())")
    assert few["total"] == len(prof.idle_gaps()) and few["shown"] == 20
    # every hcom_allReduce slice of the timeline is one of the 4 collectives (plus none twice)
    page.fill(".pi-tl-search", "hcom_allReduce")
    page.press(".pi-tl-search", "Enter")
    page.wait_for_function("() => window.profinsightTimeline.hits().total > 0")
    n_comm = prof.sql("select count(*) n from comm_ops where name like 'hcom_allReduce%'")["n"][0]
    n_trace = prof.sql("select count(*) n from trace_slices where name like '%hcom_allReduce%'")["n"][0]
    n_host = prof.sql("select count(*) n from host_ops where name like '%hcom_allReduce%'")["n"][0]
    n_api = prof.sql("select count(*) n from api_calls where name like '%hcom_allReduce%'")["n"][0]
    assert _hook(page, "hits()")["total"] == n_comm + n_trace + n_host + n_api
    assert page.errors == []


def test_details_are_formatted_with_the_raw_value_kept(base, page, prof):
    _open(page, base)
    k = prof.sql("select task_uid, pmu_aic_mac_ratio, wait_ns from device_tasks where name = 'Conv2D1'")
    uid = int(k["task_uid"][0])
    page.evaluate(
        f"() => window.profinsightTimeline.navigate('timeline', {{select: {{kind: 'device_task', rank: 0, id: {uid}}}}})"
    )
    page.wait_for_selector(".pi-tl-args dd")
    terms = page.locator(".pi-tl-args dt").all_inner_texts()
    dds = page.locator(".pi-tl-args dd")
    mac = dds.nth(terms.index("pmu_aic_mac_ratio"))
    assert mac.inner_text() == f"{float(k['pmu_aic_mac_ratio'][0]) * 100:.2f}%" == "51.90%"
    assert float(mac.get_attribute("data-raw")) == pytest.approx(0.519)
    if "wait_ns" in terms and k["wait_ns"][0] is not None:
        w = dds.nth(terms.index("wait_ns"))
        assert w.inner_text() == fmt_duration(int(k["wait_ns"][0]))
    assert page.errors == []


def test_ruler_labels_are_in_the_windows_unit(base, page):
    """The ruler reads "164.01 ms", never "164010 us": the unit follows the time, the decimals the
    tick step (the window label the span)."""
    _open(page, base)
    seen = {}
    for a, b in [(0, 400_000_000), (164_000_000, 164_100_000), (164_000_000, 164_002_500)]:
        page.evaluate(f"() => window.profinsightTimeline.setWindow({a}, {b})")
        _settle(page)
        seen[b - a] = (_hook(page, "frame()")["ticks"], page.inner_text(".pi-tl-window"))
    assert seen[400_000_000] == ([f"{v} ms" for v in range(0, 401, 50)], "window 400 ms")
    assert seen[100_000] == ([f"164.{v:02d} ms" for v in range(0, 11)], "window 100 us")
    assert seen[2_500] == ([f"164.{v:04d} ms" for v in range(0, 25, 2)], "window 2.50 us")
    assert page.errors == []
