"""Every route of the HTTP API against a real tornado server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pytest
from _support import EVIL, crafted_trace
from tornado.httpclient import HTTPClient, HTTPClientError
from tornado.httpserver import HTTPServer
from tornado.ioloop import IOLoop
from tornado.netutil import bind_sockets

import profinsight
from profinsight.server import make_app

TOKEN = "test-token"


@pytest.fixture(scope="module")
def server(fixtures, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("srv")
    os.environ["PROFINSIGHT_CACHE"] = str(tmp / "cache")
    rank0 = fixtures / "ascend_pt" / "text_level1" / "rank0_ascend_pt"
    app = make_app([rank0, crafted_trace(fixtures, tmp)], token=TOKEN)
    sockets = bind_sockets(0, "127.0.0.1")
    port = sockets[0].getsockname()[1]
    started = threading.Event()
    holder = {}

    def serve():
        import asyncio

        asyncio.set_event_loop(asyncio.new_event_loop())
        HTTPServer(app).add_sockets(sockets)
        holder["loop"] = IOLoop.current()
        started.set()
        holder["loop"].start()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    started.wait(10)
    yield {"base": f"http://127.0.0.1:{port}", "app": app, "rank0": rank0, "prof": profinsight.load(rank0)}
    holder["loop"].add_callback(holder["loop"].stop)


def fetch(server, path, token=TOKEN, raw=False, headers=None):
    """GET on a worker thread: a synchronous HTTPClient runs its own event loop, which cannot
    start in a thread where one already runs (Playwright's, when the browser tests ran first)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(_fetch, server, path, token, raw, headers).result()


def _fetch(server, path, token=TOKEN, raw=False, headers=None):
    client = HTTPClient()
    h = dict(headers or {})
    if token:
        h["Authorization"] = f"token {token}"
    try:
        r = client.fetch(server["base"] + path, headers=h)
    except HTTPClientError as e:
        r = e.response
    finally:
        client.close()
    return r.code, (r if raw else json.loads(r.body))


P = "/api/profiles/rank0_ascend_pt"


def test_profiles_listing(server):
    code, d = fetch(server, "/api/profiles")
    assert code == 200
    ids = [p["id"] for p in d["profiles"]]
    assert ids == ["rank0_ascend_pt", "evil_trace.json"]
    p = d["profiles"][0]
    assert p["format"] == "ascend_text" and p["ranks"] == [0] and p["steps"] == [50]
    assert p["tables"]["device_tasks"] == 539 and isinstance(p["diagnostics"], list)
    code, one = fetch(server, P)
    assert code == 200 and one["id"] == "rank0_ascend_pt"


def test_token_required(server):
    assert fetch(server, "/api/profiles", token=None)[0] == 401
    code, d = fetch(server, "/api/profiles", token="wrong")
    assert code == 403 and d["error"] == "wrong token" and d["fix"]
    assert fetch(server, f"/api/profiles?token={TOKEN}", token=None)[0] == 200
    assert fetch(server, P + "/timeline/tracks", token=None)[0] == 401
    assert fetch(server, "/", token=None, raw=True)[0] == 401
    # DNS rebinding: a foreign Host header is refused on a loopback bind
    assert fetch(server, "/api/profiles", headers={"Host": "evil.example:80"})[0] == 403


def test_tables_paging(server):
    code, d = fetch(server, P + "/tables/device_tasks?limit=5&offset=10")
    assert code == 200 and d["total_rows"] == 539 and len(d["rows"]) == 5
    expected = server["prof"].arrow("device_tasks").slice(10, 5).column("name").to_pylist()
    assert [r["name"] for r in d["rows"]] == expected
    assert fetch(server, P + "/tables/device_tasks?limit=abc")[0] == 400
    assert fetch(server, P + "/tables/nope")[0] == 404


@pytest.mark.parametrize(
    "path",
    [
        "/api/profiles/..%2F..%2Fetc%2Fpasswd/tables/device_tasks",
        "/api/profiles/%2Fetc%2Fpasswd/tables/device_tasks",
        "/api/profiles/..",
        "/api/profiles/rank0_ascend_pt/tables/..%2F..%2Fsteps",
        "/api/profiles/rank0_ascend_pt/tables/%2Fetc%2Fpasswd",
        "/api/profiles/text_level1/tables/steps",
        "/api/profiles/rank0_ascend_pt/../../etc/passwd",
    ],
)
def test_path_traversal_refused(server, path):
    code, d = fetch(server, path)
    assert code in (400, 404) and "error" in d


def test_symlink_id_refused(server, tmp_path):
    link = tmp_path / "link_profile"
    link.symlink_to(server["rank0"])
    code, d = fetch(server, f"/api/profiles/{link.name}/tables/steps")
    assert code == 404
    code, d = fetch(server, "/api/profiles/" + str(link).replace("/", "%2F") + "/tables/steps")
    assert code == 404


def test_analyses_from_registry(server):
    from profinsight.registry import all_analyses

    code, d = fetch(server, P + "/analyses")
    assert code == 200
    assert [a["name"] for a in d["analyses"]] == sorted(all_analyses())
    op = {a["name"]: a for a in d["analyses"]}["op_summary"]
    by = {p["name"]: p for p in op["params"]}["by"]
    assert by["choices"] and by["default"] in by["choices"]
    code, r = fetch(server, P + "/analyses/op_summary?by=type&top=3")
    assert code == 200 and r["analysis"] == "op_summary" and len(r["rows"]) == 3
    ref = server["prof"].op_summary(by="type", top=3)
    assert [row["type"] for row in r["rows"]] == list(ref["type"])
    code, e = fetch(server, P + "/analyses/no_such_view")
    assert code == 404 and "no_such_view" in e["error"] and e["fix"]
    assert fetch(server, P + "/analyses/op_summary?by=nonsense")[0] == 400
    assert fetch(server, P + "/analyses/op_summary?bogus=1")[0] == 400


@pytest.fixture(scope="module")
def gpu_server(fixtures):
    """A server of a Kineto trace whose idle_gaps(min_us=0) has hundreds of rows (930)."""
    from profinsight.server.threaded import serve_in_thread

    path = fixtures / "kineto" / "gpu_2rank_rank0.json.gz"
    with serve_in_thread(make_app([path], token=TOKEN)) as base:
        yield {"base": base, "prof": profinsight.load(path)}


def test_analysis_route_pages_the_result(gpu_server):
    """offset/limit page the analysis answer; the pages, put together, are the Python result row
    for row, and total_rows counts the whole result."""
    ref = gpu_server["prof"].idle_gaps(min_us=0)
    assert len(ref) == 930
    g = "/api/profiles/gpu_2rank_rank0.json.gz/analyses/idle_gaps?min_us=0"
    code, whole = fetch(gpu_server, g)
    assert code == 200
    assert (whole["offset"], whole["limit"], whole["total_rows"], len(whole["rows"])) == (0, 5000, 930, 930)
    assert whole["params"] == {"min_us": "0"}  # paging arguments do not reach the analysis
    pages = []
    for offset, n in ((0, 400), (400, 400), (800, 130)):
        code, page = fetch(gpu_server, f"{g}&offset={offset}&limit=400")
        assert code == 200
        assert (page["offset"], page["limit"], page["total_rows"], len(page["rows"])) == (offset, 400, 930, n)
        assert page["columns"] == list(ref.columns) and page["chart"] == whole["chart"]
        pages += page["rows"]
    exact = ["rank", "step", "position", "start_ns", "end_ns", "host_activity", "host_op", "next_task", "label"]
    for col in exact:
        assert [r[col] for r in pages] == ref[col].tolist(), col
    for col in ("dur_us", "offset_us", "overlap_us"):  # floats travel with 10 significant digits
        assert [r[col] for r in pages] == pytest.approx(ref[col].tolist(), rel=1e-9, abs=1e-9), col
    assert pages == whole["rows"]
    # past the end: no rows, still the total; a huge limit is capped; a negative offset is 0
    code, past = fetch(gpu_server, f"{g}&offset=930")
    assert code == 200 and past["rows"] == [] and past["total_rows"] == 930
    code, capped = fetch(gpu_server, f"{g}&limit=1000000&offset=-5")
    assert code == 200 and capped["limit"] == 5000 and capped["offset"] == 0 and capped["rows"] == whole["rows"]
    code, err = fetch(gpu_server, f"{g}&limit=many")
    assert code == 400 and "limit" in err["error"]
    # the analysis's own parameters still apply: the default min_us=50 keeps 505 gaps
    code, dflt = fetch(gpu_server, "/api/profiles/gpu_2rank_rank0.json.gz/analyses/idle_gaps?limit=10&offset=500")
    assert code == 200 and dflt["total_rows"] == 505 and len(dflt["rows"]) == 5
    assert [r["start_ns"] for r in dflt["rows"]] == gpu_server["prof"].idle_gaps()["start_ns"].iloc[500:].tolist()


def _tree(server):
    return fetch(server, P + "/timeline/tracks")[1]


def test_tracks_route(server):
    tree = _tree(server)
    assert int(tree["origin_ns"]) == int(
        server["prof"].sql(
            "select min(s) m from (select min(start_ns) s from device_tasks union all select min(start_ns) from host_ops "
            "union all select min(start_ns) from api_calls union all select min(start_ns) from trace_slices "
            "union all select min(start_ns) from comm_ops union all select min(ts_ns) from counters "
            "union all select min(ts_ns) from memory_samples)"
        )["m"][0]
    )
    units = {u["name"]: u for u in tree["ranks"][0]["units"]}
    # streams 0, 2, 3, 4 (the stream-less all-reduces are drawn on their group), HCCL on 8 planes
    assert len(units["Ascend Hardware"]["tracks"]) == 4
    assert [t["name"] for t in units["HCCL"]["tracks"]] == [f"Plane {i}" for i in range(8)]
    assert all(t["start_ns"] >= 0 for u in units.values() for t in u["tracks"] if t["kind"] == "slice")


def test_slices_route_exact_and_arrow(server):
    tree = _tree(server)
    origin = int(tree["origin_ns"])
    end = tree["end_ns"] // 2
    prof = server["prof"]
    n = int(
        prof.sql(
            f"select count(*) n from device_tasks where stream = 2 and start_ns < {origin + end} "
            f"and start_ns + dur_ns > {origin}"
        )["n"][0]
    )
    code, d = fetch(server, P + f"/timeline/slices?start=0&end={end}&width=400&tracks=r0/stream/2,r0/stream/3")
    assert code == 200 and d["origin_ns"] == tree["origin_ns"]
    s2 = d["tracks"]["r0/stream/2"]
    assert sum(s2["count"]) == n
    assert sum(1 for m in s2["merged"] if m) <= 400
    code, r = fetch(
        server,
        P + f"/timeline/slices?start=0&end={end}&width=400&tracks=r0/stream/2,r0/stream/3&format=arrow",
        raw=True,
    )
    assert code == 200 and r.headers["Content-Type"] == "application/vnd.apache.arrow.stream"
    t = pa.ipc.open_stream(r.body).read_all()
    assert t.num_rows == d["rows"] and t.schema.metadata[b"origin_ns"] == tree["origin_ns"].encode()
    import pyarrow.compute as pc

    # the JSON shape: one name dictionary per answer, codes per row, source per track, id -1 and
    # merged 1 on merged rows; decoded, it is the Arrow answer row for row
    assert set(d) == {"origin_ns", "start_ns", "end_ns", "width", "px_ns", "rows", "names", "tracks"}
    assert len(d["names"]) == len(set(d["names"]))
    for tid, c in d["tracks"].items():
        assert set(c) == {"source", "depth", "name", "start_ns", "dur_ns", "id", "count", "merged"}
        assert c["source"] == "device_task"
        want = t.filter(pc.equal(t.column("track"), tid)).to_pylist()
        got = [
            {
                "depth": c["depth"][i],
                "name": d["names"][c["name"][i]],
                "start_ns": c["start_ns"][i] + origin,
                "dur_ns": c["dur_ns"][i],
                "id": None if c["merged"][i] else c["id"][i],
                "count": c["count"][i],
                "merged": bool(c["merged"][i]),
                "source": None if c["merged"][i] else c["source"],
            }
            for i in range(len(c["id"]))
        ]
        assert got == [{k: w[k] for k in got[0]} for w in want]
        assert all(c["id"][i] == -1 for i in range(len(c["id"])) if c["merged"][i])
        assert set(c["merged"]) <= {0, 1}
    for bad in (
        "start=0&end=10&width=0&tracks=r0/stream/2",
        "start=10&end=0&tracks=r0/stream/2",
        "start=x&end=10&tracks=r0/stream/2",
        "start=0&end=10&tracks=r0/stream/77",
        "start=0&end=10",
        "start=0&end=10&tracks=r0/stream/2&format=xml",
    ):
        code, e = fetch(server, P + "/timeline/slices?" + bad)
        assert code == 400 and e["error"], bad


def test_counters_route_keeps_max(server):
    tree = _tree(server)
    qos = [t for u in tree["ranks"][0]["units"] for t in u["tracks"] if t["name"] == "QoS OTHERS"][0]
    code, d = fetch(server, P + f"/timeline/counters?start=0&end={tree['end_ns'] + 1}&width=3&tracks={qos['id']}")
    assert code == 200
    c = d["tracks"][qos["id"]]
    assert len(c["max"]) <= 3 and sum(c["count"]) == 1405
    assert max(c["max"]) == server["prof"].sql("select max(value) m from counters where name='QoS OTHERS'")["m"][0]


def test_flows_search_details_routes(server):
    code, s = fetch(server, P + "/timeline/search?q=aclnnAddmm&limit=3")
    assert code == 200 and s["total"] >= 1 and len(s["hits"]) <= 3
    api = next(
        h for h in fetch(server, P + "/timeline/search?q=aclnnAddmm&limit=100")[1]["hits"] if h["kind"] == "device_task"
    )
    code, f = fetch(server, P + f"/timeline/flows?kind=device_task&rank=0&id={api['id']}")
    assert code == 200 and f["flows"] and all(x["to"]["id"] == api["id"] for x in f["flows"])
    src = f["flows"][0]["from"]
    code, back = fetch(server, P + f"/timeline/flows?kind={src['kind']}&rank=0&id={src['id']}")
    assert api["id"] in [x["to"]["id"] for x in back["flows"]]
    code, det = fetch(server, P + f"/timeline/details?kind=device_task&rank=0&id={api['id']}")
    assert code == 200 and det["row"]["name"] == api["name"] and det["row"]["input_shapes"]
    assert isinstance(det["row"]["start_ns"], str)  # epoch ns beyond 2^53 travel as text
    assert fetch(server, P + "/timeline/details?kind=device_task&rank=0&id=999999999")[0] == 404
    assert fetch(server, P + "/timeline/details?kind=bogus&rank=0&id=1")[0] == 400
    assert fetch(server, P + "/timeline/search?q=")[0] == 400


def test_script_names_escaped(server):
    code, r = fetch(server, "/api/profiles/evil_trace.json/timeline/search?q=script", raw=True)
    assert code == 200
    assert b"<script>" not in r.body and b"\\u003cscript\\u003e" in r.body
    assert r.headers["Content-Type"].startswith("application/json")
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    hits = json.loads(r.body)["hits"]
    assert hits and hits[0]["name"] == EVIL
    # the slices answer sends names once, in its dictionary: escaped there too
    tree = fetch(server, "/api/profiles/evil_trace.json/timeline/tracks")[1]
    ids = ",".join(t["id"] for u in tree["ranks"][0]["units"] for t in u["tracks"] if t["kind"] == "slice")
    code, r = fetch(
        server,
        f"/api/profiles/evil_trace.json/timeline/slices?start=0&end={tree['end_ns'] + 1}&width=20000&tracks={ids}",
        raw=True,
    )
    assert code == 200 and b"<script>" not in r.body and b"\\u003cscript\\u003e" in r.body
    d = json.loads(r.body)
    assert EVIL in d["names"] and d["names"].count(EVIL) == 1
    code, page = fetch(server, "/", raw=True)
    assert code == 200 and b"<script>" not in page.body


def test_index_page_is_the_app_shell(server):
    code, page = fetch(server, "/", raw=True)
    body = page.body.decode()
    assert code == 200 and "id='profinsight-root'" in body and "static/app.js" in body
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]


def test_status_and_messages_routes(server):
    code, st = fetch(server, "/api/profiles/rank0_ascend_pt/status")
    assert code == 200 and st["id"] == "rank0_ascend_pt" and st["state"] in ("idle", "loaded") and st["total"] == 1
    fetch(server, "/api/profiles/rank0_ascend_pt")
    code, st = fetch(server, "/api/profiles/rank0_ascend_pt/status")
    assert st["state"] == "loaded" and st["stage"] is None and st["elapsed_s"] >= 0
    code, en = fetch(server, "/api/messages?lang=en")
    code, zh = fetch(server, "/api/messages?lang=zh")
    assert en["messages"]["ui.view.timeline"] == "Timeline" and zh["messages"]["ui.view.timeline"] == "时间线"
    assert set(en["messages"]) == set(zh["messages"]) and all(k.startswith(("ui.", "term.")) for k in en["messages"])
    code, bad = fetch(server, "/api/messages?lang=xx")
    assert code == 400 and "lang" in bad["fix"]


def test_unknown_route_json_404(server):
    code, d = fetch(server, "/api/nothing")
    assert code == 404 and d["error"]


def test_make_handlers_base_url(server):
    from profinsight.server import ProfileStore, make_handlers

    routes = make_handlers(ProfileStore(), base_url="/user/alice/profinsight")
    assert routes[0][0] == "/user/alice/profinsight/api/profiles/?"
    assert all(r[0].startswith("/user/alice/profinsight/api/") for r in routes)


def test_compare_route(server, fixtures):
    """The served profiles compared: the JSON of `profinsight compare --format json`, runs named by id."""
    code, d = fetch(server, "/api/compare?base=rank0_ascend_pt&others=rank0_ascend_pt")
    assert code == 200
    assert [r["name"] for r in d["runs"]] == ["rank0_ascend_pt", "rank0_ascend_pt#1"]
    ref = profinsight.compare(server["prof"], server["prof"], names=["rank0_ascend_pt", "rank0_ascend_pt#1"]).to_dict()
    assert d["steps"][0]["step_us"] == pytest.approx(ref["steps"][0]["step_us"])
    assert set(d) == set(ref) and list(d["waterfalls"]) == list(ref["waterfalls"])
    (wf,) = d["waterfalls"].values()
    assert sum(r["delta_us"] for r in wf if r["in_step"]) == pytest.approx(0.0, abs=1e-6)
    code, two = fetch(server, "/api/compare?base=rank0_ascend_pt&others=evil_trace.json")
    assert code == 200 and [r["name"] for r in two["runs"]] == ["rank0_ascend_pt", "evil_trace.json"]
    for bad, status in (
        ("", 400),
        ("?base=rank0_ascend_pt", 400),
        ("?others=rank0_ascend_pt", 400),
        ("?base=rank0_ascend_pt&others=nope", 404),
        ("?base=..&others=rank0_ascend_pt", 404),
    ):
        code, e = fetch(server, "/api/compare" + bad)
        assert code == status and e["error"] and e["fix"], bad
    assert fetch(server, "/api/compare?base=rank0_ascend_pt&others=rank0_ascend_pt", token=None)[0] == 401


def test_advise_findings_carry_a_timeline_window(server):
    """Every finding says where to look: absolute ns of a window the viewer can jump to."""
    code, d = fetch(server, P + "/analyses/advise?lang=en")
    assert code == 200
    found = [r for r in d["rows"] if r["severity"] != "not_applicable"]
    assert found
    # what each recoverable time is of: the profile records steps, so every row is of the step
    assert "basis" in d["columns"] and {r["basis"] for r in d["rows"]} == {"step"}
    steps = server["prof"].table("steps")
    step = (int(steps["device_start_ns"][0]), int(steps["device_end_ns"][0]))
    ref = {r["rule"]: r["evidence"] for _, r in server["prof"].advise(lang="en").iterrows()}
    for r in found:
        w = ref[r["rule"]]["window"]
        assert w["rank"] == 0 and step[0] <= w["start_ns"] < w["end_ns"] <= step[1], r["rule"]
        assert r["evidence"]["window"]["rank"] == 0
    gaps = ref["idle_gaps"]["longest_gaps"][0]
    assert (ref["idle_gaps"]["window"]["start_ns"], ref["idle_gaps"]["window"]["end_ns"]) == (
        gaps["start_ns"],
        gaps["end_ns"],
    )
    assert (
        ref["communication_overlap"]["window"]["start_ns"],
        ref["communication_overlap"]["window"]["end_ns"],
    ) == step


@pytest.mark.parametrize(
    "query",
    [
        "/tables/device_tasks?offset=99999999999999999999999",
        "/tables/device_tasks?limit=-99999999999999999999999",
        "/analyses/op_summary?offset=" + "9" * 30,
        "/timeline/slices?start=0&end=" + "9" * 25 + "&tracks=r0/stream/2",
        f"/timeline/slices?start=-{2**63}&end=0&tracks=r0/stream/2",
        "/timeline/slices?start=0&end=1000&width=0&tracks=r0/stream/2",
        "/timeline/details?kind=device_task&rank=0&id=" + "1" * 400,
    ],
)
def test_numbers_beyond_their_range_are_a_bad_request(server, query):
    code, err = fetch(server, P + query)
    assert code == 400 and ("out of range" in err["error"] or "must be an integer" in err["error"]), err


def test_search_hits_are_bounded_and_a_nul_in_a_file_name_is_a_bad_request(server):
    code, s = fetch(server, P + "/timeline/search?q=a&limit=100000000")
    assert code == 200 and len(s["hits"]) == min(s["total"], 1000) and s["total"] > 1000
    code, _ = fetch(server, "/static/app.js%00.png", raw=True)
    assert code == 400
