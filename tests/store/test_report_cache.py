"""``profinsight ranks`` keeps its report witnessed by every input's size and mtime: the same
question on unchanged files is answered from it without loading anything; a changed file, a new
file in a rank's output folder or another question builds it again."""

from __future__ import annotations

import json
import os
import shutil

import pytest

import profinsight.api as api
from profinsight.cli import main
from profinsight.store import report_cache

RUN = "ascend_pt/text_level1"


@pytest.fixture
def run(fixtures, tmp_path):
    dst = tmp_path / "run"
    shutil.copytree(fixtures / RUN, dst)
    return dst


def ranks_json(path, out, *extra) -> dict:
    assert main(["ranks", str(path), "--format", "json", "-o", str(out), *extra]) == 0
    return json.loads(out.read_text())


def test_the_same_question_on_unchanged_files_is_a_read(run, tmp_path, monkeypatch):
    first = ranks_json(run, tmp_path / "a.json")
    assert first["ranks"] == [0, 1] and first["summary"]
    assert len(list((report_cache.cache_root() / report_cache.FOLDER).glob("ranks-*.json"))) == 1

    def no_load(*a, **k):
        raise AssertionError("the report was built again")

    monkeypatch.setattr(api, "load_parallel", no_load)
    assert ranks_json(run, tmp_path / "b.json") == first  # answered from the stored report
    assert main(["ranks", str(run)]) == 0  # the tables print from it too
    monkeypatch.undo()
    os.environ["PROFINSIGHT_CACHE"] = str(report_cache.cache_root())  # undo() dropped the per-test cache env

    calls = []
    real = api.load_parallel

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(api, "load_parallel", counted)
    step = run / "rank1_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv"
    st = step.stat()
    os.utime(step, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # an input changed
    assert ranks_json(run, tmp_path / "c.json") == first and len(calls) == 1
    assert ranks_json(run, tmp_path / "d.json") == first and len(calls) == 1  # stored again
    (step.parent / "new_export.csv").write_text("x\n")  # a file appeared in a rank's output folder
    ranks_json(run, tmp_path / "e.json")
    assert len(calls) == 2
    ranks_json(run, tmp_path / "f.json", "--threshold", "2.5")  # another question
    assert len(calls) == 3


def test_off_means_no_report_is_kept(run, tmp_path, monkeypatch):
    monkeypatch.setenv("PROFINSIGHT_CACHE", "off")
    calls = []
    real = api.load_parallel
    monkeypatch.setattr(api, "load_parallel", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert ranks_json(run, tmp_path / "a.json") == ranks_json(run, tmp_path / "b.json")
    assert len(calls) == 2  # built each time
