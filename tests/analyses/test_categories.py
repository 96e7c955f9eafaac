"""The SQL and Python forms of the kernel categories agree, and classify real kernels sensibly."""

from __future__ import annotations

import pandas as pd
import pytest

import profinsight
from profinsight.analyses._sql import query
from profinsight.analyses.categories import CATEGORIES, category_sql, is_format_conversion, kernel_category
from profinsight.testing import profile_from_tables


@pytest.mark.parametrize(
    "sub",
    ["ascend_pt/text_level1/rank0_ascend_pt", "ascend_pt/db_level0/rank1_ascend_pt", "kineto/gpu_alexnet.json.gz"],
)
def test_sql_and_python_agree_on_real_rows(fixtures, sub):
    p = profinsight.load(fixtures / sub)
    df = query(
        p, f"select kind, type, name, core, input_formats, output_formats, {category_sql()} as cat from device_tasks"
    )
    py = [
        kernel_category(*(None if pd.isna(v) else v for v in row))
        for row in df[["kind", "type", "name", "core", "input_formats", "output_formats"]].itertuples(index=False)
    ]
    assert list(df["cat"]) == py
    assert set(py) <= set(CATEGORIES)


def test_level1_categories(fixtures):
    p = profinsight.load(fixtures / "ascend_pt/text_level1/rank0_ascend_pt")
    got = query(p, f"select type, {category_sql()} as cat from device_tasks where kind = 'kernel' group by all")
    cats = dict(zip(got["type"], got["cat"]))
    assert cats["TransData"] == "format_conversion"
    assert cats["MatMulV2"] == "matmul"
    assert cats["Conv2D"] == "convolution"
    assert cats["ForeachAddList"] == "vector"


def test_cast_is_a_conversion_only_when_formats_change():
    assert is_format_conversion("Cast", "NCHW", "NC1HWC0")
    assert not is_format_conversion("Cast", "NCHW", "NCHW")
    assert not is_format_conversion("Cast")
    p = profile_from_tables(
        {
            "device_tasks": pd.DataFrame(
                {
                    "kind": ["kernel", "kernel", "kernel", "memcpy", "communication", "kernel"],
                    "type": ["Cast", "Cast", "MatMulV2", None, "hcom_allReduce_", "Add"],
                    "core": ["AI_VECTOR_CORE", "AI_VECTOR_CORE", "AI_CORE", None, "HCCL", "AI_CPU"],
                    "input_formats": ["NCHW", "ND", "ND", None, None, None],
                    "output_formats": ["NC1HWC0", "ND", "ND", None, None, None],
                    "start_ns": range(6),
                    "dur_ns": [1] * 6,
                }
            )
        }
    )
    got = list(query(p, f"select {category_sql()} as c from device_tasks order by start_ns")["c"])
    assert got == ["format_conversion", "vector", "matmul", "memory", "communication", "ai_cpu"]
