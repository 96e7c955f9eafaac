"""msprof-analyze cluster summaries: every figure reconciled with the vendor's own files."""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3

import pytest

import profinsight
from profinsight.cli import main
from profinsight.errors import MixedRuns


@pytest.fixture(scope="module")
def folder(fixtures):
    return fixtures / "cluster_analysis" / "cluster_analysis_output"


@pytest.fixture(scope="module")
def db(fixtures):
    return fixtures / "cluster_analysis" / "cluster_analysis.db"


@pytest.fixture(scope="module")
def out(folder):
    return profinsight.load(folder)


@pytest.fixture(scope="module")
def dbp(db):
    return profinsight.load(db)


def _csv_rows(folder):
    with open(folder / "cluster_step_trace_time.csv", newline="") as f:
        return list(csv.DictReader(f))


def _db_rows(db):
    con = sqlite3.connect(f"{db.as_uri()}?immutable=1", uri=True)
    try:
        con.row_factory = sqlite3.Row
        return [dict(r) for r in con.execute("SELECT * FROM ClusterStepTraceTime")]
    finally:
        con.close()


def _ns(text) -> int:
    return round(float(text) * 1000)


def test_each_form_is_one_run_of_all_its_ranks(folder, db):
    (run,) = profinsight.discover(folder)
    assert run.format == "cluster" and run.root == folder and run.ranks == list(range(16))
    (run,) = profinsight.discover(db)
    assert run.root == db and run.ranks == list(range(8))
    (run,) = profinsight.discover(folder / "cluster_step_trace_time.csv")
    assert run.root == folder and len(run.ranks) == 16


def test_the_parent_of_two_summaries_is_a_mixed_run(folder, db):
    parent = folder.parent
    runs = profinsight.discover(parent)
    assert sorted((str(r.root), len(r.ranks)) for r in runs) == [(str(db), 8), (str(folder), 16)]
    with pytest.raises(MixedRuns) as err:
        profinsight.load(parent)
    assert "2 runs" in str(err.value) and "cluster_analysis.db" in str(err.value)
    assert "cluster_analysis_output" in str(err.value)


def test_detected_by_content_with_the_names_hidden(folder, db, tmp_path):
    (tmp_path / "a").mkdir()
    shutil.copy(folder / "cluster_step_trace_time.csv", tmp_path / "a" / "steps.csv")
    shutil.copy(db, tmp_path / "summary.db")
    assert profinsight.discover(tmp_path / "a" / "steps.csv")[0].ranks == list(range(16))
    assert profinsight.discover(tmp_path / "summary.db")[0].ranks == list(range(8))


@pytest.mark.parametrize("form", ["folder", "db"])
def test_step_breakdown_is_the_vendors_per_rank(form, folder, db, out, dbp):
    if form == "folder":
        p, rows = out, [r for r in _csv_rows(folder) if r["Type"] == "rank"]
        key = {
            "computing_us": "Computing",
            "comm_not_overlapped_us": "Communication(Not Overlapped)",
            "overlapped_us": "Overlapped",
            "comm_us": "Communication",
            "bubble_us": "Bubble",
            "step_us": "Stage",
            "comm_not_overlapped_exclude_receive_us": "Communication(Not Overlapped and Exclude Receive)",
            "free_us": "Free",
        }
        idx, step = "Index", "Step"
    else:
        p, rows = dbp, [r for r in _db_rows(db) if r["type"] == "rank"]
        key = {
            "computing_us": "computing",
            "comm_not_overlapped_us": "communication_not_overlapped",
            "overlapped_us": "overlapped",
            "comm_us": "communication",
            "bubble_us": "bubble",
            "step_us": "stage",
            "comm_not_overlapped_exclude_receive_us": "communication_not_overlapped_and_exclude_receive",
            "free_us": "free",
        }
        idx, step = "index", "step"
    b = p.step_breakdown().set_index("rank")
    assert len(b) == len(rows) == (16 if form == "folder" else 8)
    assert set(b["source"]) == {"vendor_summary"}
    for r in rows:
        got = b.loc[int(r[idx])]
        assert int(got["step"]) == int(r[step])
        for col, vendor in key.items():  # each figure as written, rounded once to the ns
            assert round(float(got[col]) * 1000) == _ns(r[vendor]), (r[idx], col)
    assert b["preparing_us"].isna().all() and b["host_step_us"].isna().all()
    # the steps table holds the figures; nothing was drawn from them
    steps = p.table("steps").set_index("rank")
    for r in rows:
        assert int(steps.loc[int(r[idx]), "vendor_stage_ns"]) == _ns(r[key["step_us"]])
        assert int(steps.loc[int(r[idx]), "vendor_free_ns"]) == _ns(r[key["free_us"]])
    assert p.table("device_tasks").empty
    assert p.op_summary().empty and p.time_by_category().empty


def test_the_vendors_own_stage_rows_are_the_max_over_their_ranks(folder, out):
    stages = [r for r in _csv_rows(folder) if r["Type"] == "stage"]
    b = out.step_breakdown().set_index("rank")
    assert len(stages) == 2
    for st in stages:
        ranks = [int(x) for x in st["Index"].strip("()").split(",")]
        part = b.loc[ranks]
        assert round(part["computing_us"].max() * 1000) == _ns(st["Computing"])
        assert round(part["comm_not_overlapped_us"].max() * 1000) == _ns(st["Communication(Not Overlapped)"])
        assert round(part["step_us"].max() * 1000) == _ns(st["Stage"])
        assert round(part["bubble_us"].max() * 1000) == _ns(st["Bubble"])


def test_rank_summary_and_slow_ranks_come_from_the_breakdown(out, dbp):
    s = out.rank_summary().set_index("rank")
    assert list(s.index) == list(range(16)) and (s["n_steps"] == 1).all()
    assert round(s.loc[11, "comm_not_overlapped_us"] * 1000) == 231_698_200
    assert round(s.loc[7, "step_us"] * 1000) == 304_017_500
    # the DB's rank 5 communicates 74.5 ms against ~640 ms for its peers and idles 1.42 s: the
    # others wait for it (its free time is far above the median)
    slow = dbp.slow_ranks()
    top = slow.iloc[0]
    assert (int(top["rank"]), top["component"]) == (5, "free_us")
    assert round(top["value_us"] * 1000) == 1_422_823_900
    assert set(slow["rank"]) == {0, 5}


def test_comm_ops_from_the_communication_json(folder, out):
    data = json.loads((folder / "cluster_communication.json").read_text())
    ops = out.table("comm_ops")
    want = {
        (int(rank), key.partition("@")[0])
        for steps in data.values()
        for per_op in steps["step2"].items()
        for key, ranks in [per_op]
        if key != "Total Op Info"
        for rank in ranks
    }
    assert set(zip(ops["rank"], ops["name"])) == want and len(ops) == 6
    rec = data["p2p"]["step2"]["hcom_send__822_0@13337953553061386822"]["0"]
    row = ops[(ops["rank"] == 0) & (ops["name"] == "hcom_send__822_0")].iloc[0]
    t = rec["Communication Time Info"]
    assert row["category"] == "p2p" and row["group"] == "13337953553061386822" and row["step"] == 2
    assert row["dur_ns"] == round(t["Elapse Time(ms)"] * 1e6) and row["transit_ns"] == round(
        t["Transit Time(ms)"] * 1e6
    )
    assert row["rdma_bytes"] == 20_971_520 and row["bytes"] == 20_971_520 and row["hccs_bytes"] == 0
    assert row["start_ns"] == round(t["Start Timestamp(us)"] * 1000)
    # the vendor's Total Op Info of the p2p group is the sum over its ops, per rank
    total = data["p2p"]["step2"]["Total Op Info"]["0"]["Communication Time Info"]
    assert row["dur_ns"] == round(total["Elapse Time(ms)"] * 1e6)
    c = out.collectives()
    assert len(c) == 6 and (c["overlapped_us"] == 0).all()  # no invented overlap with the step blocks


def test_comm_views_from_the_db_reconcile_with_total_op_info(db, dbp):
    con = sqlite3.connect(f"{db.as_uri()}?immutable=1", uri=True)
    try:
        totals = dict(
            con.execute(
                "SELECT rank_id, elapsed_time FROM ClusterCommAnalyzerTime WHERE hccl_op_name = 'Total Op Info'"
            ).fetchall()
        )
        n_ops = con.execute("SELECT count(*) FROM ClusterCommAnalyzerTime WHERE hccl_op_name != 'Total Op Info'")
        n_ops = n_ops.fetchone()[0]
        n_links = con.execute("SELECT count(*) FROM ClusterCommAnalyzerMatrix WHERE hccl_op_name LIKE '%-total'")
        n_links = n_links.fetchone()[0]
    finally:
        con.close()
    assert len(dbp.table("comm_ops")) == n_ops == 336
    summ = dbp.comm_summary()
    per_rank = summ.groupby("rank")["elapse_us"].sum()
    for rank, ms in totals.items():
        assert abs(per_rank[rank] - ms * 1000) <= 1e-3 * ms * 1000  # within 0.1%
    assert len(dbp.comm_matrix()) == n_links == 200


def test_run_info_and_diagnostics(out, dbp):
    info = out.table("run_info")
    assert set(info["export_kind"]) == {"cluster_summary"} and set(info["device_family"]) == {"npu"}
    assert set(info["world_size"]) == {16} and set(dbp.table("run_info")["world_size"]) == {8}
    codes = [(d.code, d.rank) for d in out.diagnostics]
    assert ("cluster-vendor-figures", 0) in codes and ("cluster-vendor-figures", 15) in codes
    # the JSON's per-op records cover ranks 0 and 1 only
    assert {r for c, r in codes if c == "cluster-no-comm"} == set(range(2, 16))
    assert not [d for d in dbp.diagnostics if d.code == "cluster-no-comm"]
    assert out.table("host_ops").empty and out.table("memory_samples").empty


def test_a_comm_json_without_its_step_trace_gives_the_comm_views(folder, tmp_path):
    shutil.copy(folder / "cluster_communication.json", tmp_path / "cluster_communication.json")
    p = profinsight.load(tmp_path)
    assert p.ranks == [0, 1] and len(p.table("comm_ops")) == 6
    assert {d.code for d in p.diagnostics} >= {"cluster-no-step-trace"}


@pytest.mark.parametrize("which", ["folder", "db"])
def test_cli_ranks(which, folder, db, capsys):
    path = folder if which == "folder" else db
    assert main(["ranks", str(path), "--format", "json"]) == 0
    text = capsys.readouterr().out
    assert text.strip()
    assert "15" in text if which == "folder" else "7" in text
