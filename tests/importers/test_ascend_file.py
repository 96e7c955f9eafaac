"""A lone torch_npu deliverable (trace_view.json or kernel_details.csv outside its rank folder),
copied from the real text_level1 rank 0 into tmp_path; and the "no profile found" message."""

from __future__ import annotations

import csv
import shutil

import pytest

import profinsight
from profinsight import NotAProfile
from profinsight.importers import ascend_file, load_rank

RANK = ("ascend_pt", "text_level1", "rank0_ascend_pt")
_FULL: dict = {}


def _out(fixtures):
    return fixtures.joinpath(*RANK) / "ASCEND_PROFILER_OUTPUT"


def _full(fixtures):
    if not _FULL:
        _FULL["p"] = profinsight.load(fixtures.joinpath(*RANK))
    return _FULL["p"]


def _count(p, table):
    return int(p.sql(f"SELECT count(*) FROM {table}").iloc[0, 0])


def test_a_lone_trace_view_gives_the_timeline_tables(fixtures, tmp_path):
    shutil.copy(_out(fixtures) / "trace_view.json", tmp_path / "shared.json")  # the name is only a hint
    (run,) = profinsight.discover(tmp_path)
    assert run.format == "ascend_file" and run.root.name == "shared.json"
    p = profinsight.load(tmp_path)
    full = _full(fixtures)
    # what the trace holds is what the whole folder shows from it
    for table, n in (("host_ops", 2460), ("api_calls", 707), ("launches", 1048), ("counters", 4431)):
        assert _count(p, table) == _count(full, table) == n
    assert _count(p, "device_tasks") == 539 and _count(p, "memory_samples") == 0
    (lone,) = [d for d in p.diagnostics if d.code == "lone-file"]
    assert lone.severity == "warning" and lone.file == str(tmp_path / "shared.json")
    assert "kernel_details.csv" in lone.message and "step_trace_time.csv" in lone.message
    assert "memory" in lone.message and "_ascend_pt" in lone.fix
    assert not [d for d in p.diagnostics if d.code == "missing-file"]
    assert p.sql("SELECT device_family, path FROM run_info").values.tolist() == [["npu", str(tmp_path / "shared.json")]]


def test_a_lone_kernel_details_gives_device_tasks(fixtures, tmp_path):
    src = _out(fixtures) / "kernel_details.csv"
    rows = list(csv.DictReader(open(src, encoding="utf-8")))
    shutil.copy(src, tmp_path / "kernel_details.csv")
    rd = load_rank(ascend_file.IMPORTER.recognise(tmp_path / "kernel_details.csv").source).finish()
    dt = rd.tables["device_tasks"]
    assert dt.num_rows == len(rows) == 191
    assert sum(dt["dur_ns"].to_pylist()) == sum(round(float(r["Duration(us)"]) * 1000) for r in rows)
    assert rd.tables["host_ops"].num_rows == 0
    assert [d.code for d in rd.diagnostics if d.severity == "warning"] == ["lone-file"]
    assert "trace_view.json" in rd.diagnostics[0].message


def test_recognised_by_content_and_left_alone_inside_its_export(fixtures, tmp_path):
    (tmp_path / "trace_view.json").write_text('[{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1}]')
    (tmp_path / "kernel_details.csv").write_text("a,b\n1,2\n")
    assert ascend_file.IMPORTER.recognise(tmp_path / "trace_view.json") is None
    assert ascend_file.IMPORTER.recognise(tmp_path / "kernel_details.csv") is None
    kineto = fixtures / "kineto" / "legacy" / "resnet50_json_array.json.gz"
    assert ascend_file.IMPORTER.recognise(kineto) is None
    # a deliverable inside its rank folder's output is part of that export: the folder is the profile
    found = ascend_file.IMPORTER.recognise(_out(fixtures) / "trace_view.json")
    assert found.source is None and "rank0_ascend_pt" in found.problem.fix


def test_no_profile_found_names_the_layouts_that_work(tmp_path):
    (tmp_path / "notes.json").write_text('{"not": "a trace"}')
    with pytest.raises(NotAProfile, match="no profile found") as err:
        profinsight.discover(tmp_path)
    fix = err.value.fix
    for words in ("ASCEND_PROFILER_OUTPUT", "traceEvents", "trace_view.json", "kernel_details.csv", "formats.md"):
        assert words in fix
