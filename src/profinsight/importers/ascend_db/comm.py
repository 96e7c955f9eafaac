"""``comm_ops`` and ``comm_links`` from ``COMMUNICATION_OP`` and ``analysis.db``.

Why it is built this way: the time split of a collective (transit / wait / synchronisation /
idle) and its bytes per link type exist only in ``analysis.db`` (the same numbers as the text
export's ``communication.json``), while the op list itself, with exact ns times, is in the rank
DB.  We keep every ``COMMUNICATION_OP`` row and join the analysis by op name.  Groups are named
by ``analysis.db``'s hash (the ``@...`` suffix of ``communication.json``) when it knows the op,
so a text and a DB export of the same run name groups alike; without it (Level0, single card)
the DB's raw HCCL group name is all there is.

Units: ``analysis.db`` sizes are decimal MB (10^6 bytes, see the reference) and times ms.
``bytes`` sums the link types except SDMA, which repeats the on-node HCCS figures.
"""

from __future__ import annotations

import re
import sqlite3

import pyarrow as pa

from ..base import RankData
from .reader import Db, clean

_P2P = ("hcom_send", "hcom_receive", "hcom_batchsendrecv")
_STEP = re.compile(r"^step(\d+)$")
_TRANSPORTS = ("hccs", "rdma", "pcie", "sdma", "sio")
_ENUM_NONE = {"N/A", "INVALID_TYPE"}
_TYPE_IN_NAME = re.compile(r"^(hcom_[A-Za-z0-9]+_)")


def step_of(text) -> int | None:
    """``step50`` -> 50; ``step`` (no step ids) -> None."""
    m = _STEP.match(str(text or ""))
    return int(m.group(1)) if m else None


def comm_type(op_type: str | None, name: str | None) -> str | None:
    """The op type, or where it was not collected (Level0 writes ``N/A``) the type encoded in
    the name: ``hcom_allReduce__586_0_1`` -> ``hcom_allReduce_`` (the text importer does the same)."""
    t = clean(op_type)
    if t is None and name:
        m = _TYPE_IN_NAME.match(name)
        t = m.group(1) if m else None
    return t


def category_of(name: str | None) -> str:
    """p2p for send/receive/batch-send-receive ops, collective for everything else."""
    return "p2p" if (name or "").lower().startswith(_P2P) else "collective"


def group_map(adb: sqlite3.Connection | None) -> dict[str, str]:
    """Op name -> group id (hash) as ``analysis.db`` names it."""
    if adb is None or not _has(adb, "CommAnalyzerTime"):
        return {}
    return {n: g for n, g in adb.execute("SELECT hccl_op_name, group_name FROM CommAnalyzerTime") if n and g}


def load_comm_ops(db: Db, adb: sqlite3.Connection | None, data: RankData) -> None:
    """Fill ``comm_ops``: one row per ``COMMUNICATION_OP`` row, analysis columns where known."""
    o = db.select(
        "COMMUNICATION_OP",
        {
            "name": ("opName",),
            "type": ("opType",),
            "start": ("startNs",),
            "end": ("endNs",),
            "dtype": ("dataType",),
            "alg": ("algType",),
            "count": ("count",),
        },
        order="startNs",
    )
    if not o["name"]:
        return
    names = db.text(o["name"])
    dtypes = db.enum("ENUM_HCCL_DATA_TYPE")
    placed = _placed(data)
    times = _times(adb)
    bands = _bandwidth(adb)
    cols: dict[str, list] = {
        k: []
        for k in (
            "device",
            "step",
            "name",
            "type",
            "category",
            "group",
            "start_ns",
            "dur_ns",
            "transit_ns",
            "wait_ns",
            "sync_ns",
            "idle_ns",
            "bytes",
            *[f"{t}_{u}" for t in _TRANSPORTS for u in ("bytes", "transit_ns")],
            "data_type",
            "count",
            "algorithm",
        )
    }
    for i, name in enumerate(names):
        dev, group, task_step = placed.get(name, (None, None, None))
        t = times.get(name, {})
        b = bands.get(name, {})
        cols["device"].append(dev)
        cols["step"].append(step_of(t["step"]) if t.get("step") else task_step)
        cols["name"].append(name)
        cols["type"].append(comm_type(db.strings.get(o["type"][i]), name))
        cols["category"].append(t.get("type") or category_of(name))
        cols["group"].append(group)
        cols["start_ns"].append(o["start"][i])
        cols["dur_ns"].append(o["end"][i] - o["start"][i])
        for k in ("transit", "wait", "sync", "idle"):
            cols[f"{k}_ns"].append(_ms_ns(t.get(k)))
        for tr in _TRANSPORTS:  # an analysed op moved 0 bytes over a link type it does not list
            size, ms = b.get(tr.upper(), (0, 0) if b else (None, None))
            cols[f"{tr}_bytes"].append(_mb_bytes(size))
            cols[f"{tr}_transit_ns"].append(_ms_ns(ms))
        moved = [cols[f"{tr}_bytes"][-1] for tr in _TRANSPORTS if tr != "sdma"]
        cols["bytes"].append(sum(v for v in moved if v is not None) if any(v is not None for v in moved) else None)
        dt = dtypes.get(o["dtype"][i]) if o["dtype"][i] is not None else None
        cols["data_type"].append(None if dt in _ENUM_NONE else dt)
        cols["count"].append(None if o["count"][i] is None else int(o["count"][i]))
        cols["algorithm"].append(clean(db.strings.get(o["alg"][i])))
    types = {
        "device": pa.int32(),
        "category": pa.string(),
        "name": pa.string(),
        "type": pa.string(),
        "group": pa.string(),
        "data_type": pa.string(),
        "algorithm": pa.string(),
    }
    data.tables["comm_ops"] = pa.table({k: pa.array(v, types.get(k, pa.int64())) for k, v in cols.items()})


def load_comm_links(adb: sqlite3.Connection | None, data: RankData) -> None:
    """Fill ``comm_links`` from ``CommAnalyzerMatrix`` (``allreduce-top1`` -> op type
    ``allreduce``, summary ``top1``)."""
    if adb is None or not _has(adb, "CommAnalyzerMatrix"):
        return
    rows = adb.execute(
        "SELECT hccl_op_name, group_name, src_rank, dst_rank, transport_type, transit_size, "
        "transit_time, step, type, op_name FROM CommAnalyzerMatrix"
    ).fetchall()
    if not rows:
        return
    cols: dict[str, list] = {
        k: []
        for k in (
            "step",
            "category",
            "op_type",
            "summary",
            "group",
            "src_rank",
            "dst_rank",
            "transport",
            "bytes",
            "transit_ns",
            "op_name",
        )
    }
    for key, group, src, dst, transport, size, ms, step, typ, op_name in rows:
        op_type, _, summary = str(key or "").rpartition("-")
        cols["step"].append(step_of(step))
        cols["category"].append(typ)
        cols["op_type"].append(op_type.lower() if op_type else str(key).lower())
        cols["summary"].append(summary if op_type else None)
        cols["group"].append(group)
        cols["src_rank"].append(_int(src))
        cols["dst_rank"].append(_int(dst))
        cols["transport"].append(transport)
        cols["bytes"].append(_mb_bytes(size))
        cols["transit_ns"].append(_ms_ns(ms))
        cols["op_name"].append(op_name)
    strings = {"category", "op_type", "summary", "group", "transport", "op_name"}
    data.tables["comm_links"] = pa.table(
        {k: pa.array(v, pa.string() if k in strings else pa.int64()) for k, v in cols.items()}
    )


def _placed(data: RankData) -> dict[str, tuple]:
    """Op name -> (device, group, step) of its ``communication`` row in ``device_tasks``."""
    t = data.tables.get("device_tasks")
    if t is None:
        return {}
    out = {}
    for kind, name, dev, group, step in zip(
        *(t.column(c).to_pylist() for c in ("kind", "name", "device", "group", "step"))
    ):
        if kind == "communication":
            out[name] = (dev, group, step)
    return out


def _times(adb) -> dict[str, dict]:
    if adb is None or not _has(adb, "CommAnalyzerTime"):
        return {}
    out = {}
    for name, transit, wait, sync, idle, step, typ in adb.execute(
        "SELECT hccl_op_name, transit_time, wait_time, synchronization_time, idle_time, step, type "
        "FROM CommAnalyzerTime"
    ):
        out[name] = {"transit": transit, "wait": wait, "sync": sync, "idle": idle, "step": step, "type": typ}
    return out


def _bandwidth(adb) -> dict[str, dict[str, tuple]]:
    """Op name -> transport -> (transit_size MB, transit_time ms); the totals repeat on every
    packet-size row, so the first row of each (op, transport) is taken."""
    if adb is None or not _has(adb, "CommAnalyzerBandwidth"):
        return {}
    out: dict[str, dict[str, tuple]] = {}
    for name, transport, size, ms in adb.execute(
        "SELECT hccl_op_name, transport_type, transit_size, transit_time FROM CommAnalyzerBandwidth"
    ):
        out.setdefault(name, {}).setdefault(str(transport).upper(), (size, ms))
    return out


def _has(con: sqlite3.Connection, table: str) -> bool:
    return con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone() is not None


def _ms_ns(value) -> int | None:
    return None if value is None or value == "" else int(round(float(value) * 1_000_000))


def _mb_bytes(value) -> int | None:
    return None if value is None or value == "" else int(round(float(value) * 1_000_000))


def _int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
