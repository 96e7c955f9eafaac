"""The jupyter-server extension's routes, in-process through pytest-jupyter (``jp_fetch``): the
cheap run listing behind the Profiles sidebar, ``resolve`` (Profile.show) and ``config`` (the
cache-folder setting), Jupyter's authentication and XSRF on them, and nothing outside the
Jupyter root.  Fixtures are copied into ``jp_root_dir``."""

from __future__ import annotations

import json
import shutil
from urllib.parse import quote

import pytest
from _support import require

require("jupyter_server")
require("pytest_jupyter")
pytestmark = pytest.mark.jupyter

# pytest-jupyter's fixtures (jp_fetch, jp_serverapp, jp_root_dir, ...) for THIS module only.  Not
# `pytest_plugins = ["pytest_jupyter.jupyter_server"]`: that registers the plugin for the whole
# session, and its autouse fixtures (a fresh asyncio loop closed after every test) then break every
# Playwright test of the suite ("Cannot close a running event loop").  Imported fixtures are
# module-local, autouse ones included; the plugin's hooks (which run `async def` tests) are not
# imported, so the tests below are plain functions that run requests on `jp_asyncio_loop`.
from pytest_jupyter.jupyter_server import *  # noqa: E402,F401,F403
from tornado.httpclient import HTTPClientError  # noqa: E402

RUN = "runs/text_level1"
TRACE = "cpu_only.json.gz"


@pytest.fixture
def jp_server_config():
    return {"ServerApp": {"jpserver_extensions": {"profinsight.jupyter": True}}}


@pytest.fixture
def jp_root_dir(tmp_path, fixtures):
    root = tmp_path / "root_dir"
    shutil.copytree(fixtures / "ascend_pt" / "text_level1", root / RUN)
    shutil.copy(fixtures / "kineto" / "cpu_only.json.gz", root / TRACE)
    (root / "notes").mkdir()
    (root / "notes" / "readme.txt").write_text("not a profile")
    (root / "notes" / "config.json").write_text("{}")
    # an interrupted collection: listed as a problem, never as a run
    (root / "broken" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    (root / "broken" / "rank0_ascend_pt" / "profiler_info_0.json").write_text("{}")
    # folders the scan must not enter
    for skip in ("node_modules/pkg", ".ipynb_checkpoints", ".hidden", "venv"):
        (root / skip).mkdir(parents=True)
        shutil.copy(fixtures / "kineto" / "cpu_only.json.gz", root / skip / "t.json.gz")
    (root / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(fixtures / "kineto" / "compare_base.json.gz", outside / "base.json.gz")
    (root / "escape").symlink_to(outside, target_is_directory=True)
    (root / "escape_trace.json.gz").symlink_to(outside / "base.json.gz")
    return root


def _store(jp_serverapp):
    return jp_serverapp.web_app.settings["profinsight_store"]


@pytest.fixture
def get(jp_fetch, jp_asyncio_loop):
    """``get("runs", params=...)`` -> (status, JSON) of ``{base_url}profinsight/api/runs`` with the token."""

    def _get(*parts, params=None, **kw):
        try:
            r = jp_asyncio_loop.run_until_complete(jp_fetch("profinsight", "api", *parts, params=params, **kw))
        except HTTPClientError as e:
            r = e.response
        return r.code, json.loads(r.body) if r.body else None

    return _get


@pytest.fixture
def raw(http_server_client, jp_base_url, jp_asyncio_loop):
    """``raw("api/...", headers=...)``: a request with exactly these headers (no token added), for
    ids that hold a '/' (jp_fetch would escape it) and for unauthenticated requests."""

    def _raw(path, headers=None, **kw):
        url = jp_base_url.rstrip("/") + "/profinsight/" + path
        return jp_asyncio_loop.run_until_complete(
            http_server_client.fetch(url, headers=headers or {}, follow_redirects=False, raise_error=False, **kw)
        )

    return _raw


def test_runs_lists_each_run_once_without_importing(get, jp_serverapp):
    code, d = get("runs")
    assert code == 200, d
    ids = [r["id"] for r in d["runs"]]
    assert sorted(ids) == [TRACE, RUN], ids  # 2 ranks = one run; nothing skipped or outside
    run = {r["id"]: r for r in d["runs"]}[RUN]
    assert run["rank_count"] == 2 and run["ranks"] == [0, 1]
    assert run["format"] == "ascend_text" and run["level"] == "Level1"
    assert run["size_bytes"] > 1_000_000 and run["files"] > 10
    assert run["status"] == "unchecked" and run["state"] == "idle" and not run["cached"]
    assert [p["path"] for p in d["problems"]] == ["broken/rank0_ascend_pt"], d["problems"]
    assert d["problems"][0]["fix"] and str(jp_serverapp.root_dir) not in d["problems"][0]["error"]
    assert not d["truncated"]
    # listing loaded nothing: no profile imported, no cache written
    assert all(e.profile is None for e in _store(jp_serverapp)._entries.values())


def test_runs_status_follows_loading_and_cache(get, jp_serverapp):
    code, d = get("profiles", TRACE)  # opening imports it
    assert code == 200 and d["loaded"]
    code, d = get("runs")
    entry = {r["id"]: r for r in d["runs"]}[TRACE]
    assert entry["state"] == "loaded" and entry["cached"]
    assert entry["status"] in ("ok", "warning", "error")
    assert entry["counts"]["warning"] == sum(1 for x in entry["diagnostics"] if x["severity"] == "warning")
    # a fresh store (a restarted server) sees the warm cache without importing: doctor status from it
    from profinsight.server.store import ProfileStore

    fresh = ProfileStore(root=jp_serverapp.root_dir).runs()
    cold = {r["id"]: r for r in fresh["runs"]}
    assert cold[TRACE]["cached"] and cold[TRACE]["status"] == entry["status"] and cold[TRACE]["state"] == "idle"
    assert cold[RUN]["status"] == "unchecked"


def test_runs_scan_is_kept_until_refresh(get, jp_root_dir, fixtures):
    code, d = get("runs")
    assert len(d["runs"]) == 2
    shutil.copytree(fixtures / "ascend_pt" / "db_level0", jp_root_dir / "more" / "db_level0")
    code, d = get("runs")
    assert len(d["runs"]) == 2  # the kept scan
    code, d = get("runs", params={"refresh": "1"})
    assert sorted(r["id"] for r in d["runs"]) == ["cpu_only.json.gz", "more/db_level0", RUN]


def test_runs_under_one_folder_or_file(get):
    code, d = get("runs", params={"under": "runs"})
    assert code == 200 and [r["id"] for r in d["runs"]] == [RUN]
    code, d = get("runs", params={"under": RUN + "/rank1_ascend_pt"})
    assert [(r["id"], r["rank_count"]) for r in d["runs"]] == [(RUN + "/rank1_ascend_pt", 1)]
    code, d = get("runs", params={"under": TRACE})
    assert [r["id"] for r in d["runs"]] == [TRACE]
    code, d = get("runs", params={"under": "notes"})
    assert d["runs"] == [] and d["problems"] == []


@pytest.mark.parametrize(
    "bad",
    [
        "..",
        "../outside",
        "/etc",
        "escape",
        "escape/base.json.gz",
        "escape_trace.json.gz",
        ".hidden",
        "runs/../..",
        "nothing_here",
        "C:/x",
    ],
)
def test_runs_under_outside_the_root_refused(get, bad):
    code = get("runs", params={"under": bad})[0]
    assert code == 404, bad


@pytest.mark.parametrize("bad", ["..", "../outside", "/etc", "escape", "escape_trace.json.gz", ".hidden", "runs"])
def test_profiles_outside_the_root_refused(raw, jp_auth_header, bad):
    r = raw(f"api/profiles/{quote(bad, safe='')}", headers=jp_auth_header)
    assert r.code == 404, (bad, r.code)
    body = json.loads(r.body)
    assert body["error"] and "fix" in body


def test_resolve_maps_absolute_paths_inside_the_root_only(get, jp_root_dir, tmp_path):
    code, d = get("resolve", params={"path": str(jp_root_dir / RUN)})
    assert code == 200 and d == {"id": RUN}
    code, d = get("resolve", params={"path": str(jp_root_dir)})
    assert d == {"id": ":root"}
    for bad in (
        str(tmp_path / "outside" / "base.json.gz"),
        str(jp_root_dir / "escape" / "base.json.gz"),
        str(jp_root_dir / "escape_trace.json.gz"),
        "/etc/passwd",
        RUN,
        str(jp_root_dir / ".hidden"),
        str(jp_root_dir / "no_such"),
    ):
        assert get("resolve", params={"path": bad})[0] == 404, bad


ROUTES = [
    "api/runs",
    "api/runs?refresh=1",
    "api/profiles",
    f"api/profiles/{quote(RUN, safe='')}",
    f"api/profiles/{quote(TRACE, safe='')}/timeline/tracks",
    f"api/resolve?path={quote('/etc')}",
    "api/config",
    "api/messages?lang=en",
]


@pytest.mark.parametrize("route", ROUTES)
def test_unauthenticated_requests_refused(raw, jp_serverapp, route):
    r = raw(route)
    assert r.code == 403, (route, r.code)
    r = raw(route, headers={"Authorization": "token wrong"})
    assert r.code == 403, (route, r.code)
    assert all(e.profile is None for e in _store(jp_serverapp)._entries.values())


def test_config_post_needs_auth_and_xsrf(raw, jp_auth_header, jp_root_dir):
    body = json.dumps({"cache_dir": "my_cache"})
    # no credentials at all
    r = raw("api/config", method="POST", body=body)
    assert r.code == 403
    # a browser-style session: the login cookie, but no XSRF token -> refused before the handler
    r = raw("api/config", headers=jp_auth_header)
    cookies = "; ".join(c.split(";")[0] for c in r.headers.get_list("Set-Cookie"))
    assert "username-" in cookies, cookies
    r = raw("api/config", method="POST", body=body, headers={"Cookie": cookies})
    assert r.code == 403, r.code
    assert not (jp_root_dir / "my_cache").exists()
    # the same session with the XSRF cookie echoed in the header (what JupyterLab sends) goes through
    xsrf = "2|0123abcd|0123456789abcdef0123456789abcdef|1700000000"
    r = raw("api/config", method="POST", body=body, headers={"Cookie": f"{cookies}; _xsrf={xsrf}", "X-XSRFToken": xsrf})
    assert r.code == 200, (r.code, r.body)
    assert (jp_root_dir / "my_cache").is_dir()
    # a mismatched header is refused
    r = raw(
        "api/config",
        method="POST",
        body=body,
        headers={"Cookie": f"{cookies}; _xsrf={xsrf}", "X-XSRFToken": xsrf.replace("0123", "9999")},
    )
    assert r.code == 403


def test_config_sets_the_cache_folder(get, jp_root_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("PROFINSIGHT_CACHE", str(tmp_path / "startup_cache"))
    code, d = get("config", method="POST", body=json.dumps({"cache_dir": "pi_cache"}))
    assert code == 200 and d["cache_dir"] == str(jp_root_dir / "pi_cache") and d["cache_enabled"]
    code, d = get("profiles", TRACE)
    assert code == 200 and d["loaded"]
    assert any((jp_root_dir / "pi_cache").rglob("meta.json")), "the import was cached in the chosen folder"
    code, d = get("config", method="POST", body=json.dumps({"cache_dir": "off"}))
    assert not d["cache_enabled"]
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    code, _ = get("config", method="POST", body=json.dumps({"cache_dir": str(blocker / "sub")}))
    assert code == 400
    code = get("config", method="POST", body="[1, 2]")[0]
    assert code == 400
    code, d = get("config", method="POST", body=json.dumps({"cache_dir": ""}))
    assert code == 200


def test_other_methods_are_not_routes(get):
    for route in ("runs", "profiles", "resolve"):
        code = get(route, method="POST", body="{}")[0]
        assert code == 405, route
