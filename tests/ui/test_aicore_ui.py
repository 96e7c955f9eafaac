"""The AI Core view and the Overview headline in a real browser: every number equals
utilization() / kernel_pmu() in Python, formatted as the viewer formats it."""

from __future__ import annotations

import pandas as pd
import pytest
from _support import fmt_duration

import profinsight
from profinsight.i18n.ui import UI

pytestmark = pytest.mark.browser


def pct(v: float) -> str:
    return f"{v * 100:.1f}%"


@pytest.fixture(scope="module")
def paths(fixtures):
    return {
        "text_level1": fixtures / "ascend_pt" / "text_level1",
        "gpu_2rank_rank0.json.gz": fixtures / "kineto" / "gpu_2rank_rank0.json.gz",
    }


@pytest.fixture(scope="module")
def base(serve, paths):
    return serve(*paths.values())


def _open(page, base, pid, view, ready):
    page.goto(f"{base}/#{pid}/{view}")
    page.wait_for_selector(f".pi-pane-{view} {ready}", timeout=60_000)
    page.wait_for_timeout(150)


def _card(page, key):
    return page.inner_text(f".pi-pane-aicore .pi-card[data-key='{key}'] .pi-card-value")


def test_aicore_view_equals_utilization_and_kernel_pmu(base, page, paths, shot):
    p = profinsight.load(paths["text_level1"])
    u = p.utilization()
    _open(page, base, "text_level1", "aicore", ".pi-aicore-kernels tbody tr")
    # compute first, then the units, then busy (communication wait included) and idle
    keys = page.eval_on_selector_all(".pi-pane-aicore .pi-card", "cs => cs.map(c => c.dataset.key)")
    assert keys == ["compute", "cube", "vector", "busy", "idle"]
    assert _card(page, "compute") == pct(u["compute_ratio"].mean()) == "6.6%"
    assert _card(page, "cube") == pct(u["cube_busy_ratio"].mean())
    assert _card(page, "vector") == pct(u["vector_busy_ratio"].mean())
    assert _card(page, "busy") == pct(u["busy_ratio"].mean())
    assert _card(page, "idle") == pct(1 - u["busy_ratio"].mean())
    # the PMU ratios per step: one row per rank-step, the analysis's own values
    steps = page.locator(".pi-aicore-steps tbody tr")
    assert steps.count() == len(u)
    heads = page.eval_on_selector_all(".pi-aicore-steps thead th", "ths => ths.map(t => t.dataset.key)")
    col = heads.index("pmu_aic_mac_ratio")
    first = steps.first.locator("td").all_inner_texts()
    assert first[col] == pct(u["pmu_aic_mac_ratio"].iloc[0])
    # per kernel: every kernel_pmu row, the bound type with the rule shown
    k = p.kernel_pmu()
    rows = page.locator(".pi-aicore-kernels tbody tr")
    assert rows.count() == min(len(k), 200)
    heads = page.eval_on_selector_all(".pi-aicore-kernels thead th", "ths => ths.map(t => t.dataset.key)")
    top = k.iloc[0]
    cells = rows.first.locator("td").all_inner_texts()
    assert cells[heads.index("name")] == top["name"]
    assert cells[heads.index("total_us")] == fmt_duration(top["total_us"] * 1e3)
    assert cells[heads.index("bound")] == "MTE2 (GM → L1/UB)" and top["bound"] == "mte2"
    assert cells[heads.index("bound_ratio")] == pct(top["bound_ratio"])
    assert "above 80%" in page.inner_text(".pi-aicore-rule")
    assert page.locator(".pi-pane-aicore .pi-chart canvas").count() >= 2
    shot(page, "view_aicore")
    assert page.errors == []


def test_overview_headline_is_compute_first(base, page, paths):
    p = profinsight.load(paths["text_level1"])
    sb = p.step_breakdown()
    _open(page, base, "text_level1", "overview", ".pi-card")
    keys = page.eval_on_selector_all(".pi-pane-overview .pi-card", "cs => cs.map(c => c.dataset.key)")
    assert keys[0] == "computing"
    assert page.inner_text(".pi-pane-overview .pi-card[data-key='computing'] .pi-card-value") == pct(
        sb["computing_us"].sum() / sb["step_us"].sum()
    )
    # the busy ratio says that it counts communication waiting
    label = page.inner_text(".pi-pane-overview .pi-card[data-key='util'] .pi-card-label")
    assert label == "Device busy (communication wait included)"
    assert page.errors == []


def test_aicore_view_on_a_gpu_trace_says_there_is_no_pmu(base, page):
    _open(page, base, "gpu_2rank_rank0.json.gz", "aicore", ".pi-card")
    assert "No kernel records PMU ratios" in page.inner_text(".pi-pane-aicore")
    assert page.locator(".pi-pane-aicore .pi-card[data-key='cube']").count() == 0
    assert page.errors == []


def _table(page):
    """The Operators table: column key -> the column's cell texts."""
    return page.eval_on_selector(
        ".pi-op-table table",
        """t => { const keys = Array.from(t.querySelectorAll('thead th')).map(th => th.dataset.key);
                  const rows = Array.from(t.querySelectorAll('tbody tr')).map(tr => Array.from(tr.children).map(td => td.textContent));
                  return Object.fromEntries(keys.map((k, i) => [k, rows.map(r => r[i])])); }""",
    )


def test_operators_show_each_kernels_pmu_ratios_on_one_rank(base, page, paths, shot):
    """Kernels by name on one rank carry the PMU ratios and the bound type of kernel_pmu (same
    name, type and core on that rank); over both ranks they are left to the AI Core view."""
    p = profinsight.load(paths["text_level1"])
    ops = p.op_summary(rank=1)
    k = p.kernel_pmu()
    k = k[k["rank"] == 1].set_index(["name", "type", "core"])
    page.goto(f"{base}/#text_level1/operators?rank=1")
    page.wait_for_selector(".pi-op-table th[data-key='bound']", timeout=60_000)
    assert page.input_value(".pi-op-rank") == "1"
    cols = _table(page)
    recorded = [c for c in k.columns if c.startswith("pmu_") and k[c].notna().any()]
    heads = page.eval_on_selector_all(".pi-op-table thead th", "ths => ths.map(t => t.dataset.key)")
    assert heads[-(len(recorded) + 2) :] == ["bound", "bound_ratio", *recorded]
    assert cols["name"] == list(ops["name"])[:200]
    matched = 0
    for i, row in enumerate(ops.head(200).itertuples()):
        key = (row.name, row.type, row.core)
        if key not in k.index:
            assert cols["bound"][i] == "" and cols["pmu_aic_mac_ratio"][i] == ""
            continue
        matched += 1
        pmu = k.loc[key]
        word = "ui.aicore.bound_none" if pmu["bound"] == "none" else f"ui.aicore.unit.{pmu['bound']}"
        assert cols["bound"][i] == UI["en"][word]
        assert cols["bound_ratio"][i] == pct(pmu["bound_ratio"])
        for c in (c for c in recorded if c.endswith("_ratio")):
            assert cols[c][i] == ("" if pd.isna(pmu[c]) else pct(pmu[c])), (key, c)
    assert matched == len(k)  # every kernel with PMU data on rank 1 is a row
    assert cols["bound"][0] == "MTE2 (GM → L1/UB)" and cols["bound_ratio"][0] == "97.9%"
    # the PMU columns are right of the times: the table scrolls sideways to them
    page.eval_on_selector(
        ".pi-op-table",
        "el => [el, ...el.querySelectorAll('*')].forEach(e => { if (e.scrollWidth > e.clientWidth + 4) e.scrollLeft = e.scrollWidth; })",
    )
    shot(page, "view_operators_pmu")
    # both ranks: no PMU columns (weighing them across ranks is the AI Core view's)
    page.select_option(".pi-op-rank", "")
    page.wait_for_function("() => !document.querySelector(\".pi-op-table th[data-key='bound']\")", timeout=60_000)
    assert page.errors == []
