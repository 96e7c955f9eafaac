"""run_info states what a profile can show (device family, export kind, what was collected), so
no analysis, rule or view needs to ask which format it came from."""

from __future__ import annotations

import pandas as pd
import pytest

import profinsight
from profinsight import capabilities as cap
from profinsight.testing import profile_from_tables

CASES = {
    "kineto/gpu_2rank_rank0.json.gz": ("gpu", "trace", [True, False, True, False]),
    "kineto/cpu_only.json.gz": ("cpu", "trace", [True, False, False, False]),
    "ascend_pt/text_level1/rank0_ascend_pt": ("npu", "text", [True, True, True, True]),
    "ascend_pt/db_level1/rank0_ascend_pt": ("npu", "db", [True, True, True, True]),
}


@pytest.mark.parametrize("rel", sorted(CASES))
def test_every_importer_states_its_capabilities(fixtures, rel):
    p = profinsight.load(fixtures / rel)
    family, export, flags = CASES[rel]
    assert (cap.device_family(p), cap.export_kind(p)) == (family, export)
    assert [cap.has(p, f) for f in cap.FLAGS] == flags
    assert cap.is_npu(p) == (family == "npu")


def test_flags_follow_the_tables_and_an_importer_may_state_them():
    p = profile_from_tables({"run_info": pd.DataFrame([{"rank": 0, "has_memory": True}])})
    assert cap.has(p, "has_memory") and not cap.has(p, "has_host_ops") and cap.device_family(p) is None
    with pytest.raises(ValueError, match="unknown capability"):
        cap.has(p, "has_everything")
