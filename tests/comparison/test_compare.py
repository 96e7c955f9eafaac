"""Run comparison on variants of a real fixture built in the test (issue 5): the expected
numbers come from the construction and a reference interval union, not from the code under test."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import _build as B  # noqa: E402

import profinsight  # noqa: E402

RANK0 = "ascend_pt/text_level1/rank0_ascend_pt"


@pytest.fixture(scope="module")
def base(fixtures):
    return profinsight.load(fixtures / RANK0)


@pytest.fixture(scope="module")
def variant(base):
    tables = B.tables_of(base)
    new, before, after, removed = B.without_format_conversion(tables)
    return B.profile(new), new, before, after, removed


def test_waterfall_attributes_removed_format_conversion(base, variant):
    prof, _, before, after, removed = variant
    assert len(removed) > 0 and set(removed["type"]) <= {"TransData", "Transpose", "TransposeD"}
    old, new = B.reference_breakdown(before), B.reference_breakdown(after)
    removed_us = removed["dur_ns"].sum() / 1e3
    d_step = (new["step"] - old["step"]) / 1e3
    d_cno = (new["cno"] - old["cno"]) / 1e3
    d_free = (new["free"] - old["free"]) / 1e3
    # the construction removes conversions that overlap no other compute: compute falls by their sum
    assert (old["computing"] - new["computing"]) / 1e3 == pytest.approx(removed_us, abs=1e-6)

    cmp = profinsight.compare(base, prof, names=["base", "no_conversion"])
    st = cmp.steps()
    assert list(st["run"]) == ["base", "no_conversion"]
    assert st["step_us"].iloc[1] - st["step_us"].iloc[0] == pytest.approx(d_step, abs=1e-6)

    wf = cmp.waterfall().set_index("component")
    assert wf.loc["format_conversion", "delta_us"] == pytest.approx(-removed_us, abs=1e-6)
    for c in ("matmul", "convolution", "vector", "ai_cpu", "other"):
        assert wf.loc[c, "delta_us"] == pytest.approx(0.0, abs=1e-6)
    assert wf.loc["comm_not_overlapped", "delta_us"] == pytest.approx(d_cno, abs=1e-6)
    assert wf.loc["free", "delta_us"] == pytest.approx(d_free, abs=1e-6)
    assert wf.loc[wf["in_step"], "delta_us"].sum() == pytest.approx(d_step, abs=1e-6)
    assert not wf.loc["preparing", "in_step"]

    s = cmp.summary().iloc[0]
    assert s["top_component"] == "format_conversion"
    assert s["compute_saved_us"] == pytest.approx(removed_us, abs=1e-6)
    assert s["step_gained_us"] == pytest.approx(-d_step, abs=1e-6)
    assert s["gained_share_of_compute_saved_ratio"] == pytest.approx(-d_step / removed_us, rel=1e-9)
    v = s["verdict"]
    assert "format conversion" in v
    assert f"Compute fell by {removed_us:,.1f} us" in v
    assert f"the step gained {-d_step:,.1f} us" in v
    assert f"{100 * -d_step / removed_us:.0f}%" in v

    ops = cmp.ops(by="type").set_index("type")
    td = removed[removed["type"] == "TransData"]["dur_ns"].sum() / 1e3
    assert ops.loc["TransData", "status"] == "removed"
    assert ops.loc["TransData", "delta_total_us"] == pytest.approx(-td, abs=1e-3)
    assert ops.loc["TransData", "from_count"] == (removed["type"] == "TransData").sum()
    ch = cmp.op_changes("type").set_index("status")
    assert ch.loc["removed", "n_ops"] == removed["type"].nunique()
    assert "slower" not in ch.index and "added" not in ch.index

    html = cmp._repr_html_()
    assert "<svg" in html and "format conversion" in html
    d = json.loads(json.dumps(cmp.to_dict()))
    assert list(d["waterfalls"]) == ["base → no_conversion"]


def test_three_run_series_is_one_object(base, variant):
    prof1, tables1, *_ = variant
    t2, before2, after2, removed2 = B.remove_kernels(
        tables1, lambda r: r["kind"] == "kernel" and r["type"] == "MatMulV2"
    )
    prof2 = B.profile(t2)
    assert len(removed2) > 0
    cmp = profinsight.compare(base, prof1, prof2, names=["base", "opt1", "opt2"])
    assert cmp.pairs == [(0, 1), (1, 2), (0, 2)]
    wf = cmp.waterfall()
    assert list(wf["pair"].unique()) == ["base → opt1", "opt1 → opt2", "base → opt2"]
    steps = cmp.steps().set_index("run")["step_us"]
    for pair, g in wf.groupby("pair", sort=False):
        a, b = pair.split(" → ")
        assert g.loc[g["in_step"], "delta_us"].sum() == pytest.approx(steps[b] - steps[a], abs=1e-6)
    second = wf[wf["pair"] == "opt1 → opt2"].set_index("component")
    d_comp = (B.reference_breakdown(after2)["computing"] - B.reference_breakdown(before2)["computing"]) / 1e3
    assert second.loc["matmul", "delta_us"] == pytest.approx(d_comp, abs=1e-6)
    assert second.loc["format_conversion", "delta_us"] == pytest.approx(0.0, abs=1e-6)
    assert len(cmp.summary()) == 3 and len(cmp.verdicts()) == 3
    # the runs' step chart, then one waterfall per pair
    page = cmp._repr_html_()
    assert page.count("<svg") == 4 and "step per run" in page


@pytest.mark.slow
def test_cli_compare_json(fixtures, tmp_path, capsys):
    from profinsight.cli import main

    a = fixtures / RANK0
    b = a  # the same run twice: loads once (cache), and the names still differ
    assert main(["compare", str(a), str(b), "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in d["runs"]] == ["text_level1/rank0_ascend_pt", "text_level1/rank0_ascend_pt#1"]
    assert d["summary"][0]["delta_step_us"] == 0
    assert len(d["waterfalls"]) == 1 and d["verdicts"]
    out = tmp_path / "cmp.html"
    assert main(["compare", str(a), str(b), "-o", str(out)]) == 0
    assert "<svg" in out.read_text()
    assert main(["compare", str(a)]) == 2


def test_verdict_without_absurd_share_when_compute_barely_moved(fixtures):
    """compare_base -> compare_test: compute fell 2 us, the step 58 ms: no '2922875% of it'."""
    cmp = profinsight.compare(
        fixtures / "kineto" / "compare_base.json.gz", fixtures / "kineto" / "compare_test.json.gz"
    )
    verdict = cmp.verdicts()[0]
    assert "more than the compute saved." in verdict and "% of it" not in verdict
    assert "came from outside compute" in verdict


def test_per_run_tables_are_computed_side_by_side_and_once(base, variant, monkeypatch):
    """The op tables and signatures of distinct runs are computed on a thread each, every run
    once; a run compared with itself (one profile object, one DuckDB connection) is computed on
    this thread only."""
    import threading

    from profinsight.comparison import core

    seen = []
    real = core._op_table

    def spy(profile, by, n):
        seen.append((id(profile), threading.current_thread() is threading.main_thread()))
        return real(profile, by, n)

    monkeypatch.setattr(core, "_op_table", spy)
    two = profinsight.compare(base, variant[0], names=["a", "b"])
    ops = two.ops()
    assert sorted(i for i, _ in seen) == sorted([id(base), id(variant[0])])
    assert not any(on_main for _, on_main in seen)
    assert len(two._signatures) == 0 and len(two.noise_verdicts()) == 1 and sorted(two._signatures) == [0, 1]
    seen.clear()
    assert two.ops().equals(ops) and seen == []  # kept: not computed again
    same = profinsight.compare(base, base, names=["a", "b"])
    same.ops()
    assert [on_main for _, on_main in seen] == [True, True]
