"""Every rule on a small hand-made trace: one that triggers it (exact numbers) and one that does not."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from profinsight.advisor import advise, evaluate
from profinsight.i18n import t
from profinsight.i18n.messages import MESSAGES
from profinsight.testing import profile_from_tables

US = 1000  # ns


def k(start_us, dur_us, name="K", type_="Add", core="AI_VECTOR_CORE", kind="kernel", **extra):
    return dict(
        rank=0,
        device=0,
        stream=1,
        kind=kind,
        name=name,
        type=type_,
        core=core,
        start_ns=int(start_us * US),
        dur_ns=int(dur_us * US),
        step=1,
        **extra,
    )


def make(tasks, *, comm=None, api=None, host=None, env=None, fmt="ascend_text", mem=None):
    dt = pd.DataFrame(tasks)
    end = int((dt.start_ns + dt.dur_ns).max())
    tables = {
        "device_tasks": dt,
        "steps": pd.DataFrame(
            [
                dict(
                    rank=0,
                    step=1,
                    host_start_ns=0,
                    host_end_ns=end,
                    device_start_ns=int(dt.start_ns.min()),
                    device_end_ns=end,
                )
            ]
        ),
    }
    if comm:
        tables["comm_ops"] = pd.DataFrame(comm)
    if api:
        tables["api_calls"] = pd.DataFrame(api)
    if host:
        tables["host_ops"] = pd.DataFrame(host)
    if env is not None:
        tables["run_info"] = pd.DataFrame([dict(rank=0, device=0, source_format=fmt, env=json.dumps(env))])
    if mem:
        tables["memory_samples"] = pd.DataFrame(mem)
    return profile_from_tables(tables, fmt=fmt)


def fired(p, rule, **th):
    findings, _ = evaluate(p, "en", {f"{rule}.{k}": v for k, v in th.items()}, only=(rule,))
    return {f["rule"]: f for f in findings}.get(rule)


def busy(n=10, dur=100, gap=0, start=0, **kw):
    return [k(start + i * (dur + gap), dur, name=f"K{i}", **kw) for i in range(n)]


# --- communication_overlap -----------------------------------------------------------------------
def comm_trace(transit, wait, idle):
    # compute 0-200 us; allreduce 100-900 us (100 us overlapped); step 0-900 us
    tasks = [
        k(0, 200),
        k(100, 800, name="hcom_allReduce_1", type_="hcom_allReduce_", core="HCCL", kind="communication"),
    ]
    comm = [
        dict(
            rank=0,
            step=1,
            name="hcom_allReduce_1",
            type="hcom_allReduce_",
            category="collective",
            start_ns=100 * US,
            dur_ns=800 * US,
            transit_ns=transit * US,
            wait_ns=wait * US,
            sync_ns=0,
            idle_ns=idle * US,
            bytes=1000,
        )
    ]
    return make(tasks, comm=comm)


def test_communication_waiting_split_and_bound():
    f = fired(comm_trace(40, 60, 700), "communication_overlap")
    assert f["severity"] == "high"
    # not overlapped 700 of 900 us; compute not yet overlapped = 200 - 100 = 100 us
    assert f["recoverable_us"] == pytest.approx(100.0)
    assert f["share_of_step_ratio"] == pytest.approx(100 / 900, abs=1e-6)
    s = f["evidence"]["split"]
    assert (s["transit_us"], s["wait_us"], s["idle_us"]) == (40.0, 60.0, 700.0)
    assert s["transit_ratio"] == pytest.approx(0.05)
    assert "mostly wait" in f["message"] and "slower rank or host" in f["message"]
    assert "transit only 0.0 ms (5.0% of their elapsed time)" in f["message"]  # the share names its denominator


def test_communication_transit_variant_and_silent():
    f = fired(comm_trace(700, 50, 50), "communication_overlap")
    assert "mostly wait" not in f["message"] and "move data" in f["message"]
    assert fired(comm_trace(40, 60, 700), "communication_overlap", min_share_of_step=0.9) is None
    # all communication hidden under compute: silent
    tasks = [k(0, 1000), k(100, 100, name="hcom_1", type_="hcom_allReduce_", core="HCCL", kind="communication")]
    assert fired(make(tasks), "communication_overlap") is None


# --- format_conversion ---------------------------------------------------------------------------
def test_format_conversion():
    tasks = busy(8, 100) + [k(800 + i * 50, 50, name=f"trans_TransData_{i}", type_="TransData") for i in range(4)]
    f = fired(make(tasks), "format_conversion")
    # 200 us of 1000 us compute; step 1000 us
    assert f["evidence"]["share_of_compute_ratio"] == pytest.approx(0.2)
    assert f["evidence"]["by_type"]["TransData"]["count"] == 4
    assert f["recoverable_us"] == pytest.approx(200.0)
    assert f["share_of_step_ratio"] == pytest.approx(0.2)
    assert "20.0% of compute" in f["message"]
    assert fired(make(tasks), "format_conversion", min_share_of_compute=0.25) is None
    assert fired(make(busy(10, 100)), "format_conversion") is None


# --- ai_cpu --------------------------------------------------------------------------------------
def test_ai_cpu():
    tasks = busy(9, 100) + [k(900, 100, name="NonZero1", type_="NonZero", core="AI_CPU", input_dtypes="INT64")]
    f = fired(make(tasks), "ai_cpu")
    assert f["evidence"]["share_of_compute_ratio"] == pytest.approx(0.1)
    assert f["recoverable_us"] == pytest.approx(100.0)
    assert "int64/double" in f["message"]
    assert fired(make(tasks), "ai_cpu", min_share_of_compute=0.2) is None
    assert fired(make(busy(10)), "ai_cpu") is None


# --- online_compile ------------------------------------------------------------------------------
def test_online_compile():
    api = [
        dict(rank=0, call_id=i, thread=1, level="acl", name=n, start_ns=i * 100 * US, dur_ns=d * US)
        for i, (n, d) in enumerate([("aclopCompileAndExecute", 80), ("opCompile", 50)])
    ]
    f = fired(make(busy(10, op_state="dynamic"), api=api), "online_compile")
    assert f["recoverable_us"] == pytest.approx(50.0)
    assert f["evidence"]["dynamic_kernels"] == 10 and f["evidence"]["aclopCompileAndExecute_calls"] == 1
    assert fired(make(busy(10), api=api), "online_compile", min_share_of_step=0.1) is None


# --- idle gaps / stream_sync ---------------------------------------------------------------------
def test_idle_gaps_host_bound_and_data_starved():
    tasks = busy(5, 100, gap=100)  # 4 gaps of 100 us in a 900 us step
    # no host data at all: the cause is unknown, and the finding says so (no dispatch claim, no
    # recoverable time, no TASK_QUEUE_ENABLE)
    f = fired(make(tasks), "idle_gaps")
    assert f["evidence"]["gaps"] == 4 and f["recoverable_us"] is None
    assert f["evidence"]["ranks_without_host_data"] == [0]
    assert "cause unknown: host data missing" in f["message"] and "dispatching" not in f["message"]
    assert "TASK_QUEUE_ENABLE" not in f["change"] and "ProfilerActivity.CPU" in f["change"]
    assert f["severity"] == "high"
    # the host runs Python through the gaps: host bound, recoverable the gap time
    py = [dict(rank=0, op_id=9, thread=1, category="python", name="train.py(1): step", start_ns=0, dur_ns=900 * US)]
    f = fired(make(tasks, host=py), "idle_gaps")
    assert f["recoverable_us"] == pytest.approx(400.0) and f["evidence"]["split_us"] == {"python": 400.0}
    assert f["share_of_step_ratio"] == pytest.approx(400 / 900, abs=1e-6)
    assert "dispatching" in f["message"]
    host = [
        dict(
            rank=0,
            op_id=1,
            thread=1,
            category="op",
            name="enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
            start_ns=100 * US,
            dur_ns=700 * US,
            step=1,
        )
    ]
    f = fired(make(tasks, host=host), "idle_gaps")
    assert "loads data" in f["message"] and f["evidence"]["split_us"] == {"data_loading": 400.0}
    assert fired(make(busy(10)), "idle_gaps") is None


def test_stream_sync():
    tasks = busy(5, 100, gap=100)
    api = [
        dict(
            rank=0,
            call_id=1,
            thread=1,
            level="runtime",
            name="aclrtSynchronizeStream",
            start_ns=100 * US,
            dur_ns=700 * US,
        )
    ]
    f = fired(make(tasks, api=api), "stream_sync")
    assert f["recoverable_us"] == pytest.approx(400.0) and "aclrtSynchronizeStream" in f["message"]
    assert fired(make(tasks), "stream_sync") is None


def test_dataloader():
    tasks = [k(0, 100), k(600, 100)]
    host = [
        dict(
            rank=0,
            op_id=1,
            thread=1,
            category="op",
            name="enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
            start_ns=150 * US,
            dur_ns=400 * US,
            step=1,
        )
    ]
    f = fired(make(tasks, host=host), "dataloader")
    assert f["recoverable_us"] == pytest.approx(400.0)
    assert fired(make(tasks, host=host), "dataloader", min_share_of_step=0.9) is None


def test_compute_bound():
    tasks = busy(10, 100, type_="MatMulV2", core="AI_CORE")
    f = fired(make(tasks), "compute_bound")
    assert f["evidence"]["busy_ratio"] == pytest.approx(1.0) and f["recoverable_us"] is None
    assert fired(make(busy(5, 100, gap=100)), "compute_bound") is None


# --- environment, memory, quality ----------------------------------------------------------------
def test_env_rules():
    env = {
        "ASCEND_LAUNCH_BLOCKING": "1",
        "ASCEND_GLOBAL_LOG_LEVEL": "0",
        "PYTORCH_NPU_ALLOC_CONF": "max_split_size_mb:128",
    }
    p = make(busy(10), env=env)
    assert fired(p, "env_launch_blocking")["severity"] == "high"
    assert "ASCEND_GLOBAL_LOG_LEVEL=0" in fired(p, "env_log_level")["message"]
    assert "max_split_size_mb:128" in fired(p, "env_alloc_conf")["message"]
    ok = make(
        busy(10),
        env={
            "ASCEND_LAUNCH_BLOCKING": "",
            "ASCEND_GLOBAL_LOG_LEVEL": "3",
            "PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True",
        },
    )
    assert all(fired(ok, r) is None for r in ("env_launch_blocking", "env_log_level", "env_alloc_conf"))


def test_memory_pressure():
    mem = [
        dict(rank=0, device=0, component="PTA", ts_ns=i * US, allocated_bytes=a * 2**30, reserved_bytes=r * 2**30)
        for i, (a, r) in enumerate([(1, 2), (3, 4), (2, 4)])
    ]
    p = make(busy(10), mem=mem)
    assert fired(p, "memory_pressure") is None  # 4/3 = 1.33 < 1.5
    f = fired(p, "memory_pressure", min_fragmentation=1.3)
    assert "fragmentation" in f["message"] and f["evidence"]["peak_reserved_bytes"] == 4 * 2**30
    f = fired(p, "memory_pressure", capacity_bytes=4.2 * 2**30)
    assert f["severity"] == "high" and "close to capacity" in f["message"]


def test_profile_quality():
    p = make(busy(10))
    assert fired(p, "profile_quality") is None
    assert fired(p, "profile_quality", max_steps=0)["evidence"]["codes"] == ["too-many-steps"]


def test_ascend_only_rules_silent_on_gpu():
    tasks = busy(8, 100) + [k(800, 200, name="t", type_="TransData")]
    df = advise(make(tasks, fmt="kineto", env={"ASCEND_LAUNCH_BLOCKING": "1"}), lang="en")
    na = df[df.severity == "not_applicable"]
    assert {"format_conversion", "ai_cpu", "online_compile", "env_launch_blocking"} <= set(na.rule)
    assert not set(df[df.severity != "not_applicable"].rule) & set(na.rule)


def test_thresholds_and_languages():
    from profinsight.errors import ProfileError

    with pytest.raises(ProfileError):
        evaluate(make(busy(10)), "en", {"nope.x": 1})
    p = comm_trace(40, 60, 700)
    zh, _ = evaluate(p, "zh")
    assert "传输" in zh[0]["message"]


def test_catalogue_complete():
    assert set(MESSAGES["en"]) == set(MESSAGES["zh"])
    from profinsight.advisor.rules import RULES

    for rid in RULES:
        assert f"{rid}.title" in MESSAGES["en"]
        for part in ("message", "change"):
            assert any(k.startswith(f"{rid}.{part}") for k in MESSAGES["en"])


def test_lang_default_from_locale(monkeypatch):
    from profinsight.i18n import default_lang

    monkeypatch.setenv("LC_ALL", "zh_CN.UTF-8")
    assert default_lang() == "zh" and t("section.verdict") == "结论"
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    assert default_lang() == "en"


def test_idle_gaps_never_claim_more_than_the_steps_free_time():
    """A gap between two steps belongs to neither step's device span: the steps' free time is
    100 us in all (step 1: 300 us with 100 us free; step 2: 200 us, none free), so the 1,000 us
    gap between them plus the 100 us inside step 1 recover at most 50 us per step (it said
    550 us, 220% of the step, on a scaled profile)."""
    tasks = [k(0, 100, name="A"), k(200, 100, name="B"), k(1300, 100, name="C"), k(1400, 100, name="D")]
    for task, s in zip(tasks, [1, 1, 2, 2]):
        task["step"] = s
    steps = pd.DataFrame(
        [
            dict(rank=0, step=1, host_start_ns=0, host_end_ns=1300 * US, device_start_ns=0, device_end_ns=300 * US),
            dict(
                rank=0,
                step=2,
                host_start_ns=1300 * US,
                host_end_ns=1500 * US,
                device_start_ns=1300 * US,
                device_end_ns=1500 * US,
            ),
        ]
    )
    host = pd.DataFrame(  # a Python frame through both steps: the gaps are host bound (evidence of a cause)
        [dict(rank=0, op_id=1, thread=1, category="python", name="train.py(1): loop", start_ns=0, dur_ns=1500 * US)]
    )
    p = profile_from_tables({"device_tasks": pd.DataFrame(tasks), "steps": steps, "host_ops": host}, fmt="ascend_text")
    assert sorted(p.idle_gaps(min_us=50)["dur_us"]) == [100.0, 1000.0]
    f = fired(p, "idle_gaps")
    assert f["recoverable_us"] == pytest.approx(50.0)
    assert f["share_of_step_ratio"] == pytest.approx(50.0 / 250.0)
