"""The benchmark generator writes real parallel groups and slows one rank per group by a known
amount (benchmarks/groups.py); the ranks analyses name exactly those ranks, each in its group,
with exactly that wait."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import profinsight  # noqa: E402

SLOW_US = 10_000  # 7% of the 143 ms step: above the rule's 5%


@pytest.mark.slow
def test_generated_groups_name_exactly_the_slowed_ranks(tmp_path):
    from generate import generate_ascend

    info = generate_ascend(0, tmp_path, ranks=8, copies=1, check=False, group_size=4, slow_us=SLOW_US)
    expected = info["groups"]["slow_ranks"]
    assert sorted(expected.values()) == [1, 6]  # group 0: position 1, group 1: position (5 + 1) % 4 = 2
    p = profinsight.load(tmp_path / "ascend")
    assert p.ranks == list(range(8))
    g = p.parallel_groups().set_index("group")
    assert sorted(g.index) == sorted(expected)
    for h, rank in expected.items():
        assert g.loc[h, "slow_rank"] == rank
        assert g.loc[h, "names"] == "dp"
        assert g.loc[h, "waited_for_us"] == pytest.approx(SLOW_US, abs=1e-6)
    assert g.loc[min(expected), "ranks"] in ("0, 1, 2, 3", "4, 5, 6, 7")
    from profinsight.analyses.parallel import layout

    sizes, declared = layout(p)
    assert sizes == {"tp": 1, "pp": 2, "dp": 4, "cp": 1, "ep": 1}
    assert [d["ranks"] for d in declared if d["name"] == "pp"] == [(0, 4), (1, 5), (2, 6), (3, 7)]
    # the global detection sees the extra compute of both slowed ranks and nobody else
    sr = p.slow_ranks()
    assert set(sr["rank"]) == {1, 6}
    from profinsight.advisor import evaluate

    findings, _ = evaluate(p, "en", {}, only=("group_slow_rank",))
    held = sorted(x["slow_rank"] for x in findings[0]["evidence"]["groups"])
    assert held == [1, 6]
    # the summary tier (each rank's own summaries, no trace parsed) names the same ranks and groups
    s = profinsight.load(tmp_path / "ascend", tier="summary")
    assert s.format == "cluster" and s.table("device_tasks").empty
    sg = s.parallel_groups().set_index("group")
    for h, rank in expected.items():
        assert sg.loc[h, "slow_rank"] == rank and sg.loc[h, "names"] == "dp"
        assert sg.loc[h, "waited_for_us"] == pytest.approx(SLOW_US, abs=1e-6)
    findings, _ = evaluate(s, "en", {}, only=("group_slow_rank",))
    by = {x["slow_rank"]: x for x in findings[0]["evidence"]["groups"]}
    assert sorted(by) == [1, 6] and by[1]["names"] == "dp" and by[1]["group"] in expected
