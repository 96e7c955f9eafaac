"""The summary tier: a run of torch_npu rank folders loaded from each rank's own summaries
(step_trace_time.csv, communication.json, communication_matrix.json, profiler_metadata.json)
with no trace parsed.  On the real Qwen3 run it gives the vendor's step figures, the same links
and collectives as the full import and the same parallel groups; a rank whose traces are
garbage still loads; a run with a rank lacking its summaries falls back to the full import."""

from __future__ import annotations

import csv
import json
import shutil

import pytest

import profinsight
from profinsight.api import load, resolve_run
from profinsight.api import summary_run as api_summary_run

RUN = "ascend_llm/qwen3_level2_4rank"


def summary_run(path):
    return api_summary_run(resolve_run(path))


@pytest.fixture(scope="module")
def both(fixtures, tmp_path_factory):
    import os

    os.environ["PROFINSIGHT_CACHE"] = str(tmp_path_factory.mktemp("tier_cache"))
    path = fixtures / RUN
    return load(summary_run(path)), profinsight.load(path)


def _sorted(df, cols):
    return df[cols].astype(str).sort_values(cols).reset_index(drop=True)


def test_step_figures_are_each_ranks_step_trace(both, fixtures):
    s, _ = both
    sb = s.step_breakdown().set_index("rank")
    assert set(sb["source"]) == {"vendor_summary"}
    for r in range(4):
        with open(fixtures / RUN / f"rank_{r}_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv") as f:
            row = next(csv.DictReader(f))
        assert sb.loc[r, "step"] == int(row["Step"])
        assert sb.loc[r, "step_us"] == pytest.approx(float(row["Stage"]), abs=1e-3)
        assert sb.loc[r, "computing_us"] == pytest.approx(float(row["Computing"]), abs=1e-3)
        assert sb.loc[r, "free_us"] == pytest.approx(float(row["Free"]), abs=1e-3)
        assert sb.loc[r, "preparing_us"] == pytest.approx(float(row["Preparing"]), abs=1e-3)
    assert {d.code for d in s.diagnostics} >= {"summary-tier"}
    assert s.table("device_tasks").empty and s.table("host_ops").empty  # no trace was parsed


def test_links_and_collectives_equal_the_full_import(both):
    s, f = both
    keys = ["rank", "step", "category", "op_type", "summary", "group", "src_rank", "dst_rank", "transport", "bytes"]
    keys += ["transit_ns", "op_name"]
    assert _sorted(s.table("comm_links"), keys).equals(_sorted(f.table("comm_links"), keys))
    cols = ["rank", "step", "name", "type", "category", "group", "dur_ns", "transit_ns", "wait_ns", "sync_ns"]
    cols += ["idle_ns", "bytes", "hccs_bytes", "hccs_transit_ns", "rdma_bytes", "sdma_bytes"]
    assert _sorted(s.table("comm_ops"), cols).equals(_sorted(f.table("comm_ops"), cols))
    # start times: as communication.json writes them (the full import takes a kernel row's, to the ns)
    a = s.table("comm_ops").sort_values(["rank", "name"])["start_ns"].astype("int64").to_numpy()
    b = f.table("comm_ops").sort_values(["rank", "name"])["start_ns"].astype("int64").to_numpy()
    assert abs(a - b).max() < 1000


def test_parallel_groups_and_verdict_as_the_full_import(both):
    s, f = both
    cols = ["group", "ranks", "names", "slow_rank", "waited_for_us", "n_ops", "bytes", "wait_us"]
    assert s.parallel_groups()[cols].equals(f.parallel_groups()[cols])
    assert s.slow_links().empty and len(s.link_latency()) == len(f.link_latency())


def test_cli_ranks_takes_the_summary_tier_without_reading_traces(fixtures, tmp_path, capsys):
    from profinsight.cli import main

    run = tmp_path / "qwen"
    shutil.copytree(fixtures / RUN, run)
    for p in run.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    (run / "rank_0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv").write_text("not,a\nkernel file\n")
    assert main(["ranks", str(run), "--format", "json"]) == 0  # --tier auto: every rank has its summaries
    d = json.loads(capsys.readouterr().out)
    assert d["ranks"] == [0, 1, 2, 3]
    assert "rank 2" in d["verdict"] and "(embd, mp, pp)" in d["verdict"]
    # a rank without its step trace: the summary tier cannot serve the run
    (run / "rank_3_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv").unlink()
    assert summary_run(run) is None
    assert main(["ranks", str(run), "--tier", "summary"]) == 2
    assert "step_trace_time.csv" in capsys.readouterr().err


def test_the_db_export_reads_each_ranks_analysis_db(fixtures):
    """A DB export (db_level1: ascend_pytorch_profiler_{rank}.db and analysis.db per rank) in the
    summary tier reads only analysis.db: the step figures are its StepTraceTime, the links and the
    collectives' splits equal the full import's (durations within the 1 ns a REAL in ms rounds to),
    the start times as analysis.db writes them."""
    import sqlite3

    path = fixtures / "ascend_pt/db_level1"
    s, f = load(path, tier="summary"), profinsight.load(path)
    assert s.format == "cluster" and f.format == "ascend_db"
    note = next(d for d in s.diagnostics if d.code == "summary-tier")
    assert "analysis.db" in note.message and "step_trace_time.csv" not in note.message
    sb = s.step_breakdown().set_index("rank")
    assert set(sb["source"]) == {"vendor_summary"}
    for r in (0, 1):
        db = path / f"rank{r}_ascend_pt/ASCEND_PROFILER_OUTPUT/analysis.db"
        con = sqlite3.connect(f"{db.resolve().as_uri()}?immutable=1", uri=True)
        step, stage, computing, free, preparing = con.execute(
            "SELECT step, stage, computing, free, preparing FROM StepTraceTime"
        ).fetchone()
        con.close()
        assert sb.loc[r, "step"] == int(step)
        assert sb.loc[r, "step_us"] == pytest.approx(stage, abs=1e-3)
        assert sb.loc[r, "computing_us"] == pytest.approx(computing, abs=1e-3)
        assert sb.loc[r, "free_us"] == pytest.approx(free, abs=1e-3)
        assert sb.loc[r, "preparing_us"] == pytest.approx(preparing, abs=1e-3)
    keys = ["rank", "step", "category", "op_type", "summary", "group", "src_rank", "dst_rank", "transport", "bytes"]
    keys += ["transit_ns"]
    assert _sorted(s.table("comm_links"), keys).equals(_sorted(f.table("comm_links"), keys))
    assert len(s.table("comm_links")) == 96
    cols = ["rank", "step", "name", "type", "category", "group", "bytes", "hccs_bytes", "rdma_bytes", "sdma_bytes"]
    assert _sorted(s.table("comm_ops"), cols).equals(_sorted(f.table("comm_ops"), cols))
    a = s.table("comm_ops").sort_values(["rank", "name"])
    b = f.table("comm_ops").sort_values(["rank", "name"])
    for c in ("dur_ns", "transit_ns", "wait_ns", "sync_ns", "idle_ns"):
        assert abs(a[c].astype("int64").to_numpy() - b[c].astype("int64").to_numpy()).max() <= 1
    assert abs(a["start_ns"].astype("int64").to_numpy() - b["start_ns"].astype("int64").to_numpy()).max() < 25_000
