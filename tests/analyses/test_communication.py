"""Communication analyses: exact tables on a hand-made profile, and reconciliation with the
vendor's own aggregates — communication.json / communication_matrix.json (text, read with
``json``) and analysis.db CommAnalyzerTime / CommAnalyzerBandwidth / CommAnalyzerMatrix (DB,
read with ``sqlite3``, read-only) — on the real Level1 fixtures of both ranks."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from _support import read_only_sqlite

import profinsight
from profinsight.testing import profile_from_tables

LINKS = ("HCCS", "RDMA", "PCIE", "SDMA", "SIO")
REL = 1e-3  # the contract's 0.1%
ABS_NS_US = 1.1e-3  # comm_ops hold whole ns; the vendor's ms carry sub-ns digits
_LOADED: dict = {}


# --- hand-made profile -------------------------------------------------------------------


def _hand_made():
    ops = pd.DataFrame(
        {
            "rank": [0, 0, 1],
            "step": [1, 1, 1],
            "name": ["ar_0", "ag_0", "ar_0"],
            "type": ["allreduce", "allgather", "allreduce"],
            "category": "collective",
            "group": "g",
            "start_ns": [100, 300, 100],
            "dur_ns": [100, 100, 100],
            "transit_ns": pd.array([40, None, 50], "Int64"),
            "wait_ns": pd.array([40, None, 30], "Int64"),
            "sync_ns": pd.array([10, None, 0], "Int64"),
            "idle_ns": pd.array([20, None, 20], "Int64"),
            "bytes": pd.array([4000, 1000, 0], "Int64"),
            "hccs_bytes": pd.array([4000, None, 0], "Int64"),
            "hccs_transit_ns": pd.array([80, None, 0], "Int64"),
            "sdma_bytes": pd.array([4000, None, 0], "Int64"),
            "sdma_transit_ns": pd.array([80, None, 0], "Int64"),
        }
    )
    kernels = [  # (rank, kind, start, dur)
        (0, "kernel", 50, 70),
        (0, "kernel", 110, 20),  # overlapping each other: union [50, 130) -> 30 ns
        (0, "kernel", 150, 10),
        (0, "kernel", 190, 60),  # 10 ns, and 10 ns at the op's end
        (0, "memcpy", 100, 100),  # not compute: ignored
        (1, "kernel", 0, 1000),  # another rank: not rank 0's overlap
        (0, "kernel", 400, 10),
    ]  # touches ag_0's end only: 0 ns
    tasks = pd.DataFrame(kernels, columns=["rank", "kind", "start_ns", "dur_ns"]).assign(name="k", device=0)
    links = pd.DataFrame(
        {
            "rank": 0,
            "step": 1,
            "category": "collective",
            "op_type": "allreduce",
            "summary": ["total", "total", "top1"],
            "group": "g",
            "src_rank": [0, 0, 0],
            "dst_rank": [0, 1, 1],
            "transport": ["LOCAL", "HCCS", "HCCS"],
            "bytes": [1000, 2000, 500],
            "transit_ns": [10, 1000, 100],
            "op_name": [None, None, "ar_0"],
        }
    )
    return profile_from_tables({"comm_ops": ops, "device_tasks": tasks, "comm_links": links})


def test_collectives_exact():
    df = _hand_made().collectives()
    assert list(df.name) == ["ar_0", "ag_0", "ar_0"] and list(df["rank"]) == [0, 0, 1]
    assert list(df.overlapped_us) == [0.050, 0.0, 1.0 / 10]  # rank 1: its own kernel covers it all
    assert list(df.share_of_comm_overlapped_ratio) == [0.5, 0.0, 1.0]
    assert list(df.elapse_us) == [0.1, 0.1, 0.1]
    r0 = df.iloc[0]
    assert (r0.transit_us, r0.wait_us, r0.sync_us, r0.idle_us) == (0.04, 0.04, 0.01, 0.02)
    assert r0.wait_ratio == 0.5 and r0.bandwidth_gbps == 100.0  # 4000 B / 40 ns
    assert r0.hccs_gbps == 50.0 and r0.sdma_gbps == 50.0 and pd.isna(r0.rdma_gbps)
    ag = df.iloc[1]  # GPU-like: no transit split, bandwidth over the elapsed time
    assert pd.isna(ag.transit_us) and pd.isna(ag.wait_ratio) and ag.bandwidth_gbps == 10.0
    r1 = df.iloc[2]
    assert pd.isna(r1.bandwidth_gbps) and pd.isna(r1.hccs_gbps)  # no bytes, no bandwidth
    assert list(_hand_made().collectives(rank=0, step=1).name) == ["ar_0", "ag_0"]
    assert _hand_made().collectives(step=2).empty


def test_comm_summary_exact():
    df = _hand_made().comm_summary()
    assert list(zip(df["rank"], df.type, df["count"])) == [
        (0, "allgather", 1),
        (0, "allreduce", 1),
        (1, "allreduce", 1),
    ]
    assert list(df.share_of_comm_ratio) == [0.5, 0.5, 1.0]
    assert list(df.share_of_comm_overlapped_ratio) == [0.0, 0.5, 1.0]
    ar = df.iloc[1]
    assert (ar.elapse_us, ar.transit_us, ar.wait_us, ar.idle_us, ar.bytes) == (0.1, 0.04, 0.04, 0.02, 4000)
    assert ar.bandwidth_gbps == 100.0 and ar.hccs_gbps == 50.0 and ar.wait_ratio == 0.5


def test_comm_matrix_exact():
    p = _hand_made()
    df = p.comm_matrix()
    assert df[["src_rank", "dst_rank", "transport", "bytes"]].values.tolist() == [
        [0, 0, "LOCAL", 1000],
        [0, 1, "HCCS", 2000],
    ]
    assert list(df.bandwidth_gbps) == [100.0, 2.0] and list(df.transit_us) == [0.01, 1.0]
    top = p.comm_matrix(summary="top1")
    assert list(top.op_name) == ["ar_0"] and list(top.bandwidth_gbps) == [5.0]
    assert len(p.comm_matrix(summary=None)) == 3
    with pytest.raises(profinsight.ProfileError):
        p.comm_matrix(summary="best")


def test_empty_profile_gives_empty_tables():
    p = profile_from_tables({})
    for name in ("collectives", "comm_summary", "comm_matrix"):
        df = p.view(name)
        assert df.empty and "rank" in df.columns


# --- the real fixtures -------------------------------------------------------------------


@pytest.fixture
def loaded(fixtures):
    def get(kind: str):
        if kind not in _LOADED:
            _LOADED[kind] = profinsight.load(fixtures / "ascend_pt" / kind)
        return _LOADED[kind]

    return get


def _out(fixtures: Path, kind: str, rank: int) -> Path:
    return fixtures / "ascend_pt" / kind / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT"


def _close(ours, theirs, rel=REL, abs_=1e-4) -> bool:
    """Within 0.1% (the vendor rounds bandwidths to 4 decimals: abs 1e-4 covers tiny values)."""
    return abs(ours - theirs) <= max(rel * abs(theirs), abs_)


def _check_op(row, times: dict, bw: dict) -> None:
    """One collective against the vendor's record: times in ms, bandwidth per transport."""
    for col, key in (
        ("elapse_us", "elapse"),
        ("transit_us", "transit"),
        ("wait_us", "wait"),
        ("sync_us", "sync"),
        ("idle_us", "idle"),
    ):
        assert abs(row[col] - times[key] * 1000) <= ABS_NS_US * 2, (row["name"], col)
    size = 0
    for t in LINKS:
        mb, bandwidth = bw.get(t, (0, 0))
        ours = row[f"{t.lower()}_gbps"]
        if mb > 0:
            assert _close(ours, bandwidth), (row["name"], t, ours, bandwidth)
            size += 0 if t == "SDMA" else round(mb * 1e6)  # SDMA duplicates HCCS
        else:
            assert pd.isna(ours)
    assert row["bytes"] == size


@pytest.mark.parametrize("rank", [0, 1])
def test_collectives_match_communication_json(loaded, fixtures, rank):
    df = loaded("text_level1").collectives(rank=rank)
    data = json.loads((_out(fixtures, "text_level1", rank) / "communication.json").read_text())
    seen = 0
    for step, cats in data.items():
        for cat, ops in cats.items():
            for key, rec in ops.items():
                if key == "Total Op Info":
                    continue
                name, group = key.split("@")
                row = df[(df.name == name) & (df.group == group)]
                assert len(row) == 1 and row.iloc[0].category == cat and f"step{row.iloc[0].step}" == step
                ti = rec["Communication Time Info"]
                times = {
                    "elapse": ti["Elapse Time(ms)"],
                    "transit": ti["Transit Time(ms)"],
                    "wait": ti["Wait Time(ms)"],
                    "sync": ti["Synchronization Time(ms)"],
                    "idle": ti["Idle Time(ms)"],
                }
                bw = {
                    t: (v["Transit Size(MB)"], v["Bandwidth(GB/s)"])
                    for t, v in rec["Communication Bandwidth Info"].items()
                }
                _check_op(row.iloc[0], times, bw)
                assert abs(row.iloc[0].wait_ratio - ti["Wait Time Ratio"]) <= 5e-5 + 1e-9
                seen += 1
    assert seen == len(df) == 4


@pytest.mark.parametrize("rank", [0, 1])
def test_comm_summary_matches_total_op_info(loaded, fixtures, rank):
    s = loaded("text_level1").comm_summary(rank=rank).iloc[0]
    data = json.loads((_out(fixtures, "text_level1", rank) / "communication.json").read_text())
    total = data["step50"]["collective"]["Total Op Info"]
    ti, hccs = total["Communication Time Info"], total["Communication Bandwidth Info"]["HCCS"]
    assert abs(s.elapse_us - ti["Elapse Time(ms)"] * 1000) <= 4 * ABS_NS_US
    assert abs(s.wait_ratio - ti["Wait Time Ratio"]) <= 5e-5 + 1e-9
    assert _close(s.hccs_gbps, hccs["Transit Size(MB)"] / hccs["Transit Time(ms)"], rel=1e-6)
    assert s.share_of_comm_ratio == 1.0


@pytest.mark.parametrize("rank", [0, 1])
def test_comm_matrix_matches_communication_matrix_json(loaded, fixtures, rank):
    df = loaded("text_level1").comm_matrix(summary=None, rank=rank)
    data = json.loads((_out(fixtures, "text_level1", rank) / "communication_matrix.json").read_text())
    n = 0
    for _step, cats in data.items():
        for cat, groups in cats.items():
            for key, linkmap in groups.items():
                kind, group = key.split("@")
                op_type, summary = kind.rsplit("-", 1)
                for link, rec in linkmap.items():
                    src, dst = map(int, link.split("-"))
                    row = df[
                        (df.op_type == op_type)
                        & (df.summary == summary)
                        & (df.group == group)
                        & (df.src_rank == src)
                        & (df.dst_rank == dst)
                        & (df.category == cat)
                    ]
                    assert len(row) == 1, (key, link)
                    r = row.iloc[0]
                    assert r.transport == rec["Transport Type"] and r.bytes == round(rec["Transit Size(MB)"] * 1e6)
                    assert _close(r.bandwidth_gbps, rec["Bandwidth(GB/s)"]), (key, link)
                    n += 1
    assert n == len(df) == 48


@pytest.mark.parametrize("rank", [0, 1])
def test_overlap_matches_step_trace_time(loaded, fixtures, rank):
    """The overlapped parts of the collectives add up to the vendor's Overlapped of the step."""
    df = loaded("text_level1").collectives(rank=rank)
    with open(_out(fixtures, "text_level1", rank) / "step_trace_time.csv", newline="") as fh:
        row = next(csv.DictReader(fh))
    assert _close(df.overlapped_us.sum(), float(row["Overlapped"]))


def _sqlite(path: Path) -> sqlite3.Connection:
    return read_only_sqlite(path)


@pytest.mark.parametrize("rank", [0, 1])
def test_db_matches_analysis_db(loaded, fixtures, rank):
    p = loaded("db_level1")
    df = p.collectives(rank=rank)
    con = _sqlite(_out(fixtures, "db_level1", rank) / "analysis.db")
    times = {
        (r[0], r[1]): dict(zip(("elapse", "transit", "wait", "sync", "idle"), r[2:7])) | {"step": r[7]}
        for r in con.execute(
            "SELECT hccl_op_name, group_name, elapse_time, transit_time, wait_time, "
            "synchronization_time, idle_time, step FROM CommAnalyzerTime"
        )
    }
    bw: dict = {}
    for op, group, transport, size, bandwidth in con.execute(
        "SELECT DISTINCT hccl_op_name, group_name, transport_type, transit_size, bandwidth FROM CommAnalyzerBandwidth"
    ):
        bw.setdefault((op, group), {})[transport] = (size, bandwidth)
    assert len(times) == len(df) == 4
    for _, row in df.iterrows():
        key = (row["name"], row["group"])
        assert f"step{row.step}" == times[key]["step"]
        _check_op(row, times[key], bw[key])
    matrix = p.comm_matrix(summary=None, rank=rank)
    rows = con.execute(
        "SELECT hccl_op_name, group_name, src_rank, dst_rank, transport_type, transit_size, "
        "bandwidth FROM CommAnalyzerMatrix"
    ).fetchall()
    assert len(rows) == len(matrix) == 48
    for name, group, src, dst, transport, size, bandwidth in rows:
        op_type, summary = name.rsplit("-", 1)
        r = matrix[
            (matrix.op_type == op_type)
            & (matrix.summary == summary)
            & (matrix.group == group)
            & (matrix.src_rank == int(src))
            & (matrix.dst_rank == int(dst))
        ]
        assert len(r) == 1 and r.iloc[0].transport == transport and r.iloc[0].bytes == round(size * 1e6)
        assert _close(r.iloc[0].bandwidth_gbps, bandwidth)
    (overlapped,) = con.execute("SELECT overlapped FROM StepTraceTime").fetchone()
    assert _close(df.overlapped_us.sum(), overlapped)  # the step's Overlapped, from the ops
    con.close()


def test_gpu_collectives_have_no_transit_split(fixtures):
    p = profinsight.load(fixtures / "kineto" / "gpu_2rank_rank0.json.gz")
    df = p.collectives()
    assert len(df) == 10 and df.transit_us.isna().all() and (df.elapse_us > 0).all()
    assert ((df.overlapped_us >= 0) & (df.overlapped_us <= df.elapse_us)).all() and df.overlapped_us.sum() > 0
    s = p.comm_summary()
    assert sorted(s.type) == ["allgather", "allreduce", "alltoall"] and round(s.share_of_comm_ratio.sum(), 9) == 1.0
    assert p.comm_matrix().empty


def test_rich_display_has_charts():
    p = _hand_made()
    for df in (p.collectives(), p.comm_summary(), p.comm_matrix()):
        assert "<svg" in df._repr_html_()
