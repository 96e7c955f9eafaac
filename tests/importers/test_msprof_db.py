"""The msprof SQLite export (``msprof_*.db``) against the real fixture.  Expected values come from
plain sqlite3 queries on the fixture file (never from the importer's helpers)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

import profinsight
from profinsight.importers import load_rank, msprof_db


def db_file(fixtures: Path) -> Path:
    return fixtures / "msprof" / "msprof_db" / "msprof_0.db"


def sql(path: Path, query: str):
    con = sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def one(path: Path, query: str):
    return sql(path, query)[0][0]


_LOADED: dict = {}


@pytest.fixture
def data(fixtures):
    if "rank" not in _LOADED:
        found = msprof_db.IMPORTER.recognise(db_file(fixtures))
        _LOADED["rank"] = load_rank(found.source)
    return _LOADED["rank"]


def df(data, table: str):
    return data.tables[table].to_pandas()


_KERNEL = "t.globalTaskId IN (SELECT globalTaskId FROM COMPUTE_TASK_INFO)"
_COMM = f"t.globalTaskId IN (SELECT globalTaskId FROM COMMUNICATION_TASK_INFO) AND NOT {_KERNEL}"


# -- device tasks ---------------------------------------------------------------------------
def test_every_task_lands_once_with_its_kind(fixtures, data):
    db = db_file(fixtures)
    dt = df(data, "device_tasks")
    assert len(dt) == one(db, "SELECT count(*) FROM TASK") == 24
    kinds = dt["kind"].value_counts().to_dict()
    n_kernel = one(db, f"SELECT count(*) FROM TASK t WHERE {_KERNEL}")
    n_comm = one(db, f"SELECT count(*) FROM TASK t WHERE {_COMM}")
    assert kinds == {"kernel": n_kernel, "comm_task": n_comm, "other": 24 - n_kernel - n_comm}
    assert (n_kernel, n_comm) == (11, 8)
    # COMMUNICATION_OP is empty: no collective rows
    assert one(db, "SELECT count(*) FROM COMMUNICATION_OP") == 0 and "communication" not in kinds


def test_durations_per_kind_match_the_task_table(fixtures, data):
    db = db_file(fixtures)
    dt = df(data, "device_tasks")
    total = one(db, "SELECT sum(endNs - startNs) FROM TASK")
    assert int(dt["dur_ns"].sum()) == total == 951659
    by_kind = dt.groupby("kind")["dur_ns"].sum().to_dict()
    assert by_kind["kernel"] == one(db, f"SELECT sum(endNs - startNs) FROM TASK t WHERE {_KERNEL}") == 663872
    assert by_kind["comm_task"] == one(db, f"SELECT sum(endNs - startNs) FROM TASK t WHERE {_COMM}") == 176845
    assert int(dt["start_ns"].min()) == one(db, "SELECT min(startNs) FROM TASK")


def test_kernel_names_and_types_come_from_string_ids(fixtures, data):
    db = db_file(fixtures)
    rows = sql(
        db,
        "SELECT t.startNs, n.value, o.value, c.value FROM TASK t JOIN COMPUTE_TASK_INFO k USING (globalTaskId) "
        "JOIN STRING_IDS n ON n.id = k.name JOIN STRING_IDS o ON o.id = k.opType "
        "JOIN STRING_IDS c ON c.id = k.taskType ORDER BY t.startNs",
    )
    k = df(data, "device_tasks").query("kind == 'kernel'").sort_values("start_ns")
    assert list(zip(k["start_ns"], k["name"], k["type"], k["core"])) == rows
    assert rows[0][1:] == ("aclnnInplaceZero_ZerosLikeAiCore_ZerosLike", "ZerosLike", "AI_VECTOR_CORE")
    blocks = sql(db, "SELECT blockDim FROM COMPUTE_TASK_INFO c JOIN TASK t USING (globalTaskId) ORDER BY t.startNs")
    assert k["block_dim"].tolist() == [b for (b,) in blocks]


def test_communication_tasks_name_their_op(fixtures, data):
    db = db_file(fixtures)
    ops = sql(
        db,
        "SELECT s.value, count(*) FROM TASK t JOIN COMMUNICATION_TASK_INFO c USING (globalTaskId) "
        f"JOIN STRING_IDS s ON s.id = c.name WHERE {_COMM} GROUP BY s.value",
    )
    c = df(data, "device_tasks").query("kind == 'comm_task'")
    assert c["comm_op"].value_counts().to_dict() == dict(ops) == {"hcom_allGather__305_879_1": 8}
    assert set(c["core"]) == {"HCCL"}
    size = one(db, f"SELECT sum(size) FROM TASK t JOIN COMMUNICATION_TASK_INFO c USING (globalTaskId) WHERE {_COMM}")
    assert int(c["bytes"].sum()) == size


def test_no_steps_and_no_host_ops(data):
    assert data.tables["steps"].num_rows == 0
    assert data.tables["host_ops"].num_rows == 0
    assert data.tables["comm_ops"].num_rows == 0


def test_cann_api_calls_and_their_launches(fixtures, data):
    db = db_file(fixtures)
    calls = df(data, "api_calls")
    assert len(calls) == one(db, "SELECT count(*) FROM CANN_API") == 4
    assert set(calls["level"]) == {"acl"}
    # one task shares a connectionId with a CANN API call
    linked = one(db, "SELECT count(*) FROM TASK WHERE connectionId IN (SELECT connectionId FROM CANN_API)")
    assert data.tables["launches"].num_rows == linked == 1


# -- memory and counters --------------------------------------------------------------------
def test_npu_op_mem_gives_the_memory_curve_and_blocks(fixtures, data):
    db = db_file(fixtures)
    s = df(data, "memory_samples")
    assert len(s) == one(db, "SELECT count(*) FROM NPU_OP_MEM") == 494
    comps = dict(
        sql(db, "SELECT s.value, count(*) FROM NPU_OP_MEM m JOIN STRING_IDS s ON s.id = m.component GROUP BY 1")
    )
    assert s["component"].value_counts().to_dict() == comps == {"APP": 492, "PTA+GE": 2}
    assert int(s["allocated_bytes"].max()) == one(db, "SELECT max(totalAllocate) FROM NPU_OP_MEM")
    assert int(s["reserved_bytes"].max()) == one(db, "SELECT max(totalReserve) FROM NPU_OP_MEM")

    b = df(data, "memory_blocks")
    kinds = dict(sql(db, "SELECT e.name, count(*) FROM NPU_OP_MEM m JOIN ENUM_MEMORY e ON e.id = m.type GROUP BY 1"))
    assert kinds == {"allocate": 247, "release": 247}
    assert b["alloc_ns"].notna().sum() == kinds["allocate"] and b["release_ns"].notna().sum() == kinds["release"]
    alloc_bytes = one(
        db, "SELECT sum(size) FROM NPU_OP_MEM m JOIN ENUM_MEMORY e ON e.id = m.type WHERE e.name = 'allocate'"
    )
    assert int(b.loc[b["alloc_ns"].notna(), "size_bytes"].sum()) == alloc_bytes
    # each release closes the allocation at its address that precedes it
    paired = b.dropna(subset=["alloc_ns", "release_ns"])
    assert (paired["release_ns"] >= paired["alloc_ns"]).all()
    first = sql(
        db,
        "SELECT s.value, m.size, m.timestampNs, m.addr FROM NPU_OP_MEM m JOIN STRING_IDS s ON s.id = m.operatorName "
        "ORDER BY m.timestampNs LIMIT 2",
    )
    row = b.sort_values("alloc_ns").iloc[0]
    assert (row["name"], row["size_bytes"], row["alloc_ns"], row["release_ns"], row["addr"]) == (
        first[0][0],
        first[0][1],
        first[0][2],
        first[1][2],
        str(first[1][3]),
    )


def test_hbm_and_llc_counters(fixtures, data):
    db = db_file(fixtures)
    c = df(data, "counters")
    assert (c["track"] == "HBM").sum() == one(db, "SELECT count(*) FROM HBM") == 4
    assert (c["track"] == "LLC").sum() == 2 * one(db, "SELECT count(*) FROM LLC")


# -- run info and diagnostics ---------------------------------------------------------------
def test_run_info_says_what_the_profile_is(fixtures, data):
    db = db_file(fixtures)
    info = df(data.finish(), "run_info").iloc[0]
    assert (info["device_family"], info["export_kind"], info["source_format"]) == ("npu", "db", "msprof_db")
    assert info["device"] == one(db, "SELECT DISTINCT deviceId FROM TASK") == 2
    assert info["device_name"] == "Ascend910B"
    assert (info["collect_start_ns"], info["collect_end_ns"]) == sql(
        db, "SELECT startTimeNs, endTimeNs FROM SESSION_TIME_INFO"
    )[0]
    assert not info["has_host_ops"] and info["has_memory"] and not info["has_stack"]


def test_diagnostics_say_what_is_missing(data):
    codes = {d.code: d for d in data.diagnostics}
    assert set(codes) == {
        "msprof-db-no-host-ops",
        "no-steps",
        "msprof-db-no-collectives",
        "msprof-db-viewer-overlap",
        "unnamed-device-tasks",
    }
    # the 2 AI_CORE tasks without a compute or communication record are named 'unknown', not AI_CORE
    assert codes["unnamed-device-tasks"].message.startswith("2 device task(s) (2 AI_CORE;")
    assert "torch_npu.profiler" in codes["msprof-db-no-host-ops"].fix
    assert codes["msprof-db-no-collectives"].message.startswith("8 communication tasks")
    assert all(d.severity == "info" for d in data.diagnostics)


def test_a_broken_db_is_a_diagnostic_not_a_traceback(fixtures, tmp_path):
    bad = tmp_path / "msprof_0.db"
    bad.write_bytes(db_file(fixtures).read_bytes()[:4096])
    rd = load_rank(profinsight.importers.RankSource(format="msprof_db", path=bad, files=(bad,)))
    assert [d.code for d in rd.diagnostics] == ["db-unreadable"]


# -- opening: nothing is written beside the DB -------------------------------------------------
def test_a_wal_db_in_a_writable_folder_gets_no_file_beside_it(fixtures, tmp_path):
    src = db_file(fixtures)
    assert src.read_bytes()[18:20] == b"\x02\x02"  # the header says WAL mode
    shutil.copyfile(src, tmp_path / "msprof_0.db")
    p = profinsight.load(tmp_path / "msprof_0.db")
    assert p.format == "msprof_db" and p.row_counts()["device_tasks"] == 24
    p.sql("SELECT count(*) FROM device_tasks")
    assert sorted(f.name for f in tmp_path.iterdir()) == ["msprof_0.db"]


def test_pending_wal_changes_are_read_from_a_copy(fixtures, tmp_path):
    """A -wal holding a committed, not yet checkpointed task: it is read (25 tasks), and the
    user's folder keeps exactly its two files, unchanged."""
    work, user = tmp_path / "work", tmp_path / "user"
    work.mkdir(), user.mkdir()
    shutil.copyfile(db_file(fixtures), work / "msprof_0.db")
    con = sqlite3.connect(work / "msprof_0.db")
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute(
        "INSERT INTO TASK SELECT startNs + 1, endNs + 1, deviceId, connectionId, globalPid, taskType, contextId, "
        "streamId, taskId, modelId, 999999, depth FROM TASK WHERE globalTaskId = 0"
    )
    con.commit()
    for name in ("msprof_0.db", "msprof_0.db-wal"):  # the pair as a writer left it
        shutil.copyfile(work / name, user / name)
    con.close()
    before = {f.name: f.read_bytes() for f in user.iterdir()}
    assert len(before["msprof_0.db-wal"]) > 0
    rd = load_rank(msprof_db.IMPORTER.recognise(user / "msprof_0.db").source)
    assert rd.tables["device_tasks"].num_rows == 25
    assert {f.name: f.read_bytes() for f in user.iterdir()} == before


# -- recognition ----------------------------------------------------------------------------
def test_recognised_by_content_with_the_file_renamed(fixtures, tmp_path):
    shutil.copyfile(db_file(fixtures), tmp_path / "blob")
    (run,) = profinsight.discover(tmp_path)
    assert run.format == "msprof_db" and run.root.name == "blob"
    assert profinsight.load(tmp_path / "blob").row_counts()["device_tasks"] == 24


def test_the_fixture_folder_is_one_run(fixtures):
    (run,) = profinsight.discover(db_file(fixtures).parent)
    assert run.format == "msprof_db" and run.root == db_file(fixtures)


def test_other_sqlite_files_are_not_msprof_exports(fixtures):
    torch_db = fixtures / "ascend_pt" / "db_level1" / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    for path in (
        torch_db / "ascend_pytorch_profiler_0.db",  # torch_npu's: read with its rank folder
        torch_db / "analysis.db",
        fixtures / "cluster_analysis" / "cluster_analysis.db",
        db_file(fixtures).with_name("msprof_0.db-shm"),
    ):
        assert msprof_db.IMPORTER.recognise(path) is None, path
