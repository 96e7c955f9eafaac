"""The rules added for issue 4's remaining list (tiny kernels, collective bandwidth and small
packets, slow rank, slow link, allocator churn, Python GC): each on a small hand-made trace that
triggers it (exact numbers) and one that does not."""

from __future__ import annotations

import pandas as pd
import pytest

from profinsight.advisor import advise, evaluate
from profinsight.advisor.rules import RULES
from profinsight.testing import profile_from_tables

US = 1000  # ns
NEW = (
    "tiny_kernels",
    "collective_bandwidth",
    "collective_small_packets",
    "slow_rank",
    "slow_link",
    "memory_churn",
    "python_gc",
)


def task(start_us, dur_us, *, rank=0, name="K", type_="Add", core="AI_VECTOR_CORE", kind="kernel", uid=None):
    return dict(
        rank=rank,
        device=rank,
        stream=1,
        kind=kind,
        name=name,
        type=type_,
        core=core,
        start_ns=int(start_us * US),
        dur_ns=int(dur_us * US),
        step=1,
        task_uid=uid,
    )


def comm_task(start_us, dur_us, rank=0, name="hcom_allReduce_1"):
    return task(start_us, dur_us, rank=rank, name=name, type_="hcom_allReduce_", core="HCCL", kind="communication")


def make(tasks, fmt="ascend_text", **tables):
    dt = pd.DataFrame(tasks)
    dt["task_uid"] = dt["task_uid"].astype("Int64")
    steps = []
    for r, part in dt.groupby("rank"):
        end = int((part.start_ns + part.dur_ns).max())
        steps.append(
            dict(
                rank=int(r),
                step=1,
                host_start_ns=0,
                host_end_ns=end,
                device_start_ns=int(part.start_ns.min()),
                device_end_ns=end,
            )
        )
    out = {"device_tasks": dt, "steps": pd.DataFrame(steps)}
    out.update({k: pd.DataFrame(v) for k, v in tables.items()})
    return profile_from_tables(out, fmt=fmt)


def fired(p, rule, **th):
    findings, _ = evaluate(p, "en", {f"{rule}.{k}": v for k, v in th.items()}, only=(rule,))
    return {f["rule"]: f for f in findings}.get(rule)


def test_registered_with_words_in_both_languages():
    from profinsight.i18n.messages import MESSAGES

    for rid in NEW:
        assert rid in RULES
        for lang in ("en", "zh"):
            assert f"{rid}.title" in MESSAGES[lang] and f"{rid}.change" in MESSAGES[lang]


# --- tiny_kernels --------------------------------------------------------------------------------
def tiny_trace(kernel_us):
    # 120 kernels every 20 us, each launched by a 10 us API call that starts 12 us before it
    tasks = [task(i * 20, kernel_us, name=f"K{i}", uid=i) for i in range(120)]
    api = [
        dict(
            rank=0, call_id=i, thread=2, level="node", name="launch", start_ns=(i * 20 - 12 + 100) * US, dur_ns=10 * US
        )
        for i in range(120)
    ]
    tasks = [dict(t, start_ns=t["start_ns"] + 100 * US) for t in tasks]  # keep launches after 0
    launches = [dict(rank=0, task_uid=i, api_call_id=i, link="connection_id") for i in range(120)]
    return make(tasks, api_calls=api, launches=launches)


def test_tiny_kernels_trigger():
    f = fired(tiny_trace(5), "tiny_kernels")
    # all 120 kernels (5 us) are shorter than their 10 us launch; step 100..2485 us = 2385 us,
    # busy 600 us, free 1785 us: recoverable = min(120 x 10, 1785) = 1200 us
    ev = f["evidence"]["per_rank_step"][0]
    assert (ev["kernels"], ev["short_kernels"], ev["median_launch_us"]) == (120, 120, 10.0)
    assert f["recoverable_us"] == pytest.approx(1200.0)
    assert f["share_of_step_ratio"] == pytest.approx(1200 / 2385, abs=1e-6)
    assert "120 of 120 kernels per step (100%)" in f["message"]
    assert "graph mode" in f["change"]


def test_tiny_kernels_silent():
    assert fired(tiny_trace(20), "tiny_kernels") is None  # kernels longer than their launch
    assert fired(tiny_trace(5), "tiny_kernels", min_kernels=200) is None


# --- collective_bandwidth ------------------------------------------------------------------------
def bw_trace(transit_ms, fmt="ascend_text"):
    # compute 0-1000 us, allreduce 1000-31000 us (not overlapped); 100 MB over HCCS
    tasks = [task(0, 1000), comm_task(1000, 30000)]
    comm = [
        dict(
            rank=0,
            step=1,
            name="hcom_allReduce_1",
            type="hcom_allReduce_",
            category="collective",
            start_ns=1000 * US,
            dur_ns=30000 * US,
            transit_ns=int(transit_ms * 1e6),
            wait_ns=0,
            sync_ns=0,
            idle_ns=int((30 - transit_ms) * 1e6),
            bytes=100_000_000,
            hccs_bytes=100_000_000,
            hccs_transit_ns=int(transit_ms * 1e6),
        )
    ]
    return make(tasks, fmt=fmt, comm_ops=comm)


def test_collective_bandwidth_trigger():
    f = fired(bw_trace(20), "collective_bandwidth")
    link = f["evidence"]["links"][0]
    assert (link["link"], link["bandwidth_gbps"], link["nominal_gbps"]) == ("HCCS", 5.0, 30.0)
    # transit 20 ms, at 30 GB/s 100 MB needs 3.333 ms: 16.667 ms above nominal (< 30 ms not overlapped)
    assert f["recoverable_us"] == pytest.approx(20000 - 100e6 / 30 / 1e3, abs=1e-3)
    assert "HCCS at 5.0 GB/s" in f["message"] and "17%" in f["message"]
    # a lower nominal (another chip) makes 5 GB/s acceptable
    assert fired(bw_trace(20), "collective_bandwidth", hccs_nominal_gbps=10.0) is None


def test_collective_bandwidth_silent():
    assert fired(bw_trace(4), "collective_bandwidth") is None  # 25 GB/s
    df = advise(bw_trace(20, fmt="kineto"), lang="en")  # nominal figures are Ascend's
    assert df.set_index("rule").loc["collective_bandwidth", "severity"] == "not_applicable"


# --- collective_small_packets --------------------------------------------------------------------
def small_trace(n, nbytes):
    tasks = [task(0, 100)] + [comm_task(200 + i * 100, 50, name=f"hcom_allReduce_{i}") for i in range(n)]
    comm = [
        dict(
            rank=0,
            step=1,
            name=f"hcom_allReduce_{i}",
            type="hcom_allReduce_",
            category="collective",
            start_ns=(200 + i * 100) * US,
            dur_ns=50 * US,
            transit_ns=20 * US,
            wait_ns=30 * US,
            sync_ns=0,
            idle_ns=0,
            bytes=nbytes,
        )
        for i in range(n)
    ]
    return make(tasks, comm_ops=comm)


def test_collective_small_packets_trigger():
    f = fired(small_trace(30, 100_000), "collective_small_packets")
    ev = f["evidence"]
    assert (ev["ops_per_step"], ev["small_ops_per_step"], ev["small_bytes_total"]) == (30, 30, 3_000_000)
    # 3 MB fit one 25 MiB bucket: 29 ops saved x 20 us median transit (< 1500 us not overlapped)
    assert f["recoverable_us"] == pytest.approx(580.0)
    assert "30 of 30 collectives per step" in f["message"] and "bucket_cap_mb" in f["change"]


def test_collective_small_packets_silent():
    assert fired(small_trace(10, 100_000), "collective_small_packets") is None  # few ops
    assert fired(small_trace(30, 4_000_000), "collective_small_packets") is None  # big ops


# --- slow_rank -----------------------------------------------------------------------------------
def ranks_trace(extra_us, n_ranks=4):
    tasks = []
    for r in range(n_ranks):
        c = 1000 + (extra_us if r == n_ranks - 1 else 0)
        tasks += [task(0, c, rank=r), comm_task(c, 2000 - c, rank=r)]
    return make(tasks)


def test_slow_rank_trigger():
    f = fired(ranks_trace(500), "slow_rank")
    top = f["evidence"]["slow_ranks"][0]
    assert (top["rank"], top["component"], top["value_us"], top["median_us"]) == (3, "computing_us", 1500.0, 1000.0)
    assert top["comm_wait_vs_median_us"] == -500.0  # the others wait for it
    assert f["recoverable_us"] == pytest.approx(500.0) and f["share_of_step_ratio"] == pytest.approx(0.25)
    assert f["severity"] == "high" and "Rank 3" in f["message"]


def test_slow_rank_silent():
    assert fired(ranks_trace(0), "slow_rank") is None
    assert fired(ranks_trace(500, n_ranks=1), "slow_rank") is None  # one rank: nothing to compare


# --- slow_link -----------------------------------------------------------------------------------
def link_trace(slow_transit_ms, n_ranks=2):
    tasks = []
    for r in range(n_ranks):
        tasks += [task(0, 1000, rank=r), comm_task(1000, 30000, rank=r)]
    links = [
        dict(
            rank=0,
            step=1,
            category="collective",
            op_type="allreduce",
            summary="total",
            group="g",
            src_rank=0,
            dst_rank=d,
            transport="HCCS",
            bytes=100_000_000,
            transit_ns=int(ms * 1e6),
            op_name="hcom_allReduce_1",
        )
        for d, ms in ((1, 4), (2, 4), (3, slow_transit_ms))
    ]
    links.append(dict(links[0], dst_rank=0, transport="LOCAL", transit_ns=10 * US))
    return make(tasks, comm_links=links)


def test_slow_link_trigger():
    f = fired(link_trace(20), "slow_link")
    w = f["evidence"]["slow_links"][0]
    assert (w["src_rank"], w["dst_rank"], w["bandwidth_gbps"], w["median_gbps"]) == (0, 3, 5.0, 25.0)
    # 20 ms - 100 MB / 25 GB/s = 16 ms over 2 rank-steps
    assert w["excess_us"] == pytest.approx(16000.0) and f["recoverable_us"] == pytest.approx(8000.0)
    assert "0->3 over HCCS" in f["message"] and "20%" in f["message"]


def test_slow_link_silent():
    assert fired(link_trace(4), "slow_link") is None
    assert fired(link_trace(20, n_ranks=1), "slow_link") is None  # one rank loaded
    assert fired(link_trace(20), "slow_link", min_links=4) is None


# --- memory_churn --------------------------------------------------------------------------------
def churn_trace(n_malloc, empty_cache=False, blocks=0):
    api = [
        dict(
            rank=0,
            call_id=i,
            thread=1,
            level="runtime",
            name="aclrtMalloc" if i % 2 == 0 else "aclrtFree",
            start_ns=(100 + i * 60) * US,
            dur_ns=50 * US,
        )
        for i in range(n_malloc)
    ]
    host = (
        [
            dict(
                rank=0,
                op_id=1,
                thread=1,
                category="python",
                name="torch_npu/npu/memory.py(150): empty_cache",
                start_ns=50 * US,
                dur_ns=300 * US,
                step=1,
            )
        ]
        if empty_cache
        else []
    )
    mb = [
        dict(
            rank=0,
            device=0,
            name="aten::empty",
            component="PTA",
            size_bytes=1024,
            alloc_ns=i * US,
            release_ns=i * US + 500,
        )
        for i in range(blocks)
    ]
    tables = {"api_calls": api} if api else {}
    if host:
        tables["host_ops"] = host
    if mb:
        tables["memory_blocks"] = mb
    return make([task(0, 1000), task(2000, 1000)], **tables)


def test_memory_churn_trigger():
    f = fired(churn_trace(12), "memory_churn")
    assert f["evidence"]["device_malloc_free_per_step"] == 12
    assert "12 device malloc/free calls" in f["message"] and "12.0" not in f["message"]
    assert f["evidence"]["malloc_apis"] == {"aclrtMalloc": 6, "aclrtFree": 6}
    assert f["recoverable_us"] == pytest.approx(600.0)
    assert "expandable_segments:True" in f["change"] and "empty_cache" in f["change"]
    f = fired(churn_trace(2, empty_cache=True), "memory_churn")
    assert f["evidence"]["empty_cache_per_step"] == 1 and f["recoverable_us"] == pytest.approx(400.0)
    assert f["message"].startswith("empty_cache is called 1")
    f = fired(churn_trace(0, blocks=5), "memory_churn", min_blocks_per_step=5)
    assert f["severity"] == "low" and f["recoverable_us"] is None and "5 tensor allocations" in f["message"]


def test_memory_churn_counts_read_as_counts():
    """A whole count reads without a decimal; a mean per step keeps one."""
    from profinsight.advisor.rules.memory import _count

    assert repr(_count(39.0)) == "39" and repr(_count(0.04)) == "0" and repr(_count(12.46)) == "12.5"


def test_memory_churn_silent():
    assert fired(churn_trace(8), "memory_churn") is None
    assert fired(churn_trace(0, blocks=5), "memory_churn") is None


# --- python_gc -----------------------------------------------------------------------------------
def gc_trace(pauses_us):
    ts = [
        dict(
            rank=0,
            process="Python GC",
            thread="GC",
            name="GC",
            cat="gc",
            start_ns=(2500 + i * 1600) * US,
            dur_ns=int(d * US),
            args="{}",
        )
        for i, d in enumerate(pauses_us)
    ]
    return make([task(0, 2000), task(6000, 4000)], **({"trace_slices": ts} if ts else {}))


def test_python_gc_trigger():
    f = fired(gc_trace([1500, 1500]), "python_gc")
    # 3 ms of GC in a 10 ms step (30%); free 4 ms, so all 3 ms count
    assert (f["evidence"]["pauses"], f["evidence"]["gc_us"], f["evidence"]["longest_us"]) == (2, 3000.0, 1500.0)
    assert f["recoverable_us"] == pytest.approx(3000.0) and f["severity"] == "high"
    assert "gc.freeze()" in f["change"] and "30.0% of the step" in f["message"]
    # a single long pause fires on its length alone
    assert fired(gc_trace([100]), "python_gc", min_pause_us=50.0)["recoverable_us"] == pytest.approx(100.0)


def test_python_gc_silent():
    assert fired(gc_trace([100]), "python_gc") is None  # 1% of the step, 0.1 ms pause
    assert fired(gc_trace([]), "python_gc") is None


def test_chinese_words():
    f, _ = evaluate(gc_trace([1500, 1500]), "zh", only=("python_gc",))
    assert "垃圾回收" in f[0]["message"]


def test_notebook_display_lists_not_applicable_rules_in_a_footer():
    p = bw_trace(20, fmt="kineto")
    html = p.advise(lang="en")._repr_html_()
    table, footer = html.split("profinsight-footer")
    assert "Rules not applicable to this profile: format_conversion" in footer and "collective_bandwidth" in footer
    assert "not_applicable" not in table  # the table shows the findings only


def test_dataloader_share_is_of_the_host_step_when_no_device_step(fixtures):
    """rank_non_gpu records no device step: 71 us of DataLoader in a 75,473 us host step is
    0.094% of it (it said 7100000000000.0% of a step of 0), so the rule stays silent; asked to
    fire at any share, it names the host step as its denominator."""
    import profinsight

    p = profinsight.load(fixtures / "kineto" / "rank_non_gpu.json.gz")
    fired = p.advise()
    assert "dataloader" not in set(fired[fired["severity"] != "not_applicable"]["rule"])
    a = p.advise(thresholds={"dataloader.min_share_of_step": 0.0})
    row = a[a["rule"] == "dataloader"].iloc[0]
    assert row["recoverable_us"] == 71.0
    assert "0.07 ms per step (0.1% of the host step" in row["message"]
