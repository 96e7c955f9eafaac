"""The memory CSVs and the communication analysis of msprof's ``mindstudio_profiler_output/``
layout.

No real fixture has them in msprof's own form: every file here is built in the test from real
files, re-laid out as msprof writes them (reference 4.2) -- a ``Device_id`` column first and sizes
in KB instead of torch_npu's MB, times moved onto the real msprof collection's monotonic clock:

- ``npu_mem_*.csv`` from the APP rows of text_level1's ``memory_record.csv`` (process HBM),
- ``memory_record_*.csv`` from its GE rows, ``operator_memory_*.csv`` from its ``cann::`` blocks
  of ``operator_memory.csv`` (release as a duration), ``npu_module_mem_*.csv`` from
  ``npu_module_mem.csv``;
- ``analyze/communication.json`` / ``communication_matrix.json``: text_level1's real op and link
  records, one per iteration of the msprof collection's AllReduce, keyed by its op name.

The expected values are the real files' own figures (MB x 2^20 = KB x 1024; decimal MB and ms).
"""

from __future__ import annotations

import csv
import json
import math
import shutil
from pathlib import Path

import pytest
import test_msprof_output as built

import profinsight

STAMP = built.STAMP
OUT = built.OUT
TEXT = ("ascend_pt", "text_level1", "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT")
MIB = 1 << 20


def _r(x: float) -> int:
    """Rounded as the importer rounds (half away from zero, on the float product)."""
    return math.floor(x + 0.5)


def _rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _us(text: str) -> float:
    return float(text.strip())


@pytest.fixture(scope="module")
def text_dir(fixtures) -> Path:
    return fixtures.joinpath(*TEXT)


@pytest.fixture(scope="module")
def mono0(prof_dir) -> float:
    """The first event time of the real collection (monotonic us): where the moved files start."""
    return min(e["ts"] for e in built._events(prof_dir) if e.get("ph") == "X")


@pytest.fixture(scope="module")
def prof_dir(fixtures) -> Path:
    (src,) = (fixtures / "msprof" / "prof_timeline_2023").iterdir()
    return src


def _write(path: Path, header: list[str], rows: list[list]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)


class Moved:
    """Times of text_level1 moved onto the collection's monotonic clock: ``mono0 + (t - t0)``."""

    def __init__(self, t0: float, mono0: float):
        self.t0, self.mono0 = t0, mono0

    def __call__(self, text: str) -> str:
        return f"{self.mono0 + (_us(text) - self.t0):.3f}\t"


def build_memory(out: Path, text_dir: Path, mono0: float, device: int = 0) -> Moved:
    mr = _rows(text_dir / "memory_record.csv")
    om = _rows(text_dir / "operator_memory.csv")
    mm = _rows(text_dir / "npu_module_mem.csv")
    move = Moved(min(_us(r["Timestamp(us)"]) for r in mr), mono0)
    kb = lambda mb: "" if mb == "" else repr(float(mb) * 1024)  # noqa: E731
    app = [r for r in mr if r["Component"] == "APP"]
    _write(
        out / f"npu_mem_{STAMP}.csv",
        ["Device_id", "event", "ddr(KB)", "hbm(KB)", "memory(KB)", "timestamp(us)"],
        [
            [device, "app", "0", kb(r["Total Reserved(MB)"]), kb(r["Total Reserved(MB)"]), move(r["Timestamp(us)"])]
            for r in app
        ],
    )
    ge = [r for r in mr if r["Component"] == "GE"]
    _write(
        out / f"memory_record_{STAMP}.csv",
        ["Device_id", "Component", "Timestamp(us)", "Total Allocated(KB)", "Total Reserved(KB)", "Device"],
        [
            [
                device,
                "GE",
                move(r["Timestamp(us)"]),
                kb(r["Total Allocated(MB)"]),
                kb(r["Total Reserved(MB)"]),
                f"NPU:{device}",
            ]
            for r in ge
        ],
    )
    cann = [r for r in om if r["Name"].startswith("cann::")]
    _write(
        out / f"operator_memory_{STAMP}.csv",
        [
            "Device_id",
            "Name",
            "Size(KB)",
            "Allocation Time(us)",
            "Duration(us)",
            "Allocation Total Allocated(KB)",
            "Allocation Total Reserved(KB)",
            "Release Total Allocated(KB)",
            "Release Total Reserved(KB)",
            "Device",
        ],
        [
            [
                device,
                r["Name"][len("cann::") :],
                r["Size(KB)"],
                move(r["Allocation Time(us)"]),
                r["Duration(us)"],
                kb(r["Allocation Total Allocated(MB)"]),
                kb(r["Allocation Total Reserved(MB)"]),
                kb(r["Release Total Allocated(MB)"]),
                kb(r["Release Total Reserved(MB)"]),
                f"NPU:{device}",
            ]
            for r in cann
        ],
    )
    _write(
        out / f"npu_module_mem_{STAMP}.csv",
        ["Device_id", "Component", "Timestamp(us)", "Total Reserved(KB)", "Device"],
        [[device, r["Component"], move(r["Timestamp(us)"]), kb(r["Total Reserved(MB)"]), f"NPU:{device}"] for r in mm],
    )
    return move


def build_comm(prof: Path, text_dir: Path, ops: list[tuple[int, str, float]]) -> tuple[list[dict], list[dict]]:
    """communication*.json in ``prof/analyze``: for each (step, op name, start us) of the
    collection's collectives, a real record of text_level1 (in turn), keyed by that op's name."""
    ops_json = json.loads((text_dir / "communication.json").read_text())
    matrix_json = json.loads((text_dir / "communication_matrix.json").read_text())
    (src_step,) = ops_json
    records = [v for k, v in ops_json[src_step]["collective"].items() if "@" in k]
    (group,) = {k.split("@")[1] for k in ops_json[src_step]["collective"] if "@" in k}
    links = matrix_json[src_step]["collective"]
    doc, mat, used = {}, {}, []
    for i, (step, name, start_us) in enumerate(ops):
        rec = json.loads(json.dumps(records[i % len(records)]))
        rec["Communication Time Info"]["Start Timestamp(us)"] = start_us
        doc[f"step{step}"] = {"collective": {f"{name}@{group}": rec}, "p2p": {}}
        mat[f"step{step}"] = {"collective": {f"allreduce-top1@{group}": links[f"allreduce-top1@{group}"]}, "p2p": {}}
        used.append(rec)
    (prof / "analyze").mkdir()
    (prof / "analyze" / "communication.json").write_text(json.dumps(doc))
    (prof / "analyze" / "communication_matrix.json").write_text(json.dumps(mat))
    return used, [links[f"allreduce-top1@{group}"]] * len(ops)


@pytest.fixture(scope="module")
def built_prof(prof_dir, text_dir, mono0, tmp_path_factory):
    """One device: the real timeline (one file), the step trace, the memory CSVs, the analysis."""
    prof = built._bare(prof_dir, tmp_path_factory.mktemp("mpox"))
    built._write_slices(prof / OUT, "msprof", built._events(prof_dir), 1)
    shutil.copy(prof_dir / "device_0" / "timeline" / "step_trace_0_2_1.json", prof / OUT / f"step_trace_{STAMP}.json")
    move = build_memory(prof / OUT, text_dir, mono0)
    hop = [
        e
        for e in built._events(prof_dir)
        if e.get("ph") == "X" and e.get("name") == "Default/AllReduce-op534_0" and e.get("tid") == 70000
    ]
    hop.sort(key=lambda e: e["ts"])
    ops = [(i + 1, e["name"], e["ts"]) for i, e in enumerate(hop)]
    records, links = build_comm(prof, text_dir, ops)
    return prof, move, records, links


@pytest.fixture(scope="module")
def loaded(built_prof):
    return profinsight.load(built_prof[0])


def _offset(p) -> int:
    return json.loads(p.table("run_info")["extra"][0])["clock_offset_ns"]


def _ns(moved: str, off: int) -> int:
    whole, frac = moved.strip().split(".")
    return int(whole) * 1000 + int(frac.ljust(3, "0")[:3]) + off


def test_memory_csvs_fill_the_memory_tables_with_the_files_own_figures(loaded, built_prof, text_dir):
    _, move, _, _ = built_prof
    off = _offset(loaded)
    mr = _rows(text_dir / "memory_record.csv")
    ms = loaded.table("memory_samples")
    assert ms.groupby("component").size().to_dict() == {"APP": 14, "GE": 114}
    app = ms[ms.component == "APP"].sort_values("ts_ns")
    src = sorted((r for r in mr if r["Component"] == "APP"), key=lambda r: _us(r["Timestamp(us)"]))
    assert app["reserved_bytes"].tolist() == [round(float(r["Total Reserved(MB)"]) * MIB) for r in src]
    assert app["ts_ns"].tolist() == [_ns(move(r["Timestamp(us)"]), off) for r in src]
    assert app["allocated_bytes"].isna().all()
    ge = ms[ms.component == "GE"]
    src = [r for r in mr if r["Component"] == "GE"]
    assert int(ge["allocated_bytes"].sum()) == round(sum(float(r["Total Allocated(MB)"]) for r in src) * MIB)
    assert int(ge["reserved_bytes"].max()) == round(max(float(r["Total Reserved(MB)"]) for r in src) * MIB)
    assert set(ms["device"]) == {0}
    # the memory lies inside the collection's window once converted with the same clock pair
    info = loaded.table("run_info").iloc[0]
    assert info["collect_start_ns"] <= ms["ts_ns"].min() and info["has_memory"]


def test_operator_memory_gives_the_graph_engine_blocks(loaded, built_prof, text_dir):
    _, move, _, _ = built_prof
    off = _offset(loaded)
    src = [r for r in _rows(text_dir / "operator_memory.csv") if r["Name"].startswith("cann::")]
    mb = loaded.table("memory_blocks").sort_values(["alloc_ns", "name"]).reset_index(drop=True)
    assert len(mb) == len(src) == 57
    assert set(mb["component"]) == {"GE"} and mb["name"].str.startswith("cann::").all()
    assert int(mb["size_bytes"].sum()) == round(sum(float(r["Size(KB)"]) for r in src) * 1024)
    released = [r for r in src if r["Duration(us)"].strip()]
    assert mb["release_ns"].notna().sum() == len(released)
    first = min(src, key=lambda r: _us(r["Allocation Time(us)"]))
    assert mb["alloc_ns"].iloc[0] == _ns(move(first["Allocation Time(us)"]), off)
    # the text rank's own GE blocks: the same sizes
    text = profinsight.load(text_dir.parent).table("memory_blocks")
    text = text[text.component == "GE"]
    assert sorted(text["size_bytes"]) == sorted(mb["size_bytes"])
    assert len(loaded.memory_by_op()) > 0


def test_module_memory_and_the_npu_mem_counters(loaded, text_dir):
    src = _rows(text_dir / "npu_module_mem.csv")
    mm = loaded.table("module_memory")
    assert len(mm) == len(src) == 1078
    assert mm["component"].nunique() == len({r["Component"] for r in src})
    assert int(mm["reserved_bytes"].sum()) == round(sum(float(r["Total Reserved(MB)"]) for r in src) * MIB)
    # the torch_npu export of the same files: equal per component
    text = profinsight.load(text_dir.parent).table("module_memory")
    assert (
        mm.groupby("component")["reserved_bytes"].sum().to_dict()
        == text.groupby("component")["reserved_bytes"].sum().to_dict()
    )
    c = loaded.table("counters")
    assert c.groupby("name").size().to_dict() == {"APP/DDR": 14, "APP/HBM": 14, "APP/Memory": 14}
    app = [r for r in _rows(text_dir / "memory_record.csv") if r["Component"] == "APP"]
    assert c[c.name == "APP/HBM"]["value"].max() == max(float(r["Total Reserved(MB)"]) * 1024 for r in app)
    assert len(loaded.memory_curve()) > 0
    codes = {d.code for d in loaded.diagnostics}
    assert "msprof-output-not-read" not in codes


def test_communication_json_adds_the_vendor_split_and_bytes_to_the_collectives(loaded, built_prof):
    _, _, records, links = built_prof
    ops = loaded.table("comm_ops").sort_values("start_ns").reset_index(drop=True)
    assert len(ops) == 10 and ops["step"].tolist() == list(range(1, 11))
    # the timeline keeps the exact times (the real collection's), the JSON adds the split
    assert int(ops["dur_ns"].sum()) == 129_172_040
    for key, col in (("Transit Time(ms)", "transit_ns"), ("Wait Time(ms)", "wait_ns"), ("Idle Time(ms)", "idle_ns")):
        assert ops[col].tolist() == [_r(r["Communication Time Info"][key] * 1e6) for r in records], col
    hccs = [_r(r["Communication Bandwidth Info"]["HCCS"]["Transit Size(MB)"] * 1e6) for r in records]
    assert ops["hccs_bytes"].tolist() == hccs and ops["bytes"].tolist() == hccs  # SDMA not added twice
    assert set(ops["group"]) == {"17522688603477080586"}
    cl = loaded.table("comm_links")
    assert len(cl) == 10 * len(links[0]) and set(cl["summary"]) == {"top1"}
    one = cl[(cl.step == 3) & (cl.src_rank == 0) & (cl.dst_rank == 1)].iloc[0]
    assert one["transport"] == "HCCS" and one["bytes"] == _r(links[0]["0-1"]["Transit Size(MB)"] * 1e6)
    assert one["transit_ns"] == _r(links[0]["0-1"]["Transit Time(ms)"] * 1e6)
    assert len(loaded.comm_matrix(summary="top1")) == 80 and len(loaded.collectives()) == 10


def test_msprof_s_flat_analysis_is_read_too(prof_dir, text_dir, tmp_path, built_prof):
    """msprof's own analyze/communication.json is keyed by op alone (no step): a record goes to
    the n-th op of its name; its links name the op, not a summary."""
    prof = tmp_path / "flat"
    shutil.copytree(built_prof[0], prof)
    doc = json.loads((prof / "analyze" / "communication.json").read_text())
    (key,) = doc["step1"]["collective"]
    (prof / "analyze" / "communication.json").write_text(json.dumps({key: doc["step1"]["collective"][key]}))
    mat = json.loads((prof / "analyze" / "communication_matrix.json").read_text())
    (mkey,) = mat["step1"]["collective"]
    name = key.split("@")[0]
    flat = {f"{name}@{key.split('@')[1]}": mat["step1"]["collective"][mkey]}
    (prof / "analyze" / "communication_matrix.json").write_text(json.dumps(flat))
    p = profinsight.load(prof)
    ops = p.table("comm_ops").sort_values("start_ns").reset_index(drop=True)
    rec = built_prof[2][0]
    assert ops["transit_ns"].iloc[0] == _r(rec["Communication Time Info"]["Transit Time(ms)"] * 1e6)
    assert ops["transit_ns"].iloc[1:].isna().all() and len(ops) == 10
    cl = p.table("comm_links")
    per_op = cl[cl.summary.isna()]
    assert len(per_op) == len(mat["step1"]["collective"][mkey]) and set(per_op["op_name"]) == {name}
    assert per_op["step"].isna().all()
    # the sum over the ops of each link (one op here: its own figures), for the matrix views
    total = cl[cl.summary == "total"].set_index(["src_rank", "dst_rank"]).sort_index()
    assert total["bytes"].tolist() == per_op.set_index(["src_rank", "dst_rank"]).sort_index()["bytes"].tolist()
    assert len(p.comm_matrix()) == len(per_op)


def test_damaged_memory_and_communication_cost_only_their_values(tmp_path, built_prof):
    prof = tmp_path / "bad"
    shutil.copytree(built_prof[0], prof)
    path = prof / OUT / f"npu_module_mem_{STAMP}.csv"
    lines = path.read_text().splitlines()
    cells = [line.split(",") for line in lines]
    cells[1][3] = "1e400"  # Total Reserved(KB)
    cells[2][2] = "abc"  # Timestamp(us)
    lines = [",".join(c) for c in cells]
    path.write_text("\n".join(lines) + "\n")
    doc = json.loads((prof / "analyze" / "communication.json").read_text())
    for cats in doc.values():
        for rec in cats["collective"].values():
            rec["Communication Time Info"]["Wait Time(ms)"] = -3
    (prof / "analyze" / "communication.json").write_text(json.dumps(doc))
    (prof / "analyze" / "communication_matrix.json").write_text("{not json")
    p = profinsight.load(prof)
    by = {}
    for d in p.diagnostics:
        by.setdefault(d.code, []).append(d)
    mm = p.table("module_memory")
    assert len(mm) == 1077 and mm["reserved_bytes"].isna().sum() == 1
    said = [d.message for d in by["csv-bad-values"]] + [d.message for d in by["csv-bad-rows"]]
    assert any("npu_module_mem" in m and "1 row(s) dropped" in m for m in said)
    assert any("npu_module_mem" in m and "'1e400'" in m for m in said)
    assert p.table("comm_ops")["wait_ns"].isna().all() and p.table("comm_ops")["transit_ns"].notna().all()
    assert "10 op record(s)" in by["json-bad-values"][0].message
    assert "communication_matrix.json" in by["json-invalid"][0].message and p.table("comm_links").empty
    assert len(p.table("memory_samples")) == 128


@pytest.mark.slow
def test_several_devices_sharing_the_analysis_are_told_not_given_it(prof_dir, text_dir, mono0, tmp_path):
    prof = built.build_two_devices(prof_dir, tmp_path)
    build_memory(prof / OUT, text_dir, mono0, device=1)
    build_comm(prof, text_dir, [(1, "Default/AllReduce-op534_0", 0.0)])
    p = profinsight.load(prof)
    ms = p.table("memory_samples")
    assert ms.groupby("rank").size().to_dict() == {1: 128}  # the files hold device 1's rows only
    assert set(p.table("module_memory")["rank"]) == {1}
    assert p.table("comm_ops")["transit_ns"].isna().all() and p.table("comm_links").empty
    assert {d.rank for d in p.diagnostics if d.code == "msprof-comm-shared"} == {0, 1}
