"""The HTML report as a person sees it: opened from disk in headless Chromium, every section
visible, no console error, no network request.  CI installs Chromium (Debian package) and
requires this test; elsewhere it is skipped when no browser is installed."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from profinsight.cli import main

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


def _browser_or_skip():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if sync_playwright is None or not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail("CI must install chromium and playwright for the browser tests")
        pytest.skip("no headless Chromium / playwright here")
    return sync_playwright


def test_report_opens_offline_with_every_section(fixtures, tmp_path):
    sync_playwright = _browser_or_skip()
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
    for section in ("Verdict", "Findings", "Actions", "timeline", "Operator summary", "Utilisation",
                    "Memory", "Communication"):
        assert section.lower() in joined.lower(), (section, headings)
    assert svgs >= 4
    assert "Communication bound" in text and "TransData" in text
    assert (tmp_path / "report.png").stat().st_size > 10_000
