"""Shareable state in a real browser: views, the timeline window, selection, range and lane filter
live in the page address (ts/app/link.ts); Back/Forward step through views; a link built by hand
in the documented format opens the same picture; an edited hash is followed."""

from __future__ import annotations

from urllib.parse import parse_qs

import pytest
from _support import brush_memory_chart

import profinsight

RANK0 = ("ascend_pt", "text_level1", "rank0_ascend_pt")
pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def base(serve, fixtures):
    return serve(fixtures.joinpath(*RANK0))


@pytest.fixture(scope="module")
def prof(fixtures, base):
    return profinsight.load(fixtures.joinpath(*RANK0))


def _hook(page, expr):
    return page.evaluate(f"() => window.profinsightTimeline.{expr}")


def _ready(page):
    page.wait_for_selector(".pi-pane-timeline .pi-tl[data-state='ready']", timeout=30_000)
    page.wait_for_function("() => window.profinsightTimeline && window.profinsightTimeline.idle()", timeout=20_000)


def _query(page):
    h = page.evaluate("() => location.hash")
    return h.split("?", 1)[0], {k: v[0] for k, v in parse_qs(h.split("?", 1)[1] if "?" in h else "").items()}


def test_back_and_forward_step_through_views(base, page):
    page.goto(f"{base}/#rank0_ascend_pt/overview")
    page.wait_for_selector(".pi-pane-overview .pi-card")
    page.click(".pi-tab[data-view='operators']")
    page.wait_for_selector(".pi-pane-operators:not([hidden])")
    page.click(".pi-tab[data-view='timeline']")
    _ready(page)
    assert _query(page)[0] == "#rank0_ascend_pt/timeline"
    page.go_back()
    page.wait_for_selector(".pi-pane-operators:not([hidden])")
    assert page.is_hidden(".pi-pane-timeline") and _query(page)[0] == "#rank0_ascend_pt/operators"
    page.go_back()
    page.wait_for_selector(".pi-pane-overview:not([hidden])")
    assert page.url.startswith(base)  # Back stays in the app
    page.go_forward()
    page.wait_for_selector(".pi-pane-operators:not([hidden])")
    # an edited hash is followed
    page.evaluate("() => { location.hash = '#rank0_ascend_pt/memory'; }")
    page.wait_for_selector(".pi-pane-memory:not([hidden])")
    assert page.errors == []


def test_timeline_window_and_selection_travel_in_the_link(base, page, prof, shot):
    page.goto(f"{base}/#rank0_ascend_pt/timeline")
    _ready(page)
    origin = int(_hook(page, "origin()"))
    k = prof.sql(
        "select task_uid, start_ns, dur_ns, name from device_tasks where stream = 2 order by dur_ns desc limit 1"
    )
    s = int(k["start_ns"][0]) - origin
    page.evaluate(f"() => window.profinsightTimeline.setWindow({s - 50_000}, {s + 450_000})")
    page.wait_for_function(f"() => location.hash.includes('start={origin + s - 50_000}')")
    path, q = _query(page)
    assert path == "#rank0_ascend_pt/timeline"
    assert (int(q["start"]), int(q["end"])) == (origin + s - 50_000, origin + s + 450_000)
    link = page.url
    # the same link in a fresh page opens the same window
    other = page.context.new_page()
    other.goto(link)
    _ready(other)
    assert _hook(other, "visibleWindow()") == {"start_ns": s - 50_000, "end_ns": s + 450_000}
    other.close()
    # a link built by hand in the documented format: window, selection, range, lane filter, search
    uid = int(k["task_uid"][0])
    a, b = origin + s - 10_000, origin + s + 200_000
    hand = (
        f"{base}/#rank0_ascend_pt/timeline?start={origin + s - 100_000}&end={origin + s + 500_000}"
        f"&sel=device_task:0:{uid}&range={a}-{b}&lanes=Stream"
    )
    third = page.context.new_page()
    errors = []
    third.on("pageerror", lambda e: errors.append(str(e)))
    third.on("console", lambda m: errors.append(m.text) if m.type == "error" and "favicon" not in m.text else None)
    third.goto(hand)
    _ready(third)
    third.wait_for_function("() => window.profinsightTimeline.stats() !== null")
    assert _hook(third, "visibleWindow()") == {"start_ns": s - 100_000, "end_ns": s + 500_000}
    sel = _hook(third, "selected()")
    assert (sel["kind"], sel["id"], sel["name"]) == ("device_task", uid, k["name"][0])
    assert _hook(third, "range()") == {"start_ns": a - origin, "end_ns": b - origin, "tracks": None}
    assert third.input_value(".pi-tl-filter") == "Stream"
    assert {r["unit"] for r in _hook(third, "tracks()") if r["kind"] == "track"} == {"Ascend Hardware"}
    shot(third, "timeline_deep_link")
    assert errors == []
    third.close()
    assert page.errors == []


def test_markers_pins_and_search_travel_in_the_link(base, page, prof, shot):
    """Markers, pinned tracks and the search are part of the picture a link opens: the view writes
    them into the address, and a fresh page opened on it shows the same markers, the same pinned
    rows, the same window and selection, with the search's hits found but not jumped to."""
    page.goto(f"{base}/#rank0_ascend_pt/timeline")
    _ready(page)
    origin = int(_hook(page, "origin()"))
    page.evaluate("() => window.profinsightTimeline.pin('r0/hccl/5')")
    page.fill(".pi-tl-search", "hcom_allReduce")
    page.press(".pi-tl-search", "Enter")
    page.wait_for_function("() => window.profinsightTimeline.selected() !== null")
    _ready(page)
    hit = _hook(page, "selected()")
    w = _hook(page, "visibleWindow()")
    m1, m2 = int(w["start_ns"]) + 1_000, int(w["start_ns"]) + 7_500
    page.evaluate(
        f"() => {{ window.profinsightTimeline.addMarker({m2}); window.profinsightTimeline.addMarker({m1}); }}"
    )
    page.wait_for_function("() => location.hash.includes('marks=')")
    path, q = _query(page)
    assert path == "#rank0_ascend_pt/timeline"
    assert q["marks"] == f"{origin + m1},{origin + m2}"
    assert q["pins"] == "r0/hccl/5"
    assert q["q"] == "hcom_allReduce"
    assert q["sel"] == f"{hit['kind']}:0:{hit['id']}"
    n = sum(
        int(prof.sql(f"select count(*) n from {t} where name like '%hcom_allReduce%'")["n"][0])
        for t in ("comm_ops", "trace_slices", "host_ops", "api_calls")
    )
    assert _hook(page, "hits()") == {"total": n, "index": 0, "shown": n}

    other = page.context.new_page()
    errors = []
    other.on("pageerror", lambda e: errors.append(str(e)))
    other.goto(page.url)
    _ready(other)
    other.wait_for_function("() => window.profinsightTimeline.hits().total > 0")
    other.wait_for_function("() => window.profinsightTimeline.selected() !== null")
    _ready(other)
    assert _hook(other, "markers()") == [m1, m2]
    assert _hook(other, "pinned()") == ["r0/hccl/5"]
    assert [r["key"] for r in _hook(other, "tracks()")[:2]] == ["pinned", "r0/hccl/5"]
    assert _hook(other, "visibleWindow()") == w  # the link's window, not a jump to the first hit
    assert (_hook(other, "selected()")["kind"], _hook(other, "selected()")["id"]) == (hit["kind"], hit["id"])
    assert _hook(other, "hits()") == {"total": n, "index": 0, "shown": n}
    assert other.input_value(".pi-tl-search") == "hcom_allReduce"
    assert other.inner_text(".pi-tl-hits") == f"1 / {n}"
    assert other.locator(".pi-tl-markers").inner_text().startswith("⚑1 ")
    # the picture written back is the link it was opened with
    other.wait_for_timeout(400)
    assert _query(other)[1] == q
    shot(other, "timeline_link_markers_pins_search")
    # an unknown track id or a bad marker in a hand-edited link is left out, never an error
    other.evaluate(
        f"() => {{ location.hash = '#rank0_ascend_pt/timeline?start={origin + int(w['start_ns'])}"
        f"&end={origin + int(w['end_ns'])}&pins=r0/none,r0/hccl/5&marks=12x,{origin + m1}'; }}"
    )
    other.wait_for_function("() => window.profinsightTimeline.markers().length === 1")
    assert _hook(other, "markers()") == [m1] and _hook(other, "pinned()") == ["r0/hccl/5"]
    assert errors == []
    other.close()
    assert page.errors == []


def _column(page, key):
    """The texts of column ``key`` of the Operators table, top to bottom."""
    return page.eval_on_selector(
        ".pi-op-table table",
        f"""t => {{ const i = Array.from(t.querySelectorAll('thead th')).findIndex(th => th.dataset.key === '{key}');
                   return Array.from(t.querySelectorAll('tbody tr')).map(tr => tr.children[i].textContent); }}""",
    )


def test_operators_grouping_filter_and_sort_travel_in_the_link(base, page, prof, shot):
    """The Operators view's grouping, side, table filter and sort are in the address: a fresh page
    on the link shows the same rows in the same order, and Back returns to them from another view."""
    page.goto(f"{base}/#rank0_ascend_pt/operators")
    page.wait_for_selector(".pi-op-table tbody tr", timeout=60_000)
    assert _query(page) == ("#rank0_ascend_pt/operators", {})
    page.select_option(".pi-op-by", "type")
    page.wait_for_selector(".pi-op-table th[data-key='type']")
    page.fill(".pi-op-table .pi-table-filter", "MIX_AIV")
    page.click(".pi-op-table th[data-key='count']")
    page.click(".pi-op-table th[data-key='count']")  # numbers: descending first, then ascending
    page.wait_for_function("() => location.hash.includes('sort=count')")
    assert _query(page) == (
        "#rank0_ascend_pt/operators",
        {"by": "type", "filter": "MIX_AIV", "sort": "count"},
    )
    ref = prof.op_summary(by="type")
    want = ref[ref["core"] == "MIX_AIV"].sort_values("count", kind="stable")
    assert list(want["type"]) == ["NLLLoss", "TopKV2", "AdaptiveAvgPool3dGrad", "ReduceSum"]
    assert _column(page, "type") == list(want["type"])
    link = page.url

    other = page.context.new_page()
    other.goto(link)
    other.wait_for_selector(".pi-op-table th[data-key='type']", timeout=60_000)
    assert other.input_value(".pi-op-by") == "type" and other.input_value(".pi-op-where") == "device"
    assert other.input_value(".pi-op-table .pi-table-filter") == "MIX_AIV"
    assert other.get_attribute(".pi-op-table th[data-key='count']", "aria-sort") == "ascending"
    assert _column(other, "type") == list(want["type"])
    assert other.inner_text(".pi-op-table .pi-table-count") == f"{len(want)} of {len(ref)} rows"
    shot(other, "operators_link_group_filter_sort")
    other.close()

    # a hand-made link with a pair op_summary has no answer for falls back to the device side
    page.goto(f"{base}/#rank0_ascend_pt/overview")
    page.wait_for_selector(".pi-pane-overview .pi-card")
    page.evaluate("() => { location.hash = '#rank0_ascend_pt/operators?by=core&where=host&sort=-total_us'; }")
    page.wait_for_selector(".pi-op-table th[data-key='core']", timeout=60_000)
    assert page.input_value(".pi-op-where") == "device"
    assert _column(page, "core") == list(prof.op_summary(by="core")["core"])
    page.click(".pi-tab[data-view='timeline']")
    _ready(page)
    page.go_back()
    page.wait_for_selector(".pi-pane-operators:not([hidden])")
    assert _query(page) == ("#rank0_ascend_pt/operators", {"by": "core", "sort": "-total_us"})
    assert page.input_value(".pi-op-by") == "core"
    assert page.errors == []


def _series(page):
    return page.eval_on_selector(".pi-mem-chart", "c => JSON.parse(c.dataset.series)")


def _allocs_shown(page, n):
    page.wait_for_function(
        "n => { const c = document.querySelector('.pi-mem-allocs .pi-table-count, .pi-mem-allocs .pi-empty'); "
        "return c && (c.textContent.startsWith(n + ' rows') || (n === 0 && c.classList.contains('pi-empty'))); }",
        arg=n,
    )


def test_memory_curves_and_brush_travel_in_the_link(base, page, prof, shot):
    """The Memory view's curve toggles and brushed range are in the address: a fresh page on the
    link draws the same curves, the same brush and the allocations live in it."""
    page.goto(f"{base}/#rank0_ascend_pt/memory")
    page.wait_for_selector(".pi-mem-alloc-table tbody tr", timeout=60_000)
    assert _query(page) == ("#rank0_ascend_pt/memory", {})
    components = page.eval_on_selector_all(".pi-mem-components .pi-mem-toggle", "bs => bs.map(b => b.dataset.item)")
    page.click(".pi-mem-measures .pi-mem-toggle[data-item='reserved_mib']")
    page.click(".pi-mem-components .pi-mem-toggle[data-item='APP']")
    lo, hi = brush_memory_chart(page)
    text = page.eval_on_selector(".pi-mem-range", "e => e.dataset.range")
    assert lo == round(lo, 3) and hi == round(hi, 3) and 0 < lo < hi  # to the microsecond
    want = prof.memory_allocations(start_ms=lo, end_ms=hi)
    _allocs_shown(page, len(want))
    page.wait_for_function("() => location.hash.includes('brush=')")
    shown = _series(page)
    assert shown == [f"{c}|allocated_mib" for c in components if c != "APP"]
    assert _query(page) == (
        "#rank0_ascend_pt/memory",
        {
            "comps": ",".join(c for c in components if c != "APP"),
            "measures": "allocated_mib",
            "brush": text.replace(",", "-"),
        },
    )
    # a toggle redraws the chart: the brushed range stays, drawn and filtering
    page.click(".pi-mem-measures .pi-mem-toggle[data-item='reserved_mib']")
    assert page.eval_on_selector(".pi-mem-range", "e => e.dataset.range") == text
    assert page.evaluate("() => document.querySelectorAll('.pi-mem-chart canvas').length") >= 1
    page.click(".pi-mem-measures .pi-mem-toggle[data-item='reserved_mib']")
    link = page.url

    other = page.context.new_page()
    errors = []
    other.on("pageerror", lambda e: errors.append(str(e)))
    other.goto(link)
    other.wait_for_selector(".pi-mem-chart", timeout=60_000)
    other.wait_for_function("() => document.querySelector('.pi-mem-range')?.dataset.range")
    _allocs_shown(other, len(want))
    assert _series(other) == shown
    lo2, hi2 = map(float, other.eval_on_selector(".pi-mem-range", "e => e.dataset.range").split(","))
    assert (lo2, hi2) == (lo, hi)
    assert other.get_attribute(".pi-mem-components .pi-mem-toggle[data-item='APP']", "aria-pressed") == "false"
    other.wait_for_timeout(300)
    shot(other, "memory_link_curves_brush")
    other.close()
    assert errors == [] and page.errors == []


def test_a_view_keeps_its_filters_across_a_tab_round_trip(base, page, prof):
    """Another tab and back (a tab click hands the view no state) keeps what the view showed, in
    the view and in the address: Communication's step and collective filters."""
    step = int(prof.sql("select min(step) s from comm_ops")["s"][0])
    page.goto(f"{base}/#rank0_ascend_pt/communication?step={step}&coll=hcom_allReduce_")
    page.wait_for_selector(".pi-comm-split[data-series]", timeout=60_000)
    assert (page.input_value(".pi-comm-step"), page.input_value(".pi-comm-type")) == (str(step), "hcom_allReduce_")
    page.click(".pi-tab[data-view='overview']")
    page.wait_for_selector(".pi-pane-overview:not([hidden])")
    page.click(".pi-tab[data-view='communication']")
    page.wait_for_selector(".pi-pane-communication:not([hidden]) .pi-comm-split[data-series]")
    assert (page.input_value(".pi-comm-step"), page.input_value(".pi-comm-type")) == (str(step), "hcom_allReduce_")
    assert _query(page) == ("#rank0_ascend_pt/communication", {"step": str(step), "coll": "hcom_allReduce_"})
    assert page.errors == []


def test_the_matrix_measure_travels_in_the_link(base, page, prof):
    """The Communication matrix's measure is in the address: a link shows the matrix in bytes,
    each cell the link's bytes summed over the matrix rows (rank 0 -> 1 here)."""
    page.goto(f"{base}/#rank0_ascend_pt/communication")
    page.wait_for_selector(".pi-matrix-metric", timeout=60_000)
    page.select_option(".pi-matrix-metric", "bytes")
    page.wait_for_function("() => location.hash.includes('metric=bytes')")
    assert _query(page) == ("#rank0_ascend_pt/communication", {"metric": "bytes"})
    m = prof.comm_matrix(summary="total")
    b = int(m[(m["src_rank"] == 0) & (m["dst_rank"] == 1)]["bytes"].sum())
    other = page.context.new_page()
    other.goto(page.url)
    other.wait_for_selector(".pi-matrix-table td[data-src='0'][data-dst='1']", timeout=60_000)
    assert other.input_value(".pi-matrix-metric") == "bytes"
    cell = other.inner_text(".pi-matrix-table td[data-src='0'][data-dst='1']")
    assert cell == (f"{b / 2**30:.2f} GiB" if b >= 2**30 else f"{b / 2**20:.1f} MiB") and b > 2**20
    other.close()
    assert page.errors == []


def test_a_link_followed_while_a_run_loads_is_not_undone(serve, fixtures, page):
    """A run still loading when the user follows a link to another one (a rank's button, then the
    Ranks view again at once) must not take the page back when its load ends: only the latest
    open paints and writes the address.  The first run's profile answer is held back here, so the
    order does not depend on the machine's speed."""
    alexnet = fixtures / "kineto" / "gpu_alexnet.json.gz"
    two = serve(fixtures.joinpath(*RANK0), alexnet)
    ids = [p["id"] for p in page.request.get(f"{two}/api/profiles?load=0").json()["profiles"]]
    (slow,) = [i for i in ids if i != "rank0_ascend_pt"]
    held, released = [], []

    def hold(route):
        if released:
            route.continue_()
        else:
            held.append(route)  # answered after the second run is shown

    page.route(f"**/api/profiles/{slow}?*", hold)
    page.goto(f"{two}/#{slow}/timeline")
    for _ in range(200):  # the route handler runs while the page is waited on
        if held:
            break
        page.wait_for_timeout(50)
    assert held, "the first run's profile was requested"
    page.evaluate("() => { location.hash = '#rank0_ascend_pt/operators'; }")
    page.wait_for_selector(".pi-pane-operators:not([hidden])", timeout=30_000)
    released.append(True)
    for route in held:
        route.continue_()
    page.wait_for_timeout(1500)  # the held load ends: nothing may change now
    assert page.evaluate("() => location.hash").startswith("#rank0_ascend_pt/operators")
    assert page.is_visible(".pi-pane-operators") and not page.query_selector(".pi-pane-timeline")
    assert not page.errors
