"""Operator analyses: exact tables on a hand-made profile, and reconciliation with the vendor's
op_statistic.csv / operator_details.csv / kernel_details.csv (read here with ``csv``) and the
DB's TASK ⋈ COMPUTE_TASK_INFO (read here with ``sqlite3``) on the real Level1 fixtures."""

from __future__ import annotations

import collections
import csv
import json
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest
from _support import read_only_sqlite

import profinsight
from profinsight import ProfileError
from profinsight.analyses.categories import is_format_conversion
from profinsight.cli import main
from profinsight.render.notebook import MIME
from profinsight.testing import profile_from_tables

US = 1000  # hand-made times are written in us, stored in ns
_LOADED: dict = {}

# --- a tiny hand-made profile --------------------------------------------------------------
# step 1 spans 0..1000 us (ends with the all-reduce), step 2 spans 2000..2190 us: step_us = 1190
# compute kernels: 400 + 100 + 10 + 10 + 20 + 5 (step 1) + 30 + 70 + 50 + 40 (step 2) = 735 us
_K = [
    "task_uid",
    "kind",
    "name",
    "type",
    "core",
    "start",
    "dur",
    "step",
    "input_shapes",
    "output_shapes",
    "input_formats",
    "output_formats",
]
_TASKS = [
    (0, "kernel", "conv1", "Conv2D", "AI_CORE", 0, 400, 1, "8,3", "8,4", "NC1HWC0", "NC1HWC0"),
    (1, "kernel", "trans_0", "TransData", "AI_VECTOR_CORE", 400, 100, 1, "8,3", "8,1,3,8", "NCHW", "NC1HWC0"),
    (2, "kernel", "mul", "Mul", "AI_VECTOR_CORE", 500, 10, 1, "4", "4", "ND", "ND"),
    (3, "kernel", "mul", "Mul", "AI_VECTOR_CORE", 510, 10, 1, "4", "4", "ND", "ND"),
    (4, "kernel", "mul", "Mul", "AI_VECTOR_CORE", 520, 20, 1, "8", "8", "ND", "ND"),
    (5, "communication", "hcom_allReduce_1", "hcom_allReduce_", "HCCL", 540, 460, 1, None, None, None, None),
    (10, "kernel", "cast2", "Cast", "AI_VECTOR_CORE", 990, 5, 1, "8", "8", "NCHW", "NC1HWC0"),
    (6, "kernel", "mul", "Mul", "AI_VECTOR_CORE", 2000, 30, 2, "4", "4", "ND", "ND"),
    (7, "kernel", "trans_0", "TransData", "AI_VECTOR_CORE", 2030, 70, 2, "8,3", "8,1,3,8", "NCHW", "NC1HWC0"),
    (8, "kernel", "cast", "Cast", "AI_VECTOR_CORE", 2100, 50, 2, "8", "8", "ND", "ND"),
    (9, "kernel", "trans_1", "TransData", "AI_VECTOR_CORE", 2150, 40, 2, "16,3", "16,1,3,8", "NCHW", "NC1HWC0"),
    (11, "memcpy", "MEMCPY_ASYNC", "MEMCPY_ASYNC", None, 1500, 300, None, None, None, None, None),
]
COMPUTE, STEP = 735.0, 1190.0
# host ops of thread 1: ProfilerStep#1 [0, 1000) > aten::conv2d [0, 500) > (Conv2D [10, 110), aten::mul
# [200, 250)); aten::mul [600, 640); step 2: aten::cast [2100, 2120)
_OPS = [
    (0, "ProfilerStep#1", 0, 1000, 1),
    (1, "aten::conv2d", 0, 500, 1),
    (2, "Conv2D", 10, 100, 1),
    (3, "aten::mul", 200, 50, 1),
    (4, "aten::mul", 600, 40, 1),
    (5, "aten::cast", 2100, 20, 2),
    (6, "ProfilerStep#2", 1900, 400, 2),
]
_LAUNCHES = [(2, 0), (2, 1), (3, 2), (4, 3), (4, 4), (5, 8)]  # (host op, task): tasks 7, 9, 10 unlinked


def _tables(rank1: bool = False, host_columns: dict | None = None) -> dict:
    dt = pd.DataFrame([dict(zip(_K, t)) for t in _TASKS])
    dt = dt.assign(rank=0, start_ns=dt.start * US, dur_ns=dt.dur * US).drop(columns=["start", "dur"])
    dt["step"] = dt["step"].astype("Int64")
    ops = pd.DataFrame(_OPS, columns=["op_id", "name", "start", "dur", "step"])
    ops = ops.assign(rank=0, thread=1, category="op", start_ns=ops.start * US, dur_ns=ops.dur * US)
    ops = ops.drop(columns=["start", "dur"])
    for col, values in (host_columns or {}).items():
        ops[col] = pd.array(values, dtype="Int64")
    launches = pd.DataFrame(_LAUNCHES, columns=["host_op_id", "task_uid"]).assign(rank=0, link="torch_to_npu")
    steps = pd.DataFrame(
        {"rank": [0, 0], "step": [1, 2], "host_start_ns": [0, 1900 * US], "host_end_ns": [1000 * US, 2300 * US]}
    )
    if rank1:
        extra = pd.DataFrame(
            [
                dict(
                    rank=1,
                    task_uid=0,
                    kind="kernel",
                    name="conv1",
                    type="Conv2D",
                    core="AI_CORE",
                    start_ns=0,
                    dur_ns=300 * US,
                    step=1,
                )
            ]
        )
        extra["step"] = extra["step"].astype("Int64")
        dt = pd.concat([dt, extra], ignore_index=True)
        steps = pd.concat(
            [steps, pd.DataFrame({"rank": [1], "step": [1], "host_start_ns": [0], "host_end_ns": [1000 * US]})],
            ignore_index=True,
        )
    return {"device_tasks": dt, "host_ops": ops, "launches": launches, "steps": steps}


@pytest.fixture
def prof():
    return profile_from_tables(_tables())


def rows(df) -> list[dict]:
    """The result as plain Python rows (NA -> None) for exact comparison."""
    out = []
    for r in pd.DataFrame(df).astype(object).to_dict("records"):
        out.append({k: (None if v is None or (not isinstance(v, str) and pd.isna(v)) else v) for k, v in r.items()})
    return out


def approx_rows(expected: list[dict]):
    return [
        {k: (pytest.approx(v, rel=1e-12, abs=1e-12) if isinstance(v, float) else v) for k, v in r.items()}
        for r in expected
    ]


def dev_row(
    keys: dict, times: list[float], compute: float = COMPUTE, step: float = STEP, label=None, share_compute=True
) -> dict:
    total = float(sum(times))
    r = dict(keys)
    r.update(
        count=len(times),
        total_us=total,
        avg_us=total / len(times),
        min_us=float(min(times)),
        max_us=float(max(times)),
        share_of_compute_ratio=total / compute if share_compute else None,
        share_of_step_ratio=total / step,
        label=label or next(iter(keys.values())),
    )
    return r


# --- golden tables ---------------------------------------------------------------------------


def test_by_name(prof):
    df = prof.op_summary()
    assert list(df.columns) == [
        "name",
        "type",
        "core",
        "count",
        "total_us",
        "avg_us",
        "min_us",
        "max_us",
        "share_of_compute_ratio",
        "share_of_step_ratio",
        "label",
    ]
    assert rows(df) == approx_rows(
        [
            dev_row(dict(name="conv1", type="Conv2D", core="AI_CORE"), [400]),
            dev_row(dict(name="trans_0", type="TransData", core="AI_VECTOR_CORE"), [100, 70]),
            dev_row(dict(name="mul", type="Mul", core="AI_VECTOR_CORE"), [10, 10, 20, 30]),
            dev_row(dict(name="cast", type="Cast", core="AI_VECTOR_CORE"), [50]),
            dev_row(dict(name="trans_1", type="TransData", core="AI_VECTOR_CORE"), [40]),
            dev_row(dict(name="cast2", type="Cast", core="AI_VECTOR_CORE"), [5]),
        ]
    )
    assert df["share_of_compute_ratio"].sum() == pytest.approx(1.0)


def test_by_type(prof):
    assert rows(prof.op_summary(by="type")) == approx_rows(
        [
            dev_row(dict(type="Conv2D", core="AI_CORE"), [400], label="Conv2D (AI_CORE)"),
            dev_row(dict(type="TransData", core="AI_VECTOR_CORE"), [100, 70, 40], label="TransData (AI_VECTOR_CORE)"),
            dev_row(dict(type="Mul", core="AI_VECTOR_CORE"), [10, 10, 20, 30], label="Mul (AI_VECTOR_CORE)"),
            dev_row(dict(type="Cast", core="AI_VECTOR_CORE"), [5, 50], label="Cast (AI_VECTOR_CORE)"),
        ]
    )


def test_by_name_shape_and_core(prof):
    assert rows(prof.op_summary(by="name_shape", top=4)) == approx_rows(
        [
            dev_row(dict(name="conv1", input_shapes="8,3", type="Conv2D", core="AI_CORE"), [400], label="conv1 [8,3]"),
            dev_row(
                dict(name="trans_0", input_shapes="8,3", type="TransData", core="AI_VECTOR_CORE"),
                [100, 70],
                label="trans_0 [8,3]",
            ),
            # a tie on total_us: ordered by the keys
            dev_row(dict(name="cast", input_shapes="8", type="Cast", core="AI_VECTOR_CORE"), [50], label="cast [8]"),
            dev_row(
                dict(name="mul", input_shapes="4", type="Mul", core="AI_VECTOR_CORE"), [10, 10, 30], label="mul [4]"
            ),
        ]
    )
    assert rows(prof.op_summary(by="core")) == approx_rows(
        [
            dev_row(dict(core="AI_CORE"), [400]),
            dev_row(dict(core="AI_VECTOR_CORE"), [100, 10, 10, 20, 5, 30, 70, 50, 40]),
        ]
    )


def test_kinds_all_adds_communication_without_compute_share(prof):
    df = prof.op_summary(by="type", kinds="all", top=2)
    assert rows(df) == approx_rows(
        [
            dev_row(
                dict(type="hcom_allReduce_", core="HCCL"), [460], label="hcom_allReduce_ (HCCL)", share_compute=False
            ),
            dev_row(dict(type="Conv2D", core="AI_CORE"), [400], label="Conv2D (AI_CORE)"),
        ]
    )


def test_step_and_top(prof):
    # step 2: compute 30 + 70 + 50 + 40 = 190 us, step_us 190 us
    assert rows(prof.op_summary(by="type", step=2)) == approx_rows(
        [
            dev_row(dict(type="TransData", core="AI_VECTOR_CORE"), [70, 40], 190, 190, "TransData (AI_VECTOR_CORE)"),
            dev_row(dict(type="Cast", core="AI_VECTOR_CORE"), [50], 190, 190, "Cast (AI_VECTOR_CORE)"),
            dev_row(dict(type="Mul", core="AI_VECTOR_CORE"), [30], 190, 190, "Mul (AI_VECTOR_CORE)"),
        ]
    )
    assert list(prof.op_summary(top=2)["name"]) == ["conv1", "trans_0"]
    assert prof.op_summary(step=7).empty


def test_several_ranks_count_ranks_and_filter():
    p = profile_from_tables(_tables(rank1=True))
    df = p.op_summary(by="type", top=1)
    # Conv2D: 400 (rank 0) + 300 (rank 1); compute 735 + 300; steps 1190 + 300
    assert rows(df) == approx_rows(
        [dict(dev_row(dict(type="Conv2D", core="AI_CORE"), [400, 300], 1035, 1490, "Conv2D (AI_CORE)"), ranks=2)]
    )
    assert list(df.columns)[-2:] == ["ranks", "label"]
    one = p.op_summary(by="type", rank=1)
    assert "ranks" not in one.columns
    assert rows(one) == approx_rows([dev_row(dict(type="Conv2D", core="AI_CORE"), [300], 300, 300, "Conv2D (AI_CORE)")])


def host_row(name, count, host_total, host_self, dev_self, dev_total, kernel, step=STEP, compute=COMPUTE):
    return dict(
        name=name,
        count=count,
        host_total_us=float(host_total),
        host_self_us=float(host_self),
        device_self_us=float(dev_self),
        device_total_us=float(dev_total),
        avg_host_total_us=host_total / count,
        avg_device_total_us=dev_total / count,
        share_of_compute_ratio=kernel / compute,
        share_of_step_ratio=dev_total / step,
        label=name,
    )


def test_host_from_launches_and_nesting(prof):
    """No vendor columns: self time and device time come from the op tree and the launches."""
    df = prof.op_summary(where="host")
    assert rows(df) == approx_rows(
        [
            host_row("aten::conv2d", 1, 500, 350, 0, 510, 510),  # Conv2D (400 + 100) + aten::mul (10)
            host_row("Conv2D", 1, 100, 100, 500, 500, 500),
            host_row("aten::cast", 1, 20, 20, 50, 50, 50),
            host_row("aten::mul", 2, 90, 90, 40, 40, 40),  # 10 + (10 + 20)
        ]
    )
    assert rows(prof.op_summary(where="host", step=2)) == approx_rows(
        [host_row("aten::cast", 1, 20, 20, 50, 50, 50, 190, 190)]
    )


def test_host_prefers_vendor_columns():
    given = {
        "host_self_ns": [None, 7 * US, None, None, None, None, None],
        "device_total_ns": [None, None, 999 * US, None, None, None, None],
    }
    p = profile_from_tables(_tables(host_columns=given))
    df = p.op_summary(where="host", by="name_shape")
    got = {r["name"]: r for r in rows(df)}
    assert got["aten::conv2d"]["host_self_us"] == 7.0 and got["Conv2D"]["device_total_us"] == 999.0
    assert got["Conv2D"]["device_self_us"] == 500.0  # not given: from launches
    assert list(df.columns[:2]) == ["name", "input_shapes"]
    with pytest.raises(ProfileError, match="name or name_shape"):
        p.op_summary(where="host", by="type")


def test_format_conversions_golden(prof):
    df = prof.format_conversions()
    assert rows(df) == approx_rows(
        [
            dict(
                type="TransData",
                input_formats="NCHW",
                output_formats="NC1HWC0",
                input_shapes="8,3",
                output_shapes="8,1,3,8",
                count=2,
                total_us=170.0,
                avg_us=85.0,
                share_of_compute_ratio=170 / COMPUTE,
                share_of_step_ratio=170 / STEP,
                host_op="Conv2D",
                label="TransData NCHW -> NC1HWC0",
            ),
            dict(
                type="TransData",
                input_formats="NCHW",
                output_formats="NC1HWC0",
                input_shapes="16,3",
                output_shapes="16,1,3,8",
                count=1,
                total_us=40.0,
                avg_us=40.0,
                share_of_compute_ratio=40 / COMPUTE,
                share_of_step_ratio=40 / STEP,
                host_op=None,
                label="TransData NCHW -> NC1HWC0",
            ),
            dict(
                type="Cast",
                input_formats="NCHW",
                output_formats="NC1HWC0",
                input_shapes="8",
                output_shapes="8",
                count=1,
                total_us=5.0,
                avg_us=5.0,
                share_of_compute_ratio=5 / COMPUTE,
                share_of_step_ratio=5 / STEP,
                host_op=None,
                label="Cast NCHW -> NC1HWC0",
            ),
        ]
    )
    assert len(prof.format_conversions(top=1, step=2)) == 1


def test_top_kernels_golden(prof):
    df = prof.top_kernels(top=2)
    assert rows(df) == approx_rows(
        [
            dict(
                rank=0,
                step=1,
                name="conv1",
                type="Conv2D",
                core="AI_CORE",
                input_shapes="8,3",
                output_shapes="8,4",
                start_ns=0,
                dur_us=400.0,
                share_of_compute_ratio=400 / COMPUTE,
            ),
            dict(
                rank=0,
                step=1,
                name="trans_0",
                type="TransData",
                core="AI_VECTOR_CORE",
                input_shapes="8,3",
                output_shapes="8,1,3,8",
                start_ns=400 * US,
                dur_us=100.0,
                share_of_compute_ratio=100 / COMPUTE,
            ),
        ]
    )


def test_no_steps_leaves_step_share_empty():
    t = _tables()
    t["steps"] = t["steps"].iloc[0:0]
    t["device_tasks"]["step"] = pd.array([None] * len(t["device_tasks"]), dtype="Int64")
    df = profile_from_tables(t).op_summary(by="core")
    assert df["share_of_step_ratio"].isna().all() and df["share_of_compute_ratio"].notna().all()


# --- the real fixtures ----------------------------------------------------------------------


def _load(fixtures: Path, kind: str):
    if kind not in _LOADED:
        _LOADED[kind] = profinsight.load(fixtures / "ascend_pt" / kind)
    return _LOADED[kind]


def _out(fixtures: Path, rank: int) -> Path:
    return fixtures / "ascend_pt" / "text_level1" / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT"


def _rel(a, b) -> float:
    return abs(a - b) / abs(b) if b else abs(a - b)


@pytest.mark.parametrize("rank", [0, 1])
def test_by_type_equals_op_statistic(fixtures, rank):
    p = _load(fixtures, "text_level1")
    got = {(r["type"], r["core"]): r for r in rows(p.op_summary(by="type", rank=rank))}
    with open(_out(fixtures, rank) / "op_statistic.csv", newline="") as f:
        vendor = list(csv.DictReader(f))
    assert set(got) == {(v["OP Type"], v["Core Type"]) for v in vendor}
    worst = 0.0
    for v in vendor:
        r = got[(v["OP Type"], v["Core Type"])]
        assert r["count"] == int(v["Count"])
        for ours, theirs in (
            ("total_us", "Total Time(us)"),
            ("min_us", "Min Time(us)"),
            ("avg_us", "Avg Time(us)"),
            ("max_us", "Max Time(us)"),
        ):
            worst = max(worst, _rel(r[ours], float(v[theirs])))
        assert abs(r["share_of_compute_ratio"] * 100 - float(v["Ratio(%)"])) <= 0.1
    assert worst <= 1e-3, worst


def test_db_summary_equals_task_join_compute_task_info(fixtures):
    p = _load(fixtures, "db_level1")
    for rank in p.ranks:
        db = (
            fixtures
            / "ascend_pt"
            / "db_level1"
            / f"rank{rank}_ascend_pt"
            / "ASCEND_PROFILER_OUTPUT"
            / f"ascend_pytorch_profiler_{rank}.db"
        )
        con = read_only_sqlite(db)
        n, total_ns = con.execute(
            "SELECT count(*), sum(t.endNs - t.startNs) FROM TASK t "
            "JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId"
        ).fetchone()
        con.close()
        df = p.op_summary(by="type", rank=rank)
        assert int(df["count"].sum()) == n
        assert float(df["total_us"].sum()) * 1000 == pytest.approx(total_ns, rel=1e-9)
        assert float(df["share_of_compute_ratio"].sum()) == pytest.approx(1.0)
        assert (df["min_us"] <= df["avg_us"]).all() and (df["avg_us"] <= df["max_us"]).all()


def test_host_equals_operator_details(fixtures):
    p = _load(fixtures, "text_level1")
    df = p.op_summary(where="host", rank=0)
    sums: dict = collections.defaultdict(lambda: [0, Decimal(0), Decimal(0), Decimal(0), Decimal(0)])
    with open(_out(fixtures, 0) / "operator_details.csv", newline="") as f:
        for v in csv.DictReader(f):
            s = sums[v["Name"]]
            s[0] += 1
            for i, col in enumerate(
                (
                    "Host Total Duration(us)",
                    "Host Self Duration(us)",
                    "Device Self Duration(us)",
                    "Device Total Duration(us)",
                ),
                1,
            ):
                s[i] += Decimal(v[col] or "0")
    assert set(df["name"]) == set(sums)
    for r in rows(df.head(30)):
        count, host_total, host_self, dev_self, dev_total = sums[r["name"]]
        assert r["count"] == count
        for ours, theirs in (
            ("host_total_us", host_total),
            ("host_self_us", host_self),
            ("device_self_us", dev_self),
            ("device_total_us", dev_total),
        ):
            assert r[ours] == pytest.approx(float(theirs), rel=1e-3, abs=1e-3), (r["name"], ours)


def test_transdata_share_of_compute_equals_kernel_details(fixtures):
    p = _load(fixtures, "text_level1")
    with open(_out(fixtures, 0) / "kernel_details.csv", newline="") as f:
        kd = [r for r in csv.DictReader(f) if r["Accelerator Core"] not in ("HCCL", "COMMUNICATION")]
    compute = sum(Decimal(r["Duration(us)"]) for r in kd)
    transdata = sum(Decimal(r["Duration(us)"]) for r in kd if r["Type"] == "TransData")
    df = p.format_conversions(rank=0)
    share = float(df.loc[df["type"] == "TransData", "share_of_compute_ratio"].sum())
    assert share == pytest.approx(float(transdata / compute), rel=1e-9)  # 0.16038 on rank 0
    assert int(df.loc[df["type"] == "TransData", "count"].sum()) == sum(r["Type"] == "TransData" for r in kd)
    # the SQL predicate agrees with categories.is_format_conversion on every kernel
    expected = sum(is_format_conversion(r["Type"], r["Input Formats"], r["Output Formats"]) for r in kd)
    assert int(df["count"].sum()) == expected
    assert df["host_op"].notna().all()


def test_cli_view_json(fixtures, capsys):
    path = str(fixtures / "ascend_pt/text_level1/rank0_ascend_pt")
    assert main(["view", "op_summary", path, "--by", "type", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["analysis"] == "op_summary" and data["rows"][0]["type"] == "ForeachAddList"
    assert {"count", "total_us", "share_of_compute_ratio", "share_of_step_ratio"} <= set(data["rows"][0])


def test_rich_display(fixtures):
    p = _load(fixtures, "text_level1")
    for df in (p.op_summary(), p.op_summary(where="host"), p.format_conversions(), p.top_kernels()):
        html = df._repr_html_()
        assert "<svg" in html and "<table" in html
        assert MIME in df._repr_mimebundle_()


def test_format_conversions_the_same_with_tables_held_in_memory(fixtures, monkeypatch):
    """With the cache off the tables are Arrow in memory, which gives DuckDB's planner no
    statistics: the query must not depend on them (it once joined the conversions to host_ops on
    rank alone, a product of both tables: 82 s on a 100 MB rank).  Same rows either way."""
    cached = _load(fixtures, "text_level1").format_conversions()
    monkeypatch.setenv("PROFINSIGHT_CACHE", "off")
    held = profinsight.load(fixtures / "ascend_pt" / "text_level1")
    assert held.parquet_files("device_tasks") is None  # the in-memory path
    got = held.format_conversions()
    assert len(got) > 0 and got["host_op"].notna().any()
    pd.testing.assert_frame_equal(pd.DataFrame(got), pd.DataFrame(cached))
