"""The analysis views in a real browser, against a live `profinsight serve`: every number a view
shows is checked exactly against the same analysis in Python (formatted as the viewer formats
it), plus sorting, filtering, grouping, timeline jumps, an operator named `<script>…` and a
Chinese-language run.  Screenshots of every view go to ui-artifacts/ (light and dark)."""

from __future__ import annotations

import math

import pytest
from _support import crafted_trace, fmt_duration

import profinsight

pytestmark = pytest.mark.browser

EVIL = "<script>alert(1)</script>"


# --- the viewer's number formats (ts/app/dom.ts), to compare text exactly ----------------------
def fmt_us(us: float) -> str:
    return fmt_duration(us * 1e3)


def fmt_bytes(b: float) -> str:
    a = abs(b)
    if a >= 2**30:
        return f"{b / 2**30:.2f} GiB"
    if a >= 2**20:
        return f"{b / 2**20:.1f} MiB"
    if a >= 2**10:
        return f"{b / 2**10:.1f} KiB"
    return f"{int(b)} B"


def fmt_number(v: float, digits: int = 3) -> str:
    if float(v).is_integer():
        return f"{int(v):,}"
    return f"{v:,.{digits}f}".rstrip("0").rstrip(".")


@pytest.fixture(scope="module")
def paths(fixtures, tmp_path_factory):
    k = fixtures / "kineto"
    return {
        "rank0_ascend_pt": fixtures / "ascend_pt" / "text_level1" / "rank0_ascend_pt",
        "text_level1": fixtures / "ascend_pt" / "text_level1",
        "compare_base.json.gz": k / "compare_base.json.gz",
        "compare_test.json.gz": k / "compare_test.json.gz",
        "gpu_2rank_rank0.json.gz": k / "gpu_2rank_rank0.json.gz",
        "evil_trace.json": crafted_trace(fixtures, tmp_path_factory.mktemp("evil"), EVIL),
    }


@pytest.fixture(scope="module")
def base(serve, paths):
    return serve(*paths.values())


_loaded: dict = {}


@pytest.fixture
def prof(paths):
    def get(pid):
        if pid not in _loaded:
            _loaded[pid] = profinsight.load(paths[pid])
        return _loaded[pid]

    return get


def open_view(page, base, pid, view, ready):
    """Opens `view` of profile `pid` and waits for `ready` (a selector inside its pane)."""
    page.goto(f"{base}/#{pid}/{view}")
    page.wait_for_selector(f".pi-pane-{view} {ready}", timeout=60_000)
    page.wait_for_timeout(150)  # charts draw on the next frame


def cells(page, table_sel, key):
    """Texts of column `key` of the table, in row order."""
    return page.eval_on_selector(
        table_sel,
        """(t, key) => { const i = Array.from(t.querySelectorAll('thead th')).findIndex(th => th.dataset.key === key);
                          return Array.from(t.querySelectorAll('tbody tr')).map(tr => tr.children[i].textContent); }""",
        key,
    )


# --- Overview ---------------------------------------------------------------------------------
def test_overview_numbers_findings_and_jump(base, page, prof, shot):
    p = prof("text_level1")
    sb = p.step_breakdown()
    adv = p.advise(lang="en")
    top = adv[adv["severity"] != "not_applicable"].iloc[0]
    open_view(page, base, "text_level1", "overview", ".pi-finding")
    assert page.inner_text(".pi-card[data-key='step'] .pi-card-value") == fmt_us(sb["step_us"].mean())
    share = sb["computing_us"].sum() / sb["step_us"].sum()
    assert page.inner_text(".pi-card[data-key='computing'] .pi-card-value") == f"{share * 100:.1f}%"
    util = p.utilization()["busy_ratio"].mean()
    assert page.inner_text(".pi-card[data-key='util'] .pi-card-value") == f"{util * 100:.1f}%"
    assert page.inner_text(".pi-card[data-key='top_type'] .pi-card-value") == p.op_summary(by="type").iloc[0]["type"]
    first = page.locator(".pi-finding").first
    assert first.locator(".pi-finding-title").inner_text() == top["title"]
    assert first.get_attribute("data-rule") == top["rule"]
    assert page.locator(".pi-pane-overview .pi-chart canvas").count() >= 1
    shot(page, "view_overview")
    first.locator(".pi-jump").click()
    page.wait_for_selector(".pi-pane-timeline", state="visible")
    assert page.is_hidden(".pi-pane-overview")
    # the jump is in the address: the timeline view and the window it shows
    assert page.evaluate("location.hash").split("?")[0] == "#text_level1/timeline"
    assert page.errors == []


def test_overview_of_a_trace_without_steps_says_so(base, page, shot):
    open_view(page, base, "evil_trace.json", "overview", ".pi-section")
    text = page.inner_text(".pi-pane-overview")
    assert "No device steps" in text
    assert page.errors == []


# --- Operators --------------------------------------------------------------------------------
def test_operators_table_sort_filter_group(base, page, prof, shot):
    p = prof("rank0_ascend_pt")
    ref = p.op_summary()
    open_view(page, base, "rank0_ascend_pt", "operators", ".pi-op-table tbody tr")
    table = ".pi-op-table table"
    names = cells(page, table, "name")
    assert names[0] == ref.iloc[0]["name"]
    assert cells(page, table, "total_us")[0] == fmt_us(ref.iloc[0]["total_us"])
    assert len(names) == min(len(ref), 200)
    assert page.inner_text(".pi-op-table .pi-table-count") == f"{len(ref)} rows"
    shot(page, "view_operators")
    # sorting: a numeric column sorts descending first, then ascending
    page.click(f"{table} th[data-key='count']")
    counts = [int(c.replace(",", "")) for c in cells(page, table, "count")]
    assert counts == sorted(ref["count"], reverse=True)[: len(counts)]
    page.click(f"{table} th[data-key='count']")
    asc = [int(c.replace(",", "")) for c in cells(page, table, "count")]
    assert asc == sorted(ref["count"])[: len(asc)]
    page.click(f"{table} th[data-key='total_us']")
    page.click(f"{table} th[data-key='total_us']")
    assert cells(page, table, "name")[0] == ref.sort_values("total_us", kind="stable").iloc[0]["name"]
    # the filter narrows to the rows whose text contains it
    page.fill(".pi-op-table .pi-table-filter", "matmul")
    text_cols = [c for c in ref.columns if ref[c].dtype == object or str(ref[c].dtype).startswith("str")]
    want = ref[ref[text_cols].apply(lambda r: any("matmul" in str(v).lower() for v in r if isinstance(v, str)), axis=1)]
    assert sorted(cells(page, table, "name")) == sorted(want["name"])
    assert page.inner_text(".pi-op-table .pi-table-count") == f"{len(want)} of {len(ref)} rows"
    # grouping by type: one row per type, same order as the analysis
    page.select_option(".pi-op-by", "type")
    page.wait_for_selector(f"{table} th[data-key='type']")
    page.wait_for_function("() => !document.querySelector('.pi-op-table th[data-key=\"name\"]')")
    by_type = p.op_summary(by="type")
    assert cells(page, table, "type") == list(by_type["type"])
    assert page.errors == []


def test_operator_details_and_slowest_call_jump(base, page, prof, shot):
    p = prof("rank0_ascend_pt")
    ref = p.op_summary()
    open_view(page, base, "rank0_ascend_pt", "operators", ".pi-op-table tbody tr")
    page.click(".pi-op-table tbody tr:first-child")
    page.wait_for_selector(".pi-op-jump .pi-jump")
    assert page.inner_text(".pi-op-details-title") == ref.iloc[0]["name"]
    slowest = fmt_us(ref.iloc[0]["max_us"])
    assert f"Slowest call {slowest} on rank 0 ({ref.iloc[0]['count']} calls found)" == page.inner_text(
        ".pi-op-jump .pi-row span"
    )
    page.wait_for_selector(".pi-op-members tbody tr")
    shapes = p.op_summary(by="name_shape")
    assert page.locator(".pi-op-members tbody tr").count() == int((shapes["name"] == ref.iloc[0]["name"]).sum())
    shot(page, "view_operators_details")
    page.click(".pi-op-jump .pi-jump")
    page.wait_for_selector(".pi-pane-timeline", state="visible")
    assert page.evaluate("location.hash").split("?")[0] == "#rank0_ascend_pt/timeline"
    assert page.errors == []


def test_script_op_name_renders_as_text(base, page, shot):
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    open_view(page, base, "evil_trace.json", "operators", ".pi-view-empty, .pi-op-table")
    page.select_option(".pi-op-where", "host")
    page.wait_for_selector(".pi-op-table tbody tr")
    page.wait_for_timeout(300)
    assert EVIL in cells(page, ".pi-op-table table", "name")
    assert page.locator(".pi-viewer script").count() == 0
    page.click(".pi-op-table tbody tr:has-text('alert(1)')")
    page.wait_for_selector(".pi-op-details-title")
    assert page.inner_text(".pi-op-details-title") == EVIL
    page.wait_for_timeout(500)
    shot(page, "view_operators_script_name")
    assert page.locator(".pi-viewer script").count() == 0
    assert dialogs == [] and page.errors == []


# --- Memory -----------------------------------------------------------------------------------
def test_memory_peak_curves_and_jump(base, page, prof, shot):
    p = prof("text_level1")
    peaks = p.memory_peaks(rank=0)
    open_view(page, base, "text_level1", "memory", ".pi-card")
    for kind, col in (("peak_allocated", "allocated_bytes"), ("peak_reserved", "reserved_bytes")):
        for _, r in peaks[peaks["kind"] == kind].iterrows():
            if r[col] is None or r[col] is pd_na():
                continue
            card = page.locator(f".pi-card[data-key='{kind}:{r['component']}'] .pi-card-value")
            assert card.inner_text() == fmt_bytes(int(r[col]))
    assert page.locator(".pi-pane-memory .pi-chart canvas").count() >= 2
    shot(page, "view_memory")
    page.locator(".pi-pane-memory .pi-table-wrap tbody tr").first.click()
    page.wait_for_selector(".pi-pane-timeline", state="visible")
    # the jump is in the address: the timeline view and the window it shows
    assert page.evaluate("location.hash").split("?")[0] == "#text_level1/timeline"
    assert page.errors == []


def pd_na():
    import pandas as pd

    return pd.NA


def test_memory_of_a_trace_without_memory_says_so(base, page):
    open_view(page, base, "compare_test.json.gz", "memory", ".pi-view-empty")
    assert "No device memory records" in page.inner_text(".pi-pane-memory")
    assert page.errors == []


# --- Communication ----------------------------------------------------------------------------
def test_communication_matrix_for_two_ranks(base, page, prof, shot):
    p = prof("text_level1")
    m = p.comm_matrix(summary="total")
    open_view(page, base, "text_level1", "communication", ".pi-matrix-grid td")
    g = m.groupby(["src_rank", "dst_rank"])[["bytes", "transit_us"]].sum()
    assert {0, 1} <= set(m["rank"])
    for (src, dst), r in g.iterrows():
        cell = page.inner_text(f".pi-matrix-grid td[data-src='{src}'][data-dst='{dst}']")
        assert cell == f"{fmt_number(r['bytes'] / (r['transit_us'] * 1e3), 2)} GB/s", (src, dst)
    coll = p.collectives()
    assert page.locator(".pi-pane-communication .pi-table-wrap").last.locator("tbody tr").count() == len(coll)
    shot(page, "view_communication")
    page.select_option(".pi-matrix-metric", "bytes")
    src, dst = g.index[1]
    assert page.inner_text(f".pi-matrix-grid td[data-src='{src}'][data-dst='{dst}']") == fmt_bytes(g.iloc[1]["bytes"])
    assert page.errors == []


def test_communication_of_a_single_gpu_trace_says_so(base, page, shot):
    open_view(page, base, "compare_base.json.gz", "communication", ".pi-view-empty")
    assert "No communication in this profile." in page.inner_text(".pi-pane-communication")
    shot(page, "view_communication_empty")
    assert page.errors == []


# --- Ranks ------------------------------------------------------------------------------------
def test_ranks_side_by_side(base, page, prof, shot):
    p = prof("text_level1")
    rs = p.rank_summary()
    open_view(page, base, "text_level1", "ranks", ".pi-table tbody tr")
    table = ".pi-pane-ranks .pi-table-wrap table"
    assert cells(page, table, "step_us") == [fmt_us(v) for v in rs["step_us"]]
    assert "No rank stands out" in page.inner_text(".pi-pane-ranks")
    shot(page, "view_ranks")
    assert page.errors == []


# --- Compare ----------------------------------------------------------------------------------
def test_compare_step_delta_and_waterfall(base, page, paths, shot):
    cmp = profinsight.compare(
        paths["compare_base.json.gz"],
        paths["compare_test.json.gz"],
        names=["compare_base.json.gz", "compare_test.json.gz"],
    )
    s = cmp.summary().iloc[0]
    open_view(page, base, "compare_base.json.gz", "compare", ".pi-card[data-key='delta']")
    assert page.input_value(".pi-cmp-other") == "compare_test.json.gz"
    delta = s["delta_step_us"]
    want = fmt_us(delta) if delta <= 0 else "+" + fmt_us(delta)
    assert page.inner_text(".pi-card[data-key='delta'] .pi-card-value") == want
    assert page.inner_text(".pi-card[data-key='from'] .pi-card-value") == fmt_us(s["from_step_us"])
    assert page.inner_text(".pi-card[data-key='to'] .pi-card-value") == fmt_us(s["to_step_us"])
    wf = cmp.waterfall()
    assert math.isclose(wf[wf["in_step"]]["delta_us"].sum(), delta, abs_tol=1e-6)
    assert page.inner_text(".pi-cmp-sum") == f"Sum of the in-step changes: {want} = step change {want}"
    assert page.inner_text(".pi-cmp-verdict") == s["verdict"]
    ops = cmp.ops("type")
    for status in ("added", "removed", "slower", "faster"):
        n = int((ops["status"] == status).sum())
        assert page.inner_text(f".pi-chip[data-status='{status}']").endswith(f"({n})")
    shot(page, "view_compare")
    assert page.errors == []


def test_compare_runs_travel_in_the_link(base, page, paths, shot):
    """The pair of runs is in the address: the view writes it, and a link naming the runs the
    other way round opens that comparison (a link naming a run twice is not followed)."""
    open_view(page, base, "compare_base.json.gz", "compare", ".pi-card[data-key='delta']")
    page.wait_for_function("() => location.hash.includes('other=')")
    h = page.evaluate("() => location.hash")
    assert h == "#compare_base.json.gz/compare?base=compare_base.json.gz&other=compare_test.json.gz"
    back = (
        profinsight.compare(
            paths["compare_test.json.gz"],
            paths["compare_base.json.gz"],
            names=["compare_test.json.gz", "compare_base.json.gz"],
        )
        .summary()
        .iloc[0]
    )
    page.goto("about:blank")
    page.goto(f"{base}/#compare_base.json.gz/compare?base=compare_test.json.gz&other=compare_base.json.gz")
    page.wait_for_selector(".pi-card[data-key='delta']", timeout=60_000)
    assert (page.input_value(".pi-cmp-base"), page.input_value(".pi-cmp-other")) == (
        "compare_test.json.gz",
        "compare_base.json.gz",
    )
    delta = back["delta_step_us"]
    want = fmt_us(delta) if delta <= 0 else "+" + fmt_us(delta)
    assert page.inner_text(".pi-card[data-key='delta'] .pi-card-value") == want
    assert page.inner_text(".pi-card[data-key='from'] .pi-card-value") == fmt_us(back["from_step_us"])
    shot(page, "view_compare_link_swapped")
    page.goto("about:blank")
    page.goto(f"{base}/#compare_base.json.gz/compare?base=compare_test.json.gz&other=compare_test.json.gz")
    page.wait_for_selector(".pi-card[data-key='delta']", timeout=60_000)
    assert page.input_value(".pi-cmp-base") != page.input_value(".pi-cmp-other")
    assert page.errors == []


# --- language and dark mode ---------------------------------------------------------------------
def test_operators_in_chinese(base, browser, prof, shot):
    ctx = browser.new_context(viewport={"width": 1400, "height": 900}, locale="zh-CN")
    pg = ctx.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(f"{base}/#rank0_ascend_pt/operators")
    pg.wait_for_selector(".pi-op-table tbody tr", timeout=60_000)
    assert pg.inner_text(".pi-pane-operators .pi-control >> nth=0").startswith("分组方式")
    assert pg.inner_text(".pi-op-table th[data-key='total_us']").strip() == "总耗时"
    n = len(prof("rank0_ascend_pt").op_summary())
    assert pg.inner_text(".pi-op-table .pi-table-count") == f"{n} 行"
    shot(pg, "view_operators_zh")
    ctx.close()
    assert errors == []


@pytest.mark.parametrize(
    "view,ready",
    [
        ("overview", ".pi-finding"),
        ("operators", ".pi-op-table tbody tr"),
        ("memory", ".pi-card"),
        ("communication", ".pi-matrix-grid td"),
        ("ranks", ".pi-table tbody tr"),
    ],
)
def test_views_in_dark_mode(base, browser, view, ready, shot):
    ctx = browser.new_context(viewport={"width": 1400, "height": 900}, color_scheme="dark", locale="en-US")
    pg = ctx.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(f"{base}/#text_level1/{view}")
    pg.wait_for_selector(f".pi-pane-{view} {ready}", timeout=60_000)
    pg.wait_for_timeout(200)
    bg = pg.evaluate("getComputedStyle(document.querySelector('.pi-viewer')).backgroundColor")
    assert bg == "rgb(30, 30, 34)"
    shot(pg, f"view_{view}_dark")
    ctx.close()
    assert errors == []


@pytest.mark.parametrize(
    "view,ready",
    [
        ("overview", ".pi-card"),
        ("operators", ".pi-op-table tbody tr"),
        ("memory", ".pi-section, .pi-view-empty"),
        ("communication", ".pi-section, .pi-view-empty"),
        ("ranks", ".pi-section, .pi-view-empty"),
    ],
)
def test_views_of_a_kineto_gpu_trace(base, page, prof, view, ready, shot):
    """A GPU (Kineto) rank renders every view: numbers where the trace has them, words where not."""
    open_view(page, base, "gpu_2rank_rank0.json.gz", view, ready)
    page.wait_for_timeout(300)
    assert not page.locator(f".pi-pane-{view} .pi-error").count()
    if view == "overview":
        sb = prof("gpu_2rank_rank0.json.gz").step_breakdown()
        assert page.inner_text(".pi-card[data-key='step'] .pi-card-value") == fmt_us(sb["step_us"].mean())
    if view == "operators":
        ref = prof("gpu_2rank_rank0.json.gz").op_summary()
        assert cells(page, ".pi-op-table table", "name")[0] == ref.iloc[0]["name"]
    shot(page, f"view_{view}_gpu")
    assert page.errors == []
