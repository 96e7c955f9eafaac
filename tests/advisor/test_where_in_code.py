"""The format-conversion finding names the module and the model line where the conversions sit
(module_time / code_time), and keeps its plain message where no module frame was recorded."""

from __future__ import annotations

import pandas as pd
import pytest

import profinsight as pi
from profinsight.advisor.rules.base import Context, where_in_code
from profinsight.testing import profile_from_tables


@pytest.fixture(scope="module")
def rank0(fixtures):
    return pi.load(fixtures / "ascend_pt/text_level1/rank0_ascend_pt")


def test_format_conversion_names_module_and_line(rank0):
    f = rank0.advise().set_index("rule").loc["format_conversion"]
    where = f["evidence"]["where"]
    # rank 0's 57 TransData kernels: 921.815 us under the convolutions' and poolings' backward,
    # 679.530 us (47.7% of 1,423.202 us) under Sequential_0/Conv2d_0..4 backward alone
    assert where == {
        "module": "Sequential_*/Conv2d_*",
        "phase": "backward",
        "share": pytest.approx(679.53 / 1423.202, abs=1e-6),
        "line": "torchvision/models/alexnet.py:47",
        "kernel_type": "TransData",
    }
    assert "under Sequential_*/Conv2d_* (backward), model line torchvision/models/alexnet.py:47" in f["message"]
    zh = rank0.advise(lang="zh").set_index("rule").loc["format_conversion", "message"]
    assert "位于 Sequential_*/Conv2d_*（backward），模型代码行 torchvision/models/alexnet.py:47" in zh


def test_no_module_frames_no_location():
    tasks = pd.DataFrame(
        {
            "task_uid": [1, 2],
            "kind": "kernel",
            "type": "TransData",
            "name": "trans_TransData_0",
            "start_ns": [0, 10],
            "dur_ns": 5,
        }
    )
    p = profile_from_tables({"device_tasks": tasks}, fmt="ascend_text")
    assert where_in_code(Context(p), "TransData") is None
