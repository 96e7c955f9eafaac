"""Kineto importer against the real HTA traces in ../shared/fixtures/kineto.

Expected counts are written twice on purpose: once as the numbers stated in the fixtures
README (the contract), once counted here straight from the JSON with gzip + json (so a wrong
README or a wrong importer both show up).
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path

import pyarrow.compute as pc
import pytest

from profinsight.importers import kineto, load_rank
from profinsight.importers._common import us_text_to_ns
from profinsight.schema import TABLES

# From ../shared/fixtures/README.md, "Facts per fixture".  None = not stated there.
README = {
    "gpu_2rank_rank0": dict(kernel=1154, memcpy=40, memset=10, cpu_op=2329, cuda_runtime=1204, steps=2, rank=0),
    "gpu_2rank_rank1": dict(kernel=1104, memcpy=40, memset=10, cpu_op=2302, cuda_runtime=1154, steps=2, rank=1),
    "compare_base": dict(kernel=6, memcpy=6, memset=6, cpu_op=None, cuda_runtime=None, steps=2, rank=1),
    "compare_test": dict(kernel=5, memcpy=6, memset=6, cpu_op=None, cuda_runtime=None, steps=2, rank=1),
    "gpu_alexnet": dict(kernel=79, memcpy=16, memset=3, cpu_op=None, cuda_runtime=None, steps=0, rank=0),
    "gpu_cupti_counters": dict(kernel=0, memcpy=0, memset=0, cpu_op=None, cuda_runtime=1862, steps=0, rank=0),
    "amd_mi250": dict(kernel=14, memcpy=2, memset=0, cpu_op=None, cuda_runtime=None, steps=2, rank=None),
    "cpu_only": dict(kernel=0, memcpy=0, memset=0, cpu_op=4, cuda_runtime=0, steps=1, rank=34),
}
_STEP = re.compile(r"^ProfilerStep#\d+$")


def _path(fixtures: Path, name: str) -> Path:
    return fixtures / "kineto" / f"{name}.json.gz"


def _raw(fixtures: Path, name: str) -> dict:
    return json.loads(gzip.open(_path(fixtures, name)).read())


def _count_raw(doc: dict) -> dict:
    """The README facts, counted from the JSON."""
    ev = doc["traceEvents"]
    cats = Counter(e.get("cat") for e in ev if e.get("ph") == "X")
    steps = {
        e["name"]
        for e in ev
        if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation") and _STEP.match(e.get("name", ""))
    }
    rank = (doc.get("distributedInfo") or {}).get("rank")
    return dict(
        kernel=cats["kernel"],
        memcpy=cats["gpu_memcpy"],
        memset=cats["gpu_memset"],
        cpu_op=cats["cpu_op"],
        cuda_runtime=cats["cuda_runtime"],
        steps=len(steps),
        rank=rank,
    )


_LOADED: dict = {}


@pytest.fixture
def load(fixtures):
    """Load a fixture once per session (the importer is deterministic)."""

    def get(name):
        if name not in _LOADED:
            _LOADED[name] = load_rank(kineto.sniff(_path(fixtures, name)))
        return _LOADED[name]

    return get


def _count_loaded(rd) -> dict:
    kinds = Counter(rd.tables["device_tasks"]["kind"].to_pylist())
    cats = Counter(rd.tables["host_ops"]["category"].to_pylist())
    levels = Counter(rd.tables["api_calls"]["level"].to_pylist())
    return dict(
        kernel=kinds["kernel"] + kinds["communication"],
        memcpy=kinds["memcpy"],
        memset=kinds["memset"],
        cpu_op=cats["op"],
        cuda_runtime=levels["cuda_runtime"],
        steps=rd.tables["steps"].num_rows,
        rank=rd.rank,
    )


@pytest.mark.parametrize("name", sorted(README))
def test_counts_match_readme_and_raw_json(fixtures, load, name):
    got = _count_loaded(load(name))
    raw = _count_raw(_raw(fixtures, name))
    assert got == raw
    stated = {k: v for k, v in README[name].items() if v is not None or k == "rank"}
    assert {k: got[k] for k in stated} == stated


@pytest.mark.parametrize("name", sorted(README))
def test_sniff_and_schema(fixtures, load, name):
    src = kineto.sniff(_path(fixtures, name))
    assert src.format == "kineto" and src.files == (_path(fixtures, name),)
    rd = load(name)
    for table, decl in TABLES.items():
        assert rd.tables[table].column_names[: len(decl.names)] == decl.names
    assert not [d for d in rd.diagnostics if d.severity == "error"]
    info = rd.tables["run_info"].to_pylist()[0]
    assert info["source_format"] == "kineto"
    uid = rd.tables["device_tasks"]["task_uid"]
    assert pc.count_distinct(uid).as_py() == len(uid)
    op_id = rd.tables["host_ops"]["op_id"]
    assert pc.count_distinct(op_id).as_py() == len(op_id)


def test_sniff_rejects_other_json(fixtures, tmp_path):
    bare = tmp_path / "trace_view.json"
    bare.write_text(json.dumps([{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1}]))
    assert kineto.sniff(bare) is None
    assert all(kineto.sniff(p) is None for p in (fixtures / "ascend_pt").rglob("*.json"))
    # rank hint only where distributedInfo comes before the events
    assert kineto.sniff(_path(fixtures, "cpu_only")).rank_hint == 34
    assert kineto.sniff(_path(fixtures, "gpu_cupti_counters")).rank_hint is None


@pytest.mark.parametrize("name,why", [("cpu_only", "CPU-only"), ("gpu_cupti_counters", "cuda_profiler_range")])
def test_no_device_activity_is_a_warning(load, name, why):
    rd = load(name)
    codes = {d.code: d for d in rd.diagnostics}
    assert codes["no-device-activity"].severity == "warning"
    assert why in codes["no-device-activity"].message
    assert "ProfilerActivity.CUDA" in codes["no-device-activity"].fix
    assert rd.tables["host_ops"].num_rows > 0


def test_other_diagnostics(load):
    assert {d.code for d in load("amd_mi250").diagnostics} == {"no-rank-id"}
    assert {"no-steps", "no-shapes"} <= {d.code for d in load("gpu_alexnet").diagnostics}
    assert not load("gpu_2rank_rank0").diagnostics


def test_every_kernel_with_a_correlation_has_its_runtime_call(load):
    rd = load("gpu_2rank_rank0")
    dt = rd.tables["device_tasks"].to_pandas()
    api = rd.tables["api_calls"].to_pandas().set_index("call_id")
    lk = rd.tables["launches"].to_pandas()
    corr = lk[lk.link == "correlation"].set_index("task_uid")
    kernels = dt[dt.kind.isin(["kernel", "communication"]) & dt.connection_id.notna()]
    assert len(kernels) == 1154
    assert kernels.task_uid.isin(corr.index).all()
    calls = api.loc[corr.loc[kernels.task_uid, "api_call_id"].astype(int)]
    assert (calls.connection_id.to_numpy() == kernels.connection_id.to_numpy()).all()
    assert set(calls.name) == {"cudaLaunchKernel"}
    # and each launched task's host op is the innermost op open at the launch
    assert (lk.link != "correlation").sum() == len(dt)


@pytest.mark.parametrize("name", ["gpu_alexnet", "gpu_2rank_rank0", "amd_mi250", "compare_base"])
def test_host_link_is_innermost_op_around_the_launch(load, name):
    rd = load(name)
    ho = rd.tables["host_ops"].to_pandas()
    ho = ho[ho.category.isin(["op", "annotation"]) & (ho.dur_ns > 0)]
    pid, thread, op_id = (ho[c].to_numpy() for c in ("pid", "thread", "op_id"))
    start, end = ho.start_ns.to_numpy(), (ho.start_ns + ho.dur_ns).to_numpy()
    lk = rd.tables["launches"].to_pandas()
    api = rd.tables["api_calls"].to_pandas().set_index("call_id")
    corr = lk[lk.link == "correlation"].groupby("task_uid").api_call_id.first()
    host = lk[lk.link != "correlation"].set_index("task_uid")
    assert host.index.is_unique
    for task, call_id in corr.items():
        call = api.loc[int(call_id)]
        around = (
            (pid == call.pid) & (thread == call.thread) & (start <= call.start_ns) & (call.start_ns < end)
        ).nonzero()[0]
        got = int(host.loc[task, "host_op_id"]) if task in host.index else None
        if got is not None and host.loc[task, "link"] == "external_id":
            assert got in set(op_id[around])
            continue
        # innermost: latest start, then shortest; identical intervals: the later one in the file
        want = max(around, key=lambda i: (start[i], -end[i], op_id[i]), default=None)
        assert got == (None if want is None else op_id[want])
    if name == "gpu_alexnet":  # External id there is the correlation: no false id matches
        assert set(host.link) == {"enclosing"}
    if name == "amd_mi250":
        assert set(host.link) == {"external_id"}


def test_tasks_without_an_external_id_are_linked_by_the_enclosing_op(fixtures, load, tmp_path):
    """A trace where most tasks carry a matching External id and two do not: those two are
    linked to the innermost op around their launching call, the others keep their id match
    (only the calls of unmatched tasks are looked up by enclosing op)."""
    doc = _raw(fixtures, "amd_mi250")
    device = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy")]
    stripped = {device[1]["args"]["correlation"], device[3]["args"]["correlation"]}
    for e in (device[1], device[3]):
        del e["args"]["External id"]
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(doc))
    rd = load_rank(kineto.sniff(path))
    before, after = (
        r.tables["launches"].to_pandas().query("link != 'correlation'").set_index("task_uid")
        for r in (load("amd_mi250"), rd)
    )
    dt = rd.tables["device_tasks"].to_pandas().set_index("task_uid")
    moved = dt.index[dt.connection_id.isin(stripped)]
    assert len(moved) == 2
    assert set(after.loc[moved, "link"]) == {"enclosing"}
    kept = after.index.difference(moved)
    assert len(kept) == 14 and set(after.loc[kept, "link"]) == {"external_id"}
    assert after.loc[kept, "host_op_id"].equals(before.loc[kept, "host_op_id"])
    ho = rd.tables["host_ops"].to_pandas()
    ho = ho[ho.category.isin(["op", "annotation"]) & (ho.dur_ns > 0)]
    api = rd.tables["api_calls"].to_pandas().set_index("connection_id")
    for task in moved:
        call = api.loc[dt.loc[task, "connection_id"]]
        around = ho[
            (ho.pid == call.pid)
            & (ho.thread == call.thread)
            & (ho.start_ns <= call.start_ns)
            & (call.start_ns < ho.start_ns + ho.dur_ns)
        ]
        inner = around.sort_values(["start_ns", "dur_ns", "op_id"], ascending=[False, True, False]).iloc[0]
        assert after.loc[task, "host_op_id"] == inner.op_id


def test_steps_have_device_ranges(load):
    rd = load("gpu_2rank_rank0")
    steps = rd.tables["steps"].to_pylist()
    assert [s["step"] for s in steps] == [551, 552]
    for s in steps:
        assert s["device_start_ns"] is not None and s["device_end_ns"] >= s["host_end_ns"]
        assert s["host_start_ns"] <= s["device_start_ns"] <= s["device_end_ns"]
    dt = rd.tables["device_tasks"]
    assert Counter(dt["step"].to_pylist()) == {551: 602, 552: 602}
    assert set(rd.tables["comm_ops"]["type"].to_pylist()) == {"alltoall", "allreduce", "allgather"}


def test_exact_nanoseconds_from_the_json_text(fixtures, load):
    # integer epoch microseconds
    text = gzip.open(_path(fixtures, "gpu_2rank_rank0")).read().decode()
    ts = re.search(r'"cat": "kernel", "name": "[^"]*", "pid": \d+, "tid": \d+, "ts": ([0-9.]+)', text)
    starts = set(load("gpu_2rank_rank0").tables["device_tasks"]["start_ns"].to_pylist())
    assert us_text_to_ns(ts.group(1)) in starts
    # float microseconds relative to baseTimeNanoseconds (written after the events)
    text = gzip.open(_path(fixtures, "amd_mi250")).read().decode()
    base = int(re.search(r'"baseTimeNanoseconds": (\d+)', text).group(1))
    ts = re.search(r'"cat": "gpu_memcpy".*?"ts": ([0-9.]+)', text, re.S).group(1)
    want = us_text_to_ns(ts) + base
    dt = load("amd_mi250").tables["device_tasks"]
    memcpy = dt.filter(pc.equal(dt["kind"], "memcpy"))["start_ns"].to_pylist()
    assert memcpy[0] == want == 1739836029603454206


def _assert_truncation_warning(rd, full_tasks):
    codes = {d.code: d for d in rd.diagnostics}
    assert "trace-truncated" in codes and codes["trace-truncated"].severity == "warning"
    assert not [d for d in rd.diagnostics if d.severity == "error"]
    msg = codes["trace-truncated"].message
    assert re.search(r"Read \d+ events", msg) and "%" in msg and "bytes" in msg
    assert 0 < rd.tables["device_tasks"].num_rows < full_tasks
    assert rd.tables["host_ops"].num_rows > 0


def test_truncated_trace_loads_the_readable_part(fixtures, load, tmp_path):
    raw = gzip.open(_path(fixtures, "gpu_alexnet")).read()
    half = raw[: len(raw) // 2]
    plain = tmp_path / "cut.json"
    plain.write_bytes(half)
    packed = tmp_path / "cut.json.gz"
    packed.write_bytes(gzip.compress(half))
    full = load("gpu_alexnet").tables["device_tasks"].num_rows
    a, b = (load_rank(kineto.sniff(p)) for p in (plain, packed))
    _assert_truncation_warning(a, full)
    _assert_truncation_warning(b, full)
    assert a.tables["device_tasks"].equals(b.tables["device_tasks"])
    # a gzip stream that is itself cut short
    stream = tmp_path / "stream.json.gz"
    data = _path(fixtures, "gpu_alexnet").read_bytes()
    stream.write_bytes(data[: len(data) * 2 // 3])
    rd = load_rank(kineto.sniff(stream))
    _assert_truncation_warning(rd, full)
    assert "gzip" in next(d.message for d in rd.diagnostics if d.code == "trace-truncated")


def test_a_trace_cut_after_its_event_list_keeps_every_event(fixtures, tmp_path):
    """gpu_alexnet cut 20 bytes into the ``traceName`` that follows its event list: every event
    is read, and the warning says where the text ends.  Before, the cut was taken to lie inside
    the list, and its last event was dropped."""
    raw = gzip.open(_path(fixtures, "gpu_alexnet")).read()
    whole, cut = tmp_path / "whole.json", tmp_path / "cut.json"
    whole.write_bytes(raw)
    cut.write_bytes(raw[: raw.rindex(b"]") + 20])
    full, rd = load_rank(kineto.sniff(whole)), load_rank(kineto.sniff(cut))
    (warn,) = [d.message for d in rd.diagnostics if d.code == "trace-truncated"]
    assert warn.startswith(
        "The trace is incomplete: the JSON text ends after the event list, in the keys that follow it. "
        "Read 870 events from the first 319,440 bytes; dropped the last 23 bytes"
    )
    assert {n: t.num_rows for n, t in rd.tables.items() if n != "run_info"} == {
        n: t.num_rows for n, t in full.tables.items() if n != "run_info"
    }


def test_nothing_readable_is_an_error_naming_the_file(fixtures, tmp_path):
    raw = gzip.open(_path(fixtures, "cpu_only")).read()
    cut = tmp_path / "early.json"
    cut.write_bytes(raw[:4000])  # before "traceEvents"
    rd = load_rank(kineto.sniff(cut))
    assert [d.code for d in rd.diagnostics] == ["trace-invalid"]
    assert rd.diagnostics[0].severity == "error" and "early.json" in rd.diagnostics[0].message
    assert rd.rank == 34  # from the sniffed rank hint


def test_an_event_that_lost_its_end_costs_only_that_event(fixtures, tmp_path):
    """The first host op of gpu_alexnet that another host op follows, cut from inside its args
    through its closing braces: only that op is missing, and the warning says one event.  Before,
    the op after it was skipped too (no ``}`` before its ``, {``), and the warning still said
    about one event."""
    raw = gzip.open(_path(fixtures, "gpu_alexnet")).read()
    whole = tmp_path / "whole.json"
    whole.write_bytes(raw)
    m = re.compile(
        rb'\{\s*"ph": "X", "cat": "cpu_op"[^{}]*"args": \{[^{}]*(\})\s*(\})\s*,\s*\{\s*"ph": "X", "cat": "cpu_op"'
    ).search(raw)
    hit = json.loads(raw[m.start() : m.end(2)])  # the op as it was
    cut = tmp_path / "cut.json"
    cut.write_bytes(raw[: m.start(1) - 12] + raw[m.end(2) :])
    full, rd = load_rank(kineto.sniff(whole)), load_rank(kineto.sniff(cut))
    (warn,) = [d.message for d in rd.diagnostics if d.code == "malformed-events"]
    assert warn == (
        "about 1 event(s) (178 bytes, in 1 place(s)) of the event list are not valid JSON and were skipped; "
        "869 events were read."
    )
    changed = {n: (full.tables[n].num_rows, t.num_rows) for n, t in rd.tables.items()}
    assert {n: c for n, c in changed.items() if c[0] != c[1]} == {"host_ops": (367, 366)}
    names = Counter(full.tables["host_ops"].column("name").to_pylist())
    names.subtract(rd.tables["host_ops"].column("name").to_pylist())
    assert +names == {hit["name"]: 1} == {"aten::empty": 1}


def test_malformed_event_in_the_middle_is_skipped(tmp_path):
    good = '{"ph": "X", "cat": "cpu_op", "name": "aten::a", "pid": 1, "tid": 1, "ts": %d, "dur": 1}'
    events = [good % i for i in range(5)]
    events[2] = '{"ph": "X", "cat": "cpu_op", "name": "broken" "pid": 1}'
    p = tmp_path / "bad.json"
    p.write_text('{"traceEvents": [' + ", ".join(events) + "]}")
    rd = load_rank(kineto.sniff(p))
    assert rd.tables["host_ops"].num_rows == 4
    assert "malformed-events" in {d.code for d in rd.diagnostics}


def _synthetic(tmp_path) -> Path:
    """A tiny trace with what the HTA samples lack: memory events, counters, python frames,
    collective args on kernels, record_param_comms, cuda_sync."""

    def x(cat, name, ts, dur, pid=10, tid=11, **args):
        return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}

    def mem(ts, addr, size, total, dev_type=1, dev=0):
        return {
            "ph": "i",
            "cat": "cpu_instant_event",
            "s": "t",
            "name": "[memory]",
            "pid": 10,
            "tid": 11,
            "ts": ts,
            "args": {
                "Addr": addr,
                "Bytes": size,
                "Total Allocated": total,
                "Total Reserved": 2097152,
                "Device Type": dev_type,
                "Device Id": dev,
            },
        }

    ev = [
        x("user_annotation", "ProfilerStep#7", 1000.0, 500.0, **{"External id": 1}),
        x(
            "cpu_op",
            "aten::empty",
            1010.5,
            20.25,
            **{"External id": 2, "Input Dims": [[2, 3], []], "Input type": ["float", "Scalar"]},
        ),
        mem(1015.0, 140000, 512, 512),
        x(
            "cpu_op",
            "record_param_comms",
            1100.0,
            50.0,
            **{
                "External id": 3,
                "Collective name": "allreduce",
                "In msg nelems": 1024,
                "dtype": "Float",
                "Process Group Name": "0",
            },
        ),
        x("cuda_runtime", "cudaLaunchKernel", 1110.0, 5.0, **{"External id": 3, "correlation": 77}),
        x(
            "kernel",
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            1120.0,
            40.0,
            pid=0,
            tid=30,
            **{"External id": 3, "correlation": 77, "device": 0, "stream": 30},
        ),
        x(
            "kernel",
            "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
            1170.0,
            40.0,
            pid=0,
            tid=30,
            **{
                "correlation": 78,
                "device": 0,
                "stream": 30,
                "Collective name": "send",
                "In msg nelems": 10,
                "dtype": "BFloat16",
                "Process Group Name": "pg1",
            },
        ),
        mem(1200.0, 140000, -512, 0),
        mem(1210.0, 150000, -64, 0, dev_type=0, dev=-1),
        x("python_function", "train.py(12): step", 1001.0, 400.0, **{"Python id": 4}),
        {"ph": "C", "name": "GPU Mem", "pid": 0, "tid": 0, "ts": 1300.0, "args": {"used": 12.5}},
        x("cuda_sync", "Event Sync", 1400.0, 3.0, pid=0, tid=30, cuda_sync_kind="Event Sync", device=0, stream=30),
        x("overhead", "Activity Buffer Request", 900.0, 2.0, pid=-1, tid=0),
        {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 77, "pid": 10, "tid": 11, "ts": 1110.0},
    ]
    doc = {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": "NVIDIA H100"}],
        "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8, "nccl_version": "2.21.5"},
        "traceEvents": ev,
        "baseTimeNanoseconds": 1700000000000000000,
    }
    p = tmp_path / "host_123.1700000000000.pt.trace.json"
    p.write_text(json.dumps(doc, indent=1))
    return p


def test_synthetic_memory_comm_counters(tmp_path):
    rd = load_rank(kineto.sniff(_synthetic(tmp_path)))
    t = {k: v.to_pylist() for k, v in rd.tables.items()}
    assert rd.rank == 3 and not rd.diagnostics
    empty = next(o for o in t["host_ops"] if o["name"] == "aten::empty")
    assert (empty["input_shapes"], empty["input_dtypes"]) == ("2,3;", "float;Scalar")
    assert empty["start_ns"] == 1700000000001010500 and empty["dur_ns"] == 20250
    comm = {c["type"]: c for c in t["comm_ops"]}
    assert comm["allreduce"]["bytes"] == 4096 and comm["allreduce"]["category"] == "collective"
    assert comm["send"]["bytes"] == 20 and comm["send"]["category"] == "p2p"
    assert comm["send"]["group"] == "pg1" and comm["allreduce"]["step"] == 7
    assert {d["kind"] for d in t["device_tasks"]} == {"communication", "sync"}
    assert [(m["component"], m["allocated_bytes"]) for m in t["memory_samples"]] == [
        ("CUDA", 512),
        ("CUDA", 0),
        ("CPU", 0),
    ]
    blocks = t["memory_blocks"]
    assert blocks[0]["name"] == "aten::empty" and blocks[0]["size_bytes"] == 512
    assert blocks[0]["release_ns"] == 1700000000001200000
    assert blocks[1]["alloc_ns"] is None and blocks[1]["size_bytes"] == 64
    assert [(c["track"], c["name"], c["value"], c["device"]) for c in t["counters"]] == [("GPU Mem", "used", 12.5, 0)]
    assert [s["name"] for s in t["trace_slices"]] == ["Activity Buffer Request"]
    info = t["run_info"][0]
    assert (info["device_name"], info["world_size"], info["activities"]) == ("NVIDIA H100", 8, "CPU,CUDA")
    assert info["host"] == "host"  # from the tensorboard_trace_handler file name
    assert info["profile_memory"] and info["with_stack"]
    assert json.loads(info["versions"])["nccl_version"] == "2.21.5"


def test_event_array_read_in_pieces_gives_the_same_tables(fixtures, monkeypatch):
    """The event array is read in pieces cut at event boundaries, several per statement, one per
    DuckDB thread: 64 kB pieces (about 30 of them) give exactly the tables and diagnostics of one
    piece, row order included."""
    from profinsight.importers.chrome_trace import _array

    path = fixtures / "kineto" / "gpu_2rank_rank0.json.gz"
    whole = load_rank(kineto.sniff(path))
    monkeypatch.setattr(_array, "TAKE_CHUNK_BYTES", 64_000)
    pieces = load_rank(kineto.sniff(path))
    for name, t in whole.tables.items():
        assert pieces.tables[name].equals(t), name
    assert [d.code for d in pieces.diagnostics] == [d.code for d in whole.diagnostics]


@pytest.mark.parametrize("which", ["gpu_2rank_rank0", "synthetic"])
def test_tables_beside_the_links_are_those_made_after_them(fixtures, tmp_path, monkeypatch, which):
    """With two cores for the rank, the facts, counters, trace slices and memory tables are made on
    a cursor of their own while the launch links are made: the same tables, row order included,
    and the same diagnostics as with one core, where they are made after the links (the trace's
    memory, counters and slices on the synthetic trace, the launches on a real one)."""
    path = _path(fixtures, which) if which != "synthetic" else _synthetic(tmp_path)
    monkeypatch.setattr(kineto, "thread_share", lambda: 2)
    beside = load_rank(kineto.sniff(path))
    monkeypatch.setattr(kineto, "thread_share", lambda: 1)
    after = load_rank(kineto.sniff(path))
    assert sorted(beside.tables) == sorted(after.tables)
    for name, t in after.tables.items():
        assert beside.tables[name].equals(t), name
    assert [d.code for d in beside.diagnostics] == [d.code for d in after.diagnostics]
    used = {n for n, t in after.tables.items() if t.num_rows}
    if which == "synthetic":
        assert {"counters", "trace_slices", "memory_samples", "memory_blocks"} <= used
    else:
        assert {"launches", "trace_slices"} <= used


def test_device_rows_in_file_order_with_what_their_names_say(tmp_path):
    """Device activity keeps the file order (``task_uid``) with its per-name values taken by the
    name's dictionary index -- a name written twice, an NCCL kernel, a copy, and a kernel with
    no name at all (worked out like any other name, not lost)."""
    from profinsight.importers._common import duck
    from profinsight.importers.kineto import _sql

    events = [
        {"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7, "ts": 30, "dur": 2},
        {
            "ph": "X",
            "cat": "gpu_memcpy",
            "name": "Memcpy HtoD (Pageable -> Device)",
            "pid": 0,
            "tid": 7,
            "ts": 10,
            "dur": 1,
            "args": {"bytes": 64},
        },
        {"ph": "X", "cat": "kernel", "pid": 0, "tid": 7, "ts": 20, "dur": 3},
        {
            "ph": "X",
            "cat": "kernel",
            "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)",
            "pid": 0,
            "tid": 9,
            "ts": 5,
            "dur": 4,
        },
        {"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7, "ts": 1, "dur": 2},
    ]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    d = load_rank(kineto.sniff(path)).tables["device_tasks"].to_pylist()
    assert [(r["task_uid"], r["kind"], r["name"]) for r in d] == [
        (0, "kernel", "volta_sgemm_128x64_nn"),
        (1, "memcpy", "Memcpy HtoD (Pageable -> Device)"),
        (2, "kernel", None),
        (3, "communication", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)"),
        (4, "kernel", "volta_sgemm_128x64_nn"),
    ]
    con = duck(macros=False)
    _sql.install(con)
    family = lambda n: con.execute("SELECT kernel_family(?)", [n]).fetchall()[0][0]  # noqa: E731
    assert [r["type"] for r in d] == [
        family("volta_sgemm_128x64_nn"),
        "Memcpy HtoD",
        family(None),
        "allreduce",
        family("volta_sgemm_128x64_nn"),
    ]
    assert d[1]["bytes"] == 64 and d[0]["bytes"] is None and d[3]["core"] == "NCCL"
