"""The Ascend text importer against the real fixtures.  Every expected value is computed here,
independently of the importer: CSVs with Python's ``csv`` module and ``Decimal``, JSON with
``json``; vendor aggregates (op_statistic.csv, api_statistic.csv, operator_details.csv,
communication.json) are reconciled with the loaded tables."""

from __future__ import annotations

import collections
import csv
import json
import random
import re
import shutil
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pyarrow as pa
import pytest

from profinsight.importers import ascend_text, load_rank
from profinsight.importers._common import duck
from profinsight.importers._text import normalise_list, normalise_stack
from profinsight.importers.ascend_text import _sql

MIB = 1 << 20
_LOADED: dict = {}


def rank_dir(fixtures: Path, level: int, rank: int) -> Path:
    return fixtures / "ascend_pt" / f"text_level{level}" / f"rank{rank}_ascend_pt"


def out_file(fixtures: Path, level: int, rank: int, name: str) -> Path:
    return rank_dir(fixtures, level, rank) / "ASCEND_PROFILER_OUTPUT" / name


def rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def ns(text: str) -> int:
    """Exact decimal microseconds -> ns (independent of the importer's macros)."""
    return int(Decimal(text.strip()) * 1000)


def dur(text: str) -> int:
    return int((Decimal(text.strip()) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def na(text: str | None):
    t = (text or "").strip()
    return None if t in ("", "N/A") else t


@pytest.fixture
def loaded(fixtures):
    def get(level: int, rank: int):
        if (level, rank) not in _LOADED:
            _LOADED[(level, rank)] = load_rank(ascend_text.sniff(rank_dir(fixtures, level, rank)))
        return _LOADED[(level, rank)]

    return get


def table(data, name: str) -> list[dict]:
    return data.tables[name].to_pylist()


def trace(fixtures, level, rank) -> list[dict]:
    return json.loads(out_file(fixtures, level, rank, "trace_view.json").read_text())


def process_names(events) -> dict:
    return {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}


# ---------------------------------------------------------------- detection


def test_sniff(fixtures, tmp_path):
    src = ascend_text.sniff(rank_dir(fixtures, 1, 1))
    assert src.format == "ascend_text" and src.rank_hint == 1
    names = [p.name for p in src.files]
    assert list(src.files) == sorted(src.files)
    assert {"trace_view.json", "kernel_details.csv", "profiler_info_1.json", "communication.json"} <= set(names)
    assert ascend_text.sniff(rank_dir(fixtures, 0, 0) / "ASCEND_PROFILER_OUTPUT").path == rank_dir(fixtures, 0, 0)
    assert ascend_text.sniff(fixtures / "ascend_pt" / "db_level1" / "rank0_ascend_pt") is None
    assert ascend_text.sniff(fixtures / "ascend_pt") is None
    assert ascend_text.sniff(tmp_path / "nothing") is None


# ---------------------------------------------------------------- device tasks


def kernel_rows(data) -> list[dict]:
    t = [r for r in table(data, "device_tasks") if r["kind"] in ("kernel", "communication")]
    return sorted(t, key=lambda r: (r["start_ns"], r["name"]))


def test_level1_kernel_rows_are_kernel_details(fixtures, loaded):
    data = loaded(1, 0)
    csv_rows = sorted(
        rows(out_file(fixtures, 1, 0, "kernel_details.csv")), key=lambda r: (ns(r["Start Time(us)"]), r["Name"])
    )
    got = kernel_rows(data)
    assert len(got) == len(csv_rows) == 191
    assert collections.Counter(r["kind"] for r in got) == {"kernel": 187, "communication": 4}
    for g, c in zip(got, csv_rows):
        assert g["start_ns"] == ns(c["Start Time(us)"]), c["Name"]
        assert g["dur_ns"] == dur(c["Duration(us)"]) and g["wait_ns"] == dur(c["Wait Time(us)"])
        assert (g["name"], g["type"]) == (c["Name"], c["Type"])
        assert g["core"] == c["Accelerator Core"]
        assert g["step"] == int(c["Step Id"]) == 50
        assert g["block_dim"] == int(c["Block Dim"])
        assert g["stream"] == (None if c["Stream ID"] == "N/A" else int(c["Stream ID"]))
        assert g["input_shapes"] == na(c["Input Shapes"].replace('"', ""))
        assert g["output_formats"] == na(c["Output Formats"])
    conv = next(r for r in got if r["name"] == "Conv2D1")
    assert conv["input_shapes"] == "32,1,224,224,8;121,4,16,8;64"
    assert next(r for r in got if r["name"] == "trans_TransData_0")["input_shapes"] == "32,3,224,224"
    assert all(r["kind"] == "communication" and r["core"] == "HCCL" for r in got if r["name"].startswith("hcom_"))


def test_pmu_columns(fixtures, loaded):
    data = loaded(1, 0)
    conv = next(r for r in kernel_rows(data) if r["name"] == "Conv2D1")
    c = next(r for r in rows(out_file(fixtures, 1, 0, "kernel_details.csv")) if r["Name"] == "Conv2D1")
    assert conv["pmu_aic_total_time_ns"] == pytest.approx(float(c["aicore_time(us)"]) * 1000)
    assert conv["pmu_aic_mac_time_ns"] == pytest.approx(float(c["aic_mac_time(us)"]) * 1000)
    assert conv["pmu_aic_mac_ratio"] == pytest.approx(float(c["aic_mac_ratio"]))
    assert conv["pmu_aic_total_cycles"] == pytest.approx(float(c["aic_total_cycles"]))
    assert conv["pmu_cube_utilization_ratio"] == pytest.approx(float(c["cube_utilization(%)"]) / 100)
    hccl = next(r for r in kernel_rows(data) if r["kind"] == "communication")
    assert hccl["pmu_aic_mac_ratio"] is None  # N/A


def test_compute_sums_match_op_statistic(fixtures, loaded):
    for rank in (0, 1):
        got: dict = collections.defaultdict(lambda: [0, 0])
        for r in kernel_rows(loaded(1, rank)):
            if r["kind"] == "kernel":
                got[(r["type"], r["core"])][0] += 1
                got[(r["type"], r["core"])][1] += r["dur_ns"]
        stats = rows(out_file(fixtures, 1, rank, "op_statistic.csv"))
        assert len(stats) == len(got)
        for s in stats:
            count, total_ns = got[(s["OP Type"], s["Core Type"])]
            assert count == int(s["Count"])
            assert total_ns == pytest.approx(float(s["Total Time(us)"]) * 1000, rel=1e-3)


def test_level0_loads_with_eight_columns(fixtures, loaded):
    for rank in (0, 1):
        data = loaded(0, rank)
        csv_rows = rows(out_file(fixtures, 0, rank, "kernel_details.csv"))
        assert len(csv_rows[0]) == 8
        got = kernel_rows(data)
        assert len(got) == len(csv_rows) == 191
        assert sorted(r["start_ns"] for r in got) == sorted(ns(r["Start Time(us)"]) for r in csv_rows)
        for r in got:
            if r["kind"] == "kernel":  # Level0 records no type: the name's last token, where it has one
                said = re.search(r"_([A-Za-z][A-Za-z0-9]*)$", re.sub(r"_[0-9]+$", "", r["name"]))
                assert r["type"] == (said.group(1) if said else None) and r["core"] is None
            else:
                assert r["core"] == "HCCL" and r["type"] == "hcom_allReduce_"
        assert "pmu_aic_mac_ratio" not in data.tables["device_tasks"].column_names


@pytest.mark.parametrize("level", [0, 1])
def test_every_trace_device_event_loaded_once(fixtures, loaded, level):
    """kernel + communication rows come from kernel_details; every Ascend Hardware event that is
    not one of them adds one row; the HCCL Plane small tasks are the same tasks as Ascend
    Hardware's and add none."""
    events = trace(fixtures, level, 0)
    names = process_names(events)
    kd = {(r["Name"], ns(r["Start Time(us)"])) for r in rows(out_file(fixtures, level, 0, "kernel_details.csv"))}
    hw = [e for e in events if names.get(e["pid"]) == "Ascend Hardware" and e["ph"] == "X"]
    extra = [e for e in hw if (e["name"], ns(e["ts"])) not in kd]
    data = loaded(level, 0)
    dt = table(data, "device_tasks")
    assert len(dt) == len(kd) + len(extra)
    assert len({r["task_uid"] for r in dt}) == len(dt)
    kinds = collections.Counter(r["kind"] for r in dt)
    assert kinds["memcpy"] == sum(e["name"] == "MEMCPY_ASYNC" for e in extra)
    assert kinds["sync"] == sum(e["name"] in ("EVENT_RECORD", "EVENT_WAIT") for e in extra)
    small = [e for e in extra if e["name"] in ("Notify Wait", "Write Value", "SDMA")]
    assert kinds["comm_task"] == len(small) == 296
    comm = {r["name"] for r in dt if r["kind"] == "communication"}
    tasks = [r for r in dt if r["kind"] == "comm_task"]
    assert all(r["comm_op"] in comm and r["core"] == "HCCL" and r["step"] == 50 for r in tasks)
    if level == 1:  # the Plane records' rich fields are on the merged rows
        assert {r["name"] for r in tasks} == {"Notify_Wait", "Notify_Record", "Memcpy", "Reduce_Inline"}
        assert all(r["type"] in ("Notify Wait", "Write Value", "SDMA") for r in tasks)
        plane_bytes = sum(
            e["args"]["size(Byte)"] for e in events if names.get(e["pid"]) == "HCCL" and e["ph"] == "X" and e["tid"] > 0
        )
        assert sum(r["bytes"] or 0 for r in tasks) == plane_bytes
        assert all(r["group"] == "17522688603477080586" for r in tasks)


# ---------------------------------------------------------------- steps, host, launches


def test_steps(fixtures, loaded):
    for level in (0, 1):
        events = trace(fixtures, level, 0)
        step = next(e for e in events if e.get("cat") == "cpu_op" and e["name"] == "ProfilerStep#50")
        kd = rows(out_file(fixtures, level, 0, "kernel_details.csv"))
        (s,) = table(loaded(level, 0), "steps")
        assert s["step"] == 50
        assert s["host_start_ns"] == ns(step["ts"])
        assert s["host_end_ns"] == ns(step["ts"]) + dur(str(step["dur"]))
        assert s["device_start_ns"] == min(ns(r["Start Time(us)"]) for r in kd)
        last = max(ns(r["Start Time(us)"]) + dur(r["Duration(us)"]) for r in kd)
        assert s["device_end_ns"] == max(last, s["host_end_ns"])
        (trace_time,) = rows(out_file(fixtures, level, 0, "step_trace_time.csv"))  # the vendor's Preparing
        assert abs(s["device_start_ns"] - s["host_start_ns"] - ns(trace_time["Preparing"])) < 1000


def test_host_ops_and_operator_details(fixtures, loaded):
    data = loaded(1, 0)
    events = trace(fixtures, 1, 0)
    host = table(data, "host_ops")
    cats = collections.Counter(r["category"] for r in host)
    expected = collections.Counter(
        e["cat"]
        for e in events
        if e["ph"] == "X" and e.get("cat") in ("cpu_op", "python_function", "enqueue", "dequeue")
    )
    assert cats == {
        "op": expected["cpu_op"],
        "python": expected["python_function"],
        "queue": expected["enqueue"] + expected["dequeue"],
    }
    assert len({r["op_id"] for r in host}) == len(host)
    od = rows(out_file(fixtures, 1, 0, "operator_details.csv"))
    ops = [r for r in host if r["category"] == "op"]
    for col, key in (
        ("host_self_ns", "Host Self Duration(us)"),
        ("device_self_ns", "Device Self Duration(us)"),
        ("device_total_ns", "Device Total Duration(us)"),
    ):
        assert sum(r[col] or 0 for r in ops) == sum(dur(r[key]) for r in od), col
    assert sum(r["host_self_ns"] is not None for r in ops) == len(od) == 859
    # canonical text: the CSV's `;\n` lists and the trace's `;\r\n` lists give the same strings
    assert collections.Counter(r["input_shapes"] for r in ops if r["input_shapes"]) == collections.Counter(
        normalise_list(r["Input Shapes"]) for r in od if normalise_list(r["Input Shapes"])
    )
    assert collections.Counter(
        r["call_stack"]
        for r in ops
        if r["call_stack"] and r["step"] is not None and not r["name"].startswith("ProfilerStep#")
    ) == collections.Counter(normalise_stack(r["Call Stack"]) for r in od if normalise_stack(r["Call Stack"]))
    drop = next(r for r in ops if r["name"] == "npu::_npu_dropout")
    assert drop["input_shapes"] == "32,9216;" and drop["input_dtypes"] == "float;Scalar"
    assert drop["sequence"] == 1365 and drop["step"] == 50


def test_sql_normalisers_equal_the_shared_python_ones(fixtures):
    """The SQL twins in ``_sql`` must give exactly what ``_text`` gives (the DB importer's)."""
    samples = [
        None,
        "",
        "N/A",
        ";",
        ";\n",
        "a;\r\nb;\r\n",
        "x\ny",
        " ;\t\n ",
        "f1;  \nf2;\r\n;\r\nf3;",
        '"""32,3,224,224"""',
        '"32,1,224,224,8;121,4,16,8;64"',
    ]
    for e in trace(fixtures, 1, 0):
        if e.get("cat") == "cpu_op":
            samples += [e["args"].get("Input Dims"), e["args"].get("Input type"), e["args"].get("Call stack")]
    rnd = random.Random(7)
    parts = ["a", "b", ";", "\n", "\r\n", " ", "\t", ";\r\n", ";\n", "  ;\n", '"']
    samples += ["".join(rnd.choice(parts) for _ in range(rnd.randint(0, 10))) for _ in range(400)]
    con = duck()
    _sql.install(con)
    con.register("s", pa.table({"i": range(len(samples)), "x": pa.array(samples, pa.string())}))
    got = con.sql("SELECT i, norm_list(x), norm_stack(x) FROM s ORDER BY i").fetchall()
    for i, lst, stack in got:
        assert (lst, stack) == (normalise_list(samples[i]), normalise_stack(samples[i])), repr(samples[i])


#: ``trace_ts_ns`` as it was first written (the cast in the test and again as the result): the
#: reference its faster form must equal on every string
_TRACE_TS_NS_FIRST = """CASE WHEN x LIKE '%.___' AND TRY_CAST(replace(x, '.', '') AS BIGINT) IS NOT NULL
    THEN TRY_CAST(replace(x, '.', '') AS BIGINT) ELSE ts_ns(x) END"""


def test_trace_ts_ns_equals_its_first_form_on_every_string(fixtures):
    samples = [
        None,
        "",
        "N/A",
        "1.5",
        "abc",
        "-1.123",
        "1.1234",
        "  1.123",
        "1e3",
        ".123",
        "1.12a",
        "12.345 ",
        "-0.001",
        "+1.123",
        "1..123",
        "99999999999999999999.123",
        "9223372036854775.807",
        "9223372036854775.808",
        "-9223372036854775.808",
        "1717575718413214.180",
        "inf",
        "nan",
        "1,5",
    ]
    samples += [e.get("ts") for e in trace(fixtures, 1, 0)][:2000]
    rnd = random.Random(11)
    parts = ["1", "7", "0", ".", "-", "e", " ", "a", "123", ".000"]
    samples += ["".join(rnd.choice(parts) for _ in range(rnd.randint(0, 8))) for _ in range(600)]
    con = duck()
    _sql.install(con)
    con.register(
        "s",
        pa.table(
            {"i": range(len(samples)), "x": pa.array([None if v is None else str(v) for v in samples], pa.string())}
        ),
    )
    got = con.sql(f"SELECT i, trace_ts_ns(x), {_TRACE_TS_NS_FIRST} FROM s ORDER BY i").fetchall()
    assert [(a, b) for _, a, b in got if a != b] == []
    assert dict((samples[i], a) for i, a, _ in got)["1717575718413214.180"] == 1717575718413214180


def test_launches_point_at_rows(fixtures, loaded):
    for level in (0, 1):
        data = loaded(level, 0)
        launches = table(data, "launches")
        uids = {r["task_uid"] for r in table(data, "device_tasks")}
        ops = {r["op_id"]: r for r in table(data, "host_ops")}
        calls = {r["call_id"] for r in table(data, "api_calls")}
        assert launches and all(r["task_uid"] in uids for r in launches)
        assert all(r["host_op_id"] in ops for r in launches if r["host_op_id"] is not None)
        assert all(r["api_call_id"] in calls for r in launches if r["api_call_id"] is not None)
        flows = [e for e in trace(fixtures, level, 0) if e.get("cat") == "async_npu" and e["ph"] == "s"]
        torch = [r for r in launches if r["link"] == "torch_to_npu"]
        assert len(torch) == len(flows) == 210
        assert all(ops[r["host_op_id"]]["category"] == "op" for r in torch)
        hccl = {r["task_uid"] for r in table(data, "device_tasks") if r["kind"] == "communication"}
        assert any(r["task_uid"] in hccl and ops[r["host_op_id"]]["name"] == "HcclAllreduce" for r in torch)
    data = loaded(1, 0)
    h2d = [r for r in table(data, "launches") if r["link"] == "HostToDevice"]
    assert len(h2d) >= 210 and all(r["api_call_id"] is not None for r in h2d)


def test_api_calls_match_api_statistic(fixtures, loaded):
    for rank in (0, 1):
        got = collections.Counter((r["level"], r["name"]) for r in table(loaded(1, rank), "api_calls"))
        want = {
            (r["Level"], r["API Name"]): int(r["Count"]) for r in rows(out_file(fixtures, 1, rank, "api_statistic.csv"))
        }
        assert dict(got) == want
    launch = next(r for r in table(loaded(1, 0), "api_calls") if r["name"] == "launch")
    assert launch["level"] == "node" and launch["item"] and launch["connection_id"] is not None
    assert table(loaded(0, 0), "api_calls") == []  # Level0 prunes the CANN layer


# ---------------------------------------------------------------- memory, communication, counters


def test_memory_tables(fixtures, loaded):
    data = loaded(1, 0)
    mr = rows(out_file(fixtures, 1, 0, "memory_record.csv"))
    samples = table(data, "memory_samples")
    assert len(samples) == len(mr)
    app = [r for r in samples if r["component"] == "APP"]
    app_csv = [r for r in mr if r["Component"] == "APP"]
    assert len(app) == len(app_csv) and all(r["allocated_bytes"] is None for r in app)
    assert sorted(r["reserved_bytes"] for r in app) == sorted(
        int(Decimal(r["Total Reserved(MB)"]) * MIB) for r in app_csv
    )
    assert {r["device"] for r in samples} == {0}
    om = rows(out_file(fixtures, 1, 0, "operator_memory.csv"))
    blocks = table(data, "memory_blocks")
    assert len(blocks) == len(om)
    assert sum(r["size_bytes"] for r in blocks) == sum(int(Decimal(r["Size(KB)"]) * 1024) for r in om)
    assert {r["component"] for r in blocks if r["name"].startswith("cann::")} == {"GE"}
    assert {r["component"] for r in blocks if not r["name"].startswith("cann::")} == {"PTA"}
    assert len(table(data, "module_memory")) == len(rows(out_file(fixtures, 1, 0, "npu_module_mem.csv")))


def test_comm_ops_level1(fixtures, loaded):
    for rank in (0, 1):
        data = loaded(1, rank)
        ops = {r["name"]: r for r in table(data, "comm_ops")}
        comm = json.loads(out_file(fixtures, 1, rank, "communication.json").read_text())["step50"]["collective"]
        kd = {
            r["Name"]: r
            for r in rows(out_file(fixtures, 1, rank, "kernel_details.csv"))
            if r["Accelerator Core"] == "HCCL"
        }
        assert len(ops) == 4 and set(ops) == set(kd)
        for key, rec in comm.items():
            if key == "Total Op Info":
                continue
            name, group = key.rsplit("@", 1)
            op, t, bw = ops[name], rec["Communication Time Info"], rec["Communication Bandwidth Info"]
            assert op["start_ns"] == ns(kd[name]["Start Time(us)"]) and op["dur_ns"] == dur(kd[name]["Duration(us)"])
            assert (op["group"], op["step"], op["category"], op["type"]) == (group, 50, "collective", "hcom_allReduce_")
            for col, k in (
                ("transit_ns", "Transit Time(ms)"),
                ("wait_ns", "Wait Time(ms)"),
                ("sync_ns", "Synchronization Time(ms)"),
                ("idle_ns", "Idle Time(ms)"),
            ):
                assert abs(op[col] - Decimal(str(t[k])) * 1_000_000) <= 1, col
            assert abs(op["hccs_bytes"] - Decimal(str(bw["HCCS"]["Transit Size(MB)"])) * 1_000_000) <= 1
            # SDMA repeats HCCS on these on-node all-reduces: bytes must not count it twice
            assert bw["SDMA"]["Transit Size(MB)"] == bw["HCCS"]["Transit Size(MB)"]
            assert op["bytes"] == op["hccs_bytes"] + op["rdma_bytes"] + op["pcie_bytes"] + op["sio_bytes"]
            assert op["data_type"] == "FP32" and op["algorithm"] == "MESH-RING" and op["count"] > 0


def test_comm_ops_level0_from_kernel_details(fixtures, loaded):
    data = loaded(0, 0)
    ops = table(data, "comm_ops")
    kd = [r for r in rows(out_file(fixtures, 0, 0, "kernel_details.csv")) if r["Accelerator Core"] == "HCCL"]
    assert sorted(r["start_ns"] for r in ops) == sorted(ns(r["Start Time(us)"]) for r in kd)
    assert all(r["transit_ns"] is None and r["bytes"] is None for r in ops)
    assert table(data, "comm_links") == []
    assert any(d.code == "level0-no-comm-analysis" and "ProfilerLevel.Level1" in d.fix for d in data.diagnostics)


def test_comm_links(fixtures, loaded):
    data = loaded(1, 0)
    matrix = json.loads(out_file(fixtures, 1, 0, "communication_matrix.json").read_text())
    expected = [(k, link) for s in matrix.values() for c in s.values() for k, links in c.items() for link in links]
    links = table(data, "comm_links")
    assert len(links) == len(expected) == 48
    top = next(r for r in links if r["summary"] == "top1" and (r["src_rank"], r["dst_rank"]) == (0, 1))
    rec = matrix["step50"]["collective"]["allreduce-top1@17522688603477080586"]["0-1"]
    assert (top["op_type"], top["group"], top["transport"], top["op_name"]) == (
        "allreduce",
        "17522688603477080586",
        rec["Transport Type"],
        rec["Op Name"],
    )
    assert top["bytes"] == round(Decimal(str(rec["Transit Size(MB)"])) * 1_000_000)


def test_counters(fixtures, loaded):
    data = loaded(1, 0)
    events = [e for e in trace(fixtures, 1, 0) if e["ph"] == "C"]
    counters = table(data, "counters")
    assert len(counters) == len(events)
    units = {(r["track"], r["unit"]) for r in counters}
    assert {("AI Core Freq", "MHz"), ("HBM", "MB/s"), ("NPU MEM", "KB"), ("LLC", "%"), ("QoS", "MB/s")} <= units
    freq = [r for r in counters if r["track"] == "AI Core Freq"]
    assert [r["value"] for r in freq] == [e["args"]["MHz"] for e in events if e["name"] == "AI Core Freq"]
    assert any(r["name"] == "read_bandwidth (acc_id 3)" for r in counters)


def test_trace_slices_and_run_info(fixtures, loaded):
    data = loaded(1, 0)
    overlap = [e for e in trace(fixtures, 1, 0) if e["ph"] == "X" and e["pid"] == 3170820832]
    slices = table(data, "trace_slices")
    assert len(slices) == len(overlap) and {r["process"] for r in slices} == {"Overlap Analysis"}
    (info,) = table(data, "run_info")
    cfg = json.loads((rank_dir(fixtures, 1, 0) / "profiler_info_0.json").read_text())
    assert (info["rank"], info["device"], info["source_format"], info["profiler_level"]) == (
        0,
        0,
        "ascend_text",
        "Level1",
    )
    assert info["activities"] == "CPU,NPU" and info["with_stack"] and info["record_shapes"]
    assert info["aic_metrics"] == "ACL_AICORE_PIPE_UTILIZATION" and info["versions"] == "{}"
    assert json.loads(info["schedule"]) == cfg["config"]["common_config"]["schedule"]
    assert "PYTORCH_NPU_ALLOC_CONF" in json.loads(info["env"])
    assert info["collect_end_ns"] == cfg["end_info"]["collectionTimeEnd"]
    assert table(loaded(0, 1), "run_info")[0]["device"] == 1


# ---------------------------------------------------------------- damaged inputs


def copy_rank(fixtures, tmp_path, level=1, rank=0) -> Path:
    dst = tmp_path / f"rank{rank}_ascend_pt"
    shutil.copytree(rank_dir(fixtures, level, rank), dst)
    for p in dst.rglob("*"):
        p.chmod(0o644 if p.is_file() else 0o755)
    return dst


def test_trace_cut_in_half_loads_with_warning(fixtures, tmp_path):
    folder = copy_rank(fixtures, tmp_path)
    path = folder / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    loaded = load_rank(ascend_text.sniff(folder))
    (warn,) = [d for d in loaded.diagnostics if d.code == "trace-truncated"]
    assert warn.severity == "warning" and "truncated" in warn.message and "events" in warn.message
    assert "191 of 191 kernel_details.csv rows" in warn.message and warn.fix
    assert loaded.tables["host_ops"].num_rows > 0
    assert loaded.tables["device_tasks"].num_rows >= 191  # kernel_details rows stay


def test_trace_damaged_in_the_middle_costs_only_the_events_hit(fixtures, loaded, tmp_path):
    """Four bytes overwritten at a third and at two thirds of trace_view.json: a Python frame
    and an AscendCL call.  The read skips just those two events and goes on after each; it is
    not a cut (no trace-truncated, so no "the collection did not finish")."""
    folder = copy_rank(fixtures, tmp_path)
    path = folder / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    data = bytearray(path.read_bytes())
    for at in (len(data) // 3, len(data) * 2 // 3):
        data[at : at + 4] = b"@@@@"
    path.write_bytes(bytes(data))
    damaged = load_rank(ascend_text.sniff(folder))
    whole = loaded(1, 0)
    (warn,) = [d for d in damaged.diagnostics if d.code == "malformed-events"]
    assert warn.message == (
        "trace_view.json is damaged in 2 places: 478 bytes (roughly 2 event(s)) are not valid JSON and were "
        "skipped; the 10110 events around them were read; missing from it: 0 of 191 kernel_details.csv rows "
        "and 0 of 859 operator_details.csv ops. Host ops, launches, API calls and trace-only device tasks of "
        "the skipped stretch are absent."
    )
    codes = {d.code for d in damaged.diagnostics}
    assert "trace-truncated" not in codes and "collection-unfinished" not in codes
    changed = {n: (whole.tables[n].num_rows, t.num_rows) for n, t in damaged.tables.items()}
    assert {n: c for n, c in changed.items() if c[0] != c[1]} == {"host_ops": (2460, 2459), "api_calls": (707, 706)}
    names = collections.Counter(whole.tables["host_ops"].column("name").to_pylist())
    names.subtract(damaged.tables["host_ops"].column("name").to_pylist())
    assert +names == {"<built-in function callable>": 1}


def test_an_event_that_lost_its_end_costs_only_that_event(fixtures, loaded, tmp_path):
    """Bytes cut out of an event from inside its args through its closing braces, at a third of
    trace_view.json: the next event follows a bare ``, {`` (no ``}`` before it), and the read
    goes on there.  Before, the read resumed only at a ``}, {``, so the intact event after the
    damaged one was skipped too, while the warning said roughly one event."""
    folder = copy_rank(fixtures, tmp_path)
    path = folder / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    data = path.read_bytes()
    end = re.compile(rb"\}\s*,\s*\{").search(data, len(data) // 3).start()  # the '}' that closes an event
    hit = json.loads(data[data.rindex(b'{"ph"', 0, end) : end + 1])  # the event as it was
    assert data[end - 6 : end + 1] == b": 238}}"  # from inside its args on
    path.write_bytes(data[: end - 6] + data[end + 1 :])  # '..."Python parent id", {"ph"...'
    damaged = load_rank(ascend_text.sniff(folder))
    whole = loaded(1, 0)
    (warn,) = [d for d in damaged.diagnostics if d.code == "malformed-events"]
    assert warn.message.startswith(
        "trace_view.json is damaged in one place: 202 bytes (roughly 1 event(s)) are not valid JSON and were "
        "skipped; the 10111 events around them were read;"
    )
    assert "trace-truncated" not in {d.code for d in damaged.diagnostics}
    changed = {n: (whole.tables[n].num_rows, t.num_rows) for n, t in damaged.tables.items()}
    assert {n: c for n, c in changed.items() if c[0] != c[1]} == {"host_ops": (2460, 2459)}
    names = collections.Counter(whole.tables["host_ops"].column("name").to_pylist())
    names.subtract(damaged.tables["host_ops"].column("name").to_pylist())
    assert +names == {hit["name"]: 1}


def test_damaged_inputs_warn_and_still_load(fixtures, tmp_path):
    """No kernel_details.csv, two malformed memory_record.csv rows, with_stack off: each is a
    diagnostic with a fix, and everything else loads (kernels then come from the trace)."""
    folder = copy_rank(fixtures, tmp_path)
    (folder / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").unlink()
    mr = folder / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv"
    with open(mr, "a", newline="") as fh:
        fh.write("PTA,1,2\r\nnot,a,valid,row,with,too,many,columns,here\r\n")
    info = folder / "profiler_info_0.json"
    cfg = json.loads(info.read_text())
    cfg["config"]["common_config"]["with_stack"] = False
    info.write_text(json.dumps(cfg))
    loaded = load_rank(ascend_text.sniff(folder))
    by_code = collections.defaultdict(list)
    for d in loaded.diagnostics:
        by_code[d.code].append(d)
    (missing,) = by_code["missing-file"]
    assert missing.severity == "warning" and "kernel_details.csv" in missing.message and missing.fix
    kinds = collections.Counter(loaded.tables["device_tasks"].column("kind").to_pylist())
    assert kinds["kernel"] == 187 and kinds["communication"] == 4
    (bad,) = by_code["csv-bad-rows"]
    assert "2 malformed row(s)" in bad.message and bad.file.endswith("memory_record.csv")
    assert loaded.tables["memory_samples"].num_rows == len(rows(out_file(fixtures, 1, 0, "memory_record.csv")))
    (off,) = by_code["no-call-stacks"]
    assert "with_stack=True" in off.fix


def test_rows_the_sniffer_refuses_cost_only_themselves(fixtures, loaded, tmp_path):
    """Two stray LF lines at the end of a CRLF kernel_details.csv make DuckDB's dialect sniffer
    give up on the whole file.  The file is then read by its header: the 191 real rows load with
    the same values as the undamaged file's, and the two lines are counted as dropped."""
    folder = copy_rank(fixtures, tmp_path)
    kd = folder / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    with open(kd, "ab") as fh:
        fh.write(b"garbage,,\n1,2\n")
    damaged = load_rank(ascend_text.sniff(folder))
    codes = collections.Counter(d.code for d in damaged.diagnostics)
    assert codes["csv-unreadable"] == 0
    (bad,) = [d for d in damaged.diagnostics if d.code == "csv-bad-rows"]
    assert bad.message == "kernel_details.csv: 2 malformed row(s) were dropped, 191 loaded."
    whole = loaded(1, 0).tables["device_tasks"]
    got = damaged.tables["device_tasks"]
    for column in ("name", "start_ns", "dur_ns", "kind", "block_dim"):
        assert got.column(column).to_pylist() == whole.column(column).to_pylist(), column


def test_trace_reader_edge_cases(tmp_path):
    """The reusable reader: a complete array, one missing only its ``]``, one cut inside an
    event, and a file that is not an array at all."""
    from profinsight.importers.chrome_trace import read_trace_json

    events = [
        {"ph": "X", "name": f"e{i}", "pid": 1, "tid": 1, "ts": f"{i}.000", "dur": 1, "args": {"a": i}}
        for i in range(50)
    ]
    text = json.dumps(events)
    cases = {
        "whole": (text, 50, False),
        "no_bracket": (text[:-1], 50, True),
        "cut": (text[: len(text) // 2], None, True),
        "object": ('{"traceEvents": [', 0, True),
    }
    for name, (body, n, truncated) in cases.items():
        path = tmp_path / f"{name}.json"
        path.write_text(body)
        con = duck()
        got = read_trace_json(con, path, "ev")
        assert got.truncated == truncated, name
        count = con.sql("SELECT count(*) FROM ev").fetchall()[0][0]
        assert count == got.events == (n if n is not None else count), name
        if name == "cut":
            assert 0 < count < 50 and "truncated" in got.describe("t.json")
            names = [r[0] for r in con.sql("SELECT name FROM ev ORDER BY idx").fetchall()]
            assert names == [f"e{i}" for i in range(count)]


def _damage_events(texts: list[str], hits: dict[int, tuple[str, str]]) -> bytes:
    """The JSON array of ``texts`` (one event each) with ``hits[i] = (old, new)`` replaced in
    event ``i``'s text; the separator after event ``i`` when ``old`` is ``", "``."""
    parts = []
    for i, t in enumerate(texts):
        sep = ", " if i < len(texts) - 1 else ""
        if i in hits:
            old, new = hits[i]
            if old == ", ":
                sep = new
            else:
                t = t.replace(old, new, 1)
        parts.append(t + sep)
    return ("[" + "".join(parts) + "]").encode()


@pytest.mark.parametrize("chunk", [300, 1_000, 1 << 20])
@pytest.mark.parametrize("consume", [False, True])
@pytest.mark.parametrize("rest_whole", [True, False])
def test_trace_reader_goes_on_after_damage_in_the_middle(tmp_path, monkeypatch, chunk, consume, rest_whole):
    """Broken events in the middle of an array cost those events only, in small pieces and in
    one, whether each piece is taken by one statement or handed to a caller, and whether the
    rest of the file is first tried whole (a short rest) or not (a long one): a broken value,
    a separator lost (two events run together), three broken events in a row, two events with
    ``}, {`` inside their strings and nested objects right before a broken one (false
    boundaries), and a broken last event (then the file counts as cut there)."""
    from profinsight.importers.chrome_trace import _array, read_trace_json

    if not rest_whole:
        monkeypatch.setattr(_array, "_REST_BYTES", 0)

    def event(i):
        args = {"s": "x}, {y", "n": [{"a": 1}, {"b": 2}]} if i in (59, 60) else {"a": i}
        return json.dumps({"ph": "X", "name": f"e{i}", "pid": 1, "tid": 1, "ts": f"{i}.000", "dur": 1, "args": args})

    texts = [event(i) for i in range(120)]
    hits = {
        10: ('"dur": 1', '"dur": @'),
        30: (", ", " "),  # e30 and e31 run together: both lost
        50: ('"ph"', "ph"),
        51: ('"ph"', "ph"),
        52: ('"ph"', "ph"),
        61: ('"tid": 1', '"tid": 1,,'),
    }
    path = tmp_path / "t.json"
    path.write_bytes(_damage_events(texts, hits))
    con = duck()

    def read(**kw):
        if not consume:  # each batch of pieces taken by one statement
            return read_trace_json(con, path, "ev", chunk_bytes=chunk, **kw)
        con.execute("CREATE OR REPLACE TABLE ev (idx BIGINT, name VARCHAR)")
        return read_trace_json(
            con,
            path,
            "ev",
            chunk_bytes=chunk,
            consume=lambda c, v: c.execute(f"INSERT INTO ev SELECT idx, name FROM {v}"),
            **kw,
        )

    got = read()
    lost = {10, 30, 31, 50, 51, 52, 61}
    names = [r[0] for r in con.sql("SELECT name FROM ev ORDER BY idx").fetchall()]
    assert names == [f"e{i}" for i in range(120) if i not in lost]
    assert (got.events, got.truncated, got.skipped_places, got.skipped_events) == (113, False, 4, 6)
    assert got.describe_skipped("t.json").startswith("t.json is damaged in 4 places: ")

    path.write_bytes(_damage_events(texts, {**hits, 119: ('"ph"', "ph")}))
    got = read()
    assert (got.events, got.truncated, got.skipped_places) == (112, True, 4)
    assert got.lost_bytes == len(texts[119]) + 1  # the last event and the closing bracket
    assert con.sql("SELECT count(*) FROM ev").fetchall() == [(112,)]

    # the reader's old way (Kineto salvages on its own): it stops at the first damage
    got = read(resync=False)
    assert (got.events, got.truncated, got.skipped_places) == (10, True, 0)


def test_the_rest_read_whole_running_out_of_memory_is_no_lost_rank(tmp_path, monkeypatch):
    """Where a piece keeps failing, the rest of the file is tried as one piece (false cuts); at
    damage that read can run DuckDB out of memory (it did on a 1 GB trace, and the rank was
    lost).  With resync, it counts as one more failed read: the damage is looked for in the
    widened piece, as without the try."""
    import duckdb

    from profinsight.errors import ProfileError
    from profinsight.importers.chrome_trace import _array, read_trace_json

    texts = [
        json.dumps({"ph": "X", "name": f"e{i}", "pid": 1, "tid": 1, "ts": f"{i}.000", "dur": 1, "args": {"a": i}})
        for i in range(120)
    ]
    path = tmp_path / "t.json"
    path.write_bytes(_damage_events(texts, {40: ('"ph"', "ph")}))
    real = _array._Reader._piece

    def piece(self, lo, hi):
        if hi - lo > 2_000:  # only the rest read whole is this long (pieces are 300 bytes)
            raise duckdb.OutOfMemoryException("Out of Memory Error: failed to allocate")
        return real(self, lo, hi)

    monkeypatch.setattr(_array._Reader, "_piece", piece)
    got = read_trace_json(duck(), path, "ev", chunk_bytes=300)
    assert (got.events, got.truncated, got.skipped_places, got.skipped_events) == (119, False, 1, 1)
    with pytest.raises(ProfileError, match="out of memory"):
        read_trace_json(duck(), path, "ev", chunk_bytes=300, resync=False)


@pytest.mark.slow
def test_trace_read_in_pieces_gives_the_same_tables(fixtures, monkeypatch):
    """The trace is read in pieces cut at event boundaries; 100 kB pieces (about 20 of them)
    give exactly the tables of one piece, file order included."""
    from profinsight.importers.chrome_trace import _array as _trace_json

    whole = load_rank(ascend_text.sniff(rank_dir(fixtures, 1, 1)))
    monkeypatch.setattr(_trace_json, "CHUNK_BYTES", 100_000)
    monkeypatch.setattr(_trace_json, "TAKE_CHUNK_BYTES", 100_000)
    pieces = load_rank(ascend_text.sniff(rank_dir(fixtures, 1, 1)))
    for name, t in whole.tables.items():
        assert pieces.tables[name].equals(t), name
    assert [d.code for d in pieces.diagnostics] == [d.code for d in whole.diagnostics]


def test_trace_reader_survives_boundaries_inside_strings(tmp_path):
    """``}, {`` inside a string or between nested objects is no event boundary: a piece cut
    there does not parse and is widened; where nearly every cut is false the rest is read as
    one piece.  Either way every event is read once, in order."""
    from profinsight.importers.chrome_trace import read_trace_json

    for every, min_chunks in ((25, 10), (1, 1)):
        events = [
            {
                "ph": "X",
                "name": f"e{i}",
                "pid": 1,
                "tid": 1,
                "ts": f"{i}.000",
                "dur": 1,
                "args": {"s": "a}, {b" * 20, "n": [{"x": 1}, {"y": 2}]} if i % every == 0 else {"a": i},
            }
            for i in range(400)
        ]
        path = tmp_path / "t.json"
        path.write_text(json.dumps(events))
        con = duck()
        got = read_trace_json(con, path, "ev", chunk_bytes=1000)
        assert not got.truncated and got.events == 400 and got.chunks >= min_chunks, (every, got)
        names = [r[0] for r in con.sql("SELECT name FROM ev ORDER BY idx").fetchall()]
        assert names == [f"e{i}" for i in range(400)]


def test_trace_cut_in_a_later_piece_keeps_the_earlier_pieces(fixtures, tmp_path, monkeypatch):
    from profinsight.importers.chrome_trace import _array as _trace_json

    monkeypatch.setattr(_trace_json, "CHUNK_BYTES", 200_000)
    monkeypatch.setattr(_trace_json, "TAKE_CHUNK_BYTES", 200_000)
    folder = copy_rank(fixtures, tmp_path)
    path = folder / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 3 // 4])
    loaded = load_rank(ascend_text.sniff(folder))
    (warn,) = [d for d in loaded.diagnostics if d.code == "trace-truncated"]
    assert "is truncated" in warn.message and "ends inside an event" in warn.message
    whole = len(json.loads(data))
    con = duck()
    got = _trace_json.read_trace_json(con, path, "ev")
    assert got.truncated and got.chunks > 3 and 0.6 * whole < got.events < 0.8 * whole


@pytest.mark.parametrize("native", [False, True], ids=["pieces", "scanner"])
def test_out_of_memory_is_said_not_reported_as_damage(fixtures, tmp_path, monkeypatch, native):
    """DuckDB running out of memory is a ProfileError naming the cause, the file size and what
    to do; through ``load`` it is an error diagnostic with that fix, and nothing is cached --
    whether DuckDB read the pieces of the trace or took the compiled scanner's columns."""
    import duckdb

    import profinsight
    from profinsight.errors import ProfileError
    from profinsight.importers.ascend_text import _trace
    from profinsight.importers.chrome_trace import _array as _trace_json
    from profinsight.importers.chrome_trace import _native

    def oom(*a, **kw):
        raise duckdb.OutOfMemoryException("Out of Memory Error: failed to allocate data of size 2.0 GiB")

    if native:
        if not _native.available():
            pytest.skip("the trace scanner is not built")
        monkeypatch.setattr(_trace, "take_piece", oom)
    else:
        monkeypatch.setenv(_native.ENV, "0")
        monkeypatch.setattr(_trace_json, "_read_piece", oom)
    with pytest.raises(ProfileError) as err:
        load_rank(ascend_text.sniff(rank_dir(fixtures, 1, 0)))
    msg = str(err.value)
    assert "out of memory" in msg and "trace_view.json" in msg and "GB" in msg and "truncated" not in msg
    assert err.value.fix and "memory" in err.value.fix
    monkeypatch.setenv("PROFINSIGHT_CACHE", str(tmp_path / "cache"))
    prof = profinsight.load(rank_dir(fixtures, 1, 0))
    (d,) = [d for d in prof.diagnostics if d.code == "import-failed"]
    assert d.severity == "error" and "out of memory" in d.message and d.fix == err.value.fix
    assert not list((tmp_path / "cache").rglob("meta.json"))


@pytest.mark.parametrize("native", [False, True], ids=["pieces", "scanner"])
def test_counters_are_named_per_piece_exactly(tmp_path, monkeypatch, native):
    """Counter samples are taken out of each piece of the trace while it is read: one row per
    numeric, non-id argument; several values -> ``{event}/{key}``; id arguments folded into
    the name sorted by key; numeric strings count, other strings, nulls and booleans do not;
    the process name (here written after the samples, in a later piece) is the track; LLC
    ``%`` is scaled to percent; ``write_band_width`` is renamed.  Read in 1 kB pieces."""
    from profinsight.importers.ascend_text import _trace

    events = (
        [
            {"ph": "C", "name": "AI Core Freq", "pid": 7, "tid": 0, "ts": "10.000", "args": {"MHz": 1800}},
            {
                "ph": "C",
                "name": "write_band_width",
                "pid": 8,
                "tid": 0,
                "ts": "11.500",
                "args": {"value": 3, "acc_id": 2},
            },
            {"ph": "C", "name": "Hit Rate", "pid": 9, "tid": 0, "ts": "12.000", "args": {"Hit Rate(%)": 0.875}},
            {
                "ph": "C",
                "name": "mix",
                "pid": 10,
                "tid": 0,
                "ts": "13.001",
                "args": {"b": "2.5", "a": 1, "s": "text", "z": None, "t": True, "src_id": 4, "id": "x"},
            },
            {
                "ph": "C",
                "name": "L2 Buffer Bw Level",
                "pid": 11,
                "tid": 0,
                "ts": "14.000",
                "args": {"L2 Buffer Bw Level": 2},
            },
            {"ph": "C", "name": "QoS OTHERS", "pid": 12, "tid": 0, "ts": "15.000", "args": {"value": 640}},
            {"ph": "C", "name": "no time", "pid": 7, "tid": 0, "args": {"MHz": 1}},
        ]
        + [
            {"ph": "X", "name": f"pad{i}", "pid": 1, "tid": 1, "ts": f"{i}.000", "dur": 1, "args": {"p": "." * 200}}
            for i in range(20)
        ]
        + [
            {"ph": "M", "name": "process_name", "pid": p, "tid": 0, "args": {"name": n}}
            for p, n in ((7, "AI Core Freq"), (8, "Acc PMU"), (9, "LLC"), (10, "Stars Soc Info"), (12, "QoS"))
        ]
    )
    path = tmp_path / "trace_view.json"
    path.write_text(json.dumps(events))
    from profinsight.importers.chrome_trace import _native

    if native and not _native.available():
        pytest.skip("the trace scanner is not built")
    monkeypatch.setenv(_native.ENV, "1" if native else "0")
    con = duck()
    _sql.install(con)
    _trace.start_split(con)
    got = _trace.read(con, path, chunk_bytes=1000)
    # DuckDB in 1 kB pieces, or the scanner's columns at once: the same rows below
    assert (got.chunks == 1 if native else got.chunks > 3) and got.events == len(events)
    _trace.finish_split(con)
    _trace.build_counters(con)
    rows = con.sql(_trace.counters_sql(3)).fetchall()
    assert rows == [
        (3, "11", "L2 Buffer Bw Level", 14_000, 2.0, "level"),
        (3, "AI Core Freq", "AI Core Freq", 10_000, 1800.0, "MHz"),
        (3, "Acc PMU", "write_bandwidth (acc_id 2)", 11_500, 3.0, "level"),
        (3, "LLC", "Hit Rate", 12_000, 87.5, "%"),
        (3, "QoS", "QoS OTHERS", 15_000, 640.0, "MB/s"),
        (3, "Stars Soc Info", "mix/a (id x, src_id 4)", 13_001, 1.0, "level"),
        (3, "Stars Soc Info", "mix/b (id x, src_id 4)", 13_001, 2.5, "level"),
    ]


def test_level0_kernels_get_their_type_from_their_name(fixtures):
    """Level0 writes Type N/A; CANN's kernel names end in the op type (the Level1 export of the
    same model records exactly that type for the same names)."""
    import csv

    import profinsight
    from profinsight.importers import ascend_text, load_rank

    folder = fixtures / "ascend_pt" / "text_level0" / "rank0_ascend_pt"
    rows = list(csv.DictReader(open(folder / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", encoding="utf-8")))
    assert {r["Type"] for r in rows} == {"N/A"}
    trans = [r for r in rows if r["Name"].startswith("trans_TransData_")]
    special = [r for r in rows if "_TransDataSpecial_TransData" in r["Name"]]
    assert (len(trans), len(special)) == (42, 15)
    rd = load_rank(ascend_text.sniff(folder))
    dt = rd.tables["device_tasks"].to_pandas()
    assert (dt.loc[dt["name"].str.contains("TransData"), "type"] == "TransData").sum() == 57
    assert dt.loc[dt["name"] == "aclnnMm_MatMulCommon_MatMulV2", "type"].tolist() == ["MatMulV2"] * 5
    assert dt.loc[dt["name"].str.startswith("Conv2D1"), "type"].isna().all()  # no underscore: no type said
    (note,) = [d for d in rd.diagnostics if d.code == "type-from-name"]
    assert note.severity == "info" and note.message.startswith("168 kernel(s)")  # 191 rows - 4 hcom - 19 "Conv2D1"
    p = profinsight.load(fixtures / "ascend_pt" / "text_level0")
    fc = p.format_conversions()
    assert int(fc.loc[fc["type"] == "TransData", "count"].sum()) == 114


def test_counters_keep_every_value_of_args_a_map_cannot_hold(tmp_path):
    """Counter args are named from one map per event; args a map cannot hold -- a key written
    twice, an array -- keep every value as ``json_each`` reads them."""
    from profinsight.importers.ascend_text import _trace

    text = json.dumps(
        [
            {"ph": "M", "name": "process_name", "pid": 7, "tid": 0, "args": {"name": "AI Core Freq"}},
            {"ph": "C", "name": "x", "pid": 7, "tid": 0, "ts": "10.000", "args": {"MHz": 1}},
        ]
    )
    text = (
        text[:-1] + ', {"ph": "C", "name": "dupe", "pid": 7, "tid": 0, "ts": "12.000", '
        '"args": {"v": 1, "v": 2.5, "acc_id": 4}}, '
        '{"ph": "C", "name": "arr", "pid": 7, "tid": 0, "ts": "13.000", "args": [1, 2]}]'
    )
    path = tmp_path / "trace_view.json"
    path.write_text(text)
    con = duck()
    _sql.install(con)
    _trace.start_split(con)
    _trace.read(con, path)
    _trace.finish_split(con)
    _trace.build_counters(con)
    # the two values of one key tie on (track, name, time, event): compared as a multiset
    assert sorted(con.sql(_trace.counters_sql(3)).fetchall(), key=repr) == sorted(
        [
            (3, "AI Core Freq", "arr/0", 13_000, 1.0, None),
            (3, "AI Core Freq", "arr/1", 13_000, 2.0, None),
            (3, "AI Core Freq", "dupe/v (acc_id 4)", 12_000, 2.5, None),
            (3, "AI Core Freq", "dupe/v (acc_id 4)", 12_000, 1.0, None),
            (3, "AI Core Freq", "x", 10_000, 1.0, "MHz"),
        ],
        key=repr,
    )


@pytest.mark.parametrize("where", ["device_chain", "output_writer"])
def test_out_of_memory_on_another_thread_is_said_the_same(fixtures, monkeypatch, where):
    """The device chain and the output writers run on threads of their own (each on its own
    cursor): DuckDB running out of memory there reaches the caller as the same ProfileError as on
    the import's own thread, after the other thread has finished (no cursor left in use)."""
    import duckdb

    from profinsight.errors import ProfileError
    from profinsight.importers.ascend_text import _device

    def oom(*a, **kw):
        raise duckdb.OutOfMemoryException("Out of Memory Error: failed to allocate data of size 2.0 GiB")

    if where == "device_chain":
        monkeypatch.setattr(_device, "build_device_tasks", oom)
    else:
        real = ascend_text._write_ipc

        def second_fails(rel, path):
            if path.endswith("counters.arrow"):
                oom()
            return real(rel, path)

        monkeypatch.setattr(ascend_text, "_write_ipc", second_fails)
    with pytest.raises(ProfileError) as err:
        load_rank(ascend_text.sniff(rank_dir(fixtures, 1, 0)))
    assert "out of memory" in str(err.value) and err.value.fix and "memory" in err.value.fix


def test_diagnostics_of_the_threads_keep_the_serial_order(fixtures, tmp_path):
    """communication.json is read beside the CSVs and operator_details.csv on the host chain, each
    with diagnostics of its own: they are said in the order a serial import says them (the CSVs',
    then communication.json's, then operator_details.csv's)."""
    src = rank_dir(fixtures, 1, 0)
    rank = tmp_path / src.name
    shutil.copytree(src, rank)
    out = rank / "ASCEND_PROFILER_OUTPUT"
    (out / "communication.json").write_text("{not json", encoding="utf-8")
    (out / "operator_details.csv").write_bytes(b"")
    (out / "memory_record.csv").write_bytes(b"")
    got = [(d.code, Path(d.file).name if d.file else None) for d in load_rank(ascend_text.sniff(rank)).diagnostics]
    said = [c for c in got if c[1] in ("memory_record.csv", "communication.json", "operator_details.csv")]
    assert said == [
        ("empty-file", "memory_record.csv"),
        ("json-invalid", "communication.json"),
        ("empty-file", "operator_details.csv"),
    ]
