"""Helpers several test modules share (importable because pytest puts ``tests/`` on the path:
``pythonpath`` in pyproject.toml)."""

from __future__ import annotations

import gzip
import importlib
import json
import os
import shutil
import sqlite3
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


def in_ci() -> bool:
    """True under CI (``CI`` set to anything but empty, 0, false or no), where ``.ci/run`` has
    installed everything the tests need."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def missing(why: str):
    """A test cannot run because something it needs is not installed: skipped on a developer's
    machine, a failure under CI (CI installs the test extra and Chromium, so a missing piece there
    is a broken install, not a reason to pass)."""
    if in_ci():
        pytest.fail(f"CI must be able to run this test, but {why}", pytrace=False)
    pytest.skip(why, allow_module_level=True)


def require(module: str, install: str = "pip install -e '.[test]'"):
    """``import module`` for a dependency of the ``test`` extra, or :func:`missing` (a skip here, a
    failure under CI).  Use instead of ``pytest.importorskip``; works at module level too."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        missing(f"{module} is not installed ({install}): {exc}")


def require_chromium() -> str:
    """The headless Chromium the browser tests drive (Debian's package, which ``.ci/run``
    installs), or :func:`missing`."""
    if not Path(CHROMIUM).exists():
        missing(f"no headless Chromium at {CHROMIUM} (apt-get install chromium)")
    return CHROMIUM


def playwright_or_skip():
    """Playwright's ``sync_playwright`` once Chromium is known to be there; without either the
    test is skipped here and fails under CI (CI installs both and requires the browser tests)."""
    sync_playwright = require("playwright.sync_api").sync_playwright
    require_chromium()
    return sync_playwright


def read_only_sqlite(path) -> sqlite3.Connection:
    """A fixture DB opened the way the importers open it: ``immutable=1``, which writes nothing
    beside it (``mode=ro`` creates ``-shm``/``-wal`` next to a WAL-mode DB, inside the fixtures)."""
    return sqlite3.connect(f"{Path(path).resolve().as_uri()}?immutable=1", uri=True)


def brush_memory_chart(page) -> tuple[float, float]:
    """Drags across the middle of the Memory chart (55% to 62% of its width) and returns the
    brushed range ``(lo, hi)`` in ms as the page states it in ``.pi-mem-range``."""
    box = page.locator(".pi-mem-chart").bounding_box()
    y = box["y"] + box["height"] * 0.5
    page.mouse.move(box["x"] + box["width"] * 0.55, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.62, y, steps=8)
    page.mouse.up()
    page.wait_for_function("() => document.querySelector('.pi-mem-range').dataset.range !== ''")
    lo, hi = map(float, page.eval_on_selector(".pi-mem-range", "e => e.dataset.range").split(","))
    return lo, hi
