"""The viewer at scale and its tables, in a real browser against a live `profinsight serve`:

- the one table widget: sort, filter, copy, and a CSV export whose content equals the analysis rows
  (epoch ns exact);
- Operators offers no invalid option pair; Communication filters by step and collective;
- Memory: curve toggles, a brush that filters the allocations to what the server says is live;
- Overview above 24 rank-steps: a step-time line (one rank) or a rank x step heat map;
- an uncached open: the run's vendor summary paints before the import ends, the progress says bytes;
- glossary definitions on the headline labels, in en and zh.
Screenshots in ui-artifacts/ (en and zh)."""

from __future__ import annotations

import csv
import io
import math
import sys

import pandas as pd
import pytest
from _support import REPO, artifacts_dir, brush_memory_chart

import profinsight

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A Kineto job of 2 ranks x 26 steps (copies of the real gpu_2rank trace): 52 rank-steps."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from generate import generate_kineto

    out = tmp_path_factory.mktemp("multistep")
    generate_kineto(0, out, ranks=2, copies=13, check=False)
    files = sorted((out / "kineto").glob("*.json*"))
    return files


@pytest.fixture(scope="module")
def paths(fixtures, generated):
    return {
        "rank0_ascend_pt": fixtures / "ascend_pt" / "text_level1" / "rank0_ascend_pt",
        "qwen3_level2_4rank": fixtures / "ascend_llm" / "qwen3_level2_4rank",
        "kineto": generated[0].parent,
        "one_rank": generated[0],
    }


@pytest.fixture(scope="module")
def base(serve, paths):
    return serve(*paths.values())


_loaded: dict = {}


def prof(paths, key):
    if key not in _loaded:
        _loaded[key] = profinsight.load(paths[key])
    return _loaded[key]


def open_view(page, base, pid, view, ready, lang="en"):
    page.add_init_script(f"localStorage.setItem('profinsight.lang', '{lang}')")
    page.goto(f"{base}/#{pid}/{view}")
    page.wait_for_selector(f".pi-pane-{view} {ready}", timeout=120_000)
    page.wait_for_timeout(200)


def download_csv(page, wrap_sel):
    with page.expect_download() as d:
        page.click(f"{wrap_sel} .pi-table-csv")
    text = open(d.value.path(), encoding="utf-8-sig").read()
    return list(csv.DictReader(io.StringIO(text)))


def _same(v, want) -> bool:
    if want is None or (isinstance(want, float) and math.isnan(want)) or want is pd.NA:
        return v == ""
    if isinstance(want, int | float) and not isinstance(want, bool):
        return float(v) == pytest.approx(float(want), rel=1e-12, abs=1e-9) if v != "" else False
    return v == str(want)


def _id(path) -> str:
    """The id `profinsight serve` gives a file (its name, made URL-safe as the store does)."""
    import re

    return re.sub(r"[^A-Za-z0-9_.-]+", "_", path.name).strip("._")


# --- the table widget ---------------------------------------------------------------------
def test_table_sort_filter_copy_and_csv_equal_the_analysis(base, page, paths, shot):
    p = prof(paths, "rank0_ascend_pt")
    want = p.op_summary(by="name", where="device")
    open_view(page, base, "rank0_ascend_pt", "operators", ".pi-op-table tbody tr")
    wrap = ".pi-op-table"
    rows = download_csv(page, wrap)
    # one rank: each kernel's PMU ratios and bound type (kernel_pmu) follow op_summary's columns
    kp = p.kernel_pmu().set_index(["name", "type", "core"])
    pmu = ["bound", "bound_ratio", *(c for c in kp.columns if c.startswith("pmu_") and kp[c].notna().any())]
    assert len(rows) == len(want) and list(rows[0].keys()) == list(want.columns) + pmu
    for got, exp in zip(rows, want.to_dict("records")):
        assert all(_same(got[k], exp[k]) for k in want.columns), (got, exp)
        key = (exp["name"], exp["type"], exp["core"])
        assert got["bound"] == (kp.loc[key, "bound"] if key in kp.index else "")
    # sort by count (numeric: descending first), then filter by a name part
    page.click(f"{wrap} th[data-key='count']")
    counts = page.eval_on_selector_all(f"{wrap} tbody tr td:nth-child(2)", "els => els.map(e => e.textContent)")
    assert counts  # the sorted order is what the CSV holds
    rows = download_csv(page, wrap)
    assert [int(r["count"]) for r in rows] == sorted(want["count"], reverse=True)
    page.fill(f"{wrap} .pi-table-filter", "transdata")
    page.wait_for_timeout(100)
    n = int(want["name"].str.lower().str.contains("transdata").sum())
    assert page.locator(f"{wrap} tbody tr").count() == min(n, 200)
    assert len(download_csv(page, wrap)) == n
    # copy: the rows shown, tab-separated, headers first
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
    page.click(f"{wrap} .pi-table-copy")
    page.wait_for_selector(f"{wrap} .pi-table-copied:has-text('{n}')")
    lines = page.evaluate("navigator.clipboard.readText()").strip().split("\n")
    assert len(lines) == n + 1 and "\t" in lines[0]
    shot(page, "table_tools_operators")
    assert page.errors == []


def test_operators_offer_no_invalid_pair(base, page, shot):
    open_view(page, base, "rank0_ascend_pt", "operators", ".pi-op-table")
    page.select_option(".pi-op-by", "type")
    page.wait_for_selector(".pi-op-table tbody tr")
    assert page.eval_on_selector(".pi-op-where option[value='host']", "o => o.disabled")
    page.select_option(".pi-op-by", "name")
    page.select_option(".pi-op-where", "host")
    page.wait_for_selector(".pi-op-table tbody tr")
    disabled = page.eval_on_selector_all(".pi-op-by option", "os => os.filter(o => o.disabled).map(o => o.value)")
    assert disabled == ["type", "core"]
    assert page.locator(".pi-pane-operators .pi-error").count() == 0
    # the generic Analyses form reads the same rule from the registry (Param.requires)
    page.goto(f"{base}/#rank0_ascend_pt/analyses/op_summary?by=type")
    page.wait_for_selector(".pi-an-param[data-param='where']")
    assert page.eval_on_selector(".pi-an-param[data-param='where'] option[value='host']", "o => o.disabled")
    assert "needs where = device" in page.eval_on_selector(
        ".pi-an-param[data-param='where'] option[value='host']", "o => o.title"
    )
    assert page.errors == []


def test_communication_filters_by_step_and_collective(base, page, paths, shot):
    p = prof(paths, "qwen3_level2_4rank")
    ops = p.collectives()
    open_view(page, base, "qwen3_level2_4rank", "communication", ".pi-comm-body .pi-table-wrap")
    kind = "hcom_allGather_"
    page.select_option(".pi-comm-type", kind)
    page.wait_for_selector(".pi-comm-body .pi-table-wrap")
    want = ops[ops["type"] == kind]
    rows = download_csv(page, ".pi-comm-body section:last-of-type .pi-table-wrap")
    assert len(rows) == len(want) and {r["type"] for r in rows} == {kind}
    assert [r["start_ns"] for r in rows] == [str(v) for v in want["start_ns"]]  # exact epoch ns
    # the names shown drop HCCL's trailing underscore; the data keeps it
    assert "hcom_allGather" in page.inner_text(".pi-comm-type") and "hcom_allGather_" not in page.inner_text(
        ".pi-comm-type"
    )
    step = int(p.steps[0])
    page.select_option(".pi-comm-step", str(step))
    page.wait_for_selector(".pi-comm-body .pi-table-wrap")
    rows = download_csv(page, ".pi-comm-body section:last-of-type .pi-table-wrap")
    assert len(rows) == len(want[want["step"] == step])
    assert "coll=hcom_allGather_" in page.evaluate("location.hash") and f"step={step}" in page.evaluate("location.hash")
    shot(page, "view_communication_filtered")
    assert page.errors == []


# --- memory -------------------------------------------------------------------------------
def test_memory_toggles_and_brush_filter_the_allocations(base, page, paths, shot):
    p = prof(paths, "rank0_ascend_pt")
    open_view(page, base, "rank0_ascend_pt", "memory", ".pi-mem-alloc-table tbody tr")
    series = lambda: page.eval_on_selector(".pi-mem-chart", "c => JSON.parse(c.dataset.series)")  # noqa: E731
    first = series()
    assert first and all(s.split("|")[1] in ("allocated_mib", "reserved_mib") for s in first)
    page.click(".pi-mem-measures .pi-mem-toggle[data-item='reserved_mib']")
    assert all(s.endswith("|allocated_mib") for s in series())
    page.click(".pi-mem-components .pi-mem-toggle[data-item='APP']")
    assert not any(s.startswith("APP|") for s in series())
    assert page.inner_text(".pi-mem-alloc-table .pi-table-count") == f"{len(p.memory_allocations())} rows"
    # brush across the middle of the plot: the allocations become those live in that range
    lo, hi = brush_memory_chart(page)
    want = p.memory_allocations(start_ms=lo, end_ms=hi)
    page.wait_for_function(
        "n => { const c = document.querySelector('.pi-mem-allocs .pi-table-count, .pi-mem-allocs .pi-empty'); "
        "return c && (c.textContent.startsWith(n + ' rows') || (n === 0 && c.classList.contains('pi-empty'))); }",
        arg=len(want),
    )
    shot(page, "view_memory_brushed")
    page.click(".pi-mem-range-reset")
    assert page.eval_on_selector(".pi-mem-range", "e => e.dataset.range") == ""
    assert page.errors == []


# --- overview at scale ----------------------------------------------------------------------
def test_overview_above_24_rank_steps_draws_a_line_or_a_heat_map(base, page, paths, shot):
    two = prof(paths, "kineto").step_breakdown()
    one = prof(paths, "one_rank").step_breakdown()
    assert len(two) > 24 and two["rank"].nunique() == 2 and len(one) > 24
    open_view(page, base, "kineto", "overview", ".pi-steps-heat canvas")
    assert page.eval_on_selector(".pi-steps-heat", "c => Number(c.dataset.cells)") == len(two)
    assert page.locator(".pi-steps-table tbody tr").count() == min(len(two), 50)
    chart_h = page.eval_on_selector(".pi-steps-heat", "c => c.clientHeight")
    assert chart_h < 400  # not one 28 px bar per rank-step (52 -> 1,500 px)
    shot(page, "view_overview_heatmap")
    open_view(page, base, _id(paths["one_rank"]), "overview", ".pi-steps-line canvas")
    assert page.locator(".pi-steps-line").count() == 1
    shot(page, "view_overview_step_line")
    assert page.errors == []


# --- first paint and progress --------------------------------------------------------------
def test_uncached_open_paints_the_vendor_summary_and_says_bytes(
    serve, paths, page, fixtures, shot, tmp_path, monkeypatch
):
    import shutil
    import time

    from profinsight.importers import progress

    # this small rank imports in well under a second on an idle machine, before the page could
    # show anything: each byte count the import reports holds it 2 s (the server runs in this
    # process), so the page is watched while the import runs and its bytes have moved
    real = progress.Watcher.on_read

    def held(self, key, done):
        real(self, key, done)
        time.sleep(2.0)

    monkeypatch.setattr(progress.Watcher, "on_read", held)
    rank = tmp_path / "fresh" / "rank0_ascend_pt"
    shutil.copytree(paths["rank0_ascend_pt"], rank)  # a path the server has never cached
    url = serve(rank)
    page.goto(f"{url}/#rank0_ascend_pt/overview")
    page.wait_for_selector(".pi-first-paint[data-state='shown'] .pi-card", timeout=60_000)
    # the summary is there while the import still runs (the overview is not shown yet)
    loading = page.locator(".pi-loading").count()
    step_card = page.inner_text(".pi-first-paint .pi-card[data-key='step'] .pi-card-value")
    rows = list(csv.DictReader(open(rank / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv", encoding="utf-8-sig")))
    want_us = sum(float(r["Stage"]) for r in rows) / len(rows)
    from _support import fmt_duration

    assert step_card == fmt_duration(want_us * 1e3)
    shot(page, "first_paint_en")
    seen = []
    for _ in range(400):
        st = page.evaluate(
            "() => { const e = document.querySelector('.pi-loading'); return e ? [e.dataset.bytesDone, e.dataset.bytesTotal, e.innerText] : null; }"
        )
        if st is None:
            break
        seen.append(st)
        page.wait_for_timeout(50)
    page.wait_for_selector(".pi-pane-overview .pi-card", timeout=120_000)
    from profinsight.discovery import discover

    total = sum(f.stat().st_size for s in discover(rank)[0].sources for f in s.files)  # the files the import reads
    assert loading == 1 and seen and all(int(s[1]) in (0, total) for s in seen)
    moved = [s for s in seen if int(s[0]) > 0]
    assert moved and " of " in moved[-1][2] and "read" in moved[-1][2]  # "2.1 MiB of 2.8 MiB read (77%)"
    assert page.errors == []


# --- glossary -----------------------------------------------------------------------------
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_headline_labels_carry_the_glossary(base, page, lang, shot):
    from profinsight.i18n import t

    open_view(page, base, "rank0_ascend_pt", "overview", ".pi-card .pi-term", lang=lang)
    got = page.eval_on_selector(".pi-card[data-key='computing'] .pi-card-label", "e => e.title")
    assert got == f"{t('term.compute', lang)}: {t('term.compute.def', lang)}"
    free = page.eval_on_selector(".pi-card[data-key='free'] .pi-card-label", "e => e.dataset.term")
    assert free == "device_idle"
    th = page.eval_on_selector(".pi-steps-table th[data-key='free_us']", "e => e.title")
    assert th.startswith(f"{t('term.device_idle', lang)}: {t('term.device_idle.def', lang)}")
    rec = page.eval_on_selector(".pi-finding-rec", "e => e.title")
    assert rec == f"{t('term.recoverable', lang)}: {t('term.recoverable.def', lang)}"
    page.hover(".pi-card[data-key='computing'] .pi-card-label")
    shot(page, f"overview_terms_{lang}")
    assert page.errors == []


def test_first_ready_rank_is_painted_before_the_last(serve, paths, page, fixtures, shot, tmp_path, monkeypatch):
    """Two ranks imported cold with rank 1 held back: the page shows the vendor summary of both,
    then rank 0's own figures, while rank 1 still imports (in Chinese: the zh screenshot)."""
    import shutil
    import threading

    from profinsight.i18n import t
    from profinsight.store import loader

    run_dir = tmp_path / "held" / "text_level1"
    shutil.copytree(fixtures / "ascend_pt" / "text_level1", run_dir)
    real_import = loader.import_rank
    release = threading.Event()

    def held(source):
        if source.rank_hint == 1 and source.format != "cluster":
            release.wait(120)
        return real_import(source)

    monkeypatch.setattr(loader, "import_rank", held)
    url = serve(run_dir)
    try:
        page.add_init_script("localStorage.setItem('profinsight.lang', 'zh')")
        page.goto(f"{url}/#text_level1/overview")
        page.wait_for_selector(".pi-first-ready[data-ranks='0'] .pi-card", timeout=90_000)
        assert page.locator(".pi-loading").count() == 1  # rank 1 is still importing
        assert t("ui.first.ready", "zh").split("{")[0] in page.inner_text(".pi-first-ready")
        want = profinsight.load(run_dir / "rank0_ascend_pt").step_breakdown()["step_us"].mean()
        from _support import fmt_duration

        assert page.inner_text(".pi-first-ready .pi-card[data-key='step'] .pi-card-value") == fmt_duration(want * 1e3)
        assert page.locator(".pi-first-paint .pi-first-steps").count() == 1  # the vendor summary of both ranks
        page.screenshot(path=str(artifacts_dir() / "first_paint_ready_zh.png"), full_page=True)
    finally:
        release.set()
    page.wait_for_selector(".pi-pane-overview .pi-card", timeout=120_000)
    assert page.errors == []
