"""Browser tests of the viewer: a real ``profinsight serve`` application on a free port, driven
by Playwright in headless Chromium (Debian package).  CI installs Chromium and requires these
tests; elsewhere they are skipped when no browser is installed.  Screenshots go to
``ui-artifacts/`` at the repository root (CI keeps them; ``PROFINSIGHT_ARTIFACTS`` overrides)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _support import CHROMIUM, FLAGS, artifacts_dir, playwright_or_skip

from profinsight.server.app import app_built, make_app
from profinsight.server.threaded import serve_in_thread


def _playwright_or_skip():
    sync_playwright = playwright_or_skip()
    if not app_built():
        pytest.fail("the browser app is not built: run `pip install .` (or `jlpm build`) with Node.js 20")
    return sync_playwright


@pytest.fixture(scope="module")
def browser():
    """Per module, not per session: Playwright's sync API keeps an event loop running in this
    thread while it lives, and later tests (pytest-jupyter's, tornado's sync client) need none."""
    sync_playwright = _playwright_or_skip()
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def serve(tmp_path_factory):
    """``serve(*paths, token=None)`` -> base URL of a live server of those profiles (module-scoped:
    servers stop when the module's tests end)."""
    stack = []

    def start(*paths, token=None):
        os.environ.setdefault("PROFINSIGHT_CACHE", str(tmp_path_factory.mktemp("cache")))
        cm = serve_in_thread(make_app(list(paths), token=token))
        base = cm.__enter__()
        stack.append(cm)
        return base

    yield start
    for cm in reversed(stack):
        cm.__exit__(None, None, None)


@pytest.fixture
def page(browser):
    """A fresh page (1400x900) that records console errors and page errors in ``page.errors``."""
    context = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US")
    pg = context.new_page()
    pg.errors = []
    pg.on("console", lambda m: pg.errors.append(m.text) if m.type == "error" and "favicon" not in m.text else None)
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    yield pg
    context.close()


@pytest.fixture
def shot():
    """``shot(page, name)`` saves a screenshot as ``ui-artifacts/<name>.png``, returns its path."""

    def take(page, name: str) -> Path:
        path = artifacts_dir() / f"{name}.png"
        page.screenshot(path=str(path))
        return path

    return take
