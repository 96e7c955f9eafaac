"""The Communication view's numbers in a real browser: the elapsed-time bar is transit + wait
(synchronisation inside it) + idle and adds up to elapsed; bandwidth is per transport type
without the on-chip copies; the matrix colours start at 0."""

from __future__ import annotations

import json

import pytest

import profinsight

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def path(fixtures):
    return fixtures / "ascend_pt" / "text_level1"


@pytest.fixture(scope="module")
def base(serve, path):
    return serve(path)


def _series(page, sel):
    return json.loads(page.get_attribute(sel, "data-series"))


def test_elapsed_parts_add_up_and_sync_is_inside_wait(base, page, path, shot):
    s = profinsight.load(path).comm_summary()
    page.goto(f"{base}/#text_level1/communication")
    page.wait_for_selector(".pi-comm-split[data-series]", timeout=60_000)
    d = _series(page, ".pi-comm-split")
    assert [p["key"] for p in d["parts"]] == ["transit_us", "wait_other_us", "sync_us", "idle_us"]
    parts = {p["key"]: p["values"] for p in d["parts"]}
    for i, row in enumerate(s.itertuples()):
        total = sum(parts[k][i] for k in parts)
        # fixture text_level1 rank 0: 105,991.9 us = transit 3,683.4 + wait 5,940.6 + idle 96,367.9
        assert total == pytest.approx(row.elapse_us, rel=1e-3)
        assert parts["sync_us"][i] == pytest.approx(row.sync_us)
        assert parts["wait_other_us"][i] + parts["sync_us"][i] == pytest.approx(row.wait_us)
        assert parts["transit_us"][i] == pytest.approx(row.transit_us)
    assert d["elapsed"][0] == pytest.approx(105991.876)
    assert sum(parts[k][0] for k in parts) < 106_100  # not 111.6 ms: sync is not added on top of wait
    # bandwidth per transport type only: no all-bytes figure that counts the LOCAL copies
    bw = _series(page, ".pi-comm-bandwidth")
    assert "bandwidth_gbps" not in bw and "hccs_gbps" in bw
    assert "LOCAL" in page.inner_text(".pi-pane-communication")
    # against the bandwidth expected of one link of the type (slow_links' figure): a dashed line
    # and each row's share in the table (rank 0: 15.65 GB/s of 19.3 = 81.1 %)
    assert json.loads(page.get_attribute(".pi-comm-bandwidth", "data-expected")) == {"hccs_gbps": 19.3}
    assert s["hccs_expected_ratio"].round(4).tolist() == [0.8111, 0.8032]
    th = page.locator(".pi-pane-communication th[data-key='hccs_expected_ratio']").first
    assert th.inner_text().startswith("HCCS of expected")
    table = th.locator("xpath=ancestor::table")
    col = table.locator("thead th").evaluate_all("ths => ths.map(t => t.dataset.key)").index("hccs_expected_ratio")
    texts = table.locator(f"tbody tr td:nth-child({col + 1})").all_inner_texts()
    assert texts == [f"{v * 100:.1f}%" for v in s["hccs_expected_ratio"]] == ["81.1%", "80.3%"]
    # matrix colours are anchored at 0
    lo, hi = json.loads(page.get_attribute(".pi-matrix-chart", "data-range"))
    assert lo == 0 and hi > 0
    shot(page, "view_communication_parts")
    assert page.errors == []
