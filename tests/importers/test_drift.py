"""Version drift and partial exports of the torch_npu importers, on the real fixtures.

- ``ascend_llm/qwen3_level2_4rank`` (torch_npu 2.7.1, CANN 8.3.RC1): ``Device_id`` columns,
  tab-suffixed timestamps, versions in ``profiler_info_*.json``, a string ``rank_id``, and ranks 1
  and 3 that hold only ``analysis.db``, ``communication*.json`` and ``step_trace_time.csv``.
- ``ascend_pt/db_level1``: tasks the DB names no op for.
- ``Block Num`` and ``analyse.done`` occur in no fixture: they are tested on copies of the real
  files with the newer header / marker added (said in each test).
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from profinsight.errors import NotAProfile
from profinsight.importers import _torch_npu, ascend_db, ascend_text, load_rank

QWEN = ("ascend_llm", "qwen3_level2_4rank")
OUT = "ASCEND_PROFILER_OUTPUT"


def qwen_rank(fixtures: Path, rank: int) -> Path:
    return fixtures.joinpath(*QWEN, f"rank_{rank}_ascend_pt")


@pytest.fixture(scope="module")
def qwen(fixtures):
    return {r: load_rank(ascend_text.sniff(qwen_rank(fixtures, r))) for r in range(4)}


def _csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


# --- item 7: partial exports --------------------------------------------------------------


#: step_trace_time.csv of ranks 1 and 3 (us) -> the vendor_* columns (ns)
VENDOR = {
    1: dict(
        vendor_device=1,
        vendor_computing_ns=230903720,
        vendor_comm_not_overlapped_ns=441708380,
        vendor_overlapped_ns=0,
        vendor_comm_ns=441708380,
        vendor_free_ns=136819560,
        vendor_stage_ns=809431750,
        vendor_bubble_ns=0,
        vendor_comm_not_overlapped_exclude_receive_ns=441708380,
        vendor_preparing_ns=205000,
    ),
    3: dict(
        vendor_device=5,
        vendor_computing_ns=401131700,
        vendor_comm_not_overlapped_ns=261498440,
        vendor_overlapped_ns=0,
        vendor_comm_ns=261498440,
        vendor_free_ns=147520200,
        vendor_stage_ns=810150250,
        vendor_bubble_ns=0,
        vendor_comm_not_overlapped_exclude_receive_ns=261498440,
        vendor_preparing_ns=278750,
    ),
}


@pytest.mark.parametrize("rank", [1, 3])
def test_partial_rank_takes_steps_from_the_vendor_summary(qwen, rank):
    data = qwen[rank]
    assert data.tables["device_tasks"].num_rows == 0
    steps = data.tables["steps"].to_pylist()
    assert len(steps) == 1
    row = steps[0]
    assert row["step"] == 13
    assert row["host_start_ns"] is None and row["device_start_ns"] is None and row["device_end_ns"] is None
    assert {k: row[k] for k in VENDOR[rank]} == VENDOR[rank]
    # the vendor's own identity: Stage = Computing + Communication(Not Overlapped) + Free (Bubble 0)
    assert row["vendor_stage_ns"] == pytest.approx(
        row["vendor_computing_ns"] + row["vendor_comm_not_overlapped_ns"] + row["vendor_free_ns"], rel=1e-6
    )


@pytest.mark.parametrize("rank,n_ops", [(1, 15), (3, 23)])
def test_partial_rank_keeps_comm_ops_and_its_device(qwen, rank, n_ops):
    data = qwen[rank]
    ops = data.tables["comm_ops"].to_pylist()
    assert len(ops) == n_ops
    assert {o["step"] for o in ops} == {13}
    assert {o["device"] for o in ops} == {VENDOR[rank]["vendor_device"]}
    assert data.tables["run_info"].to_pylist()[0]["device"] == VENDOR[rank]["vendor_device"]


@pytest.mark.parametrize("rank", [1, 3])
def test_partial_rank_says_the_figures_are_the_vendors(qwen, rank):
    notes = [d for d in qwen[rank].diagnostics if d.code == "vendor-step-summary"]
    assert len(notes) == 1
    note = notes[0]
    assert note.severity == "warning" and note.rank == rank
    assert note.file.endswith("step_trace_time.csv") and note.fix
    for word in ("trace_view.json and kernel_details.csv are missing", "step(s) 13", "vendor's", "communication.json"):
        assert word in note.message


@pytest.mark.parametrize("rank", [0, 2])
def test_full_rank_has_no_vendor_figures(qwen, rank):
    steps = qwen[rank].tables["steps"].to_pylist()
    assert steps and all(row[k] is None for row in steps for k in VENDOR[rank if rank in VENDOR else 1])
    assert "vendor-step-summary" not in {d.code for d in qwen[rank].diagnostics}


def test_partial_rank_falls_back_to_analysis_db(fixtures, tmp_path):
    """Without step_trace_time.csv, analysis.db's StepTraceTime gives the same step (a copy of
    rank 1 with the CSV removed; the DB rounds to 10 ns, the CSV does not)."""
    folder = tmp_path / "rank_1_ascend_pt"
    shutil.copytree(qwen_rank(fixtures, 1), folder)
    (folder / OUT / "step_trace_time.csv").unlink()
    data = load_rank(ascend_text.sniff(folder))
    row = data.tables["steps"].to_pylist()[0]
    assert row["step"] == 13 and row["vendor_device"] == 1
    assert row["vendor_computing_ns"] == 230903720
    assert row["vendor_stage_ns"] == 809431660  # StepTraceTime.stage 809431.66 us
    assert row["vendor_preparing_ns"] == 205160
    (note,) = [d for d in data.diagnostics if d.code == "vendor-step-summary"]
    assert note.file.endswith("analysis.db")


#: step_trace_time.csv header -> the step_breakdown column it equals
BREAKDOWN = {
    "Computing": "computing_us",
    "Communication(Not Overlapped)": "comm_not_overlapped_us",
    "Overlapped": "overlapped_us",
    "Communication": "comm_us",
    "Free": "free_us",
    "Stage": "step_us",
    "Bubble": "bubble_us",
    "Communication(Not Overlapped and Exclude Receive)": "comm_not_overlapped_exclude_receive_us",
    "Preparing": "preparing_us",
}


def test_partial_run_step_breakdown_has_every_rank(fixtures):
    import profinsight

    p = profinsight.load(fixtures.joinpath(*QWEN))
    b = p.step_breakdown()
    assert list(zip(b["rank"], b["step"])) == [(0, 13), (1, 13), (2, 13), (3, 13)]
    assert list(b["source"]) == ["tasks", "vendor_summary", "tasks", "vendor_summary"]
    by_rank = b.set_index("rank")
    for rank in (1, 3):  # the rank's own step_trace_time.csv, figure by figure (to the ns)
        (row,) = _csv(qwen_rank(fixtures, rank) / OUT / "step_trace_time.csv")
        got = by_rank.loc[rank]
        for vendor, col in BREAKDOWN.items():
            assert round(float(got[col]) * 1000) == round(float(row[vendor]) * 1000), (rank, col)
        assert pd.isna(got["host_step_us"])
    for rank in (0, 2):  # derived from the rank's tasks, as before (the vendor's figures within 0.25 us)
        (row,) = _csv(qwen_rank(fixtures, rank) / OUT / "step_trace_time.csv")
        got = by_rank.loc[rank]
        assert got["step_us"] == pytest.approx(float(row["Stage"]), abs=0.25)
        assert got["computing_us"] == pytest.approx(float(row["Computing"]), abs=0.25)
    assert by_rank.loc[0, "step_us"] == pytest.approx(810022.36)
    # the rank views read the same rows: every rank has its per-step means
    s = p.rank_summary().set_index("rank")
    assert list(s.index) == [0, 1, 2, 3]
    assert s.loc[1, "step_us"] == pytest.approx(809431.75) and s.loc[3, "free_us"] == pytest.approx(147520.2)
    steps = p.table("steps")
    assert steps.loc[steps["rank"] == 3, "vendor_stage_ns"].tolist() == [810150250]


# --- item 5: version drift ------------------------------------------------------------------


@pytest.mark.parametrize("rank", range(4))
def test_versions_from_profiler_info(qwen, rank):
    info = qwen[rank].tables["run_info"].to_pylist()[0]
    assert json.loads(info["versions"]) == {"cann_version": "8.3.RC1", "torch_npu_version": "2.7.1"}
    assert qwen[rank].rank == rank  # rank_id is the string "1" etc. in 2.7.1


def test_versions_helper_reads_any_version_key():
    assert _torch_npu.versions({"torch_npu_version": "2.7.1", "cann_version": "8.3.RC1", "rank_id": "1"}) == {
        "cann_version": "8.3.RC1",
        "torch_npu_version": "2.7.1",
    }
    assert _torch_npu.versions({"config": {}}) == {}
    assert [_torch_npu.rank_id({"rank_id": v}) for v in ("3", 3, -1, "x", None, True)] == [3, 3, None, None, None, None]


@pytest.mark.parametrize("rank,device", [(0, 0), (2, 4)])
def test_device_id_is_the_device_not_the_rank(fixtures, qwen, rank, device):
    kd = _csv(qwen_rank(fixtures, rank) / OUT / "kernel_details.csv")
    assert {r["Device_id"] for r in kd} == {str(device)}
    tasks = qwen[rank].tables["device_tasks"]
    assert set(tasks.column("device").to_pylist()) == {device}
    assert qwen[rank].tables["run_info"].to_pylist()[0]["device"] == device
    assert qwen[rank].rank == rank


@pytest.mark.parametrize("rank,n,first", [(0, 2463, 1764246877073569640), (2, 2587, 1764246877074017600)])
def test_tab_suffixed_timestamps(fixtures, qwen, rank, n, first):
    kd = _csv(qwen_rank(fixtures, rank) / OUT / "kernel_details.csv")
    assert len(kd) == n and kd[0]["Start Time(us)"].endswith("\t")
    t = qwen[rank].tables["device_tasks"].to_pandas()
    k = t[t["kind"].isin(["kernel", "communication"])]
    assert len(k) == n
    assert int(k["start_ns"].min()) == first
    assert k["start_ns"].notna().all()
    mem = qwen[rank].tables["memory_samples"].to_pandas()
    app = _csv(qwen_rank(fixtures, rank) / OUT / "memory_record.csv")[0]
    assert app["Timestamp(us)"].endswith("\t")
    whole, frac = app["Timestamp(us)"].strip().split(".")
    assert int(whole) * 1000 + int(frac) in set(mem.loc[mem["component"] == "APP", "ts_ns"])


def test_block_num_header(fixtures, qwen, tmp_path):
    """Newer releases write ``Block Num`` / ``Mix Block Num`` for ``Block Dim`` / ``Mix Block Dim``.
    No fixture has it: a copy of rank 0 with the header renamed loads the same block dims."""
    folder = tmp_path / "rank_0_ascend_pt"
    shutil.copytree(qwen_rank(fixtures, 0), folder)
    kd = folder / OUT / "kernel_details.csv"
    head, rest = kd.read_text(encoding="utf-8").split("\n", 1)
    assert ",Block Dim,Mix Block Dim," in head
    kd.write_text(head.replace(",Block Dim,Mix Block Dim,", ",Block Num,Mix Block Num,") + "\n" + rest, "utf-8")
    renamed = load_rank(ascend_text.sniff(folder)).tables["device_tasks"]
    original = qwen[0].tables["device_tasks"]
    for col, total in (("block_dim", 66680), ("mix_block_dim", 11200)):
        assert renamed.column(col).to_pylist() == original.column(col).to_pylist()
        assert sum(v for v in renamed.column(col).to_pylist() if v) == total


def test_analyse_done_marks_a_finished_parse(fixtures, tmp_path):
    """``ASCEND_PROFILER_OUTPUT/analyse.done`` (torch_npu 2.5+) says the parse finished; the
    published fixture dropped it, so it is added to a copy."""
    folder = tmp_path / "rank_1_ascend_pt"
    shutil.copytree(qwen_rank(fixtures, 1), folder)
    assert _torch_npu.parse_finished(folder) is None
    before = json.loads(load_rank(ascend_text.sniff(folder)).tables["run_info"].to_pylist()[0]["extra"])
    assert "parse_finished" not in before
    (folder / OUT / "analyse.done").write_text("")
    assert _torch_npu.parse_finished(folder) is True
    after = json.loads(load_rank(ascend_text.sniff(folder)).tables["run_info"].to_pylist()[0]["extra"])
    assert after["parse_finished"] is True
    # a finished parse whose outputs are gone: the message says they were not copied
    empty = tmp_path / "rank_5_ascend_pt"
    (empty / OUT).mkdir(parents=True)
    (empty / OUT / "analyse.done").write_text("")
    problem = _torch_npu.unreadable(empty)
    assert isinstance(problem, NotAProfile) and "analyse.done" in str(problem) and "not copied" in str(problem)


# --- item 6: unnamed device tasks (DB) ------------------------------------------------------


def _db_rank0(fixtures: Path):
    return load_rank(ascend_db.sniff(fixtures / "ascend_pt" / "db_level1" / "rank0_ascend_pt"))


def test_unnamed_tasks_are_unknown_not_ai_core(fixtures):
    data = _db_rank0(fixtures)
    t = data.tables["device_tasks"].to_pandas()
    ai_core = t[(t["kind"] == "other") & (t["type"] == "AI_CORE")]
    assert len(ai_core) == 9
    assert set(ai_core["name"]) == {"unknown"}
    assert ai_core["core"].isna().all()
    assert int(ai_core["dur_ns"].max()) == 88753693
    assert not ((t["kind"] == "other") & (t["name"] == "AI_CORE")).any()
    kernel_aicore = t[(t["kind"] == "other") & (t["type"] == "KERNEL_AICORE")]
    assert len(kernel_aicore) == 8 and set(kernel_aicore["name"]) == {"unknown"}
    on_comm = ai_core[ai_core["stream"] == 4].sort_values("start_ns")
    assert on_comm["dur_ns"].tolist() == [88753693, 2184004, 2416068, 8767755]
    assert on_comm["comm_op"].tolist() == [f"hcom_allReduce__210_{i}_1" for i in range(4)]
    assert ai_core.loc[ai_core["stream"] == 2, "comm_op"].isna().all()
    (note,) = [d for d in data.diagnostics if d.code == "unnamed-device-tasks"]
    assert note.severity == "info" and note.fix
    assert "17 device task(s) (9 AI_CORE, 8 KERNEL_AICORE; up to 88.75 ms)" in note.message


def test_unnamed_tasks_are_neither_compute_nor_communication(fixtures):
    t = _db_rank0(fixtures).tables["device_tasks"].to_pandas()
    unknown = t[t["name"] == "unknown"]
    assert len(unknown) == 17 and set(unknown["kind"]) == {"other"}
