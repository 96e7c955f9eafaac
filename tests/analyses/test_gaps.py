"""idle_gaps / launch_stats / dataloader: golden tables with every host activity, and the
Level1 fixture checked against gaps computed here, in plain Python, from the canonical tables."""

from __future__ import annotations

import csv

import pandas as pd
import pytest

import profinsight
from profinsight.testing import profile_from_tables

US = 1000  # ns per us


@pytest.fixture(scope="module")
def level1(tmp_path_factory, fixtures):
    # same cache folder as test_steps.py: whichever module runs second loads warm
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PROFINSIGHT_CACHE", str(tmp_path_factory.getbasetemp() / "analyses-cache"))
        return profinsight.load(fixtures / "ascend_pt" / "text_level1")


def golden_tables():
    """Host step 1 = [0, 4000) us, step 2 = [4000, 5000) us; thread 1 runs Python and framework
    ops, thread 2 the runtime API.  Kernels k1..k8 leave these device gaps (us):
      A 1100-1200  nothing but ProfilerStep           -> idle
      B 1300-1500  a Python frame                     -> python
      C 1600-2000  API calls on the launching thread  -> launch (aclnnAdd, overlap 120), beats the frame
      D 2100-2600  enumerate(DataLoader) op           -> data_loading (overlap 450)
      E 2700-3000  aten::item (and a launch call)     -> synchronization (overlap 300)
      F 3100-3150  aten::mul on a launching thread + a user range -> launch (overlap 20)
      G 3200-4100  between steps 1 and 2              -> idle
    """
    kern = [
        (1, 1000, 1100, 1),
        (2, 1200, 1300, 1),
        (3, 1500, 1600, 1),
        (4, 2000, 2100, 1),
        (5, 2600, 2700, 1),
        (6, 3000, 3100, 1),
        (7, 3150, 3200, 1),
        (8, 4100, 4200, 2),
    ]
    tasks = pd.DataFrame(
        {
            "task_uid": [u for u, *_ in kern],
            "kind": "kernel",
            "name": [f"k{u}" for u, *_ in kern],
            "type": "Add",
            "core": "AI_VECTOR_CORE",
            "start_ns": [s * US for _, s, _, _ in kern],
            "dur_ns": [(e - s) * US for _, s, e, _ in kern],
            "step": [st for *_, st in kern],
        }
    )
    ops = [  # op_id, thread, category, name, start, end (us)
        (1, 1, "op", "ProfilerStep#1", 0, 4000),
        (2, 1, "op", "ProfilerStep#2", 4000, 5000),
        (3, 1, "python", "train.py(10): step", 1250, 1450),
        (4, 1, "python", "train.py(20): forward", 1600, 2000),
        (5, 1, "op", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 2000, 2550),
        (6, 1, "annotation", "DataLoader.fetch", 2100, 2200),
        (7, 1, "op", "aten::item", 2650, 3050),
        (8, 1, "op", "aten::mul", 3120, 3140),
        (9, 1, "annotation", "user_region", 3100, 3150),
        (10, 1, "op", "aten::conv2d", 850, 950),
    ]
    host = pd.DataFrame(
        {
            "op_id": [o[0] for o in ops],
            "thread": [o[1] for o in ops],
            "category": [o[2] for o in ops],
            "name": [o[3] for o in ops],
            "start_ns": [o[4] * US for o in ops],
            "dur_ns": [(o[5] - o[4]) * US for o in ops],
            "step": [2 if o[4] >= 4000 else 1 for o in ops],
        }
    )
    apis = [  # call_id, name, start, end (us), thread 2
        (1, "launch", 900, 920),
        (6, "aclnnAdd", 1690, 1810),
        (2, "launch", 1700, 1800),
        (3, "aclrtSynchronizeStream", 2650, 2700),
        (5, "launch", 2750, 2900),
    ]
    api = pd.DataFrame(
        {
            "call_id": [a[0] for a in apis],
            "thread": 2,
            "level": "acl",
            "name": [a[1] for a in apis],
            "start_ns": [a[2] * US for a in apis],
            "dur_ns": [(a[3] - a[2]) * US for a in apis],
        }
    )
    launches = pd.DataFrame(
        {
            "task_uid": [1, 1, 4, 6, 7],
            "api_call_id": [1, None, 2, 5, None],
            "host_op_id": [None, 10, None, None, 8],
            "link": ["connection_id", "torch_to_npu", "connection_id", "connection_id", "torch_to_npu"],
        }
    )
    for c in ("api_call_id", "host_op_id"):
        launches[c] = launches[c].astype("Int64")
    steps = pd.DataFrame({"step": [1, 2], "host_start_ns": [0, 4000 * US], "host_end_ns": [4000 * US, 5000 * US]})
    return {"device_tasks": tasks, "host_ops": host, "api_calls": api, "launches": launches, "steps": steps}


def test_idle_gaps_golden():
    df = profile_from_tables(golden_tables()).idle_gaps()
    assert list(df.columns) == [
        "rank",
        "step",
        "position",
        "start_ns",
        "end_ns",
        "dur_us",
        "offset_us",
        "host_activity",
        "host_op",
        "overlap_us",
        "host_api",
        "host_api_overlap_us",
        "next_task",
        "label",
    ]
    got = [
        (
            r.step,
            r.position,
            r.start_ns // US,
            r.end_ns // US,
            r.dur_us,
            r.host_activity,
            None if pd.isna(r.host_op) else r.host_op,
            None if pd.isna(r.overlap_us) else r.overlap_us,
            r.next_task,
        )
        for r in df.itertuples()
    ]
    assert got == [
        (2, "between_steps", 3200, 4100, 900.0, "idle", None, None, "k8"),
        (
            1,
            "in_step",
            2100,
            2600,
            500.0,
            "data_loading",
            "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
            450.0,
            "k5",
        ),
        (1, "in_step", 1600, 2000, 400.0, "launch", "aclnnAdd", 120.0, "k4"),
        (1, "in_step", 2700, 3000, 300.0, "synchronization", "aten::item", 300.0, "k6"),
        (1, "in_step", 1300, 1500, 200.0, "python", "train.py(10): step", 150.0, "k3"),
        (1, "in_step", 1100, 1200, 100.0, "idle", None, None, "k2"),
        (1, "in_step", 3100, 3150, 50.0, "launch", "aten::mul", 20.0, "k7"),
    ]
    assert df["offset_us"].tolist()[:2] == [-800.0, 2100.0]
    assert df["label"].iloc[0] == "r0 s2 +-0.800 ms"


def test_idle_gaps_edge_activities():
    """A user range alone counts as python; an op on a thread that never launches device work
    explains nothing (idle); a CUDA-style synchronize API wins over a launch call."""
    tasks = pd.DataFrame(
        {
            "task_uid": [1, 2, 3, 4],
            "kind": ["kernel", "memcpy", "kernel", "memset"],
            "name": ["a", "b", "c", "d"],
            "start_ns": [0, 200 * US, 400 * US, 600 * US],
            "dur_ns": [100 * US] * 4,
            "step": [7] * 4,
        }
    )
    host = pd.DataFrame(
        {
            "op_id": [1, 2, 3],
            "thread": [1, 9, 1],
            "category": ["annotation", "op", "annotation"],
            "name": ["## optimizer ##", "aten::add", "ProfilerStep#7"],
            "start_ns": [120 * US, 300 * US, -50 * US],
            "dur_ns": [60 * US, 100 * US, 800 * US],
            "step": [7, 7, 7],
        }
    )
    api = pd.DataFrame(
        {
            "call_id": [1, 2],
            "thread": [1, 1],
            "name": ["cudaLaunchKernel", "cudaStreamSynchronize"],
            "start_ns": [-10 * US, 520 * US],
            "dur_ns": [5 * US, 60 * US],
        }
    )
    launches = pd.DataFrame({"task_uid": [1], "api_call_id": [1], "link": ["correlation"]})
    steps = pd.DataFrame({"step": [7], "host_start_ns": [-50 * US], "host_end_ns": [750 * US]})
    p = profile_from_tables(
        {"device_tasks": tasks, "host_ops": host, "api_calls": api, "launches": launches, "steps": steps}
    )
    df = p.idle_gaps().sort_values("start_ns")
    assert df[["start_ns", "host_activity"]].values.tolist() == [
        [100 * US, "python"],
        [300 * US, "idle"],
        [500 * US, "synchronization"],
    ]
    assert df["host_op"].tolist()[::2] == ["## optimizer ##", "cudaStreamSynchronize"]
    assert df["overlap_us"].tolist()[::2] == [60.0, 60.0]


def test_idle_gaps_without_steps():
    """No ProfilerStep on the rank: gaps over the whole capture, step null, offsets from the
    first device task."""
    tasks = pd.DataFrame(
        {
            "task_uid": [1, 2],
            "kind": ["kernel", "kernel"],
            "name": ["a", "b"],
            "start_ns": [1000 * US, 1500 * US],
            "dur_ns": [100 * US, 100 * US],
        }
    )
    df = profile_from_tables({"device_tasks": tasks}).idle_gaps()
    assert df[["position", "dur_us", "offset_us", "host_activity", "next_task", "label"]].values.tolist() == [
        ["in_step", 400.0, 100.0, "idle", "b", "r0 s- +0.100 ms"]
    ]
    assert pd.isna(df["step"].iloc[0])


def test_idle_gaps_params():
    p = profile_from_tables(golden_tables())
    assert p.idle_gaps(min_us=100).shape[0] == 6  # F (50 us) drops out
    assert p.idle_gaps(min_us=100.5).shape[0] == 5
    top = p.idle_gaps(top=2)
    assert top["dur_us"].tolist() == [900.0, 500.0]
    assert p.view("idle_gaps", min_us="0").shape[0] == 7  # CLI text is converted


def test_launch_stats_golden():
    df = profile_from_tables(golden_tables()).launch_stats()
    assert list(df.columns) == [
        "rank",
        "step",
        "kernels",
        "launched_kernels",
        "short_kernels",
        "median_kernel_us",
        "median_launch_us",
        "median_delay_us",
        "p90_delay_us",
        "dispatch_us",
        "host_step_us",
        "step_us",
        "share_of_step_ratio",
        "share_of_host_step_ratio",
        "label",
    ]
    s1 = df.set_index("step").loc[1]
    # launched: k1 (API 'launch' 900, preferred over its host op), k4 (1700), k6 (2750), k7 (host op aten::mul 3120)
    assert (s1["kernels"], s1["launched_kernels"], s1["short_kernels"]) == (7, 4, 1)  # k6: 100 us < 150 us launch
    assert s1["median_kernel_us"] == 100.0
    assert s1["median_launch_us"] == 60.0  # 20, 20, 100, 150
    assert s1["median_delay_us"] == 175.0  # 30, 100, 250, 300
    assert s1["p90_delay_us"] == pytest.approx(285.0)
    # thread 2 API time in step 1: 20 + union(aclnnAdd, launch) 120 + 150; the synchronize call is not dispatch
    assert s1["dispatch_us"] == 290.0
    assert s1["step_us"] == 2200.0 and s1["host_step_us"] == 4000.0
    assert s1["share_of_step_ratio"] == pytest.approx(290 / 2200)
    assert s1["share_of_host_step_ratio"] == pytest.approx(290 / 4000)
    s2 = df.set_index("step").loc[2]
    assert (s2["kernels"], s2["launched_kernels"], s2["short_kernels"], s2["dispatch_us"]) == (1, 0, 0, 0.0)
    assert pd.isna(s2["median_delay_us"])


def test_dataloader_golden():
    df = profile_from_tables(golden_tables()).dataloader()
    assert list(df.columns) == [
        "rank",
        "step",
        "count",
        "dataloader_us",
        "host_step_us",
        "share_of_host_step_ratio",
        "device_busy_during_us",
        "device_idle_during_us",
        "overlaps_device",
        "label",
    ]
    s1, s2 = df.iloc[0], df.iloc[1]
    # the op [2000, 2550) and the nested range [2100, 2200): union 550; kernel k4 [2000, 2100) runs meanwhile
    assert (s1["count"], s1["dataloader_us"], s1["device_busy_during_us"], s1["device_idle_during_us"]) == (
        2,
        550.0,
        100.0,
        450.0,
    )
    assert s1["share_of_host_step_ratio"] == pytest.approx(550 / 4000) and bool(s1["overlaps_device"])
    assert (s2["count"], s2["dataloader_us"], bool(s2["overlaps_device"])) == (0, 0.0, False)


def test_empty_profile():
    p = profile_from_tables({})
    for name in ("idle_gaps", "launch_stats", "dataloader", "step_breakdown", "utilization", "time_by_category"):
        assert p.view(name).empty


# --- the Level1 fixture -----------------------------------------------------------------------


def _gaps_by_hand(tasks: pd.DataFrame) -> list[tuple[int, int, int]]:
    """(rank, start, end) of every gap in the union of kernel/communication/memcpy/memset tasks
    that belong to a step, per rank — a plain Python sweep."""
    out = []
    sel = tasks[tasks["kind"].isin(["kernel", "communication", "memcpy", "memset"]) & tasks["step"].notna()]
    for rank, g in sel.groupby("rank"):
        iv = sorted(zip(g["start_ns"].astype(int), (g["start_ns"] + g["dur_ns"]).astype(int)))
        end = iv[0][1]
        for s, e in iv[1:]:
            if s > end:
                out.append((int(rank), end, s))
            end = max(end, e)
    return out


def test_idle_gaps_level1(level1):
    expected = _gaps_by_hand(level1.table("device_tasks"))
    df = level1.idle_gaps(min_us=0)
    assert len(df) == len(expected)
    for min_us in (50.0, 500.0):
        want = [g for g in expected if g[2] - g[1] >= min_us * 1e3]
        assert len(level1.idle_gaps(min_us=min_us)) == len(want)
    big = max(expected, key=lambda g: g[2] - g[1])
    top = level1.idle_gaps(top=1).iloc[0]
    assert (top["rank"], top["start_ns"], top["end_ns"]) == big
    assert top["dur_us"] == (big[2] - big[1]) / 1e3
    assert set(df["host_activity"]) <= {"data_loading", "synchronization", "launch", "python", "idle"}
    # every gap labelled synchronization overlaps a host op named like a sync
    sync = df[df["host_activity"] == "synchronization"]
    assert len(sync) and sync["host_op"].str.contains("item|ynchroni|Sync").all()
    assert (df["overlap_us"].fillna(0) <= df["dur_us"] + 1e-9).all()


def test_launch_stats_level1(level1, fixtures):
    df = level1.launch_stats().set_index("rank")
    for rank in (0, 1):
        path = fixtures / "ascend_pt/text_level1" / f"rank{rank}_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv"
        with open(path, newline="") as f:
            compute = sum(1 for r in csv.DictReader(f) if r["Accelerator Core"] != "HCCL")
        r = df.loc[rank]
        assert r["kernels"] == compute == 187
        assert r["launched_kernels"] == compute  # every kernel has its node 'launch' call
        assert 0 < r["short_kernels"] < compute
        assert r["median_delay_us"] > 0 and r["p90_delay_us"] >= r["median_delay_us"]
        assert 0 < r["share_of_step_ratio"] < 1


def test_dataloader_level1(level1):
    host = level1.table("host_ops")
    df = level1.dataloader().set_index("rank")
    for rank in (0, 1):
        dl = host[(host["rank"] == rank) & host["name"].str.startswith("enumerate(DataLoader)")]
        assert len(dl) == 1
        r = df.loc[rank]
        assert r["count"] == 1 and r["dataloader_us"] == int(dl["dur_ns"].iloc[0]) / 1e3
        # the loader runs before the step's first device task: the device is idle meanwhile
        assert not r["overlaps_device"] and r["device_idle_during_us"] == r["dataloader_us"]


def test_api_in_progress_equals_brute_force():
    """The sweep that names the API call in progress per gap gives what comparing every gap with
    every call gives: calls nested, a call over several gaps, calls that start at a gap's start
    or end at it, ties broken by the shorter call then the lower id, two ranks."""
    import duckdb
    import numpy as np

    from profinsight.analyses.gaps import _api_in_progress

    rng = np.random.default_rng(7)
    rows = []
    for rank in (0, 1):
        for cid in range(400):
            s = int(rng.integers(0, 100_000))
            d = int(rng.choice([0, 5, 50, 500, 5_000, 40_000]))
            rows.append((rank, f"api{cid % 37}", s, d, cid))
    rows += [(0, "at_start", 1_000, 10, 10_000), (0, "ends_at_start", 990, 10, 10_001)]
    con = duckdb.connect()
    con.execute("CREATE TABLE api_calls (rank INTEGER, name VARCHAR, start_ns BIGINT, dur_ns BIGINT, call_id BIGINT)")
    con.executemany("INSERT INTO api_calls VALUES (?, ?, ?, ?, ?)", rows)
    gaps = []
    for rank in (0, 1):
        edges = np.sort(rng.choice(np.arange(0, 100_000, 7), 60, replace=False))
        gaps += [(rank, int(a), int(b)) for a, b in zip(edges[::2], edges[1::2])]
    gaps.append((0, 1_000, 1_003))
    df = (
        pd.DataFrame(gaps, columns=["rank", "start_ns", "end_ns"]).sample(frac=1, random_state=1).reset_index(drop=True)
    )

    class P:
        def connection(self):
            return con

    got = _api_in_progress(P(), df)
    want_name, want_ov = [], []
    for rank, gs, ge in df.itertuples(index=False):
        best = None
        for r, name, s, d, cid in rows:
            if r != rank or d <= 0 or not (s < ge and s + d > gs):
                continue
            key = (min(s + d, ge) - max(s, gs), -d, -cid)
            if best is None or key > best[0]:
                best = (key, name)
        want_name.append(best[1] if best else None)
        want_ov.append(best[0][0] / 1e3 if best else None)
    assert got == (want_name, want_ov)
    assert sum(x is not None for x in want_name) > 40 and got[0][df.index[df["start_ns"] == 1_000][0]] == "at_start"


@pytest.mark.parametrize(
    "path", ["kineto/gpu_alexnet.json.gz", "kineto/gpu_2rank_rank0.json.gz", "ascend_pt/text_level1"]
)
def test_top_gaps_are_the_head_of_all_gaps(fixtures, path):
    """``top`` explains only the longest gaps; each gap's explanation is its own, so they are the
    first rows of the full result exactly, longest first, ties by rank then start."""
    p = profinsight.load(fixtures / path)
    full = pd.DataFrame(p.idle_gaps(min_us=0))
    assert len(full) > 20
    key = list(zip(-full["dur_us"], full["rank"], full["start_ns"]))
    assert key == sorted(key)
    explained = full["host_activity"] != "idle"
    assert explained.sum() > 5  # the rows carry explanations worth comparing
    for n in (1, 7, 20):
        top = pd.DataFrame(p.idle_gaps(min_us=0, top=n))
        pd.testing.assert_frame_equal(top, full.head(n).reset_index(drop=True))


def _dispatch_reference(tables) -> dict:
    """dispatch_us per step by the plain definition: every non-synchronize call on a launching
    thread, in every host step whose [start, end) holds its start, cut at the step's end; the
    union of those intervals per thread, summed over threads."""
    api, steps = tables["api_calls"], tables["steps"]
    launching = set(api.loc[api["call_id"].isin(tables["launches"]["api_call_id"].dropna()), "thread"])
    out = {}
    for _, st in steps.iterrows():
        ivs = {}
        for _, a in api.iterrows():
            if a["thread"] not in launching or "ynchroni" in a["name"]:
                continue
            if pd.notna(st["host_start_ns"]) and pd.notna(st["host_end_ns"]):
                if st["host_start_ns"] <= a["start_ns"] < st["host_end_ns"]:
                    e = min(a["start_ns"] + a["dur_ns"], st["host_end_ns"])
                    ivs.setdefault(a["thread"], []).append((a["start_ns"], e))
        total = 0
        for iv in ivs.values():
            end = None
            for s, e in sorted(iv):
                total += max(e - max(s, end if end is not None else s), 0)
                end = e if end is None else max(end, e)
        out[int(st["step"])] = total / 1e3
    return out


@pytest.mark.parametrize(
    "steps",
    [
        [(1, 0, 4000), (2, 4000, 5000)],  # one after the other: each call in one step
        [(1, 0, 4000), (2, 1000, 5000)],  # overlapping: calls in both
        [(1, 0, 4000), (2, 0, 2000), (3, 4000, 5000)],  # a shared start
        [(1, 0, 0), (2, 0, 4000), (3, 4000, None)],  # an empty step at the same start, an open end
        [(1, 1650, 1750), (2, 0, 4000), (3, 4000, 5000)],  # a step inside another
    ],
)
def test_dispatch_is_the_plain_definition_whatever_the_steps(steps):
    """Calls find their step by a binary search where a rank's steps follow each other, and by
    testing every step where they do not: the figures are the plain definition's in both."""
    tables = golden_tables()
    tables["steps"] = pd.DataFrame(
        {
            "step": [s for s, *_ in steps],
            "host_start_ns": pd.array([a * US for _, a, _ in steps], dtype="Int64"),
            "host_end_ns": pd.array([None if b is None else b * US for *_, b in steps], dtype="Int64"),
        }
    )
    df = profile_from_tables(tables).launch_stats().set_index("step")
    want = _dispatch_reference(tables)
    assert {int(k): float(v) for k, v in df["dispatch_us"].items()} == want
    assert any(v > 0 for v in want.values())


def test_tables_read_by_one_statement_are_gone_after_it(fixtures):
    """``query_with`` (the gaps' event names read ids in place): the Arrow tables are read by name
    for that statement only, on whichever thread's cursor runs it, and removed after it, also when
    it fails.  (The SQL name is no Python variable's: DuckDB would find one of those by itself.)"""
    import duckdb
    import pyarrow as pa

    from profinsight.analyses._sql import query_with

    p = profinsight.load(fixtures / "kineto" / "gpu_alexnet.json.gz")
    ops = p.sql("SELECT op_id FROM host_ops ORDER BY op_id LIMIT 5")["op_id"].astype("int64").tolist()
    wanted = pa.table({"id": pa.array([*ops, ops[0], 10**12], pa.int64())})  # a repeat, one not there
    sql = "SELECT h.op_id FROM host_ops h SEMI JOIN ids_wanted w ON h.op_id = w.id ORDER BY 1"
    assert query_with(p, sql, {"ids_wanted": wanted})["op_id"].tolist() == ops
    with pytest.raises(duckdb.Error):
        p.connection().sql("SELECT * FROM ids_wanted").fetchall()
    with pytest.raises(duckdb.Error):
        query_with(p, "SELECT no_such_column FROM ids_wanted", {"ids_wanted": wanted})
    with pytest.raises(duckdb.Error):
        p.connection().sql("SELECT * FROM ids_wanted").fetchall()
    with p.parallel(2) as pool:
        got = list(pool.map(lambda _: query_with(p, sql, {"ids_wanted": wanted})["op_id"].tolist(), range(4)))
    assert got == [ops] * 4
