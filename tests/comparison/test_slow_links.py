"""Slow links from the rank-to-rank matrix, on a hand-made comm_links table: 4 ranks, HCCS links
at 20 GB/s but 2->3 at 4 GB/s (both steps), RDMA links at a uniform 5 GB/s (a slower transport is
not a slow link)."""

from __future__ import annotations

import pandas as pd
import pytest

from profinsight.analyses.ranks import slow_links
from profinsight.api import ranks_report
from profinsight.testing import profile_from_tables

BYTES = 40_000_000


def _links() -> pd.DataFrame:
    rows = []
    for step in (1, 2):
        for src in range(4):
            for dst in range(4):
                if src == dst:
                    continue
                gbps = 4.0 if (src, dst) == (2, 3) else 20.0
                rows.append(
                    {
                        "rank": src,
                        "step": step,
                        "category": "collective",
                        "op_type": "allreduce",
                        "summary": "total",
                        "group": "g0",
                        "src_rank": src,
                        "dst_rank": dst,
                        "transport": "HCCS",
                        "bytes": BYTES,
                        "transit_ns": int(BYTES / gbps),
                        "op_name": f"hcom_allReduce_{step}",
                    }
                )
                rows.append(
                    {
                        "rank": src,
                        "step": step,
                        "category": "collective",
                        "op_type": "allreduce",
                        "summary": "total",
                        "group": "g1",
                        "src_rank": src,
                        "dst_rank": dst,
                        "transport": "RDMA",
                        "bytes": BYTES // 4,
                        "transit_ns": int(BYTES / 4 / 5.0),
                        "op_name": f"hcom_allReduce_{step}",
                    }
                )
    return pd.DataFrame(rows)


def test_slow_link_named_with_evidence():
    prof = profile_from_tables({"comm_links": _links()})
    sl = slow_links(prof)
    assert len(sl) == 1
    r = sl.iloc[0]
    assert (r["src_rank"], r["dst_rank"], r["transport"]) == (2, 3, "HCCS")
    assert r["bandwidth_gbps"] == pytest.approx(4.0, rel=1e-6)
    assert r["median_gbps"] == pytest.approx(20.0, rel=1e-6)
    assert r["bandwidth_vs_median_ratio"] == pytest.approx(0.2, rel=1e-6)
    assert r["n_links"] == 12 and r["bytes"] == 2 * BYTES
    assert r["transit_us"] == pytest.approx(2 * BYTES / 4.0 / 1e3, rel=1e-6)
    assert r["steps"] == "1, 2" and r["op_types"] == "allreduce"
    assert "link 2->3 (HCCS)" in r["evidence"] and "0.20x the median" in r["evidence"]
    rep = ranks_report(prof)
    assert "Slow links: link 2->3 (HCCS)" in rep.verdict()
    assert rep.to_dict()["slow_links"][0]["dst_rank"] == 3
    assert prof.slow_links().iloc[0]["src_rank"] == 2  # registered analysis
    # a stricter threshold finds nothing
    assert slow_links(prof, max_ratio=0.1).empty


def test_no_slow_link_when_uniform():
    df = _links()
    df["transit_ns"] = (df["bytes"] / 20.0).astype("int64")
    assert slow_links(profile_from_tables({"comm_links": df})).empty
