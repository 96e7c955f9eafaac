"""Ranks side by side: a 4-rank profile from rank 0 copies where one rank is made slow the
realistic way (longer compute, shorter collective wait; its peers wait longer)."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import _build as B  # noqa: E402

import profinsight  # noqa: E402
from profinsight.api import ranks_report  # noqa: E402

D_NS = 4_000_000  # 4 ms of extra compute on the slow rank
SLOW = 2


def _slow_copy(tables: dict, rank: int) -> tuple[dict, pd.DataFrame]:
    """The slow rank: an extra compute kernel of D runs where the first allreduce started; the
    allreduce starts D later and ends as before (the rank waited D less); its wait drops by D."""
    dt = B.device_tasks(tables)
    comm = dt[dt["kind"] == "communication"].sort_values("start_ns")
    first = comm.index[0]
    a0 = int(dt.loc[first, "start_ns"])
    extra = dt[dt["kind"] == "kernel"].iloc[[0]].copy()
    extra["start_ns"], extra["dur_ns"], extra["name"] = a0, D_NS, "SlowKernel"
    dt.loc[first, "start_ns"] = a0 + D_NS
    dt.loc[first, "dur_ns"] = int(dt.loc[first, "dur_ns"]) - D_NS
    dt = pd.concat([dt, extra], ignore_index=True)
    co = tables["comm_ops"].to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)
    k = co.sort_values("start_ns").index[0]
    co.loc[k, "wait_ns"] = int(co.loc[k, "wait_ns"]) - D_NS
    out = dict(tables)
    out["device_tasks"] = pa.Table.from_pandas(dt, schema=tables["device_tasks"].schema, preserve_index=False)
    out["comm_ops"] = pa.Table.from_pandas(co, schema=tables["comm_ops"].schema, preserve_index=False)
    return out, dt


def test_slow_rank_detected_with_evidence(fixtures):
    p = profinsight.load(fixtures / "ascend_pt/text_level1/rank0_ascend_pt")
    tables = B.tables_of(p)
    slow, slow_dt = _slow_copy(tables, SLOW)
    per_rank = [slow if r == SLOW else tables for r in range(4)]
    merged = {
        name: pa.concat_tables(
            [B.with_rank(t[name], r) for r, t in enumerate(per_rank)]
            if "rank" in tables[name].column_names
            else [tables[name]]
        )
        for name in B.TABLES
    }
    prof = B.profile(merged)
    assert prof.ranks == [0, 1, 2, 3]
    extra_compute = (
        B.reference_breakdown(slow_dt)["computing"] - B.reference_breakdown(B.device_tasks(tables))["computing"]
    ) / 1e3
    assert extra_compute > 0.5 * D_NS / 1e3

    rep = ranks_report(prof)
    summ = rep.summary().set_index("rank")
    assert summ.loc[SLOW, "computing_vs_median_us"] == pytest.approx(extra_compute, abs=1e-6)
    assert summ.loc[SLOW, "comm_wait_vs_median_us"] == pytest.approx(-D_NS / 1e3, abs=1e-6)
    assert summ.loc[SLOW, "step_us"] == pytest.approx(summ.loc[0, "step_us"], abs=1e-6)  # same step everywhere

    sr = rep.slow_ranks()
    assert list(sr["rank"].unique()) == [SLOW]
    top = sr.iloc[0]
    assert top["component"] == "computing_us"
    assert top["deviation_us"] == pytest.approx(extra_compute, abs=1e-6)
    assert top["mads"] >= 3
    assert top["steps"] == "50"
    assert top["comm_wait_vs_median_us"] == pytest.approx(-D_NS / 1e3, abs=1e-6)
    assert f"rank {SLOW}" in rep.verdict() and "wait for it" in rep.verdict()
    imb = rep.imbalance().set_index("component")
    assert imb.loc["computing_us", "max_rank"] == SLOW
    assert prof.slow_ranks().iloc[0]["rank"] == SLOW  # registered analysis
    assert "<svg" in rep._repr_html_()


def test_cli_ranks_two_ranks(fixtures, capsys):
    from profinsight.cli import main

    assert main(["ranks", str(fixtures / "ascend_pt/text_level1"), "--format", "json"]) == 0
    import json

    d = json.loads(capsys.readouterr().out)
    assert d["ranks"] == [0, 1] and len(d["summary"]) == 2 and "too few" in d["verdict"]


def test_a_component_some_ranks_do_not_record_calls_no_rank_slow(fixtures):
    """On the Qwen3 run, ranks 1 and 3 carry the vendor's step figures (preparing included)
    while ranks 0 and 2 record no preparing: a median of two values calls nobody slow, and a
    rank without the figure is never named ("0.00 ms in preparing")."""
    p = profinsight.load(fixtures / "ascend_llm" / "qwen3_level2_4rank")
    sb = p.step_breakdown()
    assert sorted(sb["source"]) == ["tasks", "tasks", "vendor_summary", "vendor_summary"]
    assert sb["preparing_us"].notna().sum() == 2
    assert len(p.slow_ranks()) == 0
    assert "slow_rank" not in set(p.advise()["rule"][lambda r: p.advise()["severity"] != "not_applicable"])
