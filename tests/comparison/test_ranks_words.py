"""The rank evidence sentences come from the message catalogue (profinsight.i18n.evidence): the
analyses' English ``evidence`` column is exactly what the catalogue words from the row's own
figures, and ``profinsight ranks --lang zh`` (the ranks report) says the same figures in Chinese,
with no English sentence left."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd
import pytest

import profinsight
from profinsight.api import ranks_report
from profinsight.i18n import evidence
from profinsight.testing import profile_from_tables

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

SLOW_US = 10_000
#: words of the English sentences that must not survive in the Chinese report
ENGLISH = ("per step", "above the median", "the others wait", "In the parallel groups", "GB/s of the", "small transfer")


@pytest.mark.slow
@pytest.mark.usefixtures("fixtures")  # the generator repeats a fixture rank
def test_slow_ranks_and_groups_in_chinese(tmp_path):
    from generate import generate_ascend

    generate_ascend(0, tmp_path, ranks=8, copies=1, check=False, group_size=4, slow_us=SLOW_US)
    p = profinsight.load(tmp_path / "ascend")
    sr, groups = p.slow_ranks(), p.parallel_groups()
    assert set(sr["rank"]) == {1, 6} and set(groups["slow_rank"].dropna()) == {1, 6}
    # the analyses' English is the catalogue's, from each row's figures
    assert list(sr["evidence"]) == [evidence.slow_rank(r) for _, r in sr.iterrows()]
    assert list(groups["evidence"]) == [evidence.group(r) for _, r in groups.iterrows()]
    top = sr.iloc[0]
    assert top["evidence"].startswith(f"rank {top['rank']}: compute {top['value_us']:,.1f} us per step")
    assert top["label"] == f"rank {top['rank']} compute"  # the glossary's word, not "computing"

    en, zh = ranks_report(p, lang="en").verdict(), ranks_report(p, lang="zh").verdict()
    assert "the other ranks wait for it" in en and "In the parallel groups:" in en
    for word in ENGLISH:
        assert word not in zh, word
    assert f"rank {int(top['rank'])}：每步计算 {top['value_us']:,.1f} us" in zh
    assert "其他 rank 在等它" in zh and "并行通信组中：" in zh
    g = groups[groups["slow_rank"].notna()].iloc[0]
    assert f"其他 rank 每步等待 rank {int(g['slow_rank'])} {g['waited_for_us']:,.1f} us" in zh
    # the JSON and HTML forms carry the same words: the report's tables are worded in its language
    rows = ranks_report(p, lang="zh").to_dict()["slow_ranks"]
    assert all("每步" in r["evidence"] for r in rows)


def _links() -> pd.DataFrame:
    """4 ranks over HCCS, 20 GB/s except 2->3 at 4 GB/s, plus one latency-bound transfer."""
    rows = []
    for src in range(4):
        for dst in range(4):
            if src != dst:
                gbps = 4.0 if (src, dst) == (2, 3) else 20.0
                rows.append((src, dst, 40_000_000, int(40_000_000 / gbps)))
    rows.append((0, 1, 4_096, 30_000))
    return pd.DataFrame(
        [
            {
                "rank": s,
                "step": 1,
                "category": "collective",
                "op_type": "allreduce",
                "summary": "total",
                "group": "g0",
                "src_rank": s,
                "dst_rank": d,
                "transport": "HCCS",
                "bytes": b,
                "transit_ns": ns,
                "op_name": "hcom_allReduce_1",
            }
            for s, d, b, ns in rows
        ]
    )


def test_links_in_chinese():
    p = profile_from_tables({"comm_links": _links()})
    en, zh = ranks_report(p, lang="en"), ranks_report(p, lang="zh")
    links, lat = en.slow_links(), en.link_latency()
    assert list(links["evidence"]) == [evidence.link(r) for _, r in links.iterrows()]
    assert (
        links["evidence"]
        .iloc[0]
        .startswith(
            "link 2->3 (HCCS): 4.00 GB/s, 0.21x the expected 19.3 GB/s of HCCS, 0.20x the median 20.00 GB/s of the 12"
        )
    )
    assert "latency-bound (under 1,000,000 bytes)" in lat["evidence"].iloc[0]
    zl, zlat = zh.slow_links()["evidence"].iloc[0], zh.link_latency()["evidence"].iloc[0]
    assert zl.startswith(
        "链路 2->3（HCCS）：4.00 GB/s，为 HCCS 预期 19.3 GB/s 的 0.21 倍，为 12 条 HCCS 链路中位数 20.00 GB/s"
    )
    assert "受时延限制" in zlat and "4,096 字节" in zlat
    for text in (zl, zlat, zh.verdict()):
        assert not re.search(r"\b(link|links|bytes|median|latency-bound)\b", text.replace("Slow links", "")), text
