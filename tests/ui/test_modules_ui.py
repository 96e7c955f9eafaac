"""The Modules view (icicle of module_time, source lines of code_time) in a real browser: node
widths are the rows' inclusive time over the phase total, search marks the matching modules,
a click opens the timeline on the module's tasks with its longest task selected, and a source
line copies as `file:line`.  Screenshots go to ui-artifacts/."""

from __future__ import annotations

import pytest
from _support import fmt_duration

import profinsight

pytestmark = pytest.mark.browser

PID = "rank0_ascend_pt"
CONV0 = "DistributedDataParallel_0/AlexNet_0/Sequential_0/Conv2d_0"


@pytest.fixture(scope="module")
def path(fixtures):
    return fixtures / "ascend_pt" / "text_level1" / PID


@pytest.fixture(scope="module")
def base(serve, path):
    return serve(path)


@pytest.fixture(scope="module")
def prof(path):
    return profinsight.load(path)


def _open(page, base):
    page.goto(f"{base}/#{PID}/modules")
    page.wait_for_selector(".pi-pane-modules .pi-mod-node", timeout=60_000)


def _width(page, p: str) -> float:
    return page.eval_on_selector(f".pi-mod-node[data-path='{p}']", "e => parseFloat(e.style.width)")


def test_icicle_widths_search_and_phases(base, page, prof, shot):
    m = prof.module_time()
    fwd = m[m["phase"] == "forward"]
    total = fwd[fwd["depth"] == 0]["inclusive_us"].sum()
    _open(page, base)
    assert page.locator(".pi-tab[data-view='modules']").inner_text() == "Modules"
    drawn = page.eval_on_selector_all(".pi-mod-node", "els => els.map(e => e.dataset.path)")
    wide = fwd[fwd["inclusive_us"] / total >= 0.002]["path"]  # narrower nodes are not drawn
    assert set(drawn) == set(wide) and "DistributedDataParallel_0/AlexNet_0/Sequential_1/ReLU_6" not in drawn
    conv0 = fwd[fwd["path"] == CONV0].iloc[0]
    assert _width(page, CONV0) == pytest.approx(100 * conv0["inclusive_us"] / total, abs=1e-3)
    title = page.get_attribute(f".pi-mod-node[data-path='{CONV0}']", "title")
    us = fmt_duration(conv0["inclusive_us"] * 1e3)  # 401.2 us, as the viewer writes it
    assert title.split("\n")[:3] == [CONV0, f"{us} inclusive, {us} self", "4 tasks · 0.3%"]
    page.fill(".pi-mod-search", "conv2d")
    hits = page.eval_on_selector_all(".pi-mod-hit", "els => els.map(e => e.dataset.path)")
    assert sorted(hits) == sorted(p for p in fwd["path"] if "conv2d" in p.lower())
    assert len(hits) == 5
    shot(page, "view_modules_search")
    page.click(".pi-mod-phase[data-phase='other']")
    lost = m[m["phase"] == "other"]
    assert page.eval_on_selector_all(".pi-mod-node", "els => els.map(e => e.dataset.path)") == ["(unattributed)"]
    assert lost.iloc[0]["reason"] in page.get_attribute(".pi-mod-node", "title")
    page.click(".pi-mod-phase[data-phase='backward']")
    assert page.locator(f".pi-mod-node[data-path='{CONV0}']").count() == 1
    assert page.errors == []


def test_click_opens_the_module_tasks_on_the_timeline(base, page, prof, shot):
    row = prof.module_time().set_index(["path", "phase"]).loc[(CONV0, "forward")]
    _open(page, base)
    page.click(f".pi-mod-node[data-path='{CONV0}']")
    page.wait_for_selector(".pi-tl", state="visible")
    assert page.evaluate("location.hash").startswith(f"#{PID}/timeline?")  # the window goes in the link
    page.wait_for_function("() => window.profinsightTimeline && window.profinsightTimeline.idle()", timeout=60_000)
    uid = int(row["longest_task_uid"])
    page.wait_for_function(f"() => (window.profinsightTimeline.selected() || {{}}).id === {uid}", timeout=60_000)
    origin = int(page.evaluate("String(window.profinsightTimeline.origin())"))
    w = page.evaluate("window.profinsightTimeline.visibleWindow()")
    span = int(row["end_ns"]) - int(row["start_ns"])
    # the JSON number of an epoch ns is exact to 256 ns
    assert w["start_ns"] == pytest.approx(int(row["start_ns"]) - origin - 0.1 * span, abs=600)
    assert w["end_ns"] == pytest.approx(int(row["end_ns"]) - origin + 0.1 * span, abs=600)
    shot(page, "view_modules_timeline")
    assert page.errors == []


def test_source_lines_copy_file_line(base, browser, prof, shot):
    c = prof.code_time(user_only=True)
    fwd = c[(c["phase"] == "forward") & (c["frame"] != "(unattributed)") & (c["self_us"] > 0)]
    fwd = fwd.sort_values("self_us", ascending=False)
    context = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US")
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
    page = context.new_page()
    try:
        _open(page, base)
        page.wait_for_selector(".pi-mod-line")
        where = page.eval_on_selector_all(".pi-mod-line", "els => els.map(e => e.dataset.where)")
        assert where == [f"{r.file}:{r.line}" for r in fwd.itertuples()]
        assert where[0] == "torchvision/models/alexnet.py:47"
        page.click(".pi-mod-line:first-child .pi-mod-copy")
        page.wait_for_function("() => document.querySelector('.pi-mod-line .pi-mod-copy').textContent === 'Copied'")
        assert page.evaluate("navigator.clipboard.readText()") == "torchvision/models/alexnet.py:47"
        shot(page, "view_modules_lines")
    finally:
        context.close()


def test_compare_by_module_with_folding(serve, page, fixtures, shot):
    a_path, b_path = fixtures / "ascend_pt" / "text_level0", fixtures / "ascend_pt" / "text_level1"
    base = serve(a_path, b_path)
    cmp = profinsight.compare(a_path, b_path, names=["text_level0", "text_level1"])
    ref = cmp.modules()
    page.goto(f"{base}/#text_level0/compare")
    page.wait_for_selector(".pi-pane-compare .pi-cmp-modules tbody tr", timeout=120_000)
    assert page.input_value(".pi-cmp-other") == "text_level1"
    key = page.eval_on_selector_all(".pi-cmp-modules thead th", "ths => ths.map(th => th.dataset.key)")
    first = page.eval_on_selector(".pi-cmp-modules tbody tr", "tr => Array.from(tr.children).map(td => td.textContent)")
    row = dict(zip(key, first))
    top = ref.iloc[0]
    assert (row["path"], row["phase"], row["status"]) == (top["path"], top["phase"], top["status"])
    assert page.locator(".pi-cmp-modules tbody tr").count() == min(len(ref), 200)
    page.check(".pi-cmp-fold")
    folded = cmp.modules(fold_layers=True)
    page.wait_for_function(
        "n => document.querySelectorAll('.pi-cmp-modules tbody tr').length === n", arg=min(len(folded), 200)
    )
    paths = page.eval_on_selector_all(
        ".pi-cmp-modules tbody tr", f"trs => trs.map(tr => tr.children[{key.index('path')}].textContent)"
    )
    conv = "DistributedDataParallel_0/AlexNet_0/Sequential_*/Conv2d_*"
    assert conv in paths and "DistributedDataParallel_0/AlexNet_0/Sequential_0/Conv2d_1" not in paths
    fkeys = page.eval_on_selector_all(".pi-cmp-modules thead th", "ths => ths.map(th => th.dataset.key)")
    assert {"n_layers", "slowest_layer", "layer_spread_ratio"} <= set(fkeys)
    shot(page, "view_compare_modules")
    assert page.errors == []


def test_phase_and_search_travel_in_the_link(base, page, prof, shot):
    """The phase and the search are in the address: the view writes them, and a link opens the
    same phase with the same modules marked."""
    m = prof.module_time()
    back = m[m["phase"] == "backward"]
    _open(page, base)
    page.click(".pi-mod-phase[data-phase='backward']")
    page.fill(".pi-mod-search", "conv2d")
    page.wait_for_function("() => location.hash.includes('q=conv2d')")
    assert page.evaluate("() => location.hash") == f"#{PID}/modules?q=conv2d&phase=backward"
    other = page.context.new_page()
    other.goto(page.url)
    other.wait_for_selector(".pi-pane-modules .pi-mod-node", timeout=60_000)
    assert other.get_attribute(".pi-mod-phase[data-phase='backward']", "aria-pressed") == "true"
    assert other.input_value(".pi-mod-search") == "conv2d"
    hits = other.eval_on_selector_all(".pi-mod-hit", "els => els.map(e => e.dataset.path)")
    drawn = set(other.eval_on_selector_all(".pi-mod-node", "els => els.map(e => e.dataset.path)"))
    assert sorted(hits) == sorted(p for p in back["path"] if "conv2d" in p.lower() and p in drawn) and hits
    shot(other, "view_modules_link_backward_search")
    other.close()
    assert page.errors == []
