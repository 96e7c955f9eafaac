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
