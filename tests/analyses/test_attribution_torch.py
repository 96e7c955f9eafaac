"""module_time / code_time on a real torch.profiler collection of a small CPU model
(``profinsight.collect``, ``with_stack=True``): the ``python_function`` frames and
``nn.Module`` frames Kineto writes, and its autograd sequence numbers, followed back from a
device task per matmul.  A CPU run has no device tasks, so the test adds one per ``aten::addmm``
/ ``aten::mm`` op, launched by that op (what a GPU or NPU run records as its launch link)."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest
from _support import require

import profinsight
from profinsight.testing import profile_from_tables

torch = require("torch", "torch==2.13.0: pip install 'profinsight[torch]'")
pytestmark = pytest.mark.slow  # a real torch.profiler collection


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("experiments")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    x = torch.randn(8, 16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with profinsight.collect("mlp", steps=dict(wait=0, warmup=1, active=2), folder=folder, show=False) as run:
            for _ in range(3):
                model(x).sum().backward()
                run.step()
    assert run.profiler_kwargs["with_stack"]
    return profinsight.load(run.path)


def _with_matmul_tasks(p):
    ops = p.table("host_ops")
    mm = ops[(ops["category"] == "op") & ops["name"].isin(["aten::addmm", "aten::mm"])].reset_index(drop=True)
    tasks = pd.DataFrame(
        {
            "task_uid": range(len(mm)),
            "kind": "kernel",
            "name": mm["name"].str.removeprefix("aten::") + "_kernel",
            "start_ns": mm["start_ns"] + mm["dur_ns"],
            "dur_ns": [(i + 1) * 1000 for i in range(len(mm))],  # 1, 2, 3 ... us
            "stream": 7,
        }
    )
    links = pd.DataFrame({"host_op_id": mm["op_id"], "task_uid": tasks["task_uid"], "link": "external_id"})
    tables = {n: p.table(n) for n in ("host_ops", "steps", "run_info")}
    return profile_from_tables({**tables, "device_tasks": tasks, "launches": links}, fmt="kineto"), mm


def test_recorded_trace_has_module_frames(recorded):
    ops = recorded.table("host_ops")
    mods = ops[ops["name"].str.startswith("nn.Module: ")]["name"]
    assert set(mods) == {"nn.Module: Sequential_0", "nn.Module: Linear_0", "nn.Module: ReLU_0", "nn.Module: Linear_1"}
    assert recorded.module_time().empty  # a CPU run: no device task to attribute


def test_module_time_on_a_recorded_model(recorded):
    p, mm = _with_matmul_tasks(recorded)
    m = p.module_time()
    total_us = sum(range(1, len(mm) + 1))
    assert m["self_us"].sum() == pytest.approx(total_us)
    got = {(r.path, r.phase): r.self_kernels for r in m.itertuples() if r.self_kernels}
    # two active steps: one addmm per Linear forward; backward of Linear_1 computes the input
    # and the weight gradient (2 mm), of Linear_0 (its input needs none) the weight gradient only
    assert got == {
        ("Sequential_0/Linear_0", "forward"): 2,
        ("Sequential_0/Linear_1", "forward"): 2,
        ("Sequential_0/Linear_0", "backward"): 2,
        ("Sequential_0/Linear_1", "backward"): 4,
    }
    root = m[(m["path"] == "Sequential_0") & (m["phase"] == "backward")].iloc[0]
    assert root["self_us"] == 0 and root["kernels"] == 6 and root["depth"] == 0
    assert (m["reason"].isna() | (m["path"] == "(unattributed)")).all()


def test_code_time_on_a_recorded_model(recorded):
    p, mm = _with_matmul_tasks(recorded)
    c = p.code_time()
    assert c["self_us"].sum() == pytest.approx(sum(range(1, len(mm) + 1)))
    fwd = c[(c["phase"] == "forward") & (c["function"] == "forward")]
    # torch.nn.Linear.forward is where every forward matmul was launched
    linear = fwd[fwd["file"].str.endswith("torch/nn/modules/linear.py")]
    assert len(linear) == 1 and linear.iloc[0]["kernels"] == 4 and linear.iloc[0]["line"] > 0
    this = c[c["file"].str.endswith("test_attribution_torch.py", na=False)]
    assert set(this["function"]) >= {"recorded"} and this["inclusive_us"].max() > 0
