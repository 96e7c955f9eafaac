"""The Analyses view in a real browser: every registered analysis is listed from the registry's
own description, its parameter form is built from the registration, the first table row equals
the same analysis run in Python (formatted as the viewer formats it), a large result pages with
next / previous through the route's offset/limit, and the choice lives in the page address.
Screenshots (light, dark, Chinese) go to ui-artifacts/."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from _support import fmt_duration

import profinsight
from profinsight.registry import all_analyses

RANK0 = "rank0_ascend_pt"
GPU = "gpu_2rank_rank0.json.gz"


# --- the viewer's cell formats (ts/app/widgets/format.ts fmtCell), to compare text exactly ----
def fmt_number(v: float, digits: int = 3) -> str:
    if float(v).is_integer():
        return f"{int(v):,}"
    return f"{v:,.{digits}f}".rstrip("0").rstrip(".")


def fmt_cell(col: str, v) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if col.endswith("_us"):
        return fmt_duration(v * 1e3)
    if col.endswith("_ratio"):
        return f"{v * 100:.1f}%"
    if col.endswith("_ns"):
        return str(v)
    return fmt_number(v)


@pytest.fixture(scope="module")
def paths(fixtures):
    return {
        RANK0: fixtures / "ascend_pt" / "text_level1" / "rank0_ascend_pt",
        GPU: fixtures / "kineto" / "gpu_2rank_rank0.json.gz",
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


def ready(page, name: str, offset: int = 0):
    page.wait_for_selector(
        f".pi-an-result[data-state='ready'][data-analysis='{name}'][data-offset='{offset}']", timeout=60_000
    )
    page.wait_for_timeout(150)  # the chart draws on the next frame


def first_row(page) -> dict[str, str]:
    """The first table row of the shown result: column key -> cell text."""
    return page.eval_on_selector(
        ".pi-an-result table",
        """t => { const keys = Array.from(t.querySelectorAll('thead th')).map(th => th.dataset.key);
                  const tds = t.querySelector('tbody tr').children;
                  return Object.fromEntries(keys.map((k, i) => [k, tds[i].textContent])); }""",
    )


def _py(v):
    """A DataFrame cell as the JSON answer carries it (NA and NaN as null)."""
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return None
    return v.item() if hasattr(v, "item") else v


def expected_row(df, i: int = 0) -> dict[str, str]:
    """Row ``i`` of ``df`` as the table shows it (the `label` column and empty columns hidden)."""
    shown = [c for c in df.columns if c != "label" and any(_py(v) not in (None, "") for v in df[c])]
    return {c: fmt_cell(c, _py(df.iloc[i][c])) for c in shown}


def test_every_registered_analysis_is_listed(base, page, shot):
    page.goto(f"{base}/#{RANK0}/analyses")
    page.wait_for_selector(".pi-an-item", timeout=60_000)
    names = page.eval_on_selector_all(".pi-an-item", "els => els.map(e => e.dataset.name)")
    assert names == sorted(all_analyses())
    for hidden_before in ("format_conversions", "launch_stats", "dataloader", "top_kernels", "time_by_category"):
        assert hidden_before in names
    titles = page.eval_on_selector_all(".pi-an-item .pi-an-item-title", "els => els.map(e => e.textContent)")
    assert titles == [all_analyses()[n].title for n in names]
    assert "Choose an analysis" in page.inner_text(".pi-an-main")
    assert page.locator(".pi-tab[data-view='analyses']").inner_text() == "Analyses"
    # each one runs from its defaults and shows its result (or says it found no rows)
    for name in names:
        page.click(f".pi-an-item[data-name='{name}']")
        page.wait_for_selector(f".pi-an-result[data-analysis='{name}'][data-state]:not([data-state='loading'])")
        assert page.get_attribute(".pi-an-result", "data-state") == "ready", (name, page.inner_text(".pi-an-result"))
        total = int(page.get_attribute(".pi-an-result", "data-total"))
        shown = page.locator(".pi-an-result tbody tr").count()
        assert shown == min(total, 200) and (total or page.locator(".pi-an-result .pi-empty").count() == 1), name
    assert page.errors == []


def test_format_conversions_and_op_summary_with_params(base, page, prof, shot):
    p = prof(RANK0)
    page.goto(f"{base}/#{RANK0}/analyses")
    page.click(".pi-an-item[data-name='format_conversions']")
    ready(page, "format_conversions")
    fc = p.format_conversions()
    assert first_row(page) == expected_row(fc)
    assert page.inner_text(".pi-an-title").startswith(all_analyses()["format_conversions"].title)
    assert page.locator(".pi-an-result .pi-chart canvas").count() >= 1
    assert page.evaluate("location.hash") == f"#{RANK0}/analyses/format_conversions"
    shot(page, "view_analyses_format_conversions")

    # op_summary: its form comes from the registration (by has choices, top is an int field)
    page.click(".pi-an-item[data-name='op_summary']")
    ready(page, "op_summary")
    options = page.eval_on_selector("select[data-param='by']", "s => Array.from(s.options).map(o => o.value)")
    assert options == list(all_analyses()["op_summary"].params[0].choices)
    page.select_option("select[data-param='by']", "type")
    page.wait_for_selector(".pi-an-result[data-state='ready'] th[data-key='type']", timeout=60_000)
    page.fill("input[data-param='top']", "5")
    page.press("input[data-param='top']", "Tab")
    page.wait_for_function("() => document.querySelectorAll('.pi-an-result tbody tr').length === 5", timeout=60_000)
    ref = p.op_summary(by="type", top=5)
    assert first_row(page) == expected_row(ref)
    assert page.eval_on_selector_all(
        ".pi-an-result tbody tr td:first-child", "tds => tds.map(t => t.textContent)"
    ) == list(ref["type"])
    assert page.inner_text(".pi-an-call code") == "p.op_summary(by='type', top=5)"
    assert page.evaluate("location.hash") == f"#{RANK0}/analyses/op_summary?by=type&top=5"
    shot(page, "view_analyses_op_summary")

    # a deep link opens the same picture
    page.goto("about:blank")
    page.goto(f"{base}/#{RANK0}/analyses/op_summary?by=type&top=5")
    ready(page, "op_summary")
    assert page.input_value("select[data-param='by']") == "type"
    assert page.input_value("input[data-param='top']") == "5"
    assert first_row(page) == expected_row(ref)
    assert page.errors == []


def _options(page, param: str) -> dict[str, str | None]:
    """The options of a parameter's select: value -> why it is disabled (None: enabled)."""
    return page.eval_on_selector(
        f"select[data-param='{param}']",
        "s => Object.fromEntries(Array.from(s.options).filter(o => o.value).map(o => [o.value, o.disabled ? o.title : null]))",
    )


def test_the_form_never_offers_a_pair_without_an_answer(base, page, prof, shot):
    """Each registered rule disables the values it forbids, both ways, with the reason; a closed
    set of values (the links' comm_matrix summary) is a select, not a text field."""
    p = prof(RANK0)
    page.goto(f"{base}/#{RANK0}/analyses/op_summary?kinds=all")
    ready(page, "op_summary")
    assert _options(page, "where") == {"device": None, "host": "kinds=all needs where = device"}
    ref = p.op_summary(kinds="all")
    # the top row is the collective: its type shown without HCCL's trailing underscore
    assert ref["type"].iloc[0] == "hcom_allReduce_"
    assert first_row(page) == {**expected_row(ref), "type": "hcom_allReduce"}
    assert int(page.get_attribute(".pi-an-result", "data-total")) == len(ref)
    # host side: only name / name_shape and the default kinds are offered
    page.goto(f"{base}/#{RANK0}/analyses/op_summary?where=host")
    ready(page, "op_summary")
    assert _options(page, "kinds") == {"compute": None, "all": "kinds=all needs where = device"}
    assert _options(page, "by") == {
        "name": None,
        "type": "by=type needs where = device",
        "name_shape": None,
        "core": "by=core needs where = device",
    }
    assert first_row(page) == expected_row(p.op_summary(where="host"))
    shot(page, "view_analyses_disabled_pairs")
    page.goto(f"{base}/#{RANK0}/analyses/slow_links")
    page.wait_for_selector(".pi-an-result[data-analysis='slow_links'][data-state]:not([data-state='loading'])")
    assert list(_options(page, "summary")) == ["top1", "middle", "bottom1", "bottom2", "bottom3", "total"]
    assert page.errors == []


def test_large_result_pages_next_and_previous(base, page, prof, shot):
    ref = prof(GPU).idle_gaps(min_us=0)
    assert len(ref) == 930
    page.goto(f"{base}/#{GPU}/analyses/idle_gaps")
    ready(page, "idle_gaps")
    page.fill("input[data-param='min_us']", "0")
    page.press("input[data-param='min_us']", "Tab")
    page.wait_for_selector(".pi-an-result[data-total='930']", timeout=60_000)
    assert page.inner_text(".pi-an-range") == "Rows 1–930 of 930"
    page.select_option(".pi-an-limit", "100")
    ready(page, "idle_gaps")
    page.wait_for_function("() => document.querySelectorAll('.pi-an-result tbody tr').length === 100")
    assert page.inner_text(".pi-an-range") == "Rows 1–100 of 930"
    assert page.is_disabled(".pi-an-prev") and not page.is_disabled(".pi-an-next")
    keys = ["position", "dur_us", "offset_us", "host_activity", "host_op", "overlap_us", "next_task"]

    def check(i):
        row = first_row(page)
        assert {k: row[k] for k in keys} == {k: fmt_cell(k, _py(ref.iloc[i][k])) for k in keys}

    check(0)
    page.click(".pi-an-next")
    ready(page, "idle_gaps", 100)
    assert page.inner_text(".pi-an-range") == "Rows 101–200 of 930"
    check(100)
    assert page.evaluate("location.hash") == f"#{GPU}/analyses/idle_gaps?min_us=0&offset=100&limit=100"
    shot(page, "view_analyses_idle_gaps_page2")
    # the last page is short and has no next
    page.goto(f"{base}/#{GPU}/analyses/idle_gaps?min_us=0&offset=900&limit=100")
    ready(page, "idle_gaps", 900)
    assert page.inner_text(".pi-an-range") == "Rows 901–930 of 930"
    assert page.locator(".pi-an-result tbody tr").count() == 30
    assert page.is_disabled(".pi-an-next") and not page.is_disabled(".pi-an-prev")
    check(900)
    page.click(".pi-an-prev")
    ready(page, "idle_gaps", 800)
    check(800)
    # editing the address shows what it names
    page.evaluate(f"location.hash = '#{GPU}/analyses/idle_gaps?min_us=0&offset=300&limit=100'")
    ready(page, "idle_gaps", 300)
    check(300)
    assert page.errors == []


def test_analyses_dark_and_chinese(base, browser, prof, shot):
    for scheme, locale, name in (("dark", "en-US", "view_analyses_dark"), ("light", "zh-CN", "view_analyses_zh")):
        ctx = browser.new_context(viewport={"width": 1400, "height": 900}, color_scheme=scheme, locale=locale)
        pg = ctx.new_page()
        errors = []
        pg.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
        pg.goto(f"{base}/#{GPU}/analyses/idle_gaps?min_us=0&limit=100")
        ready(pg, "idle_gaps")
        if scheme == "dark":
            bg = pg.evaluate("getComputedStyle(document.querySelector('.pi-viewer')).backgroundColor")
            assert bg == "rgb(30, 30, 34)"
        else:
            assert pg.inner_text(".pi-tab[data-view='analyses']") == "全部分析"
            assert pg.inner_text(".pi-an-range") == "第 1–100 行，共 930 行"
        shot(pg, name)
        ctx.close()
        assert errors == []
