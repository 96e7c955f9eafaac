"""The HTML report as a person sees it: opened from disk in headless Chromium, every section
visible, no console error, no network request.  CI installs Chromium (Debian package) and
requires this test; elsewhere it is skipped when no browser is installed."""

from __future__ import annotations

import pytest
from _support import CHROMIUM, FLAGS, playwright_or_skip

from profinsight.cli import main

pytestmark = pytest.mark.browser


def test_report_opens_offline_with_every_section(fixtures, tmp_path):
    sync_playwright = playwright_or_skip()
    out = tmp_path / "report.html"
    assert main(["report", str(fixtures / "ascend_pt/text_level1"), "-o", str(out)]) == 0
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors, requests = [], []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("request", lambda r: requests.append(r.url))
        page.goto(out.as_uri())
        headings = page.eval_on_selector_all("h2", "els => els.map(e => e.textContent)")
        svgs = page.eval_on_selector_all("svg", "els => els.length")
        text = page.inner_text("body")
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        browser.close()
    assert errors == []
    assert requests == [out.as_uri()]  # the file itself and nothing else
    joined = " | ".join(headings)
    for section in (
        "Verdict",
        "Findings",
        "Actions",
        "timeline",
        "Operator summary",
        "Utilisation",
        "Memory",
        "Communication",
    ):
        assert section.lower() in joined.lower(), (section, headings)
    assert svgs >= 4
    assert "Communication bound" in text and "TransData" in text
    assert (tmp_path / "report.png").stat().st_size > 10_000
