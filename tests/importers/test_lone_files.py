"""Files given alone that are not a profile by themselves: msprof's ``op_summary_*.csv`` (read
as the kernels it lists), and a folder or file of things profinsight does not read (named in the
message: what each looks like, and the layouts that would work).

No real fixture holds an ``op_summary_*.csv``: it is written here from the real text_level1 rank-0
``kernel_details.csv``, which torch_npu makes from msprof's op summary by renaming its headers and
adding ``Step Id`` (reference 4.3) -- the reverse renaming gives back the msprof file."""

from __future__ import annotations

import csv
import gzip
import json
import sqlite3

import pytest

import profinsight
from profinsight import NotAProfile

RANK = ("ascend_pt", "text_level1", "rank0_ascend_pt")
#: kernel_details.csv header -> the op_summary header it was renamed from
BACK = {
    "Name": "Op Name",
    "Type": "OP Type",
    "Accelerator Core": "Task Type",
    "Start Time(us)": "Task Start Time(us)",
    "Duration(us)": "Task Duration(us)",
    "Wait Time(us)": "Task Wait Time(us)",
}


def _op_summary(fixtures, path):
    src = fixtures.joinpath(*RANK) / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    rows = list(csv.DictReader(open(src, encoding="utf-8")))
    out = [{"Device_id": 0, **{BACK.get(k, k): v for k, v in r.items() if k != "Step Id"}} for r in rows]
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(out[0]))
        w.writeheader()
        w.writerows(out)
    return rows


def test_a_lone_op_summary_gives_the_kernels_it_lists(fixtures, tmp_path):
    rows = _op_summary(fixtures, tmp_path / "op_summary_20240101120000.csv")
    (run,) = profinsight.discover(tmp_path)
    assert run.format == "ascend_file" and run.root.name == "op_summary_20240101120000.csv"
    p = profinsight.load(tmp_path)
    dt = p.table("device_tasks")
    assert dt.groupby("kind").size().to_dict() == {"communication": 4, "kernel": 187}
    assert dt["dur_ns"].sum() == sum(round(float(r["Duration(us)"]) * 1000) for r in rows)
    full = profinsight.load(fixtures.joinpath(*RANK)).table("device_tasks")
    full = full[full.kind.isin(["kernel", "communication"])]
    cols = ["name", "type", "start_ns", "dur_ns", "block_dim", "input_shapes"]
    assert (
        dt[cols]
        .sort_values(["start_ns", "name"])
        .reset_index(drop=True)
        .equals(full[cols].sort_values(["start_ns", "name"]).reset_index(drop=True))
    )
    (lone,) = [d for d in p.diagnostics if d.code == "lone-file"]
    assert "msprof" in lone.message and "step_trace_*" in lone.message
    assert "PROF_" in lone.fix and "mindstudio_profiler_output" in lone.fix
    assert len(p.op_summary(by="type")) > 0


DB_RANK = ("ascend_pt", "db_level1", "rank0_ascend_pt")


def test_a_lone_torch_npu_db_loads_every_table_it_holds(fixtures, tmp_path):
    """The DB export of one rank, copied out of its rank folder (and renamed, as copies are):
    the same tables as the rank folder gives, except what analysis.db adds, and a warning that
    names what is missing.  Inside its rank folder the file is refused with the folder named."""
    src = fixtures.joinpath(*DB_RANK) / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    lone = tmp_path / "rank0_copy.db"
    lone.write_bytes(src.read_bytes())
    (run,) = profinsight.discover(lone)
    assert run.format == "ascend_file"
    p = profinsight.load(lone)
    full = profinsight.load(fixtures.joinpath(*DB_RANK))
    for t in ("device_tasks", "host_ops", "launches", "api_calls", "memory_samples", "memory_blocks", "module_memory"):
        assert len(p.table(t)) == len(full.table(t)) > 0, t
    assert p.table("device_tasks")["dur_ns"].sum() == full.table("device_tasks")["dur_ns"].sum()
    assert p.table("steps")["step"].tolist() == full.table("steps")["step"].tolist() == [50]
    # analysis.db gives the transit / wait split: absent alone, said so
    assert full.table("comm_ops")["transit_ns"].notna().any() and p.table("comm_ops")["transit_ns"].isna().all()
    (said,) = [d for d in p.diagnostics if d.code == "lone-file"]
    assert "analysis.db" in said.message and "profiler_info_<rank>.json" in said.message and said.file == str(lone)
    assert sorted(x.name for x in tmp_path.iterdir()) == ["rank0_copy.db"]  # nothing written beside it
    with pytest.raises(NotAProfile, match="is part of the torch_npu export") as err:
        profinsight.load(src)
    assert f"load the rank folder {src.parent.parent}" in err.value.fix


def test_an_unrecognised_folder_names_what_it_holds(tmp_path):
    (tmp_path / "snapshot.pickle").write_bytes(b"\x80\x04\x95" + b"\x00" * 40)
    (tmp_path / "et.json").write_text(json.dumps({"schema": "1.0.3-chakra.0.0.4", "pid": 1, "nodes": []}))
    (tmp_path / "task_time_20240101.csv").write_text("Device_id,kernel_name,kernel_type\n")
    (tmp_path / "notes.txt").write_text("hello")
    db = sqlite3.connect(tmp_path / "other.db")
    db.execute("CREATE TABLE things (a)")
    db.commit()
    db.close()
    with pytest.raises(NotAProfile, match="no profile found") as err:
        profinsight.discover(tmp_path)
    msg = str(err.value)
    assert "snapshot.pickle: a PyTorch CUDA memory snapshot" in msg
    assert "et.json: a PyTorch execution trace" in msg
    assert "task_time_20240101.csv: an msprof task_time view" in msg
    assert "other.db: a SQLite database with tables THINGS" in msg
    assert "notes.txt" in msg
    assert "traceEvents" in err.value.fix and "PROF_" in err.value.fix


def test_an_unrecognised_file_says_what_it_looks_like(tmp_path):
    snap = tmp_path / "memory.pickle"
    snap.write_bytes(b"\x80\x04\x95" + b"\x00" * 40)
    with pytest.raises(NotAProfile, match="looks like a PyTorch CUDA memory snapshot") as err:
        profinsight.load(snap)
    assert "profile_memory=True" in err.value.fix
    nsys = tmp_path / "run.nsys-rep"
    nsys.write_bytes(b"\x00" * 8)
    with pytest.raises(NotAProfile, match="Nsight Systems"):
        profinsight.load(nsys)
    gz = tmp_path / "stuff.json.gz"
    gz.write_bytes(gzip.compress(b'{"hello": 1}'))
    with pytest.raises(NotAProfile, match="a JSON object with keys hello"):
        profinsight.load(gz)
