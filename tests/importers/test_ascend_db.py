"""The DB importer against the real fixtures.  Expected values are computed here, independently,
with plain sqlite3 queries on the fixture files (never with the importer's own helpers), and the
step breakdown is reconciled with the vendor's own aggregate (analysis.db StepTraceTime)."""

from __future__ import annotations

import collections
import csv
import shutil
import sqlite3
import tempfile
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

from profinsight.importers import ascend_db, load_rank
from profinsight.importers._text import normalise_list, normalise_stack
from profinsight.importers.ascend_db.device import wait_ns

RANKS = [(lv, r) for lv in (0, 1) for r in (0, 1)]
MIB = 1024 * 1024


def rank_dir(fixtures: Path, level: int, rank: int, kind: str = "db") -> Path:
    return fixtures / "ascend_pt" / f"{kind}_level{level}" / f"rank{rank}_ascend_pt"


def sql(fixtures: Path, level: int, rank: int, query: str, db: str | None = None):
    folder = rank_dir(fixtures, level, rank) / "ASCEND_PROFILER_OUTPUT"
    name = db or f"ascend_pytorch_profiler_{rank}.db"
    con = sqlite3.connect(f"{(folder / name).resolve().as_uri()}?immutable=1", uri=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


_LOADED: dict = {}


@pytest.fixture
def loaded(fixtures):
    """Load each fixture rank once per session (0.1 s each) and hand out its RankData."""

    def get(level: int, rank: int):
        key = (level, rank)
        if key not in _LOADED:
            _LOADED[key] = load_rank(ascend_db.sniff(rank_dir(fixtures, level, rank)))
        return _LOADED[key]

    return get


def df(data, table: str):
    return data.tables[table].to_pandas()


# -- detection ------------------------------------------------------------------------------
@pytest.mark.parametrize("level,rank", RANKS)
def test_sniff_lists_db_files_and_rank(fixtures, level, rank):
    src = ascend_db.sniff(rank_dir(fixtures, level, rank))
    names = [p.name for p in src.files]
    assert src.format == "ascend_db" and src.rank_hint == rank
    assert f"ascend_pytorch_profiler_{rank}.db" in names and "analysis.db" in names
    assert f"profiler_info_{rank}.json" in names
    assert names == sorted(names) and not any(n.endswith("-shm") for n in names)


def test_sniff_rejects_text_export_and_files(fixtures):
    assert ascend_db.sniff(rank_dir(fixtures, 1, 0, "text")) is None
    assert ascend_db.sniff(fixtures / "README.md") is None


# -- device_tasks ---------------------------------------------------------------------------
@pytest.mark.parametrize("level,rank", RANKS)
def test_every_task_row_lands_once(fixtures, loaded, level, rank):
    t = df(loaded(level, rank), "device_tasks")
    kinds = t.kind.value_counts().to_dict()
    n_task = sql(fixtures, level, rank, "SELECT count(*) FROM TASK")[0][0]
    n_compute = sql(fixtures, level, rank, "SELECT count(*) FROM COMPUTE_TASK_INFO")[0][0]
    n_comm = sql(
        fixtures,
        level,
        rank,
        "SELECT count(*) FROM COMMUNICATION_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId",
    )[0][0]
    n_ops = sql(fixtures, level, rank, "SELECT count(*) FROM COMMUNICATION_OP")[0][0]
    assert n_compute == 187 and n_ops == 4
    assert kinds["kernel"] == n_compute and kinds["communication"] == n_ops and kinds["comm_task"] == n_comm
    assert sum(kinds.get(k, 0) for k in ("kernel", "comm_task", "memcpy", "sync", "other")) == n_task
    by_type = dict(
        sql(
            fixtures,
            level,
            rank,
            "SELECT s.value, count(*) FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType GROUP BY 1",
        )
    )
    assert kinds["memcpy"] == by_type["MEMCPY_ASYNC"]
    assert kinds["sync"] == by_type["EVENT_RECORD"] + by_type["EVENT_WAIT"]
    assert sorted(t.task_uid) == list(range(len(t)))


@pytest.mark.parametrize("level,rank", RANKS)
def test_kernel_and_communication_rows_are_exact(fixtures, loaded, level, rank):
    t = df(loaded(level, rank), "device_tasks")
    want = sql(
        fixtures,
        level,
        rank,
        "SELECT n.value, t.startNs, t.endNs - t.startNs FROM TASK t "
        "JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId "
        "JOIN STRING_IDS n ON n.id = c.name",
    )
    k = t[t.kind == "kernel"]
    assert sorted(zip(k.name, k.start_ns, k.dur_ns)) == sorted(want)
    ops = sql(
        fixtures,
        level,
        rank,
        "SELECT n.value, o.startNs, o.endNs - o.startNs FROM COMMUNICATION_OP o "
        "JOIN STRING_IDS n ON n.id = o.opName ORDER BY o.startNs",
    )
    c = t[t.kind == "communication"].sort_values("start_ns")
    assert list(zip(c.name, c.start_ns, c.dur_ns)) == ops
    assert set(c.core) == {"HCCL"} and set(c.type) == {"hcom_allReduce_"}  # Level0 (N/A): taken from the name
    assert c.device.notna().all()


def test_kernel_attributes_level1(loaded):
    t = df(loaded(1, 1), "device_tasks")
    conv = t[t.name == "Conv2D1"].iloc[0]
    assert conv.type == "Conv2D" and conv.core == "AI_CORE" and conv.block_dim == 16
    assert conv.input_shapes == "32,1,224,224,8;121,4,16,8;64"
    assert conv.input_dtypes == "FLOAT;FLOAT;FLOAT" and conv.input_formats == "NC1HWC0;FRACTAL_Z;NCHW"
    k = t[t.kind == "kernel"]
    assert not k.input_shapes.dropna().str.contains('"').any()
    assert set(k.core) == {"AI_VECTOR_CORE", "AI_CORE", "DSA_SQE", "MIX_AIV"}


def test_kernel_attributes_level0_are_null(loaded):
    k = df(loaded(0, 0), "device_tasks").query("kind == 'kernel'")
    assert k.core.isna().all() and k.input_shapes.isna().all()
    # the type is the one the name says (see test_level0_kernels_get_their_type_from_their_name)
    assert (len(k), k.type.notna().sum()) == (187, 168)
    assert not [c for c in k.columns if c.startswith("pmu_")]


def test_pmu_pivot_level1(fixtures, loaded):
    t = df(loaded(1, 0), "device_tasks")
    pmu = {c for c in t.columns if c.startswith("pmu_")}
    assert {
        "pmu_aic_total_time_ns",
        "pmu_aiv_total_time_ns",
        "pmu_aic_total_cycles",
        "pmu_aic_mac_ratio",
        "pmu_aic_mac_time_ns",
        "pmu_aiv_icache_miss_rate",
    } <= pmu
    rows = sql(
        fixtures,
        1,
        0,
        "SELECT t.startNs, p.value FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name "
        "JOIN TASK t ON t.globalTaskId = p.globalTaskId WHERE s.value = 'aic_total_time'",
    )
    got = dict(zip(t.start_ns, t.pmu_aic_total_time_ns))
    assert len(rows) == 185 and all(got[s] == pytest.approx(v) for s, v in rows)
    assert t[t.kind != "kernel"].pmu_aic_total_time_ns.isna().all()


@pytest.mark.parametrize("level,rank", RANKS)
def test_wait_is_the_gap_in_global_start_order(fixtures, loaded, level, rank):
    rows = sql(
        fixtures,
        level,
        rank,
        "SELECT startNs, endNs FROM TASK t JOIN COMPUTE_TASK_INFO c "
        "ON c.globalTaskId = t.globalTaskId UNION ALL "
        "SELECT startNs, endNs FROM COMMUNICATION_OP ORDER BY 1",
    )
    expect, prev = [], None
    for s, e in rows:
        expect.append(0 if prev is None else max(0, s - prev))
        prev = e
    t = df(loaded(level, rank), "device_tasks")
    kc = t[t.kind.isin(["kernel", "communication"])].sort_values("start_ns", kind="stable")
    assert list(kc.wait_ns) == expect
    assert t[~t.kind.isin(["kernel", "communication"])].wait_ns.isna().all()


@pytest.mark.parametrize("level,rank", RANKS)
def test_wait_rule_reproduces_text_kernel_details(fixtures, level, rank):
    """The rule the importer applies is the one behind the text export's Wait Time column."""
    path = rank_dir(fixtures, level, rank, "text") / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    rows = list(csv.DictReader(path.open(newline="")))
    start = [int(Decimal(r["Start Time(us)"].strip()) * 1000) for r in rows]
    end = [s + int(Decimal(r["Duration(us)"]) * 1000) for s, r in zip(start, rows)]
    order = sorted(range(len(rows)), key=lambda i: start[i])
    got = wait_ns([start[i] for i in order], [end[i] for i in order])
    want = [int(Decimal(rows[i]["Wait Time(us)"]) * 1000) for i in order]
    assert len(rows) == 191 and [abs(g - w) <= 1 for g, w in zip(got, want)] == [True] * 191


# -- steps ----------------------------------------------------------------------------------
@pytest.mark.parametrize("level,rank", RANKS)
def test_steps_match_step_time_and_launch_rule(fixtures, loaded, level, rank):
    steps = loaded(level, rank).tables["steps"].to_pylist()
    ((sid, hs, he),) = sql(fixtures, level, rank, "SELECT id, startNs, endNs FROM STEP_TIME")
    assert len(steps) == 1
    s = steps[0]
    assert (s["step"], s["host_start_ns"], s["host_end_ns"]) == (sid, hs, he)
    launched = (
        f"JOIN CANN_API a ON a.connectionId = x.connectionId AND a.type = 10000 WHERE a.startNs BETWEEN {hs} AND {he}"
    )
    kernels = sql(
        fixtures,
        level,
        rank,
        "SELECT min(x.startNs), max(x.endNs) FROM TASK x JOIN COMPUTE_TASK_INFO c "
        f"ON c.globalTaskId = x.globalTaskId {launched}",
    )[0]
    comms = sql(fixtures, level, rank, f"SELECT min(x.startNs), max(x.endNs) FROM COMMUNICATION_OP x {launched}")[0]
    assert s["device_start_ns"] == min(kernels[0], comms[0])
    assert s["device_end_ns"] == max(kernels[1], comms[1], he)


def _merge(intervals):
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


@pytest.mark.parametrize("level,rank", RANKS)
def test_step_breakdown_reconciles_with_vendor_step_trace(fixtures, loaded, level, rank):
    """analysis.db StepTraceTime (us) is the vendor's aggregate for the DB export: computing,
    communication, stage, free and preparing rebuilt from our tables agree within 0.1%."""
    data = loaded(level, rank)
    t = df(data, "device_tasks")
    step = data.tables["steps"].to_pylist()[0]
    k = t[(t.kind == "kernel") & (t.step == step["step"])]
    c = t[(t.kind == "communication") & (t.step == step["step"])]
    comp = _merge(zip(k.start_ns, k.start_ns + k.dur_ns))
    comm = _merge(zip(c.start_ns, c.start_ns + c.dur_ns))
    busy = _merge([tuple(x) for x in comp + comm])
    stage = busy[-1][1] - busy[0][0]
    mine = {
        "computing": sum(b - a for a, b in comp),
        "communication": sum(b - a for a, b in comm),
        "stage": stage,
        "free": stage - sum(b - a for a, b in busy),
        "preparing": busy[0][0] - step["host_start_ns"],
    }
    vendor = sql(
        fixtures,
        level,
        rank,
        "SELECT computing, communication, stage, free, preparing FROM StepTraceTime",
        db="analysis.db",
    )[0]
    for (key, ns), us in zip(mine.items(), vendor):
        assert ns / 1000 == pytest.approx(us, rel=1e-3), key


def test_compute_total_within_2pct_of_text_op_statistic(fixtures, loaded):
    for rank in (0, 1):
        path = rank_dir(fixtures, 1, rank, "text") / "ASCEND_PROFILER_OUTPUT" / "op_statistic.csv"
        text_us = sum(float(r["Total Time(us)"]) for r in csv.DictReader(path.open(newline="")))
        k = df(loaded(1, rank), "device_tasks").query("kind == 'kernel'")
        assert k.dur_ns.sum() / 1000 == pytest.approx(text_us, rel=0.02)


# -- host side ------------------------------------------------------------------------------
@pytest.mark.parametrize("level,rank", [(1, 0), (1, 1), (0, 0)])
def test_host_ops(fixtures, loaded, level, rank):
    h = df(loaded(level, rank), "host_ops")
    counts = dict(sql(fixtures, level, rank, "SELECT type, count(*) FROM PYTORCH_API GROUP BY type"))
    assert len(h) == sum(counts.values())
    assert h.category.value_counts().to_dict() == {"op": counts[50001], "queue": counts[50002], "python": counts[50003]}
    starts = sorted(r[0] for r in sql(fixtures, level, rank, "SELECT CAST(startNs AS INTEGER) FROM PYTORCH_API"))
    assert sorted(h.start_ns) == starts
    ops = h[h.category == "op"]
    assert (ops.host_self_ns >= 0).all() and (ops.host_self_ns <= ops.dur_ns).all()
    assert h[h.category != "op"].host_self_ns.isna().all()
    assert h.sequence.notna().any() and not (h.sequence == -1).any() and not (h.fwd_thread == 0).any()
    shapes = h.input_shapes.dropna()
    assert len(shapes) and not shapes.str.contains(r"[A-Za-z\r\n]").any()  # swapped columns fixed
    assert h.input_dtypes.dropna().str.contains("float").any()
    assert (h.pid == h.pid.iloc[0]).all() and h.thread.nunique() == 3
    step = h[h.name == "ProfilerStep#50"].iloc[0]
    ((hs, he),) = sql(fixtures, level, rank, "SELECT startNs, endNs FROM STEP_TIME")
    assert (step.start_ns, step.start_ns + step.dur_ns) == (hs, he)


def test_call_stack_innermost_first(fixtures, loaded):
    h = df(loaded(1, 1), "host_ops")
    ((cid, n),) = sql(
        fixtures,
        1,
        1,
        "SELECT callchainId, count(*) FROM PYTORCH_API p JOIN PYTORCH_CALLCHAINS c "
        "ON c.id = p.callchainId WHERE p.callchainId IS NOT NULL "
        "GROUP BY p.rowid ORDER BY CAST(p.startNs AS INTEGER) LIMIT 1",
    )
    first = sql(
        fixtures,
        1,
        1,
        f"SELECT s.value FROM PYTORCH_CALLCHAINS c JOIN STRING_IDS s ON s.id = c.stack "
        f"WHERE c.id = {cid} AND c.stackDepth = 0",
    )[0][0]
    stack = h.call_stack.dropna().iloc[0].split("\n")
    assert len(stack) == n and stack[0] == first


def test_device_time_of_ops(loaded):
    h = df(loaded(1, 1), "host_ops")
    t = df(loaded(1, 1), "device_tasks")
    comm_total = t[t.kind == "communication"].dur_ns.sum()
    assert h[h.name == "HcclAllreduce"].device_self_ns.sum() == comm_total
    assert (h.device_total_ns.dropna() >= h.device_self_ns.dropna()).all()
    assert h[h.category != "op"].device_self_ns.isna().all()


@pytest.mark.parametrize("level,rank", [(1, 0), (0, 1)])
def test_launches_and_api_calls(fixtures, loaded, level, rank):
    data = loaded(level, rank)
    links = df(data, "launches").link.value_counts().to_dict()
    torch_to_npu = sql(
        fixtures,
        level,
        rank,
        """SELECT
        (SELECT count(*) FROM PYTORCH_API p JOIN CONNECTION_IDS c ON c.id = p.connectionId
            JOIN TASK t ON t.connectionId = c.connectionId) +
        (SELECT count(*) FROM PYTORCH_API p JOIN CONNECTION_IDS c ON c.id = p.connectionId
            JOIN COMMUNICATION_OP o ON o.connectionId = c.connectionId)""",
    )[0][0]
    by_api = sql(
        fixtures,
        level,
        rank,
        """SELECT
        (SELECT count(*) FROM TASK t JOIN CANN_API a ON a.connectionId = t.connectionId) +
        (SELECT count(*) FROM COMMUNICATION_OP o JOIN CANN_API a ON a.connectionId = o.connectionId)""",
    )[0][0]
    assert links == {"torch_to_npu": torch_to_npu, "connection_id": by_api}
    api = df(data, "api_calls")
    assert len(api) == sql(fixtures, level, rank, "SELECT count(*) FROM CANN_API")[0][0]
    assert set(api.level) == {"acl", "node", "hccl"}


# -- memory, comm, counters, run_info -------------------------------------------------------
def test_memory_tables(fixtures, loaded):
    data = loaded(1, 1)
    m = df(data, "memory_samples")
    want = dict(
        sql(
            fixtures,
            1,
            1,
            "SELECT s.value, count(*) FROM MEMORY_RECORD m JOIN STRING_IDS s ON s.id = m.component GROUP BY 1",
        )
    )
    want["APP"] = sql(
        fixtures, 1, 1, "SELECT count(*) FROM NPU_MEM n JOIN STRING_IDS s ON s.id = n.type WHERE s.value = 'app'"
    )[0][0]
    assert m.component.value_counts().to_dict() == want
    assert m[m.component == "APP"].allocated_bytes.isna().all()
    assert m[m.component == "GE"].active_bytes.isna().all()
    b = df(data, "memory_blocks")
    assert len(b) == 184
    ge = sql(fixtures, 1, 1, "SELECT count(*) FROM OP_MEMORY WHERE streamPtr IS NULL")[0][0]
    assert (b.component == "GE").sum() == ge == 57 and b[b.component == "GE"].name.str.startswith("cann::").all()
    assert len(df(data, "module_memory")) == sql(fixtures, 1, 1, "SELECT count(*) FROM NPU_MODULE_MEM")[0][0]


def test_comm_ops_level1(fixtures, loaded):
    c = df(loaded(1, 1), "comm_ops").sort_values("start_ns")
    hccs = sql(
        fixtures, 1, 1, "SELECT sum(size) FROM COMMUNICATION_TASK_INFO WHERE linkType = 1 GROUP BY opId ORDER BY opId"
    )
    assert list(c.hccs_bytes) == [r[0] for r in hccs]
    assert list(c.bytes) == list(c.hccs_bytes) and (c.rdma_bytes == 0).all()  # analysed, not used
    times = sql(
        fixtures,
        1,
        1,
        "SELECT hccl_op_name, transit_time, wait_time, group_name FROM CommAnalyzerTime",
        db="analysis.db",
    )
    got = {r.name: r for r in c.itertuples()}
    for name, transit, wait, group in times:
        assert got[name].transit_ns == round(transit * 1e6) and got[name].wait_ns == round(wait * 1e6)
        assert got[name].group == group
    assert set(c.step) == {50} and set(c.category) == {"collective"} and set(c.data_type) == {"FP32"}


def test_comm_ops_level0_have_no_analysis(fixtures, loaded):
    c = df(loaded(0, 0), "comm_ops")
    raw = sql(fixtures, 0, 0, "SELECT DISTINCT s.value FROM COMMUNICATION_OP o JOIN STRING_IDS s ON s.id = o.groupName")
    assert len(c) == 4 and c.transit_ns.isna().all() and c.bytes.isna().all()
    assert set(c.group) == {raw[0][0]}
    assert len(df(loaded(0, 0), "comm_links")) == 0


def test_comm_links(fixtures, loaded):
    links = df(loaded(1, 0), "comm_links")
    assert len(links) == sql(fixtures, 1, 0, "SELECT count(*) FROM CommAnalyzerMatrix", db="analysis.db")[0][0]
    assert set(links.op_type) == {"allreduce"}
    assert set(links.summary) == {"top1", "middle", "bottom1", "bottom2", "bottom3", "total"}
    assert links.src_rank.notna().all() and (links.bytes >= 0).all()


def test_counters(fixtures, loaded):
    c = df(loaded(1, 1), "counters")
    assert {"AI Core Freq", "HBM", "LLC", "NPU MEM", "Acc PMU", "Stars Soc Info"} <= set(c.track)
    hbm = sql(
        fixtures,
        1,
        1,
        "SELECT timestampNs, bandwidth FROM HBM h JOIN STRING_IDS s ON s.id = h.type "
        "WHERE hbmId = 0 AND s.value = 'read'",
    )
    got = c[c.name == "HBM 0/Read"]
    want = sorted((t, bw / MIB) for t, bw in hbm)
    got = sorted(zip(got.ts_ns, got.value))
    assert [t for t, _ in got] == [t for t, _ in want] and [v for _, v in got] == pytest.approx([v for _, v in want])
    assert set(c[c.track == "NPU MEM"].unit) == {"KB"} and set(c[c.track == "HBM"].unit) == {"MB/s"}


@pytest.mark.parametrize("level,rank", RANKS)
def test_run_info(loaded, level, rank):
    info = loaded(level, rank).tables["run_info"].to_pylist()[0]
    assert info["rank"] == rank and info["device"] == rank and info["source_format"] == "ascend_db"
    assert info["profiler_level"] == f"Level{level}" and info["activities"] == "CPU,NPU"
    assert info["versions"] == '{"db_schema": "1.0.0"}' and info["device_name"] == "Ascend910B"
    assert info["host"] == "ubuntu" and info["with_stack"] is True
    assert info["collect_start_ns"] < info["collect_end_ns"] and "PYTORCH_NPU_ALLOC_CONF" in info["env"]


# -- robustness and diagnostics -------------------------------------------------------------
def test_viewer_modified_and_pristine_dbs_give_the_same_columns(loaded):
    a, b = loaded(1, 0), loaded(1, 1)
    for name in a.tables:
        assert a.tables[name].schema == b.tables[name].schema, name


def test_diagnostics(loaded):
    codes0 = {d.code for d in loaded(0, 0).diagnostics}
    assert "level0-limits" in codes0
    assert all(d.fix and d.file for d in loaded(0, 0).diagnostics)
    assert not [d for d in loaded(1, 0).diagnostics if d.severity != "info"]


def _beside(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(("-wal", "-shm")))


def test_a_wal_mode_db_is_read_without_writing_beside_it(fixtures, tmp_path):
    """The rank-0 DB is in WAL mode as shipped: loading it creates no -shm / -wal next to it in
    a writable folder (where mode=ro would), nor in the read-only fixture folder (which is
    writable for root)."""
    import shutil

    rank = tmp_path / "rank0_ascend_pt"
    shutil.copytree(rank_dir(fixtures, 1, 0), rank, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    out = rank / "ASCEND_PROFILER_OUTPUT"
    db = next(out.glob("ascend_pytorch_profiler*.db"))
    assert db.read_bytes()[18:20] == b"\x02\x02"  # WAL mode
    data = load_rank(ascend_db.sniff(rank))
    assert data.tables["device_tasks"].num_rows == 556
    assert _beside(out) == []
    assert "db-wal-readonly" not in {d.code for d in data.diagnostics}
    shipped = rank_dir(fixtures, 1, 0) / "ASCEND_PROFILER_OUTPUT"
    before = _beside(shipped)
    load_rank(ascend_db.sniff(rank_dir(fixtures, 1, 0)))
    assert _beside(shipped) == before


def test_pending_wal_changes_are_read_from_a_copy_or_reported(fixtures, tmp_path, monkeypatch):
    """A -wal that holds changes is read from a temporary copy (the user's files untouched, the
    copy removed); when the copy cannot be made, the DB is read without them and the user told."""
    import shutil

    from profinsight.importers import _common

    rank = tmp_path / "rank0_ascend_pt"
    shutil.copytree(rank_dir(fixtures, 1, 0), rank)
    out = rank / "ASCEND_PROFILER_OUTPUT"
    db = next(out.glob("ascend_pytorch_profiler*.db"))
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_autocheckpoint = 0")
    (n_tasks,) = con.execute("SELECT count(*) FROM TASK").fetchone()
    con.execute("INSERT INTO TASK SELECT * FROM TASK LIMIT 1")  # a change that stays in the -wal
    con.commit()
    saved = {p.name: p.read_bytes() for p in out.iterdir()}
    shutil.copyfile(db, tmp_path / "db")
    shutil.copyfile(db.with_name(db.name + "-wal"), tmp_path / "wal")
    con.close()  # a clean close checkpoints: put the pending state back as it was
    for p in out.iterdir():
        if p.name.endswith("-shm"):
            p.unlink()
    shutil.copyfile(tmp_path / "db", db)
    shutil.copyfile(tmp_path / "wal", db.with_name(db.name + "-wal"))
    saved = {p.name: p.read_bytes() for p in out.iterdir()}
    assert db.with_name(db.name + "-wal").stat().st_size > 0

    tmp_before = set(Path(tempfile.gettempdir()).glob("profinsight-db-*"))
    read, pending = _common.open_sqlite_state(db)
    assert not pending and read.execute("SELECT count(*) FROM TASK").fetchone()[0] == n_tasks + 1
    read.close()
    assert set(Path(tempfile.gettempdir()).glob("profinsight-db-*")) == tmp_before
    assert {p.name: p.read_bytes() for p in out.iterdir()} == saved

    def no_copy(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_common.shutil, "copyfile", no_copy)
    data = load_rank(ascend_db.sniff(rank))
    assert "db-wal-readonly" in {d.code for d in data.diagnostics}
    assert data.tables["device_tasks"].num_rows > 0
    assert {p.name: p.read_bytes() for p in out.iterdir()} == saved


def test_unreadable_db_is_an_error_not_a_crash(tmp_path):
    folder = tmp_path / "rank3_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    folder.mkdir(parents=True)
    (folder / "ascend_pytorch_profiler_3.db").write_bytes(b"not a database" * 100)
    data = load_rank(ascend_db.sniff(folder.parent))
    assert [d.code for d in data.diagnostics if d.severity == "error"] == ["db-unreadable"]
    assert "ascend_pytorch_profiler_3.db" in data.diagnostics[0].file
    assert data.rank == 3 and data.tables["device_tasks"].num_rows == 0


def _writable_copy(fixtures: Path, tmp_path: Path) -> tuple[Path, Path]:
    dst = tmp_path / "rank1_ascend_pt"
    shutil.copytree(rank_dir(fixtures, 1, 1), dst)
    for p in [dst, *dst.rglob("*")]:  # the fixtures are read-only; the copy must not be
        p.chmod(0o755 if p.is_dir() else 0o644)
    return dst, dst / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_1.db"


def test_missing_tables_are_named(fixtures, tmp_path):
    dst, db = _writable_copy(fixtures, tmp_path)
    with sqlite3.connect(db) as con:
        con.execute("DROP TABLE PYTORCH_API")
        con.execute("DROP TABLE TASK_PMU_INFO")
    data = load_rank(ascend_db.sniff(dst))
    missing = [d for d in data.diagnostics if d.code == "table-missing"]
    assert len(missing) == 1 and "PYTORCH_API" in missing[0].message and missing[0].severity == "warning"
    assert data.tables["host_ops"].num_rows == 0 and data.tables["device_tasks"].num_rows == 556


def test_gc_pauses_become_trace_slices(fixtures, tmp_path):
    dst, db = _writable_copy(fixtures, tmp_path)
    with sqlite3.connect(db) as con:  # GC_RECORD exists only with gc_detect_threshold
        con.execute("CREATE TABLE GC_RECORD (startNs INTEGER, endNs INTEGER, globalTid INTEGER)")
        con.execute("INSERT INTO GC_RECORD VALUES (100, 250, (3136495 << 32) | 3140044)")
    (row,) = load_rank(ascend_db.sniff(dst)).tables["trace_slices"].to_pylist()
    assert (row["process"], row["thread"], row["start_ns"], row["dur_ns"]) == ("Python GC", "3140044", 100, 150)


# -- the shared normalisation ---------------------------------------------------------------
def test_normalise_list_and_stack():
    assert normalise_list("0;\r\n;\r\n;") == normalise_list("0;\n;\n;") == "0;;;"
    assert normalise_list('"32,1,224,224,8;121,4,16,8;64"') == "32,1,224,224,8;121,4,16,8;64"
    assert normalise_list("N/A") is None and normalise_list("") is None and normalise_list(None) is None
    assert (
        normalise_stack("a.py(1): f;\r\nb.py(2): g")
        == normalise_stack("a.py(1): f;\nb.py(2): g")
        == "a.py(1): f\nb.py(2): g"
    )


def test_counts_by_table_are_stable(loaded):
    """Row counts of the Level1 rank-1 fixture, as a quick regression guard."""
    got = {k: v.num_rows for k, v in loaded(1, 1).tables.items()}
    assert got == {
        "device_tasks": 556,
        "host_ops": 2460,
        "launches": 1058,
        "steps": 1,
        "memory_samples": 1003,
        "memory_blocks": 184,
        "module_memory": 1078,
        "comm_ops": 4,
        "comm_links": 48,
        "api_calls": 709,
        "counters": 3024,
        "trace_slices": 0,
        "run_info": 1,
    }
    assert collections.Counter(df(loaded(1, 1), "device_tasks").kind) == {
        "comm_task": 296,
        "kernel": 187,
        "sync": 26,
        "memcpy": 24,
        "other": 19,
        "communication": 4,
    }


def test_level0_kernels_get_their_type_from_their_name(fixtures):
    """The DB's Level0 COMPUTE_TASK_INFO has no opType: the kernel name says it, as in the text export."""
    folder = fixtures / "ascend_pt" / "db_level0" / "rank0_ascend_pt"
    rd = load_rank(ascend_db.sniff(folder))
    dt = rd.tables["device_tasks"].to_pandas()
    assert (dt.loc[dt["name"].str.contains("TransData", na=False), "type"] == "TransData").sum() == 57
    assert (dt["name"].str.startswith("trans_TransData_", na=False)).sum() == 42
    (note,) = [d for d in rd.diagnostics if d.code == "type-from-name"]
    assert note.message.startswith("168 kernel(s)")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_nested_sums_equal_the_walk_from_the_innermost_events(seed):
    """``_subtree_sums`` (one vector step per nesting level) against the walk it replaced: every
    event, children after their parent in the nesting order, adds its total to its parent."""
    import numpy as np

    from profinsight.importers.ascend_db.host import _parents, _subtree_sums

    rng = np.random.default_rng(seed)
    n = 3000
    start = np.sort(rng.integers(0, 10**6, n))
    end = start + rng.integers(0, 50_000, n)  # nested, disjoint and partly overlapping intervals
    keys = rng.integers(0, 3, n)
    parent, order = _parents(start, end, keys)
    own = rng.integers(0, 1000, n)
    walk = own.copy()
    for i in order[::-1]:
        if parent[i] >= 0:
            walk[parent[i]] += walk[i]
    assert (parent >= 0).sum() > n // 3 and (_subtree_sums(own, parent) == walk).all()
    assert _subtree_sums(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)).size == 0


@pytest.mark.parametrize(
    "rows",
    [
        # times in ns beyond 2^53, levels as ints, floats, None, inf; accelerators as ints
        [(0, 1736410576375315901 + i, i % 3, i, 2.5 * i, None if i % 4 else float("inf"), -i) for i in range(50)],
        [(0, None, 1, 1, 2, 3, 4), (1, 1736410576375315901, 3, None, None, None, None)],
        # what only the per-sample checks read: text, a bool, a float time, 3 and 3.0
        [(0, "12", 1, "7", True, 1.0, 2), (0, 5.0, 3.0, 1, 2, 3, 4), (0, 6, 3, "x", 1e400, 0, 0)],
    ],
)
def test_acc_pmu_by_array_equals_the_sample_by_sample_checks(rows, monkeypatch):
    from profinsight.importers.ascend_db import memory

    class FakeDb:
        def has(self, table):
            return table == "ACC_PMU"

        def column_lists(self, sql, n):
            return [list(c) for c in zip(*rows)]

    def collect(plain):
        cols = {"device": [], "track": [], "name": [], "ts_ns": [], "value": [], "unit": []}

        def add(device, track, name, ts, value, unit):  # load_counters' own add
            ts, value = memory._ns(ts), memory._finite(value)
            if ts is not None and value is not None:
                for k, v in zip(cols, (device, track, name, ts, value, unit)):
                    cols[k].append(v)

        if not plain:
            monkeypatch.setattr(memory, "_plain_numbers", lambda *a: None)
        memory._acc_pmu(FakeDb(), add, cols)
        monkeypatch.undo()
        return cols

    by_array, by_sample = collect(True), collect(False)
    assert by_array == by_sample and [type(v) for v in by_array["ts_ns"]] == [type(v) for v in by_sample["ts_ns"]]
    assert by_sample["ts_ns"] or rows[0][1] is None


def _stack_walk(start, end, keys):
    """The parents as the DB importer first found them: one sorted pass with a stack."""
    import numpy as np

    parent = np.full(len(start), -1, dtype=np.int64)
    order = np.lexsort((-end, start, keys))
    stack, prev = [], None
    for i in order:
        if keys[i] != prev:
            stack, prev = [], keys[i]
        while stack and end[stack[-1]] < end[i]:
            stack.pop()
        if stack and start[i] >= start[stack[-1]]:
            parent[i] = stack[-1]
        stack.append(i)
    return parent


@pytest.mark.parametrize("seed", [4, 5, 6, 7])
def test_parents_equal_the_stack_walk(seed):
    """Nested, partly overlapping, identical and zero-length events on a few threads: the
    vectorised parents equal the stack walk's, event by event."""
    import numpy as np

    from profinsight.importers.ascend_db.host import _parents

    rng = np.random.default_rng(seed)
    n = 4000
    start = rng.integers(0, 20_000, n)
    end = start + rng.choice([0, 1, 5, 50, 500, 5000], n)
    start[::97], end[::97] = start[1::97][: len(start[::97])], end[1::97][: len(end[::97])]  # copies
    keys = rng.integers(0, 4, n)
    parent, _ = _parents(start, end, keys)
    assert (parent >= 0).sum() > n // 2
    assert (parent == _stack_walk(start, end, keys)).all()


def test_groups_keep_a_missing_thread_apart_and_read_unknown_types_as_ops():
    from profinsight.importers.ascend_db.host import _groups

    tid = [5, 5, None, 0, -1, 5, None]
    typ = [50001, 50003, 50001, 50001, 50001, 99999, 50001]
    g = _groups(tid, typ).tolist()
    assert g[0] == g[5] and g[2] == g[6]  # 99999: an op, like CATEGORY.get(t, "op")
    assert len({g[0], g[1], g[2], g[3], g[4]}) == 5
    assert _groups([], []).tolist() == []


class _Strings:
    """What :func:`host._unswap` asks of a :class:`~profinsight.importers.ascend_db.reader.Db`."""

    def __init__(self, strings: dict):
        self.strings = strings

    def text(self, ids):
        return [None if i is None else self.strings.get(i) for i in ids]


def test_unswap_weighs_each_text_by_the_rows_that_hold_it():
    """The columns are judged by rows, as the per-row count of the first form did: one wordy
    text in three rows outweighs two wordy texts in one row each (judged per distinct id, it
    would not); ids of mixed kinds are judged row by row; a tie keeps the columns as they are."""
    from profinsight.importers.ascend_db.host import _unswap

    db = _Strings({1: "float", 2: "1,2", 3: "Scalar", 4: "int", 5: "", "7": "half"})
    assert _unswap(db, [3, 4, 2], [1, 1, 1]) == ([1, 1, 1], [3, 4, 2])  # 3 wordy rows against 2
    assert _unswap(db, [3, 4, None], [1, 2, 5]) == ([3, 4, None], [1, 2, 5])  # 2 against 1
    assert _unswap(db, [3, 2, 2], [1, 2, 2]) == ([3, 2, 2], [1, 2, 2])  # a tie: unchanged
    assert _unswap(db, [2, 2, "7"], [1, 3, 4]) == ([1, 3, 4], [2, 2, "7"])  # mixed ids: row by row
    assert _unswap(db, [], []) == ([], [])


def _owned_by_dicts(ids, cids, conn):
    """The ops' connections as first read: a dict of lists per CONNECTION_IDS id."""
    expand: dict = {}
    for i, c in zip(ids, cids):
        expand.setdefault(i, []).append(c)
    return {row: expand[c] for row, c in enumerate(conn) if c is not None and c in expand}


def _launches_by_dicts(task_uid, task_conn, owned: dict, call_of: dict):
    by_conn: dict = {}
    for uid, c in zip(task_uid, task_conn):
        if c is not None:
            by_conn.setdefault(c, []).append(uid)
    rows = [(op, None, uid, "torch_to_npu") for op, cs in owned.items() for c in cs for uid in by_conn.get(c, ())]
    return rows + [(None, call, uid, "connection_id") for c, call in call_of.items() for uid in by_conn.get(c, ())]


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("odd", [False, True])
def test_connections_and_launches_equal_the_dicts_of_lists(seed, odd):
    """Random ids with repeats and nulls (``odd``: also text, whole floats and a bool, which a
    dict matches by equality): the ops' connections and the launch rows, in their order, are
    those of the dict-of-lists loops they replace."""
    import random

    import pyarrow as pa

    from profinsight.importers.ascend_db import host
    from profinsight.importers.base import RankData

    rnd = random.Random(seed)
    pick = (
        (lambda: rnd.choice([None, "7", 7.0, True, rnd.randrange(40)]))
        if odd
        else (lambda: rnd.choice([None, rnd.randrange(40)]))
    )
    ids = [pick() for _ in range(300)]
    cids = [rnd.choice([None, 2.0, rnd.randrange(60)]) if odd else rnd.choice([None, rnd.randrange(60)]) for _ in ids]
    conn = [pick() for _ in range(500)]

    class FakeDb:
        def has(self, table):
            return True

        def column_lists(self, sql, n):
            return [ids, cids]

    rows, got = host._connections(FakeDb(), conn)
    dicts = _owned_by_dicts(ids, cids, conn)
    # the dict loops' pairs whose connection an integer task id can equal
    expected = [(r, int(c)) for r, cs in dicts.items() for c in cs if isinstance(c, (int, float)) and c == int(c)]
    assert list(zip(rows.tolist(), got.tolist())) == expected and len(expected) > 100

    task_conn = [rnd.choice([None, rnd.randrange(60)]) for _ in range(400)]
    data = RankData(0)
    data.tables["device_tasks"] = pa.table(
        {"task_uid": pa.array(range(400), pa.int64()), "connection_id": pa.array(task_conn, pa.int64())}
    )
    call_of = {
        c: i for i, c in enumerate(rnd.choice([None, 5.0, rnd.randrange(60)]) for _ in range(200)) if c is not None
    }
    host.load_launches(data, (rows, got), call_of)
    t = data.tables["launches"]
    owned = {}
    for r, c in expected:
        owned.setdefault(r, []).append(c)
    want = _launches_by_dicts(list(range(400)), task_conn, owned, call_of)
    assert list(zip(*(t.column(c).to_pylist() for c in ("host_op_id", "api_call_id", "task_uid", "link")))) == want
    assert len(want) > 200


@pytest.mark.parametrize(
    "values",
    [
        [1, None, 2**40, -3],
        [None, None],
        [],
        [1, 2.5, None, -2.5, 7.0],  # a REAL among integers: truncated value by value, as int() does
        [1, "9"],  # mixed kinds: value by value
    ],
)
def test_memory_columns_as_arrays_equal_the_value_by_value_forms(values):
    from profinsight.importers.ascend_db.memory import _decimal_texts, _i, _whole_numbers

    assert _whole_numbers(values).to_pylist() == [_i(v) for v in values]
    assert _whole_numbers(values).type == pa.int64()
    assert _decimal_texts(values).to_pylist() == [None if v is None else str(v) for v in values]
    assert _decimal_texts(values).type == pa.string()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pmu_pivot_equals_the_last_value_per_task_and_column(seed, monkeypatch):
    """The pivot of TASK_PMU_INFO (one sort, each column's samples side by side) gives what a
    dict of the last value per (task, column) gives, columns in order of first appearance:
    with repeated (task, metric) pairs, two name ids of the same text (one column), unknown
    names and NULL values left out, and tasks without a sample of a column (null)."""
    import random

    from profinsight.importers.ascend_db import device

    rnd = random.Random(seed)
    strings = {1: "aic_mac_ratio", 2: "aic_total_time", 3: "aiv_time", 4: "aic_mac_ratio", 5: "vec_ratio"}
    rows = [
        (rnd.choice([10, 11, 12, 13, None]), rnd.choice([1, 2, 3, 4, 5, 99]), rnd.choice([0.5, 1.0, 2.25, None, 7.0]))
        for _ in range(400)
    ]

    class FakeDb:
        def has(self, table):
            return True

        strings = {}

    FakeDb.strings = strings
    monkeypatch.setattr(device, "_pmu_rows", lambda db: [list(c) for c in zip(*rows)])
    gids = pa.array([10, 11, 12, 13, 14, None], pa.int64())
    got = {k: v.to_pylist() for k, v in device._pmu_columns(FakeDb(), gids).items()}

    def column(i):
        name = strings.get(i)
        return None if name is None else f"pmu_{name}_ns" if name.endswith("_time") else f"pmu_{name}"

    last: dict = {}
    order: list = []
    for g, i, v in rows:
        c = column(i)
        if c is None or v is None:
            continue
        if c not in order:
            order.append(c)
        last[(g, c)] = v
    want = {c: [last.get((g, c)) if g is not None else None for g in gids.to_pylist()] for c in order}
    assert list(got) == order
    assert got == want
