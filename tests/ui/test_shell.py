"""The viewer shell in a real browser: profiles listed, tabs, language switch, load progress."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def test_shell_lists_profiles_and_switches_language(serve, page, fixtures, shot):
    base = serve(
        fixtures / "ascend_pt" / "text_level1" / "rank0_ascend_pt", fixtures / "kineto" / "gpu_alexnet.json.gz"
    )
    page.goto(base + "/")
    page.wait_for_selector(".pi-tab[data-view='timeline']")
    options = page.eval_on_selector_all(".pi-profile-picker option", "os => os.map(o => o.value)")
    assert options == ["rank0_ascend_pt", "gpu_alexnet.json.gz"]
    assert page.inner_text(".pi-profile-info") == "ascend_text Level1 · 1 rank(s), 1 step(s)"
    tabs = page.eval_on_selector_all(".pi-tab", "ts => ts.map(t => t.textContent)")
    assert tabs == [
        "Overview",
        "Operators",
        "AI Core",
        "Timeline",
        "Modules",
        "Memory",
        "Communication",
        "Ranks",
        "Compare",
        "Analyses",
    ]
    page.select_option(".pi-lang", "zh")
    page.wait_for_selector(".pi-tab[data-view='timeline']:text('时间线')")
    shot(page, "shell_zh")
    page.select_option(".pi-lang", "en")
    page.wait_for_selector(".pi-tab[data-view='timeline']:text('Timeline')")
    # the address keeps profile and view, so a reload comes back to the same place
    page.click(".pi-tab[data-view='operators']")
    assert page.evaluate("location.hash") == "#rank0_ascend_pt/operators"
    assert page.errors == []


def test_chinese_browser_gets_chinese_labels(serve, browser, fixtures):
    base = serve(fixtures / "kineto" / "cpu_only.json.gz")
    context = browser.new_context(locale="zh-CN")
    pg = context.new_page()
    pg.goto(base + "/")
    pg.wait_for_selector(".pi-tab[data-view='overview']:text('总览')")
    context.close()


def test_broken_trace_is_explained_not_thrown(serve, page, tmp_path):
    broken = tmp_path / "broken_trace.json"
    broken.write_text('{"traceEvents": [')
    base = serve(broken)
    page.goto(base + "/")
    page.wait_for_selector(".pi-diag-worst-error")
    assert page.inner_text(".pi-diag > summary") == "1 error(s) · 1 warning(s)"
    page.click(".pi-diag > summary")
    text = page.inner_text(".pi-diag-list")
    assert "error · trace-invalid" in text and "broken_trace.json" in text and "What to do:" in text
    assert page.errors == []


def test_unknown_profile_in_address_is_explained(serve, page, fixtures):
    base = serve(fixtures / "kineto" / "cpu_only.json.gz")
    page.goto(base + "/#nope/overview")
    page.wait_for_selector(".pi-error")
    assert "no profile with id 'nope'" in page.inner_text(".pi-error-message")
    assert "ids come from" in page.inner_text(".pi-error-fix")


def test_slow_load_shows_progress(serve, page, fixtures, monkeypatch):
    import threading

    import profinsight.api

    real_load, release = profinsight.api.load, threading.Event()

    def slow_load(run, progress=None, **kw):
        progress(1, 2, "/some/rank1")
        release.wait(20)
        return real_load(run, **kw)

    monkeypatch.setattr(profinsight.api, "load", slow_load)
    base = serve(fixtures / "kineto" / "gpu_2rank_rank0.json.gz")
    page.goto(base + "/")
    page.wait_for_selector(".pi-loading-detail:has-text('1 of 2 rank(s) ready')")
    assert "importing the profile files" in page.inner_text(".pi-loading-detail")
    release.set()
    page.wait_for_selector(".pi-profile-info")
    assert page.locator(".pi-loading").count() == 0
