"""The CANN msprof importer on the real collection ``msprof/prof_timeline_2023`` (MindSpore graph
mode, device 0, 10 iterations of model 2), and on variants of it built here: a raw-only
collection, a second device, a partial export.  (No real fixture has several devices or a raw-only
collection: those variants are copies of the real files, re-laid out.)

Expected values were counted from the files; where the vendor wrote its own views beside the data
(``task_time_*``: the hardware lanes, ``hccl_*``: the HCCL lanes, ``step_trace_*``: the
iterations) the tables are reconciled with those views, which the importer never reads."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import profinsight
from profinsight import UnsupportedFormat

#: ``start_info.0``: collectionTimeBegin (us) * 1000 - clockMonotonicRaw (ns)
OFFSET_NS = 1692340024324979000 - 56579931060630


@pytest.fixture(scope="module")
def prof_dir(fixtures) -> Path:
    (src,) = (fixtures / "msprof" / "prof_timeline_2023").iterdir()
    return src


@pytest.fixture(scope="module")
def timeline(prof_dir) -> Path:
    return prof_dir / "device_0" / "timeline"


@pytest.fixture(scope="module")
def prof(prof_dir):
    return profinsight.load(prof_dir)


def _events(path: Path) -> list[dict]:
    return [e for e in json.loads(path.read_text()) if e.get("ph") == "X"]


def _views(timeline: Path, stem: str) -> list[dict]:
    return [e for i in range(1, 11) for e in _events(timeline / f"{stem}_0_2_{i}.json")]


def test_a_collection_is_one_run_with_a_rank_per_exported_device(prof_dir):
    (run,) = profinsight.discover(prof_dir)
    assert run.format == "msprof" and run.ranks == [0] and run.root == prof_dir / "device_0"


def test_device_tasks_per_kind_each_event_once(prof):
    dt = prof.table("device_tasks")
    assert dt.groupby("kind").size().to_dict() == {
        "comm_task": 3370,
        "communication": 10,
        "kernel": 1390,
        "other": 20,
        "sync": 120,
    }
    assert dt["task_uid"].tolist() == list(range(4910)) and dt["start_ns"].is_monotonic_increasing
    # every iteration holds the same graph: 491 tasks each, none outside an iteration
    assert dt.groupby("step").size().to_dict() == dict.fromkeys(range(1, 11), 491)
    assert dt.groupby("core").size().to_dict() == {"AI_CORE": 1370, "AI_CPU": 20, "HCCL": 3380}
    assert dt.loc[dt.kind == "kernel", "type"].isna().all()  # the op type is not recorded
    assert (dt.loc[dt.kind == "sync", "name"].value_counts() == 40).all()
    assert set(dt.loc[dt.kind == "other", "name"]) == {"REDUCE_ASYNC_V2"}


def test_no_double_counting_against_the_vendor_views(prof, timeline):
    """task_time_* lists the hardware tasks and hccl_* the HCCL lanes of each iteration again: the
    device tasks are exactly the hardware tasks plus the collectives, the small HCCL tasks once."""
    dt = prof.table("device_tasks")
    hw = _views(timeline, "task_time")
    hccl = _views(timeline, "hccl")
    ops = [e for e in hccl if e["tid"] == 70000]
    planes = [e for e in hccl if e["tid"] != 70000]
    assert (len(hw), len(ops), len(planes)) == (4900, 10, 3370)
    assert len(dt) == len(hw) + len(ops)
    assert sorted(dt.loc[dt.kind != "communication", "dur_ns"]) == sorted(round(e["dur"] * 1000) for e in hw)
    ct = dt[dt.kind == "comm_task"]
    assert ct["bytes"].sum() == sum(e["args"]["size(Byte)"] for e in planes) == 4_213_843_200
    assert ct["link_type"].value_counts().to_dict() == {"HCCS": 420, "PCIE": 140, "ON_CHIP": 10}
    assert ct["comm_op"].eq("Default/AllReduce-op534_0").all()
    assert ct["dst_rank"].isna().sum() == 130 and ct["src_rank"].eq(0).all()


def test_timestamps_are_converted_with_the_clock_pair(prof):
    dt = prof.table("device_tasks")
    first = dt.iloc[0]
    # Cast-op239 at ts 56635864664.91 us on the monotonic clock
    assert first["name"].endswith("/Cast-op239") and first["stream"] == 2 and first["task_id"] == 4
    assert first["start_ns"] == 56635864664910 + OFFSET_NS == 1692340080258583280
    assert first["dur_ns"] == 23100 and first["core"] == "AI_CORE"
    assert first["pmu_aic_total_cycles"] == 672029


def test_one_step_per_iteration_as_the_step_trace_says(prof, timeline):
    steps = prof.table("steps")
    vendor = [e for e in _events(timeline / "step_trace_0_2_7.json") if e["cat"] == "Iteration Time"]
    assert steps["step"].tolist() == [e["args"]["Iteration ID"] for e in vendor] == list(range(1, 11))
    got = (steps["device_end_ns"] - steps["device_start_ns"]).tolist()
    assert got == [int(e["args"]["Iteration Time(ns)"]) for e in vendor]
    assert got[:2] == [47587810, 15369160]
    assert steps["device_start_ns"].iloc[0] == 56635864652490 + OFFSET_NS
    assert steps["host_start_ns"].isna().all()  # no host range is claimed


def test_comm_ops_are_the_collectives_of_the_hccl_lane(prof, timeline):
    co = prof.table("comm_ops")
    ops = [e for e in _views(timeline, "hccl") if e["tid"] == 70000]
    assert len(co) == 10 and co["step"].tolist() == list(range(1, 11))
    assert set(co["type"]) == {"AllReduce"} and set(co["category"]) == {"collective"}
    assert co["dur_ns"].sum() == sum(round(e["dur"] * 1000) for e in ops) == 129_172_040


def test_run_info_and_what_the_collection_lacks(prof):
    info = prof.table("run_info").iloc[0]
    assert (info["device_family"], info["export_kind"], info["source_format"]) == ("npu", "trace", "msprof")
    assert json.loads(info["versions"]) == {"msprof_info": "1.0", "platform_version": "1"}
    assert info["host"] == "A2007104679" and info["device"] == 0 and info["rank"] == 0
    assert info["collect_start_ns"] == 1692340024324979000 and info["collect_end_ns"] == 1692340082430569000
    assert not info["has_host_ops"] and not info["has_memory"] and info["has_pmu"]
    assert json.loads(info["extra"])["clock_drift_ns"] == 1170
    assert prof.table("host_ops").empty
    codes = {d.code for d in prof.diagnostics}
    assert "msprof-no-host-ops" in codes and not {d.severity for d in prof.diagnostics} & {"warning", "error"}
    slices = prof.table("trace_slices")
    assert slices.groupby("process").size().to_dict() == {"Ascend Hardware": 40, "CANN": 14, "Overlap Analysis": 2504}


def test_the_analyses_run_on_it(prof):
    sb = prof.step_breakdown()
    assert len(sb) == 10 and sb["comm_us"].iloc[0] == pytest.approx(41534.3)
    assert len(prof.op_summary()) == 139
    assert len(prof.idle_gaps()) > 0
    assert len(prof.advise()) > 0


def test_a_collection_never_exported_names_the_export_call(prof_dir, tmp_path):
    raw = tmp_path / prof_dir.name
    shutil.copytree(prof_dir, raw, ignore=shutil.ignore_patterns("timeline"))
    with pytest.raises(UnsupportedFormat, match="never exported") as err:
        profinsight.load(raw)
    assert err.value.fix.startswith(f"run msprof --export=on --output={raw} ")
    with pytest.raises(UnsupportedFormat):  # the device folder alone says the same
        profinsight.load(raw / "device_0")


def test_found_without_its_prof_name(prof_dir, tmp_path):
    shutil.copytree(prof_dir, tmp_path / "collection")
    (run,) = profinsight.discover(tmp_path / "collection")
    assert run.format == "msprof" and run.ranks == [0]


def _second_device(prof_dir: Path, root: Path, exported: bool) -> Path:
    """A copy of the collection with device_1 made from device_0 (its files renamed, rank 1)."""
    dst = root / prof_dir.name
    shutil.copytree(prof_dir, dst)
    dev = dst / "device_1"
    shutil.copytree(dst / "device_0", dev, ignore=None if exported else shutil.ignore_patterns("timeline"))
    for f in list(dev.iterdir()):
        if f.name.endswith(".0") or ".0." in f.name:
            f.rename(dev / f.name.replace(".0", ".1", 1))
    info = json.loads((dev / "info.json.1").read_text())
    info.update(rank_id=1, devices="1")
    info["DeviceInfo"][0]["id"] = 1
    (dev / "info.json.1").write_text(json.dumps(info))
    return dst


def test_several_devices_are_ranks_of_one_run(prof_dir, tmp_path):
    dst = _second_device(prof_dir, tmp_path, exported=True)
    (run,) = profinsight.discover(dst)
    assert run.ranks == [0, 1] and run.root == dst
    p = profinsight.load(run)
    dt = p.table("device_tasks")
    assert dt.groupby("rank").size().to_dict() == {0: 4910, 1: 4910}
    assert p.table("run_info")["device"].tolist() == [0, 1]
    assert p.table("steps").groupby("rank").size().to_dict() == {0: 10, 1: 10}


def test_a_partial_export_loads_what_is_there_and_says_what_is_not(prof_dir, tmp_path):
    dst = _second_device(prof_dir, tmp_path, exported=False)
    p = profinsight.load(dst)
    assert p.table("run_info")["rank"].tolist() == [0]
    (d,) = [d for d in p.diagnostics if d.code == "msprof-not-exported"]
    assert "device_1" in d.message and d.fix.startswith(f"run msprof --export=on --output={dst}")


def test_a_timeline_without_start_info_keeps_the_monotonic_clock_and_says_so(prof_dir, tmp_path):
    dst = tmp_path / prof_dir.name
    shutil.copytree(prof_dir, dst, ignore=shutil.ignore_patterns("start_info.0*", "end_info.0*"))
    p = profinsight.load(dst)
    assert "msprof-clock-unconverted" in {d.code for d in p.diagnostics}
    assert p.table("device_tasks")["start_ns"].iloc[0] == 56635864664910


def test_the_folder_above_an_exported_collection_is_that_collection(fixtures):
    """A folder whose only child is an exported PROF_* collection is that collection, not a
    torch_npu rank whose raw data was never parsed."""
    runs = profinsight.discover(fixtures / "msprof" / "prof_timeline_2023")
    assert [r.format for r in runs] == ["msprof"]
    p = profinsight.load(fixtures / "msprof" / "prof_timeline_2023")
    assert p.row_counts()["device_tasks"] == 4910 and len(p.steps) == 10


def _damaged_copy(prof_dir: Path, tmp_path: Path, change) -> Path:
    dst = tmp_path / prof_dir.name
    shutil.copytree(prof_dir, dst)
    path = dst / "device_0" / "timeline" / "msprof_0_2_3.json"
    events = json.loads(path.read_text())
    change(events)
    path.write_text(json.dumps(events))
    return dst


def _hardware(events: list[dict]) -> list[dict]:
    return [e for e in events if e.get("ph") == "X" and "Task Type" in (e.get("args") or {})]


@pytest.mark.parametrize(
    ("value", "shown"),
    [(float("inf"), "ts = Infinity"), (-1e30, "ts = -1e+30"), ("abc", "ts = 'abc'"), (1e308, "ts = 1e+308")],
)
def test_a_damaged_task_time_costs_that_task_only(prof, prof_dir, tmp_path, value, shown):
    """One task's ``ts`` beyond int64 ns or not a number (once a DuckDB cast error that lost the
    whole rank): that task is dropped and counted, every other one kept."""

    def change(events):
        _hardware(events)[5]["ts"] = value

    p = profinsight.load(_damaged_copy(prof_dir, tmp_path, change))
    assert len(p.table("device_tasks")) == len(prof.table("device_tasks")) - 1
    (d,) = [d for d in p.diagnostics if d.code == "events-dropped"]
    assert d.message == f"1 event(s) of msprof_0_2_3.json had no usable timestamp ({shown}): dropped."
    assert d.file.endswith("msprof_0_2_3.json") and d.severity == "warning"


def test_negative_durations_and_copies_of_tasks_are_said(prof, prof_dir, tmp_path):
    def change(events):
        hw = _hardware(events)
        hw[1]["dur"] = -5.0
        events.extend(dict(e) for e in hw[10:13])

    p = profinsight.load(_damaged_copy(prof_dir, tmp_path, change))
    assert len(p.table("device_tasks")) == len(prof.table("device_tasks")) - 1
    said = {d.code: d.message for d in p.diagnostics if d.code.startswith("events-")}
    assert said == {
        "events-dropped": "1 event(s) of msprof_0_2_3.json had a negative or unusable duration (dur = -5.0): dropped.",
        "events-duplicated": "3 event(s) of msprof_0_2_3.json were exact copies of an earlier event (same phase, "
        "process, thread, time, duration, name and args): each is counted once.",
    }
    assert (p.table("device_tasks")["dur_ns"] >= 0).all()


def test_broken_json_in_the_middle_of_a_timeline_costs_that_task_only(prof, prof_dir, tmp_path):
    """A hardware task's text broken in the middle of ``msprof_0_2_3.json`` (the file is not
    valid JSON any more): that task is skipped and said, every event after it still read."""
    dst = tmp_path / prof_dir.name
    shutil.copytree(prof_dir, dst)
    path = dst / "device_0" / "timeline" / "msprof_0_2_3.json"
    events = json.loads(path.read_text())
    victim = _hardware(events)[5]
    text = json.dumps(events)
    at = text.index(json.dumps(victim))
    path.write_text(text[:at] + json.dumps(victim).replace('"ts"', "ts", 1) + text[at + len(json.dumps(victim)) :])
    p = profinsight.load(dst)
    assert len(p.table("device_tasks")) == len(prof.table("device_tasks")) - 1
    (d,) = [d for d in p.diagnostics if d.code == "malformed-events"]
    assert d.message.startswith("msprof_0_2_3.json is damaged in one place: ")
    assert "(roughly 1 event(s)) are not valid JSON and were skipped" in d.message
    assert d.rank == 0 and d.file.endswith("msprof_0_2_3.json")
    assert not [d for d in p.diagnostics if d.code in ("trace-truncated", "trace-invalid")]
