"""kernel_pmu: per-kernel PMU ratios against kernel_details.csv, and the vendor's 80 % bound rule
on crafted kernels."""

from __future__ import annotations

import csv

import pandas as pd
import pytest

import profinsight
from profinsight.testing import profile_from_tables

RANK0 = ("ascend_pt", "text_level1", "rank0_ascend_pt")


@pytest.fixture(scope="module")
def prof(fixtures):
    return profinsight.load(fixtures.joinpath(*RANK0))


def _kernel_details(fixtures):
    path = fixtures.joinpath(*RANK0, "ASCEND_PROFILER_OUTPUT", "kernel_details.csv")
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_single_launch_kernel_equals_kernel_details(prof, fixtures):
    rows = [r for r in _kernel_details(fixtures) if r["Name"] == "Conv2D1"]
    assert len(rows) == 1
    r = rows[0]
    k = prof.kernel_pmu().set_index("name").loc["Conv2D1"]
    assert (k["count"], k["core"], k["type"]) == (1, "AI_CORE", "Conv2D")
    assert k["total_us"] == pytest.approx(float(r["Duration(us)"]))
    for col, csv_col in (
        ("pmu_aic_mac_ratio", "aic_mac_ratio"),
        ("pmu_aic_mte2_ratio", "aic_mte2_ratio"),
        ("pmu_aic_scalar_ratio", "aic_scalar_ratio"),
        ("pmu_aic_mte1_ratio", "aic_mte1_ratio"),
        ("pmu_aic_fixpipe_ratio", "aic_fixpipe_ratio"),
    ):
        assert k[col] == pytest.approx(float(r[csv_col]))
    # mte2 0.913 is the highest ratio and above 80 %: mte2 bound
    assert (k["bound"], k["bound_ratio"]) == ("mte2", pytest.approx(0.913))


def test_multi_launch_kernel_weighted_by_unit_time(prof, fixtures):
    rows = [r for r in _kernel_details(fixtures) if r["Name"] == "aclnnAddmm_MatMulCommon_MatMulV2"]
    assert len(rows) == 3
    t = [float(r["aicore_time(us)"]) for r in rows]
    mte2 = sum(float(r["aic_mte2_ratio"]) * w for r, w in zip(rows, t)) / sum(t)
    k = prof.kernel_pmu().set_index("name").loc["aclnnAddmm_MatMulCommon_MatMulV2"]
    assert k["count"] == 3 and k["pmu_aic_mte2_ratio"] == pytest.approx(mte2, rel=1e-9)
    assert k["bound"] == "mte2" and mte2 > 0.8


def test_every_kernel_with_pmu_is_listed_once(prof, fixtures):
    k = prof.kernel_pmu()
    # kernel_details: 191 rows = 187 compute kernels + 4 all-reduces; the 2 DSAGenBitMask kernels
    # (core DSA_SQE) record no PMU ratio (N/A), every other compute kernel does
    rows = _kernel_details(fixtures)
    with_pmu = [r for r in rows if r["aic_mac_ratio"] not in ("N/A", "") or r["aiv_vec_ratio"] not in ("N/A", "")]
    assert int(k["count"].sum()) == len(with_pmu) == 185
    assert not k.duplicated(["rank", "name", "type", "core"]).any()
    assert k["total_us"].tolist() == sorted(k["total_us"].tolist(), reverse=True)
    assert set(k["bound"].dropna()) <= {"none", "cube", "vector", "scalar", "mte1", "mte2", "mte3", "fixpipe"}


def _tiny(ratios: dict) -> profinsight.Profile:
    n = len(next(iter(ratios.values())))
    dt = pd.DataFrame(
        {
            "rank": [0] * n,
            "kind": ["kernel"] * n,
            "name": [f"k{i}" for i in range(n)],
            "type": ["T"] * n,
            "core": ["AI_VECTOR_CORE"] * n,
            "start_ns": [i * 1000 for i in range(n)],
            "dur_ns": [500] * n,
            "stream": [1] * n,
            "step": [None] * n,
            **ratios,
        }
    )
    return profile_from_tables({"device_tasks": dt})


def test_bound_rule_is_above_80_percent():
    p = _tiny(
        {
            "pmu_aiv_vec_ratio": [0.81, 0.80, 0.5, None],
            "pmu_aiv_mte2_ratio": [0.2, 0.1, 0.9, None],
            "pmu_aiv_scalar_ratio": [0.85, 0.3, 0.1, None],
        }
    )
    k = p.kernel_pmu().set_index("name")
    # the highest unit above 80 % wins; exactly 80 % is not above; a kernel without ratios is left out
    assert k.loc["k0", "bound"] == "scalar" and k.loc["k1", "bound"] == "none" and k.loc["k2", "bound"] == "mte2"
    assert "k3" not in k.index


def test_no_pmu_columns_gives_an_empty_table():
    p = _tiny({"other": [1.0]})
    assert p.kernel_pmu().empty
