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
@pytest.mark.usefixtures("fixtures")  # the generator repeats a fixture rank
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


@pytest.mark.slow
@pytest.mark.usefixtures("fixtures")  # the generator repeats a fixture rank
def test_a_large_job_reads_at_a_glance(tmp_path, capsys):
    """66 ranks in 33 groups of 2, one slowed per group (summary tier): the verdict names 16 slow
    ranks and 16 groups and counts the rest by their ranks; the CLI table keeps 64 ranks and says
    how many more the JSON holds, which lists every one."""
    import json

    from generate import generate_ascend

    from profinsight.api import ranks_report
    from profinsight.cli import main

    info = generate_ascend(0, tmp_path, ranks=66, copies=1, check=False, group_size=2, slow_us=SLOW_US, link=True)
    slow = sorted(info["groups"]["slow_ranks"].values())
    assert len(slow) == 33
    rep = ranks_report(tmp_path / "ascend")
    assert rep.profile.format == "cluster"
    verdict = rep.verdict()
    assert verdict.count("the others wait") == 16
    d = rep.to_dict()
    held = sorted(int(g["slow_rank"]) for g in d["groups"] if g["slow_rank"] is not None)
    assert held == slow  # the JSON keeps every group
    shown = [int(g["slow_rank"]) for g in d["groups"] if g["slow_rank"] is not None][:16]
    rest = sorted(set(slow) - set(shown))
    assert f"... and 17 more (groups, the rank each waits for: {', '.join(map(str, rest))})" in verdict
    assert main(["ranks", str(tmp_path / "ascend"), "--format", "table"]) == 0
    out = capsys.readouterr().out
    assert "the 64 farthest from the median of 66 (2 more in --format json)" in out
    out_json = tmp_path / "r.json"
    assert main(["ranks", str(tmp_path / "ascend"), "--format", "json", "-o", str(out_json)]) == 0
    assert len(json.loads(out_json.read_text())["summary"]) == 66
