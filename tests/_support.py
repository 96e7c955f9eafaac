"""Helpers several test modules share (importable because pytest puts ``tests/`` on the path:
``pythonpath`` in pyproject.toml)."""

from __future__ import annotations

import contextlib
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


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def running_process(cmd: list[str], env: dict, log_path: Path, ready, what: str, timeout_s: float, cwd=None):
    """``cmd`` as a subprocess logging to ``log_path`` until the block ends: yields None once
    ``ready()`` is true, or the reason as a string when the process exits or ``timeout_s`` passes
    first (the log's tail with it); terminated (then killed) at the end."""
    import subprocess
    import time

    log = open(log_path, "wb")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=cwd)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                yield f"{what} exited:\n" + log_path.read_text()[-4000:]
                return
            try:
                if ready():
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                yield f"{what} did not start in {timeout_s:.0f} s:\n" + log_path.read_text()[-4000:]
                return
            time.sleep(0.2)
        yield None
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        log.close()


@contextlib.contextmanager
def running_lab(root: Path, tmp: Path, token: str):
    """A ``jupyter lab`` subprocess over ``root`` on a free port with ``token``, its config, runtime,
    settings and workspaces under ``tmp`` (the announcements toast off, the server extension's
    config from the repository), and ``PROFINSIGHT_CACHE`` in ``tmp/cache``: yields
    ``{base, root, log}``, or the reason as a string when it does not start in 90 s."""
    import json
    import os
    import sys
    import urllib.request

    cfg = tmp / "cfg"
    (cfg / "labconfig").mkdir(parents=True)
    # the "get notified about Jupyter news" toast would cover the screenshots
    (cfg / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}})
    )
    shutil.copytree(REPO / "jupyter-config" / "jupyter_server_config.d", cfg / "jupyter_server_config.d")
    port = free_port()
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(cfg),
        "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp / "workspaces"),
        "PROFINSIGHT_CACHE": str(tmp / "cache"),
        "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
    }
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        f"--port={port}",
        "--ip=127.0.0.1",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # CI runs as root
    base = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        with urllib.request.urlopen(f"{base}/lab?token={token}", timeout=5) as r:
            return r.status == 200

    log = tmp / "lab.log"
    with running_process(cmd, env, log, ready, "jupyter lab", 90, cwd=root) as failed:
        yield failed or {"base": base, "root": root, "log": log}


def open_lab_page(context, base: str, token: str, timeout_ms: int = 60_000):
    """A new JupyterLab page of ``context``, its shell drawn; ``page.errors`` collects page errors."""
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.set_default_timeout(timeout_ms)
    page.goto(f"{base}/lab?token={token}&reset")
    page.wait_for_selector("#jupyterlab-splash", state="detached")
    page.wait_for_selector(".jp-LabShell")
    return page
