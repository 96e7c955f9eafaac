"""module_time / code_time: device time attributed to nn.Module and source line.

A hand-made trace with known nesting (every hop of the chain: direct launch, connection-id
fan-out, task queue, autograd sequence number, a lost forward op, no link), checked against a
brute-force attribution written here with plain loops; the nesting primitive against brute
force on random call trees; the real fixtures for exact values and for the sum rule."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import profinsight
from profinsight.analyses._attribute import REASONS
from profinsight.nesting import Nesting
from profinsight.testing import profile_from_tables

MAIN, BWD, QUEUE, COMM = 1, 2, 3, 4

# python slices on the main thread: (name, start, end) in ns
PYTHON = [
    ("train.py(10): train", 0, 1000),
    ("nn.Module: Net_0", 100, 600),
    ("model.py(20): forward", 110, 590),
    ("nn.Module: Linear_0", 120, 300),
    ("torch/nn/modules/linear.py(116): forward", 125, 295),
    ("nn.Module: Block_0", 310, 580),
    ("model.py(31): forward", 312, 578),
    ("nn.Module: Linear_1", 320, 400),
    ("nn.Module: ReLU_0", 410, 450),
    ("train.py(12): train_step", 700, 900),
]
# host ops: (op_id, thread, category, name, start, end, sequence, fwd_thread)
OPS = [
    (0, MAIN, "op", "aten::linear", 130, 290, 1, None),
    (1, MAIN, "op", "aten::addmm", 325, 390, 2, None),
    (2, MAIN, "op", "aten::relu", 415, 440, 3, None),
    (3, MAIN, "queue", "Enqueue", 416, 418, None, None),
    (4, QUEUE, "queue", "Dequeue@relu", 500, 520, None, None),
    (5, MAIN, "op", "Optimizer.step", 710, 800, None, None),
    (6, BWD, "op", "AddmmBackward0", 1100, 1200, 2, 1),
    (7, BWD, "op", "aten::mm", 1110, 1150, None, None),
    (8, BWD, "op", "ReluBackward0", 1210, 1250, 99, 1),
    (9, BWD, "op", "aten::threshold_backward", 1215, 1240, None, None),
    (10, BWD, "op", "LinearBackward0", 1300, 1400, 1, 1),
    (11, BWD, "op", "aten::mm", 1310, 1320, None, None),
    (12, MAIN, "op", "aten::to", 50, 60, 2, None),  # saw sequence 2 before aten::addmm took it
]
# api calls: (call_id, thread, name, start, end)
API = [(0, QUEUE, "aclnnRelu", 505, 510), (1, COMM, "HcclAllReduce", 1500, 1510)]
# tasks: (task_uid, kind, name, dur, connection)
TASKS = [
    (1, "kernel", "MatMul", 1000, 10),
    (2, "kernel", "MatMul", 200, 20),
    (3, "kernel", "Add", 300, 20),
    (4, "kernel", "Relu", 40, None),
    (5, "kernel", "Mul", 5000, None),
    (6, "kernel", "MatMulGrad", 700, None),
    (7, "kernel", "ReluGrad", 80, None),
    (8, "kernel", "MatMulGrad", 900, None),
    (9, "memcpy", "MEMCPY_ASYNC", 11, None),
    (10, "communication", "hcom_allReduce_1", 20000, None),
    (11, "sync", "EVENT_WAIT", 777, None),  # not attributed: not a kind that runs work
]
# launches: (host_op_id, api_call_id, task_uid, link)
LAUNCHES = [
    (0, None, 1, "torch_to_npu"),
    (1, None, 2, "torch_to_npu"),
    (1, None, 3, "connection_id"),
    (None, 0, 4, "connection_id"),
    (5, None, 5, "torch_to_npu"),
    (7, None, 6, "torch_to_npu"),
    (9, None, 7, "torch_to_npu"),
    (11, None, 8, "torch_to_npu"),
    (None, 1, 10, "connection_id"),
]


def crafted(python=True):
    py = [(100 + i, MAIN, "python", n, s, e, None, None) for i, (n, s, e) in enumerate(PYTHON)] if python else []
    rows = OPS + py
    host = pd.DataFrame(rows, columns=["op_id", "thread", "category", "name", "start", "end", "sequence", "fwd_thread"])
    host_ops = pd.DataFrame(
        {
            "op_id": host["op_id"].astype("int64"),
            "pid": 7,
            "thread": host["thread"].astype("int64"),
            "category": host["category"],
            "name": host["name"],
            "start_ns": host["start"].astype("int64"),
            "dur_ns": (host["end"] - host["start"]).astype("int64"),
            "sequence": host["sequence"].astype("Int64"),
            "fwd_thread": host["fwd_thread"].astype("Int64"),
        }
    )
    api = pd.DataFrame(API, columns=["call_id", "thread", "name", "start", "end"])
    api_calls = pd.DataFrame(
        {
            "call_id": api["call_id"],
            "thread": api["thread"],
            "name": api["name"],
            "start_ns": api["start"],
            "dur_ns": api["end"] - api["start"],
        }
    )
    t = pd.DataFrame(TASKS, columns=["task_uid", "kind", "name", "dur_ns", "connection_id"])
    tasks = pd.DataFrame(
        {
            "task_uid": t["task_uid"],
            "kind": t["kind"],
            "name": t["name"],
            "start_ns": 2000 + 100 * t["task_uid"],
            "dur_ns": t["dur_ns"],
            "stream": 1,
            "connection_id": t["connection_id"].astype("Int64"),
        }
    )
    links = pd.DataFrame(LAUNCHES, columns=["host_op_id", "api_call_id", "task_uid", "link"]).astype(
        {"host_op_id": "Int64", "api_call_id": "Int64"}
    )
    return profile_from_tables(
        {"host_ops": host_ops, "api_calls": api_calls, "device_tasks": tasks, "launches": links}, fmt="ascend_text"
    )


def brute_force(python=True):
    """Per task: (path, phase, reason, frame stack) found with plain loops over every slice."""
    ops = {o[0]: o for o in OPS}
    py = PYTHON if python else []

    def around(thread, t, keep):
        inside = [(s, -e, n) for n, s, e in py if thread == MAIN and s <= t <= e and keep(n)]
        return [n for _, _, n in sorted(inside)]  # outermost first

    out = {}
    for uid, kind, _name, _dur, _conn in TASKS:
        if kind == "sync":
            continue
        link = [x for x in LAUNCHES if x[2] == uid]
        if not link:
            out[uid] = (None, "other", REASONS["no_link"], [])
            continue
        h, a, _, _ = sorted(link, key=lambda x: x[3] != "torch_to_npu")[0]
        thread, t = (ops[h][1], ops[h][4]) if h is not None else (API[a][1], API[a][3])
        for d in (o for o in OPS if o[3].startswith("Dequeue") and o[1] == thread and o[4] <= t <= o[5]):
            enq = [o for o in OPS if o[3] == "Enqueue"][[o for o in OPS if o[3].startswith("Dequeue")].index(d)]
            thread, t = enq[1], enq[4]
        phase = None
        for b in (o for o in OPS if o[1] == thread and o[7] and o[4] <= t <= o[5]):
            phase = "backward"
            fwd = [o for o in OPS if o[6] == b[6] and not o[7]]
            if not fwd:
                out[uid] = (None, "backward", REASONS["no_forward"], [])
                break
            last = max(fwd, key=lambda o: o[4])
            thread, t = last[1], last[4]
        if uid in out:
            continue
        mods = [n.removeprefix("nn.Module: ") for n in around(thread, t, lambda n: n.startswith("nn.Module"))]
        frames = around(thread, t, lambda n: not n.startswith("nn.Module"))
        phase = phase or ("forward" if mods else "other")
        out[uid] = ("/".join(mods) or None, phase, None if mods else REASONS["outside"], frames)
    return out


def _oracle_modules(python=True) -> pd.DataFrame:
    dur = {uid: d for uid, _k, _n, d, _c in TASKS}
    rows = {}
    for uid, (path, phase, reason, _f) in brute_force(python).items():
        if not python:  # no nn.Module frame recorded at all: that is the reason for every task
            path, reason = None, REASONS["no_frames"]
        if path is None:
            r = rows.setdefault(("(unattributed)", phase, reason), [0, 0, 0, 0])
            r[0] += dur[uid]
            r[1] += dur[uid]
            r[2] += 1
            r[3] += 1
            continue
        parts = path.split("/")
        for i in range(1, len(parts) + 1):
            r = rows.setdefault(("/".join(parts[:i]), phase, None), [0, 0, 0, 0])
            r[1] += dur[uid]
            r[2] += 1
            if i == len(parts):
                r[0] += dur[uid]
                r[3] += 1
    return pd.DataFrame(
        [(p, ph, rs, s / 1e3, i / 1e3, n, sn) for (p, ph, rs), (s, i, n, sn) in rows.items()],
        columns=["path", "phase", "reason", "self_us", "inclusive_us", "kernels", "self_kernels"],
    )


def _key(df, cols):
    return df.assign(reason=df["reason"].fillna("")).sort_values(cols).reset_index(drop=True)


def test_module_time_matches_brute_force_on_the_crafted_trace():
    got = crafted().module_time()
    want = _oracle_modules()
    cols = ["path", "phase", "reason", "self_us", "inclusive_us", "kernels", "self_kernels"]
    pd.testing.assert_frame_equal(
        _key(got[cols], ["phase", "path", "reason"]), _key(want[cols], ["phase", "path", "reason"]), check_dtype=False
    )


def test_module_time_exact_rows_of_the_crafted_trace():
    m = crafted().module_time().set_index(["path", "phase", "reason"], drop=False)
    assert m.loc[("Net_0/Block_0/Linear_1", "forward", None), ["self_us", "self_kernels"]].tolist() == [0.5, 2]
    # the relu kernel goes through the task queue to the Enqueue inside ReLU_0
    assert m.loc[("Net_0/Block_0/ReLU_0", "forward", None), "self_us"] == 0.04
    # backward: AddmmBackward0 (sequence 2) -> aten::addmm, the last forward op numbered 2
    assert m.loc[("Net_0/Block_0/Linear_1", "backward", None), "self_us"] == 0.7
    assert m.loc[("Net_0", "backward", None), ["self_us", "inclusive_us", "kernels"]].tolist() == [0.0, 1.6, 2]
    assert m.loc[("(unattributed)", "backward", REASONS["no_forward"]), "self_us"] == 0.08
    assert m.loc[("(unattributed)", "other", REASONS["outside"]), "self_us"] == 25.0
    assert m.loc[("(unattributed)", "other", REASONS["no_link"]), "self_kernels"] == 1
    row = m.loc[("Net_0/Block_0/Linear_1", "forward", None)]
    assert (row["module"], row["parent"], row["depth"]) == ("Linear_1", "Net_0/Block_0", 2)
    assert m.loc[("Net_0", "forward", None), "top_kernels"] == "MatMul (77.9%); Add (19.5%); Relu (2.6%)"
    # the sync task is not attributed; everything else is, exactly once
    assert m["self_us"].sum() == pytest.approx(sum(d for _u, k, _n, d, _c in TASKS if k != "sync") / 1e3)


def test_code_time_matches_brute_force_on_the_crafted_trace():
    c = crafted().code_time()
    dur = {uid: d for uid, _k, _n, d, _c in TASKS}
    incl: dict[tuple, float] = {}
    own: dict[tuple, float] = {}
    for uid, (_p, phase, _r, frames) in brute_force().items():
        for f in dict.fromkeys(frames):
            incl[(f, phase)] = incl.get((f, phase), 0) + dur[uid] / 1e3
        if frames:
            own[(frames[-1], phase)] = own.get((frames[-1], phase), 0) + dur[uid] / 1e3
    named = c[c["frame"] != "(unattributed)"]
    got = {(f"{r.file}({r.line}): {r.function}", r.phase): r.inclusive_us for r in named.itertuples()}
    assert got == pytest.approx(incl)
    got_self = {(f"{r.file}({r.line}): {r.function}", r.phase): r.self_us for r in named.itertuples() if r.self_us}
    assert got_self == pytest.approx(own)
    row = c[(c["frame"] == "model.py:31 forward") & (c["phase"] == "forward")].iloc[0]
    assert (row["file"], row["line"], row["function"], row["self_us"]) == ("model.py", 31, "forward", 0.54)
    assert c["self_us"].sum() == pytest.approx(28.231)


def test_without_stacks_all_time_is_unattributed_with_the_fix():
    p = crafted(python=False)
    m = p.module_time()
    assert set(m["path"]) == {"(unattributed)"}
    assert REASONS["no_frames"] in set(m["reason"]) and "with_stack=True" in REASONS["no_frames"]
    assert m["self_us"].sum() == pytest.approx(28.231)
    c = p.code_time()
    assert set(c["frame"]) == {"(unattributed)"} and REASONS["no_python"] in set(c["reason"])
    pd.testing.assert_frame_equal(
        _key(m[["path", "phase", "reason", "self_us"]], ["phase", "reason"]),
        _key(_oracle_modules(python=False)[["path", "phase", "reason", "self_us"]], ["phase", "reason"]),
        check_dtype=False,
    )


def test_empty_profile_gives_empty_tables():
    p = profile_from_tables({})
    assert p.module_time().empty and p.code_time().empty
    assert {"path", "self_us", "share_of_step_ratio"} <= set(p.module_time().columns)


def _random_forest(rng, n_threads=3, n_roots=6, depth=5):
    rows = []

    def grow(thread, s, e, d):
        rows.append((thread, s, e))
        if d == 0 or e - s < 8:
            return
        cuts = np.sort(rng.choice(np.arange(s + 1, e), size=min(6, e - s - 1), replace=False))
        for a, b in zip(cuts[::2], cuts[1::2]):
            if rng.random() < 0.8:
                grow(thread, int(a), int(b), d - 1)

    for th in range(n_threads):
        base = 0
        for _ in range(n_roots):
            length = int(rng.integers(20, 400))
            grow(th, base, base + length, depth)
            base += length + int(rng.integers(0, 30))
    # a slice with the same range as its parent nests inside it
    rows.append(rows[0])
    return np.array(rows, dtype=np.int64)


@pytest.mark.parametrize("seed", range(5))
def test_nesting_matches_brute_force_on_random_call_trees(seed):
    rng = np.random.default_rng(seed)
    ev = _random_forest(rng)
    nest = Nesting(ev[:, 0], ev[:, 1], ev[:, 2])
    g, s, e = nest.group, nest.start, nest.end
    for i in range(len(ev)):  # parent: the innermost other slice containing it, earlier in pre-order
        cand = [j for j in range(i) if g[j] == g[i] and s[j] <= s[i] and e[i] <= e[j]]
        assert nest.parent[i] == (max(cand, key=lambda j: (s[j], -e[j], j)) if cand else -1)
    pts_g = rng.integers(0, 4, 400)
    pts_t = rng.integers(-5, int(ev[:, 2].max()) + 5, 400)
    got = nest.innermost(pts_g, pts_t)
    for k in range(len(pts_t)):
        cand = [j for j in range(len(ev)) if g[j] == pts_g[k] and s[j] <= pts_t[k] <= e[j]]
        assert got[k] == (max(cand) if cand else -1)


def test_innermost_is_exact_when_times_lie_too_far_apart_for_one_key():
    """Files of two collections can lie hours or years apart; the (thread, time) keys then fall
    back to the times' ranks and give the same answers as the shifted, near copy."""
    rng = np.random.default_rng(7)
    ev = _random_forest(rng)
    far = 2**61  # groups x span no longer fits in int64
    start, end = ev[:, 1].copy(), ev[:, 2].copy()
    start[ev[:, 0] == 3] += far
    end[ev[:, 0] == 3] += far
    pts_g = rng.integers(0, 4, 400)
    pts_t = rng.integers(-5, int(ev[:, 2].max()) + 5, 400)
    near = Nesting(ev[:, 0], ev[:, 1], ev[:, 2]).innermost(pts_g, pts_t)
    wide = Nesting(ev[:, 0], start, end)
    got = wide.innermost(pts_g, np.where(pts_g == 3, pts_t + far, pts_t))
    assert (got >= 0).sum() > 100
    assert np.array_equal(got, near)


ASCEND = [(kind, rank) for kind in ("text_level1", "db_level1", "text_level0", "db_level0") for rank in (0, 1)]


@pytest.fixture(scope="module")
def profiles(fixtures, tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PROFINSIGHT_CACHE", str(tmp_path_factory.getbasetemp() / "analyses-cache"))
        return {(k, r): profinsight.load(fixtures / "ascend_pt" / k / f"rank{r}_ascend_pt") for k, r in ASCEND}


@pytest.mark.parametrize("which", ASCEND)
def test_fixture_tree_sums_to_the_device_total(profiles, which, fixtures):
    p = profiles[which]
    total_us = {
        ("text_level1", 0): 115744.47,
        ("text_level1", 1): 110563.684,
        ("db_level1", 0): 111878.23,
        ("db_level1", 1): 108292.22,
        ("text_level0", 0): 95378.92,
        ("text_level0", 1): 78340.48,
        ("db_level0", 0): 99604.144,
        ("db_level0", 1): 103703.151,
    }[which]
    for view in (p.module_time(), p.code_time()):
        assert abs(view["self_us"].sum() - total_us) <= 1e-3 * total_us
        assert view["self_us"].sum() == pytest.approx(total_us, abs=1e-6)
    m = p.module_time()
    # the same tree from every export (187 kernels + 4 HCCL ops + 24 memcpy)
    assert len(m[m["path"] != "(unattributed)"]) == 52  # 26 nn.Module frames, forward and backward
    assert m["self_kernels"].sum() == 215
    lost = m[m["path"] == "(unattributed)"]
    assert lost[["phase", "self_kernels"]].values.tolist() == [["other", 63]]
    assert set(lost["reason"]) == {REASONS["outside"]}


def test_level1_text_exact_rows(profiles, fixtures):
    m = profiles[("text_level1", 0)].module_time().set_index(["path", "phase"])
    conv0 = "DistributedDataParallel_0/AlexNet_0/Sequential_0/Conv2d_0"
    assert m.loc[(conv0, "forward"), ["self_us", "self_kernels"]].tolist() == [401.248, 4]
    # the first conv's backward (weight gradient only): ConvolutionBackward0 -> sequence 1350
    assert m.loc[(conv0, "backward"), ["self_us", "self_kernels"]].tolist() == [471.028, 9]
    top = m.loc[("DistributedDataParallel_0/AlexNet_0", "backward")]
    assert top["inclusive_us"] == pytest.approx(3334.477) and top["kernels"] == 96
    assert m.loc[("(unattributed)", "other"), "self_us"] == pytest.approx(110014.272)
    step_us = 136581.009  # step_trace_time.csv Stage of step 50
    assert m.loc[(conv0, "forward"), "share_of_step_ratio"] == pytest.approx(401.248 / step_us)


def test_kineto_trace_without_python_frames(fixtures):
    p = profinsight.load(fixtures / "kineto" / "gpu_alexnet.json.gz")
    m = p.module_time()
    kinds = "('kernel', 'communication', 'memcpy', 'memset')"
    total = p.sql(f"select sum(dur_ns) / 1e3 as us, count(*) as n from device_tasks where kind in {kinds}")
    assert m["self_us"].sum() == pytest.approx(float(total["us"][0]))
    assert set(m["path"]) == {"(unattributed)"} and set(m["reason"]) == {REASONS["no_frames"]}
    assert m["self_kernels"].sum() == int(total["n"][0]) == 98  # 79 kernels, 16 memcpy, 3 memset


def test_notebook_display_is_a_collapsible_tree(profiles):
    m = profiles[("text_level1", 0)].module_time()
    html = m._repr_html_()
    assert html.count("<details") >= 10 and "<b>Conv2d_0</b> 401.248 us incl, 401.248 us self" in html
    assert "(unattributed): 110.014 ms (63 tasks) — launched outside any nn.Module" in html
