"""Memory analyses: exact tables on a hand-made profile, and reconciliation with the vendor's
memory_record.csv / operator_memory.csv on the real Level1 fixture (read here with ``csv``)."""

from __future__ import annotations

import collections
import csv
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

import profinsight
from profinsight.testing import profile_from_tables

MIB = 1 << 20
T = 1000  # one tick = 1 us
_LOADED: dict = {}


def _samples():
    pta_t = [0, 10, 20, 30, 35, 40, 45, 50]
    pta_a = [100, 300, 100, 750, 850, 900, 800, 150]
    pta_r = [1000, 1000, 1000, 2000, 2000, 2000, 2000, 2000]
    rows = [
        dict(component="PTA", ts_ns=t * T, allocated_bytes=a * MIB, reserved_bytes=r * MIB, active_bytes=a * MIB)
        for t, a, r in zip(pta_t, pta_a, pta_r)
    ]
    rows += [
        dict(component="GE", ts_ns=15 * T, allocated_bytes=64 * MIB, reserved_bytes=128 * MIB),
        dict(component="GE", ts_ns=35 * T, allocated_bytes=0, reserved_bytes=128 * MIB),
    ]
    rows += [dict(component="APP", ts_ns=t * T, reserved_bytes=r * MIB) for t, r in [(0, 3000), (25, 3500), (50, 3500)]]
    df = pd.DataFrame(rows)
    for c in ("allocated_bytes", "reserved_bytes", "active_bytes"):
        df[c] = df[c].astype("Int64")
    return df.assign(rank=0, device=0)


def _blocks():
    df = pd.DataFrame(
        [
            ("aten::a", "PTA", 200, 10, 20),
            ("aten::b", "PTA", 650, 30, 50),
            ("aten::a", "PTA", 100, 35, 45),
            ("aten::a", "PTA", 50, 40, None),
            ("cann::X", "GE", 64, 15, 35),
        ],
        columns=["name", "component", "mib", "alloc", "release"],
    )
    return pd.DataFrame(
        {
            "rank": 0,
            "device": 0,
            "name": df.name,
            "component": df.component,
            "size_bytes": df.mib * MIB,
            "alloc_ns": df.alloc * T,
            "release_ns": pd.array([None if pd.isna(r) else int(r) * T for r in df.release], "Int64"),
        }
    )


@pytest.fixture
def prof():
    return profile_from_tables({"memory_samples": _samples(), "memory_blocks": _blocks()})


def test_memory_peaks_exact(prof):
    df = prof.memory_peaks(top=2)
    got = df[["component", "kind", "ts_ns", "delta_bytes", "live_bytes", "live_blocks", "ops"]]
    expected = pd.DataFrame(
        [
            ("APP", "peak_reserved", 25 * T, None, 64 * MIB, 1, "cann::X 64.0 MiB"),
            ("GE", "peak_allocated", 15 * T, None, 64 * MIB, 1, "cann::X 64.0 MiB"),
            ("GE", "peak_reserved", 15 * T, None, 64 * MIB, 1, "cann::X 64.0 MiB"),
            ("PTA", "peak_allocated", 40 * T, None, 800 * MIB, 3, "aten::b 650.0 MiB; aten::a 150.0 MiB x2"),
            ("PTA", "peak_reserved", 30 * T, None, 650 * MIB, 1, "aten::b 650.0 MiB"),
            ("PTA", "spike", 30 * T, 650 * MIB, 650 * MIB, 1, "aten::b 650.0 MiB"),  # the jump's allocation
            ("PTA", "spike", 10 * T, 200 * MIB, 200 * MIB, 1, "aten::a 200.0 MiB"),
        ],
        columns=got.columns,
    )
    pd.testing.assert_frame_equal(
        got.astype(object).where(got.notna(), None).reset_index(drop=True),
        expected.astype(object).where(expected.notna(), None),
        check_dtype=False,
    )
    peak = df[(df.component == "PTA") & (df.kind == "peak_allocated")].iloc[0]
    assert peak.allocated_bytes == 900 * MIB and peak.t_ms == pytest.approx(0.040)
    assert peak.share_of_allocated_ratio == pytest.approx(800 / 900)
    assert pd.isna(df[df.component == "APP"].iloc[0].share_of_allocated_ratio)  # APP has no allocated


def test_memory_by_op_exact(prof):
    df = prof.memory_by_op()
    assert df.to_dict("list") | {"avg_bytes": None, "share_of_peak_ratio": None} == {
        "rank": [0, 0, 0],
        "component": ["PTA", "PTA", "GE"],
        "name": ["aten::b", "aten::a", "cann::X"],
        "count": [1, 3, 1],
        "total_bytes": [650 * MIB, 350 * MIB, 64 * MIB],
        "max_bytes": [650 * MIB, 200 * MIB, 64 * MIB],
        "avg_bytes": None,
        "live_at_peak_bytes": [650 * MIB, 150 * MIB, 64 * MIB],
        "avg_lifetime_us": [20.0, 10.0, 20.0],
        "share_of_peak_ratio": None,
        "label": ["aten::b", "aten::a", "cann::X"],
    }
    assert list(df.avg_bytes) == pytest.approx([650 * MIB, 350 * MIB / 3, 64 * MIB])
    assert list(df.share_of_peak_ratio) == pytest.approx([650 / 900, 150 / 900, 1.0])
    assert list(prof.memory_by_op(top=1).name) == ["aten::b"]


def test_memory_curve_exact(prof):
    df = prof.memory_curve(component="pta")
    assert list(df.ts_ns) == [t * T for t in [0, 10, 20, 30, 35, 40, 45, 50]]
    assert list(df.allocated_mib) == [100, 300, 100, 750, 850, 900, 800, 150]
    assert list(df.t_ms) == [t / 1000 for t in [0, 10, 20, 30, 35, 40, 45, 50]]
    assert prof.memory_curve(max_points=100).shape[0] == len(_samples())  # small curves stay whole
    app = prof.memory_curve(component="APP")
    assert app.allocated_bytes.isna().all() and list(app.reserved_mib) == [3000, 3500, 3500]


def test_downsampling_keeps_min_max_and_the_peak():
    rng = np.random.default_rng(7)
    n = 20_000
    alloc = rng.integers(0, 1000, n) * MIB
    alloc[12_345] = 5000 * MIB  # the global peak
    alloc[777] = 0
    df = pd.DataFrame(
        {
            "rank": 0,
            "device": 0,
            "component": "PTA",
            "ts_ns": np.arange(n) * 997,
            "allocated_bytes": alloc,
            "reserved_bytes": 6000 * MIB,
            "active_bytes": alloc,
        }
    )
    other = df.head(50).assign(component="GE")
    p = profile_from_tables({"memory_samples": pd.concat([df, other])})
    full = p.memory_curve()
    small = p.memory_curve(max_points=200)
    pta = small[small.component == "PTA"]
    assert 100 < len(pta) <= 200
    assert (pta.ts_ns.diff().dropna() > 0).all()
    assert full.allocated_bytes.max() == small.allocated_bytes.max() == 5000 * MIB
    assert 12_345 * 997 in set(pta.ts_ns) and small.allocated_bytes.min() == 0
    assert len(small[small.component == "GE"]) == 50  # a curve under max_points is untouched
    assert set(small.ts_ns) <= set(full.ts_ns)


def test_empty_profile_gives_empty_tables():
    p = profile_from_tables({})
    for name in ("memory_curve", "memory_peaks", "memory_by_op"):
        df = p.view(name)
        assert df.empty and "rank" in df.columns


# --- the real fixture --------------------------------------------------------------------


@pytest.fixture
def level1_rank0(fixtures):
    path = fixtures / "ascend_pt/text_level1/rank0_ascend_pt"
    if "r0" not in _LOADED:
        _LOADED["r0"] = profinsight.load(path)
    return _LOADED["r0"], path / "ASCEND_PROFILER_OUTPUT"


def _csv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_peak_matches_memory_record(level1_rank0):
    p, out = level1_rank0
    pta = [Decimal(r["Total Allocated(MB)"]) for r in _csv(out / "memory_record.csv") if r["Component"] == "PTA"]
    expected = int(max(pta) * MIB)
    peaks = p.memory_peaks()
    row = peaks[(peaks.component == "PTA") & (peaks.kind == "peak_allocated")].iloc[0]
    assert row.allocated_bytes == expected
    curve = p.memory_curve(component="PTA", max_points=40)
    assert curve.allocated_bytes.max() == expected and len(curve) <= 40
    assert row.ops.startswith("aten::") and 0 < row.share_of_allocated_ratio < 1


def test_by_op_matches_operator_memory(level1_rank0):
    p, out = level1_rank0
    rows = _csv(out / "operator_memory.csv")
    counts = collections.Counter(r["Name"] for r in rows)
    sizes = collections.Counter()
    for r in rows:
        sizes[r["Name"]] += int(Decimal(r["Size(KB)"]) * 1024)
    df = p.memory_by_op(top=None)
    assert dict(zip(df.name, df["count"])) == dict(counts)
    assert dict(zip(df.name, df.total_bytes)) == dict(sizes)
    assert (df.share_of_peak_ratio.fillna(0) <= 1).all()


def test_rich_display_has_charts(prof):
    assert "<polyline" in prof.memory_curve(component="PTA")._repr_html_()
    assert "<rect" in prof.memory_by_op()._repr_html_()
    assert "<table" in prof.memory_peaks()._repr_html_()


def test_memory_allocations_exact(prof):
    """One row per block, largest first; a time range keeps the blocks live in it (an open end
    counts as live), on the curves' t_ms axis (0 = the first sample at tick 0)."""
    a = prof.memory_allocations()
    assert list(a["name"]) == ["aten::b", "aten::a", "aten::a", "cann::X", "aten::a"]
    assert list(a["size_bytes"]) == [650 * MIB, 200 * MIB, 100 * MIB, 64 * MIB, 50 * MIB]
    assert list(a["lifetime_us"].astype(object).where(a["lifetime_us"].notna(), None)) == [20.0, 10.0, 10.0, 20.0, None]
    assert a["alloc_ms"].tolist() == [0.03, 0.01, 0.035, 0.015, 0.04]
    # live somewhere in 0.021 .. 0.034 ms: b (30..50) and X (15..35); a (10..20) ended before
    live = prof.memory_allocations(start_ms=0.021, end_ms=0.034)
    assert sorted(live["name"]) == ["aten::b", "cann::X"]
    # from 0.046 ms on: b (until 50) and the block never freed
    assert sorted(prof.memory_allocations(start_ms=0.046)["name"]) == ["aten::a", "aten::b"]
    assert list(prof.memory_allocations(component="GE")["name"]) == ["cann::X"]
    assert len(prof.memory_allocations(top=2)) == 2


def test_memory_allocations_on_the_fixture(level1_rank0):
    p, _ = level1_rank0
    a = p.memory_allocations()
    blocks = p.table("memory_blocks")
    blocks = blocks.to_pandas() if hasattr(blocks, "to_pandas") else blocks
    assert len(a) == len(blocks) == 184
    assert a["size_bytes"].sum() == blocks["size_bytes"].abs().sum()
    top = a.iloc[0]
    assert (top["name"], int(top["size_bytes"]), round(float(top["alloc_ms"]), 3)) == ("aten::mm", 150995456, 158.544)
    assert pd.isna(top["release_ns"])
