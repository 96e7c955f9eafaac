"""Every real fixture opens through every surface a user has: the CLI (``profinsight analyze``),
the HTTP routes the viewer reads (profile, analyses, tables, timeline) and the JupyterLab
sidebar's listing (``api/runs`` of a server rooted at the fixtures folder, as the Jupyter
extension is), with non-empty views for what it holds and the vendor's own step figures matched
where the vendor wrote them (step_trace_time.csv, analysis.db StepTraceTime, the cluster step
traces, msprof's step trace) -- read here from the vendor files, not through the importers.

One case per run the fixtures hold (README.md, "Added later" included); the one browser check of
the viewer on a new format is in tests/ui/test_formats_ui.py."""

from __future__ import annotations

import csv
import json
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

import pytest
from tornado.httpclient import HTTPClient, HTTPClientError

from profinsight.cli import main
from profinsight.server import make_app
from profinsight.server.store import ProfileStore
from profinsight.server.threaded import serve_in_thread

TOKEN = "fixtures-token"
MSPROF = "msprof/prof_timeline_2023/PROF_000001_20230818142704322_COJGGGCANRMICFBC"

#: run id (path under the fixtures) -> format, ranks, steps, device tasks per kind (None: none
#: recorded), and the paths the CLI gets.  Kinds from the README's facts where it states them
#: (Kineto's per-category counts; 187 kernels + 4 HCCL rows per Ascend rank ...).
CASES = {
    "ascend_pt/text_level0": ("ascend_text", [0, 1], [50], {"kernel": 374, "communication": 8}, None),
    "ascend_pt/text_level1": ("ascend_text", [0, 1], [50], {"kernel": 374, "communication": 8}, None),
    "ascend_pt/db_level0": ("ascend_db", [0, 1], [50], {"kernel": 374, "communication": 8}, None),
    "ascend_pt/db_level1": ("ascend_db", [0, 1], [50], {"kernel": 374, "communication": 8}, None),
    "ascend_llm/qwen3_level2_4rank": ("ascend_text", [0, 1, 2, 3], [13], {"kernel": 5012, "communication": 38}, None),
    "cluster_analysis/cluster_analysis_output": ("cluster", list(range(16)), [2], None, None),
    "cluster_analysis/cluster_analysis.db": ("cluster", list(range(8)), [1], None, None),
    "kineto": (
        "kineto",
        [0, 1],
        [551, 552],
        {"kernel": 1154 + 1104 - 20, "communication": 20, "memcpy": 80, "memset": 20},
        ["kineto/gpu_2rank_rank0.json.gz", "kineto/gpu_2rank_rank1.json.gz"],
    ),
    "kineto/amd_mi250.json.gz": ("kineto", [0], [1, 2], {"kernel": 14, "memcpy": 2}, None),
    "kineto/compare_base.json.gz": ("kineto", [1], [1009, 1010], {"kernel": 6, "memcpy": 6, "memset": 6}, None),
    "kineto/compare_test.json.gz": ("kineto", [1], [1009, 1010], {"kernel": 5, "memcpy": 6, "memset": 6}, None),
    "kineto/cpu_only.json.gz": ("kineto", [34], [551], None, None),
    "kineto/gpu_alexnet.json.gz": ("kineto", [0], [], {"kernel": 79, "memcpy": 16, "memset": 3, "sync": 41}, None),
    "kineto/gpu_cupti_counters.json.gz": ("kineto", [0], [], None, None),
    "kineto/rank_non_gpu.json.gz": ("kineto", [0], [1009], None, None),
    "kineto/legacy/inference_rank_1.json.gz": ("kineto", [1], [], {"kernel": 4}, None),
    "kineto/legacy/resnet50_json_array.json.gz": (
        "kineto",
        [0],
        [5, 6, 7, 8, 9, 10],
        {"kernel": 9538, "memcpy": 12, "memset": 377},
        None,
    ),
    "kineto/legacy/resnet50_tb_plugin_2021.json.gz": (
        "kineto",
        [0],
        [5, 6, 7, 8, 9, 10],
        {"kernel": 9564, "memcpy": 12, "memset": 439},
        None,
    ),
    "msprof/msprof_db/msprof_0.db": ("msprof_db", [0], [], {"kernel": 11, "comm_task": 8, "other": 5}, None),
    MSPROF + "/device_0": (
        "msprof",
        [0],
        list(range(1, 11)),
        {"kernel": 1390, "communication": 10, "comm_task": 3370, "sync": 120, "other": 20},
        [MSPROF],
    ),
}

# -- the vendor's own step figures, read from its files --------------------------------------
_CSV = {
    "Computing": "computing_us",
    "Communication(Not Overlapped)": "comm_not_overlapped_us",
    "Overlapped": "overlapped_us",
    "Communication": "comm_us",
    "Free": "free_us",
    "Stage": "step_us",
}
_DB = dict(
    zip(("computing", "communication_not_overlapped", "overlapped", "communication", "free", "stage"), _CSV.values())
)


def _db(path: Path, sql: str) -> list[dict]:
    con = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    try:
        cur = con.execute(sql)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]
    finally:
        con.close()


def vendor_steps(run: Path) -> dict:
    """{(rank, step): {step_breakdown column: us}} from the vendor's step summaries of ``run``."""
    out = {}
    if run.suffix == ".db":
        for r in _db(run, "SELECT * FROM ClusterStepTraceTime WHERE type = 'rank'"):
            out[(int(r["index"]), int(r["step"]))] = {v: float(r[k]) for k, v in _DB.items()}
        return out
    if (run / "cluster_step_trace_time.csv").is_file():
        for r in csv.DictReader(open(run / "cluster_step_trace_time.csv", encoding="utf-8")):
            if r["Type"] == "rank":
                out[(int(r["Index"]), int(r["Step"]))] = {v: float(r[k]) for k, v in _CSV.items()}
        return out
    for folder in sorted(p for p in run.iterdir() if p.is_dir()):
        o = folder / "ASCEND_PROFILER_OUTPUT"
        rank = int(next(folder.glob("profiler_info_*.json")).stem.rsplit("_", 1)[1])
        if (o / "step_trace_time.csv").is_file():
            for r in csv.DictReader(open(o / "step_trace_time.csv", encoding="utf-8")):
                out[(rank, int(r["Step"]))] = {v: float(r[k]) for k, v in _CSV.items()}
        elif (o / "analysis.db").is_file():
            for r in _db(o / "analysis.db", "SELECT * FROM StepTraceTime"):
                out[(rank, int(r["step"]))] = {v: float(r[k]) for k, v in _DB.items()}
    return out


def msprof_iterations(fixtures: Path) -> list[int]:
    """msprof's own iteration times (ns), from its step trace."""
    trace = json.loads((fixtures / MSPROF / "device_0" / "timeline" / "step_trace_0_2_1.json").read_text())
    return [int(e["args"]["Iteration Time(ns)"]) for e in trace if e.get("cat") == "Iteration Time"]


# -- the server, rooted at the fixtures as the Jupyter extension is at its root --------------
@pytest.fixture(scope="module")
def server(fixtures, tmp_path_factory):
    import os

    os.environ["PROFINSIGHT_CACHE"] = str(tmp_path_factory.mktemp("every-cache"))
    store = ProfileStore(root=fixtures)
    with serve_in_thread(make_app(store=store, token=TOKEN)) as base:
        yield base


def fetch(base: str, path: str):
    def go():
        client = HTTPClient()
        try:
            r = client.fetch(base + path, headers={"Authorization": f"token {TOKEN}"}, request_timeout=300)
        except HTTPClientError as e:
            r = e.response
        finally:
            client.close()
        return r.code, json.loads(r.body)

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(go).result()


@pytest.fixture(scope="module")
def listing(server):
    code, body = fetch(server, "/api/runs")
    assert code == 200
    return body


def test_the_sidebar_lists_every_run_and_refuses_nothing(listing):
    runs = {r["id"]: r for r in listing["runs"]}
    assert set(runs) == set(CASES)
    for rid, (fmt, ranks, *_rest) in CASES.items():
        assert runs[rid]["format"] == fmt and runs[rid]["rank_count"] == len(ranks), rid
        assert runs[rid]["status"] != "error", (rid, runs[rid]["diagnostics"])
    assert listing["problems"] == [] and not listing["truncated"]


@pytest.mark.slow
@pytest.mark.parametrize("rid", list(CASES))
def test_every_fixture_opens_in_the_viewer_routes(server, fixtures, rid):
    fmt, ranks, steps, kinds, _ = CASES[rid]
    p = "/api/profiles/" + quote(rid, safe="")
    code, prof = fetch(server, p)
    assert code == 200, prof
    assert prof["format"] == fmt and prof["ranks"] == ranks and prof["steps"] == steps
    assert not [d for d in prof["diagnostics"] if d["severity"] == "error"]
    code, st = fetch(server, p + "/status")
    assert code == 200 and st["state"] == "loaded"
    code, an = fetch(server, p + "/analyses")
    assert code == 200 and {"step_breakdown", "op_summary", "rank_summary"} <= {a["name"] for a in an["analyses"]}
    # device tasks per kind, as the README counts them
    code, dt = fetch(server, p + "/tables/device_tasks?limit=5000")
    assert code == 200
    if kinds is None:
        assert dt["total_rows"] == 0
    else:
        got: dict = {}
        rows = dt["rows"]
        offset = len(rows)
        while offset < dt["total_rows"]:
            rows += fetch(server, f"{p}/tables/device_tasks?limit=5000&offset={offset}")[1]["rows"]
            offset = len(rows)
        for r in rows:
            got[r["kind"]] = got.get(r["kind"], 0) + 1
        assert {k: got.get(k, 0) for k in kinds} == kinds
    # the timeline has tracks for what was recorded
    code, tracks = fetch(server, p + "/timeline/tracks")
    assert code == 200
    if kinds is not None:
        assert any(u["tracks"] for r in tracks["ranks"] for u in r["units"])
    # the step views: one row per rank and step, the vendor's figures where it wrote them
    code, sb = fetch(server, p + "/analyses/step_breakdown")
    assert code == 200
    vendor = vendor_steps(fixtures / rid) if fmt in ("ascend_text", "ascend_db", "cluster") else {}
    if vendor:
        assert {(r["rank"], r["step"]) for r in sb["rows"]} == set(vendor)
        for r in sb["rows"]:
            for col, us in vendor[(r["rank"], r["step"])].items():
                assert r[col] == pytest.approx(us, rel=1e-3, abs=1e-3), (rid, r["rank"], col)
    if fmt == "msprof":
        code, tab = fetch(server, p + "/tables/steps")
        got = [r["device_end_ns"] - r["device_start_ns"] for r in tab["rows"]]
        assert got == msprof_iterations(fixtures)
    if fmt == "cluster":
        code, rs = fetch(server, p + "/analyses/rank_summary")
        assert code == 200 and len(rs["rows"]) == len(ranks)


@pytest.mark.slow
@pytest.mark.parametrize("rid", list(CASES))
def test_every_fixture_opens_with_the_cli(fixtures, rid, capsys, tmp_path):
    fmt, ranks, steps, _, paths = CASES[rid]
    args = [str(fixtures / x) for x in (paths or [rid])]
    out = tmp_path / "a.json"
    assert main(["analyze", *args, "--format", "json", "-o", str(out)]) == 0, capsys.readouterr().err
    report = json.loads(out.read_text())
    assert not report["import_failed"]
    assert report["profile"]["format"] == fmt and report["profile"]["ranks"] == ranks
    assert report["profile"]["steps"] == steps
    assert report["sections"] and report["verdict"]["text"]


def test_the_mixed_cluster_folder_is_refused_with_both_runs_listed(fixtures, capsys):
    assert main(["analyze", str(fixtures / "cluster_analysis")]) == 2
    err = capsys.readouterr().err
    assert "holds 2 runs" in err and "cluster_analysis.db" in err and "cluster_analysis_output" in err
