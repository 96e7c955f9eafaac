"""The Timeline view in a real browser on real fixtures: tracks, zoom/pan by keys and wheel,
search and jump, selection details, launch arrows, collapse, navigation from another view, and
a crafted op name that must stay text."""

from __future__ import annotations

import pytest
from _support import crafted_trace, fmt_duration

import profinsight
from profinsight import timeline as tl

RANK0 = ("ascend_pt", "text_level1", "rank0_ascend_pt")
pytestmark = pytest.mark.browser

EVIL = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def base(serve, fixtures):
    return serve(fixtures.joinpath(*RANK0))


@pytest.fixture(scope="module")
def prof(fixtures, base):
    return profinsight.load(fixtures.joinpath(*RANK0))


def _open(page, base, hash_="rank0_ascend_pt/timeline"):
    page.goto(f"{base}/#{hash_}")
    page.wait_for_selector(".pi-tl[data-state='ready']", timeout=30_000)
    _settle(page)


def _settle(page):
    page.wait_for_function("() => window.profinsightTimeline && window.profinsightTimeline.idle()", timeout=20_000)
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def _hook(page, expr):
    return page.evaluate(f"() => window.profinsightTimeline.{expr}")


def test_tracks_match_the_data(base, page, prof, shot):
    _open(page, base)
    rows = _hook(page, "tracks()")
    tree = tl.tracks(prof)
    units = tree["ranks"][0]["units"]
    # rank header, every unit header, and the tracks of expanded units (units over 12 tracks start collapsed)
    assert rows[0]["kind"] == "rank" and rows[0]["label"] == "Rank 0"
    assert [r["label"] for r in rows if r["kind"] == "unit"] == [u["name"] for u in units]
    expected = [t["name"] for u in units if len(u["tracks"]) <= 12 for t in u["tracks"]]
    assert [r["label"] for r in rows if r["kind"] == "track"] == expected
    device = [r for r in rows if r["kind"] == "track" and r["unit"] == "Ascend Hardware"]
    # the all-reduce rows without a stream are drawn on their group's track, not on a "No stream" row
    assert [r["label"] for r in device] == ["Stream 0", "Stream 2", "Stream 3", "Stream 4"]
    hccl = [r["label"] for r in rows if r["kind"] == "track" and r["unit"] == "HCCL"]
    assert hccl == [f"Plane {i}" for i in range(8)]
    assert [r["collapsed"] for r in rows if r["kind"] == "unit" and r["label"] == "Acc PMU"] == [True]
    frame = _hook(page, "frame()")
    assert frame["slices"] > 100
    # device idle gaps from the idle_gaps analysis are marked on the device tracks
    gaps = prof.idle_gaps()
    page.wait_for_function("() => window.profinsightTimeline.frame().gaps > 0")
    assert _hook(page, "gaps()") == len(gaps)
    shot(page, "timeline_overview")
    assert page.errors == []


def test_deep_host_thread_capped_so_device_shows_first(base, page, prof, shot):
    """The 30-level main Python thread shows 8 levels on first open, so the device streams are
    on screen without scrolling; its gutter toggles all levels; selecting a deeper slice opens
    them."""
    _open(page, base)
    rows = _hook(page, "tracks()")
    main = next(r for r in rows if r["key"] == "r0/thread/3096504.3096504")
    assert (main["depth"], main["lanes"], main["capped"], main["h"]) == (30, 8, True, 8 * 17 + 6)
    # an 8-level thread is not capped (nothing hidden), nor is any device stream
    assert all(not r["capped"] for r in rows if r["kind"] == "track" and r["key"] != main["key"])
    canvas_h = page.locator(".pi-tl-canvas").bounding_box()["height"]
    device = [r for r in rows if r["kind"] == "track" and r["unit"] == "Ascend Hardware"]
    assert len(device) == 4 and all(r["y"] + r["h"] <= canvas_h for r in device), (device, canvas_h)
    # nothing below the cap is drawn, nor fetched: the main thread's slices in memory are in lanes 0..7
    first = _hook(page, f"slices('{main['key']}')")
    assert first and max(first["depth"]) == 7
    shot(page, "timeline_first_open")
    box = page.locator(".pi-tl-canvas").bounding_box()
    page.mouse.click(box["x"] + 60, box["y"] + main["y"] + 30)  # its gutter: "show all 30 levels"
    main2 = next(r for r in _hook(page, "tracks()") if r["key"] == main["key"])
    assert (main2["lanes"], main2["h"]) == (30, 30 * 17 + 6)
    page.mouse.click(box["x"] + 60, box["y"] + main["y"] + 30)
    assert next(r for r in _hook(page, "tracks()") if r["key"] == main["key"])["lanes"] == 8
    # selecting a slice below the cap opens all levels of its track
    t = tl.slices(prof, tl.tracks(prof)["start_ns"], tl.tracks(prof)["end_ns"] + 1, [main["key"]], 20000)
    deep = next(r for r in t.to_pylist() if not r["merged"] and r["depth"] >= 12)
    page.evaluate(
        "(id) => window.profinsightTimeline.navigate('timeline', {select: {kind: 'host_op', rank: 0, id}})", deep["id"]
    )
    page.wait_for_function(f"() => (window.profinsightTimeline.selected() || {{}}).id === {deep['id']}")
    page.wait_for_function(
        f"() => window.profinsightTimeline.tracks().find(r => r.key === '{main['key']}').lanes === 30"
    )
    _settle(page)
    # all its levels are fetched once shown
    assert max(_hook(page, f"slices('{main['key']}')")["depth"]) >= 12
    shot(page, "timeline_deep_selected")
    assert page.errors == []


def test_zoom_keys_wheel_and_pan(base, page, shot):
    _open(page, base)
    w0 = _hook(page, "visibleWindow()")
    span0 = w0["end_ns"] - w0["start_ns"]
    page.click(".pi-tl-canvas", position={"x": 5, "y": 5})  # focus (ruler: no selection)
    page.keyboard.press("w")
    w1 = _hook(page, "visibleWindow()")
    assert (w1["end_ns"] - w1["start_ns"]) == pytest.approx(span0 / 1.35, rel=1e-6)
    assert (w1["start_ns"] + w1["end_ns"]) / 2 == pytest.approx((w0["start_ns"] + w0["end_ns"]) / 2, rel=1e-6)
    page.keyboard.press("w")
    page.keyboard.press("s")
    w2 = _hook(page, "visibleWindow()")
    assert w2["end_ns"] - w2["start_ns"] == pytest.approx(span0 / 1.35, rel=1e-6)
    page.keyboard.press("d")
    w3 = _hook(page, "visibleWindow()")
    assert w3["start_ns"] - w2["start_ns"] == pytest.approx(0.2 * (w2["end_ns"] - w2["start_ns"]), rel=1e-6)
    page.keyboard.press("a")
    w4 = _hook(page, "visibleWindow()")
    assert w4["start_ns"] == pytest.approx(w2["start_ns"], abs=1)
    # Ctrl+wheel at a point zooms and keeps the time under the cursor where it is
    x = 800
    t_at = w4["start_ns"] + (x - 230) / (1400 - 230) * (w4["end_ns"] - w4["start_ns"])
    box = page.locator(".pi-tl-canvas").bounding_box()
    page.mouse.move(box["x"] + x, box["y"] + 200)
    page.keyboard.down("Control")
    page.mouse.wheel(0, -300)
    page.keyboard.up("Control")
    page.wait_for_function(
        f"() => window.profinsightTimeline.visibleWindow().end_ns - "
        f"window.profinsightTimeline.visibleWindow().start_ns < {0.9 * (w4['end_ns'] - w4['start_ns'])}"
    )
    w5 = _hook(page, "visibleWindow()")
    t_after = w5["start_ns"] + (x - 230) / (1400 - 230) * (w5["end_ns"] - w5["start_ns"])
    assert t_after == pytest.approx(t_at, abs=(w4["end_ns"] - w4["start_ns"]) * 1e-6)
    # drag pans
    page.mouse.move(box["x"] + 900, box["y"] + 60)
    page.mouse.down()
    page.mouse.move(box["x"] + 700, box["y"] + 60, steps=4)
    page.mouse.up()
    w6 = _hook(page, "visibleWindow()")
    px = (w5["end_ns"] - w5["start_ns"]) / (1400 - 230)
    assert w6["start_ns"] - w5["start_ns"] == pytest.approx(200 * px, rel=0.02)
    _settle(page)
    shot(page, "timeline_zoomed")
    assert page.errors == []


def _click_slice(page, track, start_ns, dur_ns, depth):
    """Clicks the middle of a slice's visible part."""
    w = _hook(page, "visibleWindow()")
    a, b = max(start_ns, w["start_ns"]), min(start_ns + dur_ns, w["end_ns"])
    x = page.evaluate(f"() => window.profinsightTimeline.xOf({(a + b) / 2})")
    y = page.evaluate(f"() => window.profinsightTimeline.yOf('{track}', {depth})")
    box = page.locator(".pi-tl-canvas").bounding_box()
    page.mouse.click(box["x"] + x, box["y"] + y)


def test_search_jumps_and_selects(base, page, prof, shot):
    _open(page, base)
    page.fill(".pi-tl-search", "aclnnAddmm")
    page.press(".pi-tl-search", "Enter")
    page.wait_for_selector(".pi-tl-details:not([hidden]) .pi-tl-details-title")
    hits = tl.search(prof, "aclnnAddmm", 1000)
    assert page.inner_text(".pi-tl-hits") == f"1 / {hits['total']}"
    first = hits["hits"][0]
    sel = _hook(page, "selected()")
    assert (sel["kind"], sel["id"], sel["track"]) == (first["kind"], first["id"], first["track"])
    assert page.inner_text(".pi-tl-details-title") == first["name"]
    # the window now shows the hit
    w = _hook(page, "visibleWindow()")
    origin = int(_hook(page, "origin()"))
    assert w["start_ns"] <= first["start_ns"] - origin and first["start_ns"] - origin + first["dur_ns"] <= w["end_ns"]
    page.press(".pi-tl-search", "Enter")
    page.wait_for_function("() => window.profinsightTimeline.hits().index === 1")
    second = hits["hits"][1]
    page.wait_for_function(f"() => window.profinsightTimeline.selected().id === {second['id']}")
    page.press(".pi-tl-search", "Shift+Enter")
    page.wait_for_function(f"() => window.profinsightTimeline.selected().id === {first['id']}")
    assert page.inner_text(".pi-tl-hits") == f"1 / {hits['total']}"
    _settle(page)
    shot(page, "timeline_search")
    page.keyboard.press("Escape")  # still in the box: leaves it
    page.click(".pi-tl-canvas", position={"x": 5, "y": 5})
    page.keyboard.press("Escape")
    assert _hook(page, "selected()") is None and page.is_hidden(".pi-tl-details")
    assert page.errors == []


def test_click_shows_details_and_flows(base, page, prof, shot):
    _open(page, base)
    # the host op that launched the most device tasks, all ending within 2 ms of its start
    link = prof.sql("""select l.host_op_id, count(distinct l.task_uid) n from launches l
        join host_ops h on h.op_id = l.host_op_id join device_tasks d on d.task_uid = l.task_uid
        group by 1 having max(d.start_ns + d.dur_ns) - min(h.start_ns) < 2000000 and min(h.dur_ns) > 20000
        order by n desc, 1 limit 1""")
    op = int(link["host_op_id"][0])
    f = tl.flows(prof, "host_op", 0, op)
    me = f["selection"]
    origin = int(_hook(page, "origin()"))
    s = me["start_ns"] - origin
    # zoom so that the op and its device tasks are wide and apart from their neighbours
    ends = [x["to"]["start_ns"] - origin + x["to"]["dur_ns"] for x in f["flows"]] + [s + me["dur_ns"]]
    page.evaluate(
        f"() => window.profinsightTimeline.setWindow({s - me['dur_ns'] * 0.2}, {max(ends) + me['dur_ns'] * 0.2})"
    )
    row = next(r for r in _hook(page, "tracks()") if r["key"] == me["track"])
    if me["depth"] >= row["lanes"]:  # below the lane cap of the main thread: show all its levels
        page.evaluate(f"() => window.profinsightTimeline.toggleLanes('{me['track']}')")
    _settle(page)
    _click_slice(page, me["track"], s, me["dur_ns"], me["depth"])
    page.wait_for_selector(".pi-tl-details:not([hidden]) .pi-tl-details-title")
    sel = _hook(page, "selected()")
    assert (sel["kind"], sel["id"]) == ("host_op", op), sel
    d = tl.details(prof, "host_op", 0, op)
    assert page.inner_text(".pi-tl-details-title") == d["row"]["name"]
    facts = page.inner_text(".pi-tl-facts")
    assert fmt_duration(me["dur_ns"]) in facts
    args = page.inner_text(".pi-tl-args")
    for col in ("input_shapes", "input_dtypes"):
        if d["row"].get(col):
            assert col in args and str(d["row"][col])[:20] in args
    # one arrow per launch link, drawn on the canvas and listed in the panel
    page.wait_for_function(f"() => window.profinsightTimeline.frame().arrows === {len(f['flows'])}")
    assert len(f["flows"]) > 0 and page.locator(".pi-tl-flow").count() == len(f["flows"])
    shot(page, "timeline_flows")
    # and back: a device task's arrow comes from its host op
    task = f["flows"][0]["to"]
    page.click(".pi-tl-flow >> nth=0")
    page.wait_for_function(f"() => window.profinsightTimeline.selected().id === {task['id']}")
    back = tl.flows(prof, "device_task", 0, task["id"])
    page.wait_for_function(f"() => window.profinsightTimeline.frame().arrows === {len(back['flows'])}")
    assert page.errors == []


def test_collapse_hides_a_unit(base, page, shot):
    _open(page, base)
    rows = _hook(page, "tracks()")
    cann = [r for r in rows if r["unit"] == "CANN" and r["kind"] == "track"]
    assert len(cann) == 4
    unit = next(r for r in rows if r["kind"] == "unit" and r["label"] == "CANN")
    box = page.locator(".pi-tl-canvas").bounding_box()
    page.mouse.click(box["x"] + 40, box["y"] + unit["y"] + unit["h"] / 2)
    rows2 = _hook(page, "tracks()")
    assert [r for r in rows2 if r["unit"] == "CANN" and r["kind"] == "track"] == []
    assert next(r for r in rows2 if r["key"] == unit["key"])["collapsed"] is True
    assert len(rows2) == len(rows) - 4
    _settle(page)
    shot(page, "timeline_collapsed")
    page.mouse.click(box["x"] + 40, box["y"] + unit["y"] + unit["h"] / 2)
    assert len(_hook(page, "tracks()")) == len(rows)
    # a whole rank collapses to its header
    page.mouse.click(box["x"] + 40, box["y"] + rows[0]["y"] + rows[0]["h"] / 2)
    assert len(_hook(page, "tracks()")) == 1
    assert page.errors == []


def test_navigation_from_another_view(base, page, prof, shot):
    _open(page, base)
    page.click(".pi-tab[data-view='overview']")
    assert page.is_hidden(".pi-tl")
    gap = prof.idle_gaps().iloc[0]
    a, b = str(int(gap["start_ns"])), str(int(gap["end_ns"]))  # absolute ns, as the analyses give them
    task = int(prof.sql("select task_uid from device_tasks where stream = 2 order by start_ns limit 1")["task_uid"][0])
    # what another view does: ctx.navigate('timeline', state)
    page.evaluate(
        """([a, b, id]) => window.profinsightTimeline.navigate('timeline',
        {rank: 0, start_ns: a, end_ns: b, select: {kind: 'device_task', rank: 0, id}})""",
        [a, b, task],
    )
    page.wait_for_selector(".pi-tl", state="visible")
    assert page.evaluate("location.hash").split("?")[0] == "#rank0_ascend_pt/timeline"
    _settle(page)
    # the address carries the selection, so the link reopens it
    page.wait_for_function(f"() => location.hash.includes('sel=device_task%3A0%3A{task}')")
    origin = int(_hook(page, "origin()"))
    w = _hook(page, "visibleWindow()")
    span = int(b) - int(a)
    assert w["start_ns"] == pytest.approx(int(a) - origin - 0.1 * span, abs=2)
    assert w["end_ns"] == pytest.approx(int(b) - origin + 0.1 * span, abs=2)
    page.wait_for_function(f"() => (window.profinsightTimeline.selected() || {{}}).id === {task}")
    page.wait_for_selector(".pi-tl-details:not([hidden])")
    _settle(page)
    shot(page, "timeline_navigated")
    assert page.errors == []


def test_crafted_name_stays_text(serve, page, fixtures, tmp_path, shot):
    path = crafted_trace(fixtures, tmp_path, EVIL)
    base = serve(path)
    dialogs = []
    page.on("dialog", lambda dlg: (dialogs.append(dlg.message), dlg.dismiss()))
    _open(page, base, "evil_trace.json/timeline")
    page.fill(".pi-tl-search", "script>")
    page.press(".pi-tl-search", "Enter")
    page.wait_for_selector(".pi-tl-details:not([hidden]) .pi-tl-details-title")
    assert page.inner_text(".pi-tl-details-title") == EVIL
    assert page.inner_text(".pi-tl-hits") == "1 / 1"
    assert page.locator(".pi-tl-details script").count() == 0 and page.locator("script:text('alert')").count() == 0
    _settle(page)
    shot(page, "timeline_crafted")
    assert dialogs == [] and page.errors == []
