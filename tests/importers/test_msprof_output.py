"""Current CANN's ``mindstudio_profiler_output/`` layout of an msprof collection, with sliced files.

No real fixture has this layout, several devices or sliced parts: every collection here is built
in the test from the real ``msprof/prof_timeline_2023`` files, re-laid out -- the ten per-iteration
``msprof_*.json`` joined into one timeline and cut into ``*_slice_<k>_*`` parts, the step trace
written as ``step_trace_*.csv``, a second device made from the first with current CANN's pid
encoding (``pid << 10 | sort_index << 5 | device``), and an ``op_summary_*.csv`` written from the
timeline's own hardware tasks (the op type taken from the MindSpore op name, ``.../Cast-op239`` ->
``Cast``).  The expected values are those of the real timeline layout, which the same files give."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pytest

import profinsight
from profinsight import UnsupportedFormat

STAMP = "20230818142704"
OUT = "mindstudio_profiler_output"


@pytest.fixture(scope="module")
def prof_dir(fixtures) -> Path:
    (src,) = (fixtures / "msprof" / "prof_timeline_2023").iterdir()
    return src


@pytest.fixture(scope="module")
def reference(prof_dir):
    """The real collection in its own (timeline) layout."""
    return profinsight.load(prof_dir)


def _events(prof_dir: Path) -> list[dict]:
    tl = prof_dir / "device_0" / "timeline"
    return [e for i in range(1, 11) for e in json.loads((tl / f"msprof_0_2_{i}.json").read_text())]


def _bare(prof_dir: Path, root: Path) -> Path:
    """A copy of the collection without its timeline/ folders, with an empty output folder."""
    dst = root / prof_dir.name
    shutil.copytree(prof_dir, dst, ignore=shutil.ignore_patterns("timeline"))
    (dst / OUT).mkdir()
    return dst


def _write_slices(out: Path, stem: str, events: list[dict], n: int) -> None:
    """``events`` as ``n`` slices; the metadata only in the first (as one logical file)."""
    meta = [e for e in events if e.get("ph") == "M"]
    rest = [e for e in events if e.get("ph") != "M"]
    cut = [len(rest) * k // n for k in range(n + 1)]
    for k in range(n):
        part = (meta if k == 0 else []) + rest[cut[k] : cut[k + 1]]
        (out / f"{stem}_slice_{k}_{STAMP}.json").write_text(json.dumps(part))


def _format_pids(events: list[dict], device: int, with_host: bool) -> list[dict]:
    """The events with current CANN's pids: device processes carry ``device`` in the low 5 bits,
    host processes 31; the host ones are kept only ``with_host`` (one process drives both devices)."""
    labels = {e["pid"]: e["args"]["labels"] for e in events if e.get("name") == "process_labels"}
    sort = {e["pid"]: e["args"]["sort_index"] for e in events if e.get("name") == "process_sort_index"}
    out = []
    for e in events:
        npu = labels.get(e["pid"]) == "NPU"
        if not npu and not with_host:
            continue
        e = dict(e, pid=(10036 << 10) | (sort.get(e["pid"], 0) << 5) | (device if npu else 31))
        out.append(e)
    return out


def _op_summary_rows(events: list[dict], device: int) -> list[dict]:
    """One op_summary row per compute task of the timeline's hardware lanes (as msprof writes it)."""
    hw = {e["pid"] for e in events if e.get("name") == "process_name" and e["args"]["name"] == "Ascend Hardware"}
    rows = []
    for e in events:
        a = e.get("args") or {}
        if e.get("ph") != "X" or e["pid"] not in hw or a.get("Task Type") not in ("AI_CORE", "AI_CPU"):
            continue
        m = re.search(r"([A-Za-z0-9]+)-op\d+$", e["name"])
        rows.append(
            {
                "Device_id": device,
                "Model ID": 2,
                "Task ID": a["Task Id"],
                "Stream ID": a["Stream Id"],
                "Op Name": e["name"],
                "OP Type": m.group(1) if m else "N/A",
                "Task Type": a["Task Type"],
                "Task Start Time(us)": f"{e['ts']:.3f}\t",
                "Task Duration(us)": e["dur"],
                "Block Num": 32,
                "Input Shapes": '"1,3;4"',
            }
        )
    return rows


def _write_csv(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def _step_rows(prof_dir: Path, device: int) -> list[dict]:
    trace = json.loads((prof_dir / "device_0" / "timeline" / "step_trace_0_2_1.json").read_text())
    out = []
    for e in trace:
        if e.get("cat") == "Iteration Time":
            a = e["args"]
            out.append(
                {
                    "Device_id": device,
                    "Iteration ID": a["Iteration ID"],
                    "FP Start(us)": a["FP Start"],
                    "BP End(us)": a["BP End"],
                    "Iteration End(us)": f"{a['Iteration End']}\t",
                    "Iteration Time(us)": f"{a['Iteration Time(ns)'] / 1000:.3f}",
                    "Model ID": 2,
                }
            )
    return out


@pytest.fixture(scope="module")
def one_device(prof_dir, tmp_path_factory):
    """One device, the timeline cut into 3 slices, the step trace as JSON, a view not read."""
    prof = _bare(prof_dir, tmp_path_factory.mktemp("mpo1"))
    _write_slices(prof / OUT, "msprof", _events(prof_dir), 3)
    shutil.copy(prof_dir / "device_0" / "timeline" / "step_trace_0_2_1.json", prof / OUT / f"step_trace_{STAMP}.json")
    (prof / OUT / f"task_time_{STAMP}.csv").write_text("Device_id,kernel_name\n")
    return prof


@pytest.fixture(scope="module")
def two_devices(prof_dir, tmp_path_factory):
    return build_two_devices(prof_dir, tmp_path_factory.mktemp("mpo2"))


def build_two_devices(prof_dir: Path, root: Path) -> Path:
    """Two devices sharing one sliced timeline, op_summary in two slices, the step trace as CSV."""
    prof = _bare(prof_dir, root)
    dev1 = prof / "device_1"
    dev1.mkdir()
    for name in ("info.json", "start_info", "end_info"):
        shutil.copy(prof / "device_0" / f"{name}.0", dev1 / f"{name}.1")
    events = _events(prof_dir)
    both = _format_pids(events, 0, True) + _format_pids(events, 1, False)
    _write_slices(prof / OUT, "msprof", both, 2)
    ops = _op_summary_rows(events, 0) + _op_summary_rows(events, 1)
    half = len(ops) // 2
    _write_csv(prof / OUT / f"op_summary_slice_0_{STAMP}.csv", ops[:half])
    _write_csv(prof / OUT / f"op_summary_slice_1_{STAMP}.csv", ops[half:])
    _write_csv(prof / OUT / f"step_trace_{STAMP}.csv", _step_rows(prof_dir, 0) + _step_rows(prof_dir, 1))
    return prof


COLS = ["kind", "name", "stream", "task_id", "start_ns", "dur_ns", "step", "core", "bytes", "comm_op"]


def _same_tasks(got, ref) -> None:
    a = got.table("device_tasks")[COLS].reset_index(drop=True)
    b = ref.table("device_tasks")[COLS].reset_index(drop=True)
    assert a.equals(b)


def test_sliced_timeline_reads_as_the_one_file_it_was_cut_from(one_device, reference):
    (run,) = profinsight.discover(one_device)
    assert run.format == "msprof" and run.ranks == [0] and run.root == one_device / OUT
    p = profinsight.load(one_device)
    assert len(p.table("device_tasks")) == 4910
    _same_tasks(p, reference)
    steps = ["step", "device_start_ns", "device_end_ns"]
    assert p.table("steps")[steps].equals(reference.table("steps")[steps])
    assert p.table("comm_ops")["dur_ns"].sum() == 129_172_040
    codes = {d.code: d for d in p.diagnostics}
    assert "msprof-no-op-summary" in codes and "task_time_*" in codes["msprof-output-not-read"].message


def test_the_output_folder_itself_is_the_same_profile(one_device, reference):
    p = profinsight.load(one_device / OUT)
    _same_tasks(p, reference)


def test_two_devices_are_two_ranks_of_one_run(two_devices, reference):
    (run,) = profinsight.discover(two_devices)
    assert run.format == "msprof" and run.ranks == [0, 1]
    p = profinsight.load(two_devices)
    dt = p.table("device_tasks")
    assert dt.groupby("rank").size().to_dict() == {0: 4910, 1: 4910}
    ref = reference.table("device_tasks")
    for rank in (0, 1):
        mine = dt[dt["rank"] == rank][COLS].reset_index(drop=True)
        assert mine.equals(ref[COLS].reset_index(drop=True)), rank
        assert set(dt.loc[dt["rank"] == rank, "device"]) == {rank}
    # the host's CANN lanes belong to one rank only; each device's overlap lanes to its own
    sl = p.table("trace_slices")
    assert sl[sl.process == "CANN"].groupby("rank").size().to_dict() == {0: 14}
    assert sl[sl.process == "Overlap Analysis"].groupby("rank").size().to_dict() == {0: 2504, 1: 2504}


def test_step_trace_csv_gives_the_iterations(two_devices, reference):
    p = profinsight.load(two_devices)
    st = p.table("steps")
    ref = reference.table("steps")
    for rank in (0, 1):
        mine = st[st["rank"] == rank].reset_index(drop=True)
        assert mine["step"].tolist() == list(range(1, 11))
        assert mine["device_start_ns"].tolist() == ref["device_start_ns"].tolist()
        assert mine["device_end_ns"].tolist() == ref["device_end_ns"].tolist()


def test_op_summary_adds_the_op_types_to_the_timeline_kernels(two_devices, reference, prof_dir):
    p = profinsight.load(two_devices)
    dt = p.table("device_tasks")
    k = dt[(dt.kind == "kernel") & (dt["rank"] == 1)]
    assert len(k) == 1390 and k["type"].notna().all()
    expected = {}
    for r in _op_summary_rows(_events(prof_dir), 1):
        expected[r["OP Type"]] = expected.get(r["OP Type"], 0) + 1
    assert k["type"].value_counts().to_dict() == expected
    assert set(k["block_dim"]) == {32} and set(k["input_shapes"]) == {"1,3;4"}
    # a row goes to the kernel of its stream and task id: the names agree everywhere
    assert (k["name"].str.extract(r"([A-Za-z0-9]+)-op\d+$")[0] == k["type"]).all()
    assert not dt[dt.kind != "kernel"]["type"].isin(expected).any()
    assert len(p.op_summary(by="type")) == len(expected)
    assert "msprof-op-summary-unmatched" not in {d.code for d in p.diagnostics}


def test_a_slice_the_sniffer_refuses_costs_only_its_bad_rows(prof_dir, two_devices, tmp_path):
    """Two stray lines appended to one op_summary slice make DuckDB's sniffer refuse it, which
    took the whole op_summary (both slices) away.  The slices are then read by their headers:
    every kernel keeps its op type, and the two lines are counted on each rank that reads them."""
    prof = build_two_devices(prof_dir, tmp_path)
    with open(prof / OUT / f"op_summary_slice_1_{STAMP}.csv", "ab") as fh:
        fh.write(b"garbage,,\n1,2\n")
    p = profinsight.load(prof)
    said = [(d.code, d.rank, d.message) for d in p.diagnostics if d.code.startswith("csv-")]
    msg = f"op_summary_slice_1_{STAMP}.csv: 2 malformed row(s) were dropped, the rest loaded"
    assert sorted(said) == [("csv-bad-rows", 0, msg), ("csv-bad-rows", 1, msg)]
    cols = ["rank", "name", "start_ns", "type", "block_dim", "input_shapes"]
    got, whole = p.table("device_tasks"), profinsight.load(two_devices).table("device_tasks")
    assert got[cols].equals(whole[cols]) and got[got.kind == "kernel"]["type"].notna().sum() == 2780


def test_an_output_folder_without_a_timeline_says_what_to_export(prof_dir, tmp_path):
    prof = _bare(prof_dir, tmp_path)
    (prof / OUT / f"op_summary_{STAMP}.csv").write_text("Device_id,Op Name\n")
    with pytest.raises(UnsupportedFormat, match="holds no msprof_\\*.json timeline") as err:
        profinsight.load(prof)
    assert f"msprof --export=on --output={prof}" in err.value.fix
