"""Slow links from the rank-to-rank matrix, on a hand-made comm_links table: 4 ranks, HCCS links
at 20 GB/s but 2->3 at 4 GB/s (both steps), RDMA links at a uniform 10 GB/s (a slower transport,
within its expected 12 GB/s, is not a slow link); a transport below its expected bandwidth on every
link; small transfers reported as latency, never as a low bandwidth."""

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
                        "transit_ns": int(BYTES / 4 / 10.0),
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
    assert r["expected_gbps"] == 19.3 and r["below"] == "expected and median"
    assert "0.21x the expected 19.3 GB/s of HCCS" in r["evidence"]
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


def test_every_link_of_a_type_below_its_expected_bandwidth():
    df = _links()
    rdma = df["transport"] == "RDMA"
    df.loc[rdma, "transit_ns"] = (df.loc[rdma, "bytes"] / 5.0).astype("int64")  # 5 GB/s, expected 12
    sl = slow_links(profile_from_tables({"comm_links": df}))
    r = sl[sl["transport"] == "RDMA"]
    assert len(r) == 12 and set(r["below"]) == {"expected"}  # uniform: none is below the median
    assert r["bandwidth_vs_expected_ratio"].tolist() == pytest.approx([5.0 / 12] * 12, rel=1e-6)
    # other hardware: a lower expected figure makes them healthy
    assert slow_links(profile_from_tables({"comm_links": df}), expected="HCCS=19.3,RDMA=6")["transport"].tolist() == [
        "HCCS"
    ]


def test_small_transfers_are_latency_not_slow_links():
    df = _links()
    small = (df["src_rank"] == 3) & (df["dst_rank"] == 0) & (df["transport"] == "HCCS")
    df.loc[small, "bytes"] = 120
    df.loc[small, "transit_ns"] = 7500  # 0.016 GB/s: latency, the link is not slow
    p = profile_from_tables({"comm_links": df})
    sl = slow_links(p)
    assert list(zip(sl["src_rank"], sl["dst_rank"])) == [(2, 3)]
    lat = p.link_latency()
    assert len(lat) == 1
    r = lat.iloc[0]
    assert (r["src_rank"], r["dst_rank"], r["n_transfers"], r["bytes"]) == (3, 0, 2, 240)
    assert r["per_transfer_us"] == pytest.approx(7.5)
    assert "latency-bound (under 1,000,000 bytes)" in r["evidence"]


def test_qwen3_small_allgathers_are_latency_not_slow(fixtures):
    import profinsight

    p = profinsight.load(fixtures / "ascend_llm/qwen3_level2_4rank")
    assert p.slow_links().empty  # the large transfers run at 18.7-20.9 GB/s over HCCS
    lat = p.link_latency()
    r = lat[(lat["src_rank"] == 3) & (lat["dst_rank"] == 0)].iloc[0]
    # rank 3's communication_matrix.json, link 3-0: allreduce-total 24 B in 6.3 us, allgather-total 96 B in 1.22 us
    assert (r["n_transfers"], r["bytes"]) == (2, 120)
    assert r["transit_us"] == pytest.approx(6.3 + 1.22, abs=1e-9)
    assert r["per_transfer_us"] == pytest.approx(7.52 / 2, abs=1e-9)
