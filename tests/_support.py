"""Helpers several test modules share (importable because pytest puts ``tests/`` on the path:
``pythonpath`` in pyproject.toml)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import pytest

#: an op name that would run as script if any surface parsed profile text as HTML
EVIL = "<script>alert('x')</script>"


def crafted_trace(fixtures: Path, out_dir: Path, name: str = EVIL) -> Path:
    """The real CPU-only Kineto fixture with its first ``cpu_op`` renamed to ``name``."""
    d = json.load(gzip.open(fixtures / "kineto" / "cpu_only.json.gz"))
    for e in d["traceEvents"]:
        if e.get("cat") == "cpu_op":
            e["name"] = name
            break
    out = Path(out_dir) / "evil_trace.json"
    out.write_text(json.dumps(d))
    return out


def fmt_duration(ns: float) -> str:
    """The viewer's ``fmtDuration`` (ts/app/dom.ts) in Python, to assert what the page shows."""
    a = abs(ns)
    if a >= 1e9:
        return f"{ns / 1e9:.{2 if a >= 1e10 else 3}f} s"
    if a >= 1e6:
        return f"{ns / 1e6:.{1 if a >= 1e8 else 2 if a >= 1e7 else 3}f} ms"
    if a >= 1e3:
        return f"{ns / 1e3:.{1 if a >= 1e5 else 2 if a >= 1e4 else 3}f} us"
    return f"{round(ns)} ns"


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
#: headless Chromium as CI runs it (Debian's package; nothing downloaded)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]
REPO = Path(__file__).resolve().parents[1]


def artifacts_dir() -> Path:
    """Where browser tests put screenshots: ``ui-artifacts/`` at the repository root (CI keeps
    them; ``PROFINSIGHT_ARTIFACTS`` overrides)."""
    d = Path(os.environ.get("PROFINSIGHT_ARTIFACTS", REPO / "ui-artifacts"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def playwright_or_skip():
    """Playwright's ``sync_playwright``; without it or without Chromium the test is skipped
    here and fails under CI (CI installs both and requires the browser tests)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if sync_playwright is None or not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail("CI must install chromium and playwright for the browser tests")
        pytest.skip("no headless Chromium / playwright here")
    return sync_playwright
