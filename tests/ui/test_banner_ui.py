"""The load diagnostics of the open profile shown as a banner (widgets/diagnosticsBanner.ts), and
the memory view's note that host memory is not in the data (docs/troubleshooting.md)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def test_banner_shows_the_load_diagnostics(serve, page, fixtures, shot):
    base = serve(fixtures / "ascend_pt" / "text_level0", fixtures / "ascend_pt" / "text_level1" / "rank0_ascend_pt")
    page.goto(base + "/#text_level0/overview")
    page.wait_for_selector(".pi-banner")
    assert page.get_attribute(".pi-banner", "class") == "pi-banner pi-banner-info"
    assert page.inner_text(".pi-banner-counts") == "6 note(s)"
    assert len(page.query_selector_all(".pi-banner-item")) == 3
    page.click(".pi-banner-more:text('Show all 6')")
    codes = page.eval_on_selector_all(".pi-banner-item", "xs => xs.map(x => x.dataset.code)")
    assert sorted(codes) == sorted(["level0-no-comm-analysis", "pmu-not-collected", "type-from-name"] * 2)
    pmu = page.inner_text(".pi-banner-item[data-code='pmu-not-collected']")
    assert "aic_metrics=ACL_AICORE_NONE" in pmu and "What to do: collect with experimental_config=" in pmu
    shot(page, "banner_level0")
    page.select_option(".pi-lang", "zh")
    page.wait_for_selector(".pi-banner-head strong:text('加载时发现的问题')")
    assert page.inner_text(".pi-banner-counts") == "6 条提示"
    page.click(".pi-banner-more")
    # the diagnostics' own words follow the language (from the catalogue, via ?lang=zh)
    zh = page.inner_text(".pi-banner-item[data-code='pmu-not-collected']")
    assert "没有 AI Core PMU 指标" in zh and "采集时设置 experimental_config=" in zh
    page.select_option(".pi-lang", "en")
    page.wait_for_selector(".pi-banner-head strong:text('What the load found')")
    page.click(".pi-banner-close")
    assert page.query_selector(".pi-banner") is None
    # a profile without diagnostics has no banner
    page.select_option(".pi-profile-picker", "rank0_ascend_pt")
    page.wait_for_selector(".pi-profile-info:text('Level1')")
    assert page.query_selector(".pi-banner") is None
    assert page.errors == []


def test_banner_warns_when_the_collection_did_not_finish(serve, page, fixtures, tmp_path, shot):
    import json
    import shutil

    rank = tmp_path / "rank0_ascend_pt"
    shutil.copytree(fixtures / "ascend_pt" / "text_level1" / "rank0_ascend_pt", rank)
    info = json.loads((rank / "profiler_info_0.json").read_text())
    del info["end_info"]
    (rank / "profiler_info_0.json").write_text(json.dumps(info))
    base = serve(rank)
    page.goto(base + "/")
    page.wait_for_selector(".pi-banner-warning")
    item = page.inner_text(".pi-banner-item[data-code='collection-unfinished']")
    assert "The collection did not finish: profiler_info_0.json has no end_info" in item
    assert "nohup python train.py > train.log 2>&1 &" in item
    shot(page, "banner_unfinished")
    # the memory view says where host memory and host-side time are
    page.click(".pi-tab[data-view='memory']")
    page.wait_for_selector(".pi-pane-memory .pi-note:text('Host (CPU) memory is not in this data')")
    note = page.inner_text(".pi-pane-memory .pi-note:text('Host (CPU) memory')")
    assert "Analyses → dataloader" in note
    assert page.errors == []
