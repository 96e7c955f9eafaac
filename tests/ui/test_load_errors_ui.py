"""A profile whose import failed opens in the viewer with the failure first: an error banner whose
first item is the failed rank's error, before any view (tests/surfaces/test_load_errors_first.py
holds the CLI and notebook side)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def test_the_viewer_leads_with_a_failed_import(serve, page, fixtures, tmp_path, shot):
    bad = tmp_path / "broken.pt.trace.json"
    bad.write_text('{"schemaVersion": 1, "traceEvents": [{"ph": "X", "ts": ', encoding="utf-8")
    base = serve(bad)
    page.goto(base + "/")
    page.wait_for_selector(".pi-banner")
    assert page.get_attribute(".pi-banner", "class") == "pi-banner pi-banner-error"
    assert page.get_attribute(".pi-banner", "role") == "alert"
    first = page.query_selector_all(".pi-banner-item")[0]
    assert first.get_attribute("data-code") == "trace-invalid"
    assert "broken.pt.trace.json" in first.inner_text()
    page.wait_for_selector("h3:text('Findings'), h2:text('Findings')")  # the views still open below it
    shot(page, "banner_import_failed")
    assert page.errors == []
