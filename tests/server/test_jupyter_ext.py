"""The jupyter-server extension: a real ``jupyter server`` subprocess with profinsight enabled,
fixtures copied into a temporary Jupyter root.  Checks Jupyter's auth applies to every route,
paths outside the root are refused, and the API answers under ``{base_url}profinsight/``."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from _support import free_port, require, running_process
from tornado.httpclient import HTTPClient, HTTPClientError

REPO = Path(__file__).resolve().parents[2]  # not `from conftest import`: several conftest modules exist

require("jupyter_server")
pytestmark = [pytest.mark.jupyter, pytest.mark.slow]  # a real jupyter server subprocess per module

TOKEN = "jupyter-test-token"
BASE_URL = "/jhub/user/"  # a non-root base_url, as behind JupyterHub


@pytest.fixture(scope="module")
def jupyter(fixtures, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("jproot")
    root = tmp / "root"
    shutil.copytree(fixtures / "ascend_pt" / "text_level1", root / "runs" / "text_level1")
    shutil.copy(fixtures / "kineto" / "cpu_only.json.gz", root / "cpu_only.json.gz")
    outside = tmp / "outside"
    shutil.copytree(fixtures / "kineto", outside)
    (root / "escape").symlink_to(outside, target_is_directory=True)
    (root / "escape_trace.json.gz").symlink_to(outside / "cpu_only.json.gz")
    # enable the extension through the config file the wheel installs (not a command-line flag)
    shutil.copytree(REPO / "jupyter-config" / "jupyter_server_config.d", tmp / "cfg" / "jupyter_server_config.d")
    port = free_port()
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp / "cfg"),
        "JUPYTER_DATA_DIR": str(tmp / "data"),
        "JUPYTER_RUNTIME_DIR": str(tmp / "rt"),
        "PROFINSIGHT_CACHE": str(tmp / "cache"),
    }
    cmd = [
        sys.executable,
        "-m",
        "jupyter_server",
        "--no-browser",
        f"--port={port}",
        "--ip=127.0.0.1",
        f"--IdentityProvider.token={TOKEN}",
        f"--ServerApp.root_dir={root}",
        f"--ServerApp.base_url={BASE_URL}",
        "--ServerApp.port_retries=0",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # CI runs as root
    base = f"http://127.0.0.1:{port}{BASE_URL.rstrip('/')}"
    # a loaded 2-core CI machine can take long
    with running_process(
        cmd, env, tmp / "server.log", lambda: fetch(base, "/api/status")[0] == 200, "jupyter server", 60
    ) as failed:
        if failed:
            pytest.fail(failed)
        yield {"base": base, "root": root, "log": tmp / "server.log"}


def fetch(base, path, token=TOKEN, method="GET", body=None, headers=None):
    """The request on a worker thread: a synchronous HTTPClient runs its own event loop, which
    cannot start in a thread where one already runs (Playwright's, when browser tests ran first)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(_fetch, base, path, token, method, body, headers).result()


def _fetch(base, path, token=TOKEN, method="GET", body=None, headers=None):
    client = HTTPClient()
    h = dict(headers or {})
    if token:
        h["Authorization"] = f"token {token}"
    try:
        r = client.fetch(base + path, headers=h, method=method, body=body, follow_redirects=False)
    except HTTPClientError as e:
        r = e.response
        if r is None:
            raise
    finally:
        client.close()
    try:
        data = json.loads(r.body) if r.body else None
    except ValueError:
        data = r.body
    return r.code, data


API = "/profinsight/api/profiles"
RUN = "runs/text_level1"


def test_listing_finds_the_runs_under_the_root(jupyter):
    code, d = fetch(jupyter["base"], API)
    assert code == 200, d
    ids = {p["id"]: p for p in d["profiles"]}
    assert RUN in ids and "cpu_only.json.gz" in ids, sorted(ids)
    assert ids[RUN]["loaded"] and ids[RUN]["ranks"] == [0, 1]
    assert ids[RUN]["tables"]["device_tasks"] > 0
    # symlinked runs leaving the root are not listed
    assert not any(i.startswith("escape") for i in ids), sorted(ids)


def test_profile_routes_by_relative_path(jupyter):
    pid = quote(RUN, safe="")
    code, d = fetch(jupyter["base"], f"{API}/{pid}")
    assert code == 200 and d["id"] == RUN
    code, d = fetch(jupyter["base"], f"{API}/{pid}/tables/device_tasks?limit=3")
    assert code == 200 and d["total_rows"] > 0 and len(d["rows"]) == 3
    code, d = fetch(jupyter["base"], f"{API}/{pid}/timeline/tracks")
    assert code == 200 and d["ranks"]
    code, d = fetch(jupyter["base"], f"{API}/{quote('cpu_only.json.gz', safe='')}/analyses")
    assert code == 200 and d["analyses"]


@pytest.mark.parametrize(
    "route", [API, f"{API}/{quote(RUN, safe='')}", f"{API}/{quote(RUN, safe='')}/tables/device_tasks"]
)
def test_unauthenticated_requests_refused(jupyter, route):
    code, _ = fetch(jupyter["base"], route, token=None)
    assert code in (401, 403) or 300 <= code < 400, code
    code, _ = fetch(jupyter["base"], route, token="wrong-token")
    assert code in (401, 403) or 300 <= code < 400, code


def test_non_get_needs_xsrf_and_is_not_a_route(jupyter):
    # with a cookie-style session and no _xsrf, Jupyter refuses a POST before any handler runs;
    # with the token it reaches the handler, which has no POST (405)
    code, _ = fetch(jupyter["base"], API, token=None, method="POST", body="{}")
    assert code in (401, 403), code
    code, _ = fetch(jupyter["base"], API, method="POST", body="{}")
    assert code == 405, code


@pytest.mark.parametrize(
    "bad",
    [
        "../outside",
        "runs/../../outside",
        "/etc",
        "/etc/passwd",
        "escape",
        "escape/cpu_only.json.gz",
        "escape_trace.json.gz",
        ".hidden",
        "runs/./text_level1",
        "no_such_run",
        "..",
        "runs",
    ],
)
def test_paths_outside_the_root_refused(jupyter, bad):
    code, d = fetch(jupyter["base"], f"{API}/{quote(bad, safe='')}")
    assert code == 404, (bad, code, d)
    assert "error" in d and "fix" in d
    code, d = fetch(jupyter["base"], f"{API}/{quote(bad, safe='')}/tables/device_tasks")
    assert code == 404, (bad, code, d)
