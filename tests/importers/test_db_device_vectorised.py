"""The column-wise ``device_tasks`` builder of the DB importer gives exactly what the former
row-by-row one gave (kept below as ``load_device_reference``, the builder of importer VERSION 1):
on every fixture DB, and on a copy edited to hold the cases the fixtures lack (sentinels and
NULLs, a task in two detail tables, repeated and NULL PMU values, memcpy sizes).  The DB declares ``globalTaskId`` unique in the detail tables, so ids
repeat only in ``TASK_PMU_INFO``."""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from profinsight.importers._steps import assign_steps, build_steps
from profinsight.importers._text import normalise_list
from profinsight.importers.ascend_db import device, host
from profinsight.importers.ascend_db.comm import comm_type
from profinsight.importers.ascend_db.device import _COLS, UNIT_TASK_TYPES, host_steps, wait_ns
from profinsight.importers.ascend_db.reader import Db, clean, valid_id
from profinsight.importers.base import RankData

# -- the reference: the former row-by-row builder, unchanged -----------------------------------
_SYNC = {"EVENT_RECORD", "EVENT_WAIT"}
_ENUM_NONE = {"N/A", "INVALID_TYPE", "RESERVED"}


def load_device_reference(db: Db, data: RankData, node_launch: dict[int, int], comm_groups: dict[str, str]) -> None:
    """Fill ``device_tasks`` and ``steps`` of ``data``."""
    rows = {k: [] for k in _COLS}
    pmu_gids: list = []  # globalTaskId per output row (None for communication rows)
    _add_tasks(db, rows, pmu_gids, comm_groups)
    _add_comm_ops(db, rows, pmu_gids, comm_groups)
    n = len(rows["kind"])
    start = np.array(rows["start_ns"], dtype=np.int64)
    order = np.argsort(start, kind="stable")
    cols = {k: [v[i] for i in order] for k, v in rows.items()}
    gids = [pmu_gids[i] for i in order]
    start = start[order]
    dur = np.array(cols["dur_ns"], dtype=np.int64)
    end = start + dur
    cols["task_uid"] = list(range(n))

    kinds = np.array(cols["kind"], dtype=object)
    kc = (kinds == "kernel") | (kinds == "communication")
    cols["wait_ns"] = _wait_column(start, end, kc)

    launch = [node_launch.get(c) if c is not None else None for c in cols["connection_id"]]
    kc_idx = np.flatnonzero(kc)
    steps = build_steps(host_steps(db), start[kc_idx], end[kc_idx], pa.array([launch[i] for i in kc_idx], pa.int64()))
    cols["step"] = assign_steps(start, steps)

    table = pa.table(
        {k: (cols[k] if isinstance(cols[k], pa.Array) else pa.array(cols[k], t)) for k, t in _COLS.items()}
    )
    for name, values in _pmu_columns(db, gids).items():
        table = table.append_column(name, pa.array(values, pa.float64()))
    data.tables["device_tasks"] = table
    data.tables["steps"] = steps


def _wait_column(start, end, mask) -> list:
    out: list = [None] * len(start)
    idx = np.flatnonzero(mask)
    for i, w in zip(idx, wait_ns(start[idx], end[idx])):
        out[i] = int(w)
    return out


def _add_tasks(db: Db, rows: dict, gids: list, comm_groups: dict[str, str]) -> None:
    t = db.select("TASK", device._TASK)  # the columns the importer reads
    compute = _compute_info(db)
    comm = _comm_task_info(db, comm_groups)
    memcpy = (
        dict(db.rows("SELECT globalTaskId, size FROM MEMCPY_INFO"))
        if db.col("MEMCPY_INFO", "size") and db.col("MEMCPY_INFO", "globalTaskId")
        else {}
    )
    hw_types = db.text(t["type"])
    for i, gid in enumerate(t["gid"]):
        hw = hw_types[i]
        base = {
            "device": t["device"][i],
            "stream": t["stream"][i],
            "task_id": t["task"][i],
            "context_id": valid_id(t["ctx"][i]),
            "start_ns": t["start"][i],
            "dur_ns": t["end"][i] - t["start"][i],
            "connection_id": t["conn"][i],
        }
        if gid in compute:
            base.update(compute[gid], kind="kernel")
        elif gid in comm:
            base.update(comm[gid], kind="comm_task", type=hw)
            if base.get("name") in (None, "N/A"):  # Level0 records no small-task kind: name by hardware
                base["name"] = hw
        else:
            kind = "memcpy" if (hw or "").startswith("MEMCPY") else "sync" if hw in _SYNC else "other"
            base.update(kind=kind, name=hw, type=hw, bytes=memcpy.get(gid))
        for k in rows:
            rows[k].append(base.get(k))
        gids.append(gid if gid in compute else None)


def _compute_info(db: Db) -> dict[int, dict]:
    """globalTaskId -> kernel attributes from ``COMPUTE_TASK_INFO`` (aliases across versions)."""
    c = db.select(
        "COMPUTE_TASK_INFO",
        {
            "gid": ("globalTaskId",),
            "name": ("name",),
            "type": ("opType",),
            "core": ("taskType",),
            "block": ("blockNum", "blockDim"),
            "mix": ("mixBlockNum", "mixBlockDim"),
            "state": ("opState",),
            "in_f": ("inputFormats",),
            "in_t": ("inputDataTypes",),
            "in_s": ("inputShapes",),
            "out_f": ("outputFormats",),
            "out_t": ("outputDataTypes",),
            "out_s": ("outputShapes",),
        },
    )
    text = {k: db.text(c[k]) for k in ("name", "type", "core", "in_f", "in_t", "in_s", "out_f", "out_t", "out_s")}
    states = [db.strings.get(v, str(v)) if isinstance(v, int) else v for v in c["state"]]
    out = {}
    for i, gid in enumerate(c["gid"]):
        out[gid] = {
            "name": text["name"][i],
            "type": clean(text["type"][i]),
            "core": clean(text["core"][i]),
            "block_dim": c["block"][i],
            "mix_block_dim": c["mix"][i],
            "op_state": clean(states[i]),
            "input_shapes": normalise_list(text["in_s"][i]),
            "input_dtypes": normalise_list(text["in_t"][i]),
            "input_formats": normalise_list(text["in_f"][i]),
            "output_shapes": normalise_list(text["out_s"][i]),
            "output_dtypes": normalise_list(text["out_t"][i]),
            "output_formats": normalise_list(text["out_f"][i]),
        }
    return out


def _comm_task_info(db: Db, comm_groups: dict[str, str]) -> dict[int, dict]:
    """globalTaskId -> small-task attributes from ``COMMUNICATION_TASK_INFO``."""
    c = db.select(
        "COMMUNICATION_TASK_INFO",
        {
            "gid": ("globalTaskId",),
            "op": ("name",),
            "kind": ("taskType",),
            "group": ("groupName",),
            "src": ("srcRank",),
            "dst": ("dstRank",),
            "transport": ("transportType",),
            "size": ("size",),
            "link": ("linkType",),
            "op_id": ("opId",),
        },
    )
    o = db.select("COMMUNICATION_OP", {"id": ("opId",), "name": ("opName",)})
    op_names = dict(zip(o["id"], db.text(o["name"])))
    transports, links = db.enum("ENUM_HCCL_TRANSPORT_TYPE"), db.enum("ENUM_HCCL_LINK_TYPE")
    ops, kinds, groups = db.text(c["op"]), db.text(c["kind"]), db.text(c["group"])
    out = {}
    for i, gid in enumerate(c["gid"]):
        op = op_names.get(c["op_id"][i]) or ops[i]
        out[gid] = {
            "name": kinds[i],
            "core": "HCCL",
            "comm_op": op,
            "group": comm_groups.get(op, groups[i]),
            "src_rank": valid_id(c["src"][i]),
            "dst_rank": valid_id(c["dst"][i]),
            "transport": _enum(transports, c["transport"][i]),
            "link_type": _enum(links, c["link"][i]),
            "bytes": c["size"][i],
        }
    return out


def _enum(table: dict[int, str], value) -> str | None:
    name = table.get(value) if value is not None else None
    return None if name is None or name in _ENUM_NONE else name


def _add_comm_ops(db: Db, rows: dict, gids: list, comm_groups: dict[str, str]) -> None:
    o = db.select(
        "COMMUNICATION_OP",
        {
            "name": ("opName",),
            "start": ("startNs",),
            "end": ("endNs",),
            "conn": ("connectionId",),
            "group": ("groupName",),
            "type": ("opType",),
            "device": ("deviceId",),
        },
    )
    conn_device = (
        dict(db.rows("SELECT connectionId, min(deviceId) FROM TASK GROUP BY connectionId")) if db.has("TASK") else {}
    )
    names, types, groups = db.text(o["name"]), db.text(o["type"]), db.text(o["group"])
    for i, name in enumerate(names):
        dev = o["device"][i] if o["device"][i] is not None else conn_device.get(o["conn"][i])
        row = {
            "device": dev,
            "kind": "communication",
            "name": name,
            "type": comm_type(types[i], name),
            "core": "HCCL",
            "start_ns": o["start"][i],
            "dur_ns": o["end"][i] - o["start"][i],
            "connection_id": o["conn"][i],
            "block_dim": 0,
            "comm_op": name,
            "group": comm_groups.get(name, groups[i]),
        }
        for k in rows:
            rows[k].append(row.get(k))
        gids.append(None)


def _pmu_columns(db: Db, gids: list) -> dict[str, list]:
    """Pivot the long ``TASK_PMU_INFO`` table into ``pmu_*`` columns aligned with ``gids``.

    Names follow the schema: ratios as is, ``*_time`` (ns in the DB) as ``pmu_<name>_ns``."""
    if not db.has("TASK_PMU_INFO"):
        return {}
    per_metric: dict[str, dict[int, float]] = {}
    names = db.strings
    for gid, name_id, value in db.rows("SELECT globalTaskId, name, value FROM TASK_PMU_INFO"):
        name = names.get(name_id)
        if name is None or value is None:
            continue
        col = f"pmu_{name}_ns" if name.endswith("_time") else f"pmu_{name}"
        per_metric.setdefault(col, {})[gid] = float(value)
    return {col: [vals.get(g) if g is not None else None for g in gids] for col, vals in per_metric.items()}


# -- the comparison ---------------------------------------------------------------------------
def db_file(fixtures: Path, level: int, rank: int) -> Path:
    out = fixtures / "ascend_pt" / f"db_level{level}" / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    return next(out.glob("ascend_pytorch_profiler*.db"))


def build_both(path: Path):
    con = sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True)
    try:
        results = []
        for fn in (device.load_device, load_device_reference):
            db = Db(con, path)
            data = RankData(None)
            _, node_start = host.load_api_calls(db, data)
            fn(db, data, node_start, {})
            results.append(data.tables)
        return results
    finally:
        con.close()


def _named_types(tasks: pa.Table) -> pa.Table:
    """The reference (VERSION 1) left a Level0 kernel's type empty; since VERSION 3 the kernel
    name says it (``trans_TransData_0`` -> ``TransData``): the same rule, row by row."""
    types = []
    for kind, name, typ in zip(*(tasks[c].to_pylist() for c in ("kind", "name", "type"))):
        if kind == "kernel" and typ is None and name is not None:
            said = re.search(r"_([A-Za-z][A-Za-z0-9]*)$", re.sub(r"_[0-9]+$", "", name))
            typ = said.group(1) if said else None
        types.append(typ)
    i = tasks.schema.get_field_index("type")
    return tasks.set_column(i, tasks.schema.field(i), pa.array(types, pa.string()))


def _unknown_names(tasks: pa.Table) -> pa.Table:
    """The reference (VERSION 3) named an ``other`` task of a compute-unit type (``AI_CORE``, ...)
    after that type; since VERSION 4 it is ``unknown``, and on a stream that carries comm tasks
    its ``comm_op`` is the collective whose span holds its midpoint: the same rule, row by row."""
    d = tasks.to_pydict()
    n = tasks.num_rows
    comm_streams = {d["stream"][i] for i in range(n) if d["kind"][i] == "comm_task"}
    ops = [
        (d["start_ns"][i], d["start_ns"][i] + d["dur_ns"][i], d["name"][i])
        for i in range(n)
        if d["kind"][i] == "communication"
    ]
    names, parents = list(d["name"]), list(d["comm_op"])
    for i in range(n):
        if d["kind"][i] == "other" and d["type"][i] in UNIT_TASK_TYPES:
            names[i] = "unknown"
            if d["stream"][i] in comm_streams:
                mid = d["start_ns"][i] + (d["dur_ns"][i] or 0) // 2
                parents[i] = next((op for s, e, op in ops if s <= mid <= e), None)
    for col, values in (("name", names), ("comm_op", parents)):
        j = tasks.schema.get_field_index(col)
        tasks = tasks.set_column(j, tasks.schema.field(j), pa.array(values, pa.string()))
    return tasks


def assert_same(new, old):
    old = dict(old, device_tasks=_unknown_names(_named_types(old["device_tasks"])))
    for name in ("device_tasks", "steps"):
        a, b = new[name], old[name]
        assert a.schema == b.schema, name
        for col in a.column_names:
            assert a.column(col).to_pylist() == b.column(col).to_pylist(), f"{name}.{col}"


@pytest.mark.parametrize("level,rank", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_same_as_row_by_row_on_fixtures(fixtures, level, rank):
    new, old = build_both(db_file(fixtures, level, rank))
    assert new["device_tasks"].num_rows > 500
    assert_same(new, old)


def test_same_as_row_by_row_on_edge_cases(fixtures, tmp_path):
    path = tmp_path / "edge.db"
    shutil.copyfile(db_file(fixtures, 1, 1), path)
    con = sqlite3.connect(path)
    with con:
        gids = [r[0] for r in con.execute("SELECT globalTaskId FROM COMPUTE_TASK_INFO ORDER BY globalTaskId LIMIT 3")]
        comm_gid = con.execute("SELECT min(globalTaskId) FROM COMMUNICATION_TASK_INFO").fetchone()[0]
        other = con.execute(
            "SELECT min(globalTaskId) FROM TASK WHERE globalTaskId NOT IN "
            "(SELECT globalTaskId FROM COMPUTE_TASK_INFO UNION SELECT globalTaskId "
            "FROM COMMUNICATION_TASK_INFO)"
        ).fetchone()[0]
        # attributes the fixtures never vary
        con.execute(
            "UPDATE COMPUTE_TASK_INFO SET blockDim = blockDim + 7, inputShapes = outputShapes WHERE globalTaskId = ?",
            (gids[0],),
        )
        # a task in both detail tables is a kernel
        con.execute(
            "INSERT INTO COMMUNICATION_TASK_INFO SELECT name, ?, taskType, planeId, groupName, notifyId, "
            "rdmaType, srcRank, dstRank, transportType, size, dataType, linkType, opId "
            "FROM COMMUNICATION_TASK_INFO WHERE globalTaskId = ?",
            (gids[1], comm_gid),
        )
        # sentinels and NULLs
        con.execute("UPDATE TASK SET contextId = 4294967295 WHERE globalTaskId = ?", (gids[2],))
        con.execute("UPDATE TASK SET contextId = NULL, taskType = NULL WHERE globalTaskId = ?", (other,))
        con.execute(
            "UPDATE COMMUNICATION_TASK_INFO SET taskType = NULL, dstRank = 4294967295, srcRank = NULL, "
            "opId = NULL, linkType = NULL WHERE globalTaskId = ?",
            (comm_gid,),
        )
        con.execute("UPDATE COMPUTE_TASK_INFO SET opType = NULL, inputShapes = NULL WHERE globalTaskId = ?", (gids[2],))
        # PMU: a repeated (task, metric) keeps the last value; NULL values and unknown names are skipped
        con.execute(
            "INSERT INTO TASK_PMU_INFO SELECT globalTaskId, name, value * 2 FROM TASK_PMU_INFO WHERE globalTaskId = ?",
            (gids[0],),
        )
        con.execute(
            "INSERT INTO TASK_PMU_INFO SELECT globalTaskId, name, NULL FROM TASK_PMU_INFO WHERE globalTaskId = ?",
            (gids[1],),
        )
        con.execute("INSERT INTO TASK_PMU_INFO VALUES (?, 987654321, 1.0)", (gids[1],))
        # memcpy sizes (no fixture has MEMCPY_INFO)
        con.execute("CREATE TABLE MEMCPY_INFO (globalTaskId INTEGER, size INTEGER, memcpyOperation INTEGER)")
        con.execute("INSERT INTO MEMCPY_INFO SELECT globalTaskId, 4096, 1 FROM TASK WHERE globalTaskId = ?", (other,))
        con.execute("INSERT INTO MEMCPY_INFO SELECT globalTaskId, 8192, 1 FROM TASK WHERE globalTaskId = ?", (other,))
    con.close()
    new, old = build_both(path)
    assert_same(new, old)
    t = new["device_tasks"].to_pylist()
    by_gid_kernel = [r for r in t if r["kind"] == "kernel"]
    assert any(r["block_dim"] is not None and r["block_dim"] >= 7 for r in by_gid_kernel)
    assert any(r["bytes"] == 8192 for r in t)
