"""Several devices in one msprof timeline: which device each process belongs to.

No real fixture has several devices: every collection here is built in the test from the real
``msprof/prof_timeline_2023`` events, re-laid out.  The real file uses the older pids, which
encode no device (``Ascend Hardware`` pid 3, HCCL 1003611 = os pid x 100 + sort index); newer CANN
names the device in the label (``NPU 1``) or in the pid's low bits (tested in
test_msprof_output.py).  Expected values are the real collection's own (4,910 device tasks)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import test_msprof_output as built

import profinsight

OUT = built.OUT
STAMP = built.STAMP
COLS = built.COLS


@pytest.fixture(scope="module")
def prof_dir(fixtures) -> Path:
    (src,) = (fixtures / "msprof" / "prof_timeline_2023").iterdir()
    return src


@pytest.fixture(scope="module")
def reference(prof_dir):
    return profinsight.load(prof_dir)


def _older(events: list[dict], device: int, labelled: bool, with_host: bool) -> list[dict]:
    """The events of one device with older, unencoded pids made distinct per device (as two
    devices' processes in one file must be); the device in the label where ``labelled``."""
    labels = {e["pid"]: e["args"]["labels"] for e in events if e.get("name") == "process_labels"}
    out = []
    for e in events:
        npu = labels.get(e["pid"]) == "NPU"
        if not npu and not with_host:
            continue
        e = dict(e)
        if npu:
            e["pid"] = e["pid"] + 7_000_000 * device
            if "ts" in e and device:  # a second device's tasks start 0.25 us later: no two events coincide
                e["ts"] = e["ts"] + 0.25
            if labelled and e.get("name") == "process_labels":
                e["args"] = {"labels": f"NPU {device}"}
        out.append(e)
    return out


def _two_devices(prof_dir: Path, root: Path, labelled: bool) -> Path:
    prof = built._bare(prof_dir, root)
    dev1 = prof / "device_1"
    dev1.mkdir()
    for name in ("info.json", "start_info", "end_info"):
        shutil.copy(prof / "device_0" / f"{name}.0", dev1 / f"{name}.1")
    events = built._events(prof_dir)
    both = _older(events, 0, labelled, True) + _older(events, 1, labelled, False)
    built._write_slices(prof / OUT, "msprof", both, 1)
    shutil.copy(prof_dir / "device_0" / "timeline" / "step_trace_0_2_1.json", prof / OUT / f"step_trace_{STAMP}.json")
    return prof


def _per_rank(p, ref) -> None:
    dt = p.table("device_tasks")
    assert dt.groupby("rank").size().to_dict() == {0: 4910, 1: 4910}
    for rank in (0, 1):
        mine = dt[dt["rank"] == rank][COLS].reset_index(drop=True)
        mine["start_ns"] -= 250 * rank  # the second device's copy starts 0.25 us later
        assert mine.equals(ref.table("device_tasks")[COLS].reset_index(drop=True)), rank


def test_older_pids_with_the_device_in_the_label_split_per_device(prof_dir, reference, tmp_path):
    p = profinsight.load(_two_devices(prof_dir, tmp_path, labelled=True))
    _per_rank(p, reference)
    sl = p.table("trace_slices")
    assert sl[sl.process == "CANN"].groupby("rank").size().to_dict() == {0: 14}
    assert "msprof-device-unknown" not in {d.code for d in p.diagnostics}


def test_older_pids_that_name_no_device_are_kept_whole_once_and_said(prof_dir, reference, tmp_path):
    """Nothing tells the devices apart: the lowest device's rank keeps every event (none lost,
    none counted twice) and each rank says why."""
    p = profinsight.load(_two_devices(prof_dir, tmp_path, labelled=False))
    dt = p.table("device_tasks")
    assert dt.groupby("rank").size().to_dict() == {0: 2 * 4910}
    said = [d for d in p.diagnostics if d.code == "msprof-device-unknown"]
    assert {d.rank for d in said} == {0, 1} and all(d.severity == "warning" for d in said)
    assert "cannot be told apart" in said[0].message and said[0].file.endswith(OUT)


@pytest.mark.slow
def test_a_device_folder_timeline_holding_two_devices_is_split(prof_dir, reference, tmp_path):
    """The older layout (device_<n>/timeline/) where each device's files hold both devices'
    events (devices named in the labels): each rank keeps its own device's processes."""
    dst = tmp_path / prof_dir.name
    shutil.copytree(prof_dir, dst)
    dev1 = dst / "device_1"
    shutil.copytree(dst / "device_0", dev1)
    for f in list(dev1.iterdir()):
        if f.name.endswith(".0") or f.name.endswith(".0.done"):
            f.rename(dev1 / f.name.replace(".0", ".1"))
    for dev in (0, 1):
        tl = dst / f"device_{dev}" / "timeline"
        for i in range(1, 11):
            src = json.loads((prof_dir / "device_0" / "timeline" / f"msprof_0_2_{i}.json").read_text())
            both = _older(src, dev, True, True) + _older(src, 1 - dev, True, False)
            (tl / f"msprof_0_2_{i}.json").write_text(json.dumps(both))
    p = profinsight.load(dst)
    _per_rank(p, reference)


def test_one_device_of_the_older_layout_is_never_filtered(reference):
    """The real collection: unencoded pids, one device -- every process is the device's own."""
    assert len(reference.table("device_tasks")) == 4910
    assert "msprof-device-unknown" not in {d.code for d in reference.diagnostics}
