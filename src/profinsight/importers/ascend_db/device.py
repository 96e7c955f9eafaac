"""``device_tasks`` and ``steps`` from the DB's ``TASK`` table and its detail tables.

Why it is built this way:

* Every ``TASK`` row lands exactly once, with a kind decided by which detail table owns it:
  ``COMPUTE_TASK_INFO`` -> kernel, ``COMMUNICATION_TASK_INFO`` -> comm_task, else the hardware
  task type (``MEMCPY_ASYNC`` -> memcpy, ``EVENT_RECORD``/``EVENT_WAIT`` -> sync, anything else,
  e.g. the FFTS+ parent of a MIX kernel or the HCCL stream task, -> other).  ``COMMUNICATION_OP``
  adds one ``communication`` row per collective, which is not a ``TASK`` row.  So the kernel +
  communication rows are exactly the rows of the text export's ``kernel_details.csv``.
* ``wait_ns`` follows the text export's rule (msprof): kernel + communication rows in global
  start order, ``max(0, start - end of the previous row)``, 0 for the first.  Applied to the text
  fixtures' own start/duration columns it reproduces their ``Wait Time(us)`` on every row.
* Step ranges use the vendor rule (see :mod:`.._steps`): a kernel or communication op belongs to
  the host step in which its launching ``CANN_API`` node call (type 10000, same
  ``connectionId``) started; this reproduces ``analysis.db``'s ``StepTraceTime.preparing`` and
  ``stage`` exactly on every fixture.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from .._steps import assign_steps, build_steps, step_number
from .._text import normalise_list
from ..base import RankData
from .comm import comm_type
from .reader import Db, clean, valid_id

_SYNC = {"EVENT_RECORD", "EVENT_WAIT"}
_ENUM_NONE = {"N/A", "INVALID_TYPE", "RESERVED"}

#: output columns and their Arrow types (the declared ones plus the PMU extras added later)
_COLS = {
    "device": pa.int32(), "task_uid": pa.int64(), "stream": pa.int64(), "task_id": pa.int64(),
    "context_id": pa.int64(), "kind": pa.string(), "name": pa.string(), "type": pa.string(),
    "core": pa.string(), "start_ns": pa.int64(), "dur_ns": pa.int64(), "wait_ns": pa.int64(),
    "step": pa.int64(), "block_dim": pa.int64(), "mix_block_dim": pa.int64(), "op_state": pa.string(),
    "input_shapes": pa.string(), "input_dtypes": pa.string(), "input_formats": pa.string(),
    "output_shapes": pa.string(), "output_dtypes": pa.string(), "output_formats": pa.string(),
    "connection_id": pa.int64(), "comm_op": pa.string(), "group": pa.string(), "src_rank": pa.int64(),
    "dst_rank": pa.int64(), "transport": pa.string(), "link_type": pa.string(), "bytes": pa.int64(),
}


def host_steps(db: Db) -> list[tuple[int, int, int]]:
    """``[(step, host_start_ns, host_end_ns)]`` from ``STEP_TIME``, else from the
    ``ProfilerStep#N`` rows of ``PYTORCH_API``."""
    if db.has("STEP_TIME"):
        return [(int(i), int(s), int(e)) for i, s, e in db.rows("SELECT id, startNs, endNs FROM STEP_TIME")
                if s is not None and e is not None]
    if not db.has("PYTORCH_API"):
        return []
    out = []
    for name, s, e in db.rows("SELECT name, CAST(startNs AS INTEGER), CAST(endNs AS INTEGER) "
                              "FROM PYTORCH_API WHERE type = 50001"):
        n = step_number(db.strings.get(name))
        if n is not None:
            out.append((n, int(s), int(e)))
    return out


def load_device(db: Db, data: RankData, node_launch: dict[int, int], comm_groups: dict[str, str]) -> None:
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
    steps = build_steps(host_steps(db), start[kc_idx], end[kc_idx],
                        pa.array([launch[i] for i in kc_idx], pa.int64()))
    cols["step"] = assign_steps(start, steps)

    table = pa.table({k: (cols[k] if isinstance(cols[k], pa.Array) else pa.array(cols[k], t))
                      for k, t in _COLS.items()})
    for name, values in _pmu_columns(db, gids).items():
        table = table.append_column(name, pa.array(values, pa.float64()))
    data.tables["device_tasks"] = table
    data.tables["steps"] = steps


def wait_ns(start, end) -> np.ndarray:
    """The msprof wait rule over rows already in start order: ``max(0, start - previous end)``,
    0 for the first row."""
    start = np.asarray(start, dtype=np.int64)
    end = np.asarray(end, dtype=np.int64)
    out = np.zeros(len(start), dtype=np.int64)
    if len(start) > 1:
        out[1:] = np.maximum(start[1:] - end[:-1], 0)
    return out


def _wait_column(start, end, mask) -> list:
    out: list = [None] * len(start)
    idx = np.flatnonzero(mask)
    for i, w in zip(idx, wait_ns(start[idx], end[idx])):
        out[i] = int(w)
    return out


def _add_tasks(db: Db, rows: dict, gids: list, comm_groups: dict[str, str]) -> None:
    t = db.select("TASK", {"start": ("startNs",), "end": ("endNs",), "device": ("deviceId",),
                           "conn": ("connectionId",), "gid": ("globalTaskId",), "type": ("taskType",),
                           "ctx": ("contextId",), "stream": ("streamId",), "task": ("taskId",)})
    compute = _compute_info(db)
    comm = _comm_task_info(db, comm_groups)
    memcpy = dict(db.rows("SELECT globalTaskId, size FROM MEMCPY_INFO")) \
        if db.col("MEMCPY_INFO", "size") and db.col("MEMCPY_INFO", "globalTaskId") else {}
    hw_types = db.text(t["type"])
    for i, gid in enumerate(t["gid"]):
        hw = hw_types[i]
        base = {"device": t["device"][i], "stream": t["stream"][i], "task_id": t["task"][i],
                "context_id": valid_id(t["ctx"][i]), "start_ns": t["start"][i],
                "dur_ns": t["end"][i] - t["start"][i], "connection_id": t["conn"][i]}
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
    c = db.select("COMPUTE_TASK_INFO", {
        "gid": ("globalTaskId",), "name": ("name",), "type": ("opType",), "core": ("taskType",),
        "block": ("blockNum", "blockDim"), "mix": ("mixBlockNum", "mixBlockDim"), "state": ("opState",),
        "in_f": ("inputFormats",), "in_t": ("inputDataTypes",), "in_s": ("inputShapes",),
        "out_f": ("outputFormats",), "out_t": ("outputDataTypes",), "out_s": ("outputShapes",)})
    text = {k: db.text(c[k]) for k in ("name", "type", "core", "in_f", "in_t", "in_s", "out_f", "out_t", "out_s")}
    states = [db.strings.get(v, str(v)) if isinstance(v, int) else v for v in c["state"]]
    out = {}
    for i, gid in enumerate(c["gid"]):
        out[gid] = {
            "name": text["name"][i], "type": clean(text["type"][i]), "core": clean(text["core"][i]),
            "block_dim": c["block"][i], "mix_block_dim": c["mix"][i], "op_state": clean(states[i]),
            "input_shapes": normalise_list(text["in_s"][i]), "input_dtypes": normalise_list(text["in_t"][i]),
            "input_formats": normalise_list(text["in_f"][i]), "output_shapes": normalise_list(text["out_s"][i]),
            "output_dtypes": normalise_list(text["out_t"][i]), "output_formats": normalise_list(text["out_f"][i]),
        }
    return out


def _comm_task_info(db: Db, comm_groups: dict[str, str]) -> dict[int, dict]:
    """globalTaskId -> small-task attributes from ``COMMUNICATION_TASK_INFO``."""
    c = db.select("COMMUNICATION_TASK_INFO", {
        "gid": ("globalTaskId",), "op": ("name",), "kind": ("taskType",), "group": ("groupName",),
        "src": ("srcRank",), "dst": ("dstRank",), "transport": ("transportType",), "size": ("size",),
        "link": ("linkType",), "op_id": ("opId",)})
    o = db.select("COMMUNICATION_OP", {"id": ("opId",), "name": ("opName",)})
    op_names = dict(zip(o["id"], db.text(o["name"])))
    transports, links = db.enum("ENUM_HCCL_TRANSPORT_TYPE"), db.enum("ENUM_HCCL_LINK_TYPE")
    ops, kinds, groups = db.text(c["op"]), db.text(c["kind"]), db.text(c["group"])
    out = {}
    for i, gid in enumerate(c["gid"]):
        op = op_names.get(c["op_id"][i]) or ops[i]
        out[gid] = {"name": kinds[i], "core": "HCCL", "comm_op": op,
                    "group": comm_groups.get(op, groups[i]), "src_rank": valid_id(c["src"][i]),
                    "dst_rank": valid_id(c["dst"][i]), "transport": _enum(transports, c["transport"][i]),
                    "link_type": _enum(links, c["link"][i]), "bytes": c["size"][i]}
    return out


def _enum(table: dict[int, str], value) -> str | None:
    name = table.get(value) if value is not None else None
    return None if name is None or name in _ENUM_NONE else name


def _add_comm_ops(db: Db, rows: dict, gids: list, comm_groups: dict[str, str]) -> None:
    o = db.select("COMMUNICATION_OP", {"name": ("opName",), "start": ("startNs",), "end": ("endNs",),
                                       "conn": ("connectionId",), "group": ("groupName",),
                                       "type": ("opType",), "device": ("deviceId",)})
    conn_device = dict(db.rows("SELECT connectionId, min(deviceId) FROM TASK GROUP BY connectionId")) \
        if db.has("TASK") else {}
    names, types, groups = db.text(o["name"]), db.text(o["type"]), db.text(o["group"])
    for i, name in enumerate(names):
        dev = o["device"][i] if o["device"][i] is not None else conn_device.get(o["conn"][i])
        row = {"device": dev, "kind": "communication", "name": name, "type": comm_type(types[i], name), "core": "HCCL",
               "start_ns": o["start"][i], "dur_ns": o["end"][i] - o["start"][i], "connection_id": o["conn"][i],
               "block_dim": 0,
               "comm_op": name, "group": comm_groups.get(name, groups[i])}
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
