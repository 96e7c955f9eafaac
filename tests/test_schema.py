"""The schema declaration and its generated docs."""

from __future__ import annotations

import pyarrow as pa
import pytest
from _support import REPO

from profinsight.schema import TABLES, conform, empty_table
from profinsight.schema.docs import render

CONTRACT_TABLES = [
    "device_tasks",
    "host_ops",
    "launches",
    "steps",
    "memory_samples",
    "memory_blocks",
    "module_memory",
    "comm_ops",
    "comm_links",
    "api_calls",
    "counters",
    "trace_slices",
    "run_info",
]


def test_contract_table_names():
    assert list(TABLES) == CONTRACT_TABLES


def test_required_device_task_columns():
    names = TABLES["device_tasks"].names
    for col in [
        "rank",
        "device",
        "stream",
        "task_id",
        "kind",
        "name",
        "type",
        "core",
        "start_ns",
        "dur_ns",
        "wait_ns",
        "step",
        "block_dim",
        "input_shapes",
        "input_dtypes",
        "input_formats",
        "output_shapes",
        "output_dtypes",
        "output_formats",
    ]:
        assert col in names


def test_units_follow_names():
    for t in TABLES.values():
        for c in t.columns:
            if c.name.endswith("_ns"):
                assert c.unit == "ns" and c.type == pa.int64(), (t.name, c.name)
            if c.name.endswith("_bytes"):
                assert c.unit == "bytes" and c.type == pa.int64(), (t.name, c.name)


def test_conform_adds_missing_and_casts():
    t = pa.table({"name": ["a"], "start_ns": pa.array([5], pa.int32()), "pmu_aic_mac_ratio": pa.array([1], pa.int64())})
    out = conform("device_tasks", t)
    assert out.schema.field("start_ns").type == pa.int64()
    assert out.column("dur_ns").null_count == 1
    assert out.column_names[: len(TABLES["device_tasks"].names)] == TABLES["device_tasks"].names
    assert out.schema.field("pmu_aic_mac_ratio").type == pa.float64()
    assert empty_table("steps").num_rows == 0


def test_conform_rejects_uncastable():
    with pytest.raises(TypeError):
        conform("device_tasks", pa.table({"start_ns": ["not a number"]}))


def test_docs_are_generated_from_the_schema():
    assert (REPO / "docs" / "tables.md").read_text(encoding="utf-8") == render()
