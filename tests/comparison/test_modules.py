"""Compare by module: matched by path and phase, with a noise band from the runs' own
step-to-step spread, and repeated layers folded with their per-layer spread."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import profinsight as pi
from profinsight.comparison.modules import fold_paths
from profinsight.testing import profile_from_tables


def layered(per_step: list[list[int]]) -> pi.Profile:
    """``Model_0`` with one ``Layer_<i>`` per entry; step k launches, in layer i, one kernel of
    ``per_step[k][i]`` ns.  Each step spans 10,000 ns; every slice on thread 1."""
    host, tasks, links, steps = [], [], [], []
    oid = uid = 0
    for k, layers in enumerate(per_step):
        base = k * 10_000
        steps.append({"step": k, "host_start_ns": base, "host_end_ns": base + 9_000})
        host.append(("python", "nn.Module: Model_0", base + 10, 8_000))
        for i, dur in enumerate(layers):
            s = base + 100 + i * 1_000
            host.append(("python", f"nn.Module: Layer_{i}", s, 900))
            host.append(("op", "aten::mm", s + 10, 100))
            tasks.append(
                {"task_uid": uid, "kind": "kernel", "name": "mm", "start_ns": s + 200, "dur_ns": dur, "step": k}
            )
            links.append({"host_op_id": oid + len(host) - 1, "task_uid": uid, "link": "torch_to_npu"})
            uid += 1
    ops = pd.DataFrame(host, columns=["category", "name", "start_ns", "dur_ns"])
    ops.insert(0, "op_id", range(len(ops)))
    ops["thread"] = 1
    return profile_from_tables(
        {
            "host_ops": ops,
            "device_tasks": pd.DataFrame(tasks),
            "launches": pd.DataFrame(links),
            "steps": pd.DataFrame(steps),
        },
        fmt="ascend_text",
    )


def test_fold_paths_folds_numbered_siblings_only():
    paths = pd.Series(
        ["DDP_0", "DDP_0/L_0", "DDP_0/L_1", "DDP_0/L_1/mlp", "M_0/layers.0/x", "M_0/layers.1/x", "C_0/Conv_0"]
    )
    assert fold_paths(paths).tolist() == [
        "DDP_0",
        "DDP_0/L_*",
        "DDP_0/L_*",
        "DDP_0/L_*/mlp",
        "M_0/layers.*/x",
        "M_0/layers.*/x",
        "C_0/Conv_0",
    ]


def test_layers_fold_with_their_spread_and_outlier():
    base = layered([[100, 100, 100, 100], [100, 100, 100, 100]])
    slow = layered([[100, 100, 400, 100], [100, 100, 400, 100]])
    m = pi.compare(base, slow).modules(fold_layers=True).set_index("path")
    row = m.loc["Model_0/Layer_*"]
    assert [row["from_us"], row["to_us"], row["delta_us"]] == pytest.approx([0.4, 0.7, 0.3]) and row[
        "status"
    ] == "unchanged"
    # the change (0.3 us) is under the 0.5 us floor; the layer spread still names the outlier
    assert row["n_layers"] == 4 and row["slowest_layer"] == "Model_0/Layer_2"
    assert row["layer_mean_us"] == pytest.approx(0.175)
    assert row["layer_spread_ratio"] == pytest.approx((0.4 - 0.1) / 0.175)
    unfolded = pi.compare(base, slow).modules(min_change_us=0.1).set_index("path")
    assert (
        unfolded.loc["Model_0/Layer_2", "status"] == "slower"
        and unfolded.loc["Model_0/Layer_0", "status"] == "unchanged"
    )


def test_noise_band_from_the_step_spread():
    # Layer_0: 1000 and 3000 ns per step (sd 1414.2 ns) in both runs, then +800 ns per step
    a = layered([[1000], [3000]])
    b = layered([[1800], [3800]])
    m = pi.compare(a, b).modules().set_index("path")
    row = m.loc["Model_0/Layer_0"]
    sd = math.sqrt(2) * 1000 / 1e3
    assert row["noise_us"] == pytest.approx(2 * math.sqrt(sd**2 / 2 + sd**2 / 2))
    assert row["delta_us"] == pytest.approx(0.8) and row["status"] == "unchanged"  # 0.8 us < 2.83 us noise
    steady = pi.compare(layered([[1000], [1000]]), layered([[1800], [1800]])).modules().set_index("path")
    assert steady.loc["Model_0/Layer_0", "noise_us"] == 0.5 and steady.loc["Model_0/Layer_0", "status"] == "slower"


def test_added_and_removed_modules():
    m = pi.compare(layered([[100]]), layered([[100, 50]])).modules(min_change_us=0.01).set_index("path")
    assert m.loc["Model_0/Layer_1", "status"] == "added" and m.loc["Model_0/Layer_1", "to_us"] == 0.05
    assert m.loc["Model_0", "status"] == "slower"


@pytest.fixture(scope="module")
def level0_vs_level1(fixtures):
    a = pi.load(fixtures / "ascend_pt/text_level0")
    b = pi.load(fixtures / "ascend_pt/text_level1")
    return a, b, pi.compare(a, b)


def test_fixture_runs_by_module(level0_vs_level1):
    a, b, c = level0_vs_level1
    m = c.modules().set_index(["path", "phase"])
    seq0 = m.loc[("DistributedDataParallel_0/AlexNet_0/Sequential_0", "backward")]
    # mean over the two ranks of step 50
    assert seq0["from_us"] == pytest.approx(2639.144) and seq0["to_us"] == pytest.approx(2675.3955)
    assert seq0["status"] == "slower" and seq0["noise_us"] == pytest.approx(26.39144)
    lin0 = m.loc[("DistributedDataParallel_0/AlexNet_0/Sequential_1/Linear_0", "backward")]
    assert lin0["status"] == "faster" and lin0["delta_us"] == pytest.approx(-21.61)
    # roots and (unattributed) hold every in-step task once: the per-rank-step device total
    roots = m[~m.index.get_level_values("path").str.contains("/")]
    for prof, col in ((a, "from_us"), (b, "to_us")):
        total = sum(prof.module_time(rank=r, step=50)["self_us"].sum() for r in prof.ranks) / len(prof.ranks)
        assert roots[col].sum() == pytest.approx(total)
    folded = c.modules(fold_layers=True).set_index(["path", "phase"])
    conv = folded.loc[("DistributedDataParallel_0/AlexNet_0/Sequential_*/Conv2d_*", "backward")]
    assert (
        conv["n_layers"] == 5 and conv["slowest_layer"] == "DistributedDataParallel_0/AlexNet_0/Sequential_0/Conv2d_0"
    )
    assert conv["to_us"] == pytest.approx(2025.814)
