"""Every FILE of the fixtures, given alone -- not only the runs (tests/surfaces/test_every_fixture.py
opens those): each lone CSV, DB, JSON and marker file inside the fixture folders either loads as a
profile with rows for what it holds, or is refused with words for what it is and the folder that
reads it (a folder that does load), through ``profinsight.load``, ``profinsight doctor`` and the
viewer's route.  Nothing is ever described by its bare shape ("a JSON object with keys ...") when
it is a known part of a profile."""

from __future__ import annotations

import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

import pytest
from tornado.httpclient import HTTPClient, HTTPClientError

import profinsight
from profinsight import NotAProfile
from profinsight.cli import main
from profinsight.server import make_app
from profinsight.server.store import ProfileStore
from profinsight.server.threaded import serve_in_thread

FIXTURES = Path(
    os.environ.get("PROFINSIGHT_FIXTURES") or Path(__file__).resolve().parents[2].parent / "shared" / "fixtures"
)
TOKEN = "every-file-token"

#: the files that load alone, and the tables each fills (every other file is refused)
LOADS = {
    "cluster_analysis/cluster_analysis.db": {"steps", "comm_ops"},
    "cluster_analysis/cluster_analysis_output/cluster_step_trace_time.csv": {"steps"},
    "msprof/msprof_db/msprof_0.db": {"device_tasks", "memory_samples", "memory_blocks"},
    **{
        f"kineto/{name}": {"device_tasks", "host_ops"}
        for name in (
            "amd_mi250.json.gz",
            "compare_base.json.gz",
            "compare_test.json.gz",
            "gpu_2rank_rank0.json.gz",
            "gpu_2rank_rank1.json.gz",
            "gpu_alexnet.json.gz",
            "legacy/resnet50_json_array.json.gz",
            "legacy/resnet50_tb_plugin_2021.json.gz",
        )
    },
    "kineto/legacy/inference_rank_1.json.gz": {"device_tasks"},
    **{f"kineto/{n}": {"host_ops"} for n in ("cpu_only.json.gz", "gpu_cupti_counters.json.gz", "rank_non_gpu.json.gz")},
}
#: files that are no part of any profile: a refusal says what they look like, no folder is offered
NOT_PARTS = {"README.md"}
#: bare shapes: never the words for a known part of a profile
GENERIC = re.compile(r"it looks like (a JSON object|a JSON array|a text file|a CSV with columns|a SQLite database)")


def _all_files() -> list[str]:
    if not FIXTURES.is_dir():
        return []
    return sorted(p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*") if p.is_file())


FILES = _all_files()


def test_every_fixture_file_is_covered(fixtures):
    assert len(FILES) == 161
    assert set(LOADS) <= set(FILES)


def _refused(path: Path) -> NotAProfile:
    with pytest.raises(NotAProfile) as err:
        profinsight.load(path)
    return err.value


#: the loads over a second (the runs' own test opens them through every surface too)
_SLOW = {r for r in LOADS if r.startswith("kineto/legacy/resnet50") or "gpu_2rank" in r}


@pytest.mark.parametrize("rel", [pytest.param(r, marks=pytest.mark.slow) if r in _SLOW else r for r in FILES])
def test_every_file_alone_loads_or_names_what_it_is_and_what_reads_it(fixtures, rel):
    path = fixtures / rel
    if rel in LOADS:
        p = profinsight.load(path)
        filled = {
            t
            for t in ("device_tasks", "host_ops", "steps", "comm_ops", "memory_samples", "memory_blocks")
            if len(p.table(t))
        }
        assert LOADS[rel] <= filled, (rel, filled)
        return
    err = _refused(path)
    message = err.args[0]
    if rel in NOT_PARTS:
        assert "it looks like a text file" in message and err.fix
        return
    assert not GENERIC.search(message), message
    # the folder that reads it is named, and it is one profinsight loads
    home = re.search(r"(?:folder it came from, |load the rank folder )(/\S+?)(?: \(|$)", err.fix or "")
    assert home, (rel, err.fix)
    folder = Path(home.group(1))
    assert folder in path.parents and profinsight.discover(folder), rel


@pytest.mark.parametrize(
    "rel",
    [
        "ascend_pt/text_level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/memory_record.csv",
        "msprof/prof_timeline_2023/PROF_000001_20230818142704322_COJGGGCANRMICFBC/device_0/timeline/msprof_0_2_1.json",
        "cluster_analysis/cluster_analysis_output/communication_group.json",
        "ascend_llm/qwen3_level2_4rank/rank_1_ascend_pt/ASCEND_PROFILER_OUTPUT/analysis.db",
    ],
)
def test_doctor_names_what_a_refused_file_is(fixtures, rel, capsys):
    assert main(["doctor", str(fixtures / rel)]) == 2
    err = capsys.readouterr().err
    assert "it looks like" in err and "folder it came from" in err and not GENERIC.search(err)


@pytest.fixture(scope="module")
def server(fixtures, tmp_path_factory):
    os.environ["PROFINSIGHT_CACHE"] = str(tmp_path_factory.mktemp("every-file-cache"))
    with serve_in_thread(make_app(store=ProfileStore(root=fixtures), token=TOKEN)) as base:
        yield base


def _fetch(base: str, path: str):
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


@pytest.mark.slow
def test_the_viewer_opens_each_lone_file_or_says_what_it_is(server):
    """The viewer's route for a file: a profile that loads, or a 404 that words the refusal
    (root-relative), never a 500 or a bare 'no profile'."""
    code, prof = _fetch(server, "/api/profiles/" + quote("kineto/gpu_2rank_rank0.json.gz", safe=""))
    assert code == 200 and prof["ranks"] == [0], prof
    # a file that is the run of its folder: the viewer is sent to that run
    rel = "cluster_analysis/cluster_analysis_output/cluster_step_trace_time.csv"
    code, body = _fetch(server, "/api/profiles/" + quote(rel, safe=""))
    assert code == 404 and body["fix"] == "open one of: cluster_analysis/cluster_analysis_output"
    rel = "ascend_pt/text_level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/npu_module_mem.csv"
    code, body = _fetch(server, "/api/profiles/" + quote(rel, safe=""))
    assert code == 404
    text = json.dumps(body)
    assert "torch_npu deliverable" in text and "ascend_pt/text_level1/rank0_ascend_pt (it reads" in text
    assert str(FIXTURES) not in text
