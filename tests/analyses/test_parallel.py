"""Parallel groups on the real 4-rank Qwen3 run (TP1 / PP2 / DP2): the layout of
profiler_metadata.json, HCCL hashes matched to groups by their ranks (all names where several
groups share them), who waits for whom, the slow rank per group, the pipeline bubble per stage
(on a crafted variant with a known receive time) and the CLI / advisor wording."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

import profinsight
from profinsight.analyses.parallel import layout, parallel_layout
from profinsight.testing import profile_from_tables

RUN = "ascend_llm/qwen3_level2_4rank"
PP_HASH = "3985310405473756128"  # the batchSendRecv of pp group [0, 2]


@pytest.fixture(scope="module")
def qwen(fixtures, tmp_path_factory):
    import os

    os.environ["PROFINSIGHT_CACHE"] = str(tmp_path_factory.mktemp("qwen_cache"))
    return profinsight.load(fixtures / RUN)


def _vendor_waits(fixtures, rank: int) -> dict[str, float]:
    """Wait Time(ms) per op of the rank's communication.json, as the vendor wrote it (us)."""
    d = json.loads((fixtures / RUN / f"rank_{rank}_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json").read_text())
    out = {}
    for step in d.values():
        for ops in step.values():
            for key, rec in ops.items():
                if "@" in key:
                    out[key] = rec["Communication Time Info"]["Wait Time(ms)"] * 1e3
    return out


def test_layout_from_profiler_metadata(qwen):
    sizes, groups = layout(qwen)
    assert sizes == {"tp": 1, "pp": 2, "dp": 2, "cp": 1, "ep": 1}
    pp = [g["ranks"] for g in groups if g["name"] == "pp"]
    assert pp == [(0, 2), (1, 3)]
    lay = parallel_layout(qwen).set_index(["name", "ranks"])
    assert lay.loc[("pp", "0, 2"), "hashes"] == "3985310379703952346, 3985310405473756128, 3985310491373102170"
    assert lay.loc[("dp", "2, 3"), "hashes"] == "5862276106100383503, 5862276123280252691"
    assert lay.loc[("tp", "0"), "hashes"] == ""  # rank 0 records no op of its one-rank tp group


def test_hashes_named_by_their_ranks_never_one_guessed(qwen):
    g = qwen.parallel_groups().set_index("group")
    assert len(g) == 12
    assert g.loc[PP_HASH, "ranks"] == "0, 2"
    assert g.loc[PP_HASH, "names"] == "embd, mp, pp"  # all three share ranks [0, 2]
    assert g.loc["3985310499963036764", "names"] == "embd, mp, pp"
    assert g.loc["5862276106100383503", "names"] == "dp, dp_cp"
    assert g.loc["5862276114690318097", "names"] == "dp_cp"  # ranks 0, 1 declare no separate dp group
    assert g.loc["5862276093215481612", "names"] == "default_group"
    assert g.loc["3985310396883821534", "names"] == "tp"


def test_wait_chain_and_slow_rank_per_group(qwen, fixtures):
    w0, w2 = _vendor_waits(fixtures, 0), _vendor_waits(fixtures, 2)
    ch = qwen.wait_chain()
    one = ch[(ch["group"] == PP_HASH) & (ch["name"] == "hcom_batchSendRecv__128_4_1")].iloc[0]
    key = f"hcom_batchSendRecv__128_4_1@{PP_HASH}"
    assert one["last_rank"] == 2 and one["max_wait_rank"] == 0
    assert one["waited_for_us"] == pytest.approx(w0[key] - w2[key], abs=1e-6)
    assert one["chain"] == "0 157,697.5 us waited for rank 2"
    g = qwen.parallel_groups().set_index("group")
    # rank 0 waits for rank 2 in two of the three sends/receives (the third: rank 2 waits for 0)
    expected = sum(w0[k] - w2[k] for k in w0 if k.endswith(PP_HASH) and w0[k] > w2[k])
    assert g.loc[PP_HASH, "slow_rank"] == 2
    assert g.loc[PP_HASH, "waited_for_us"] == pytest.approx(expected, abs=1e-6)
    med = qwen.rank_summary().set_index("rank").loc[[0, 2], "step_us"].median()
    assert g.loc[PP_HASH, "waited_for_share_of_step_ratio"] == pytest.approx(expected / med, abs=1e-12)
    assert g.loc["3985310499963036764", "slow_rank"] == 3
    # data-parallel groups are balanced: no slow rank, computing spread as the vendor's figures
    assert pd.isna(g.loc["5862276106100383503", "slow_rank"])
    assert g.loc["5862276123280252691", "computing_spread_us"] == pytest.approx(401131.7 - 400448.26, abs=1e-3)
    assert "rank 2" in g.loc[PP_HASH, "evidence"] and "(embd, mp, pp)" in g.loc[PP_HASH, "evidence"]


def test_pipeline_stages_without_receive_have_no_bubble(qwen):
    b = qwen.pipeline_bubbles()
    assert b["stage"].tolist() == [0, 1]
    assert b["ranks"].tolist() == ["0, 1", "2, 3"]
    assert b["bubble_us"].tolist() == [0.0, 0.0]


def test_pipeline_bubble_of_a_crafted_receive(fixtures, tmp_path):
    """Rank 2 (stage 1) of a copy receives for 71,424.68 us: its first batchSendRecv becomes a
    hcom_receive in kernel_details.csv."""
    run = tmp_path / "qwen"
    shutil.copytree(fixtures / RUN, run)
    for f in run.rglob("*"):
        f.chmod(0o755 if f.is_dir() else 0o644)
    kd = run / "rank_2_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv"
    text = kd.read_text()
    assert text.count("hcom_batchSendRecv__128_3_1,hcom_batchSendRecv_,") == 1
    kd.write_text(
        text.replace("hcom_batchSendRecv__128_3_1,hcom_batchSendRecv_,", "hcom_receive__128_3_1,hcom_receive_,")
    )
    b = profinsight.load(run).pipeline_bubbles().set_index("stage")
    assert b.loc[1, "max_bubble_rank"] == 2
    assert b.loc[1, "max_bubble_us"] == pytest.approx(71424.68, abs=1e-6)
    assert b.loc[1, "bubble_us"] == pytest.approx(71424.68 / 2, abs=1e-6)  # rank 3 receives nothing
    assert b.loc[0, "bubble_us"] == 0.0


def _tiny(ranks_of_group, declared):
    ops = pd.DataFrame(
        [
            {
                "rank": r,
                "step": 1,
                "name": "hcom_allReduce__1_1_1",
                "type": "hcom_allReduce_",
                "group": "h1",
                "start_ns": 0,
                "dur_ns": 1000,
                "wait_ns": w,
                "bytes": 8,
            }
            for r, w in ranks_of_group
        ]
    )
    extra = json.dumps({"metadata": {"parallel_group_info": declared}})
    info = pd.DataFrame({"rank": [r for r, _ in ranks_of_group], "extra": [extra] * len(ranks_of_group)})
    return profile_from_tables({"comm_ops": ops, "run_info": info})


def test_a_hash_whose_ranks_match_no_declared_group_keeps_no_name():
    declared = {"group_name_1": {"group_name": "dp", "global_ranks": [0, 1, 2, 3]}}
    p = _tiny([(0, 500), (1, 0), (2, 300)], declared)  # a partial export: rank 3 missing
    g = p.parallel_groups()
    assert g["names"].tolist() == [""]
    assert "no declared group has these ranks" in g["evidence"][0]
    ch = p.wait_chain().iloc[0]
    assert ch["last_rank"] == 1 and ch["max_wait_rank"] == 0
    assert ch["waited_for_us"] == pytest.approx((0.5 + 0.3) / 2)


def test_cli_ranks_shows_groups_and_ratios_with_their_digits(fixtures, capsys):
    from profinsight.cli import main

    assert main(["ranks", str(fixtures / RUN), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    names = {g["group"]: g["names"] for g in out["groups"]}
    assert names[PP_HASH] == "embd, mp, pp"
    assert "rank 2" in out["verdict"] and "(embd, mp, pp)" in out["verdict"]
    assert main(["ranks", str(fixtures / RUN)]) == 0
    text = capsys.readouterr().out
    assert "Parallel groups" in text and "embd, mp" in text
    assert "0.1052" in text  # the computing imbalance ratio (10.52% of the step), not "0.1"
