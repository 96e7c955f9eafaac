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
* Column-wise, never a Python step per ``TASK`` row: a DB holds millions of tasks.  Detail
  tables are joined to ``TASK`` by ``globalTaskId`` with Arrow's hash lookup (``index_in``; where
  an id repeats, the last row wins, as a dict built from the rows would), and every text
  conversion (string id -> text, ``clean``, list normalisation, enum names) runs once per
  *distinct* value and is spread back with ``take``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._steps import assign_steps, build_steps, step_number
from .._text import normalise_list
from .._torch_npu import inferred_type_note, type_from_name
from ..base import RankData
from .comm import comm_type
from .reader import INVALID_U32, Db, clean

_SYNC = {"EVENT_RECORD", "EVENT_WAIT"}
_ENUM_NONE = {"N/A", "INVALID_TYPE", "RESERVED"}

#: output columns and their Arrow types (the declared ones plus the PMU extras added later)
_COLS = {
    "device": pa.int32(),
    "task_uid": pa.int64(),
    "stream": pa.int64(),
    "task_id": pa.int64(),
    "context_id": pa.int64(),
    "kind": pa.string(),
    "name": pa.string(),
    "type": pa.string(),
    "core": pa.string(),
    "start_ns": pa.int64(),
    "dur_ns": pa.int64(),
    "wait_ns": pa.int64(),
    "step": pa.int64(),
    "block_dim": pa.int64(),
    "mix_block_dim": pa.int64(),
    "op_state": pa.string(),
    "input_shapes": pa.string(),
    "input_dtypes": pa.string(),
    "input_formats": pa.string(),
    "output_shapes": pa.string(),
    "output_dtypes": pa.string(),
    "output_formats": pa.string(),
    "connection_id": pa.int64(),
    "comm_op": pa.string(),
    "group": pa.string(),
    "src_rank": pa.int64(),
    "dst_rank": pa.int64(),
    "transport": pa.string(),
    "link_type": pa.string(),
    "bytes": pa.int64(),
}


def _whole(value) -> int | None:
    """An integer cell, or None where it is missing or not a whole number (a damaged value)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return int(f) if f.is_integer() and abs(f) < 2**63 else None


def host_steps(db: Db) -> list[tuple[int, int, int]]:
    """``[(step, host_start_ns, host_end_ns)]`` from ``STEP_TIME``, else from the
    ``ProfilerStep#N`` rows of ``PYTORCH_API``."""
    if db.has("STEP_TIME"):
        rows = [(_whole(i), _whole(s), _whole(e)) for i, s, e in db.rows("SELECT id, startNs, endNs FROM STEP_TIME")]
        usable = [r for r in rows if None not in r]
        # a STEP_TIME whose ids or times are all damaged (said by the reader) gives way to the
        # ProfilerStep#N rows of PYTORCH_API, which say the same
        if usable or not db.has("PYTORCH_API"):
            return usable
    if not db.has("PYTORCH_API"):
        return []
    out = []
    for name, s, e in db.rows(
        "SELECT name, CAST(startNs AS INTEGER), CAST(endNs AS INTEGER) FROM PYTORCH_API WHERE type = 50001"
    ):
        n = step_number(db.strings.get(name))
        if n is not None and _whole(s) is not None and _whole(e) is not None:
            out.append((n, _whole(s), _whole(e)))
    return out


def load_device(db: Db, data: RankData, node_launch: dict[int, int], comm_groups: dict[str, str]) -> None:
    """Fill ``device_tasks`` and ``steps`` of ``data``."""
    tasks, task_gids, inferred = _task_columns(db, comm_groups)
    if inferred:
        data.diagnostics.append(inferred_type_note(inferred, db.path, data.rank))
    ops = _comm_op_columns(db, comm_groups)
    unnamed = name_unnamed_tasks(tasks, ops)
    if unnamed is not None:
        data.diagnostics.append(unnamed_note(unnamed, db.path, data.rank))
    cols = {k: pa.concat_arrays([tasks[k], ops[k]]) for k in _COLS if k not in ("task_uid", "wait_ns", "step")}
    gids = pa.concat_arrays([task_gids, pa.nulls(len(ops["kind"]), task_gids.type)])
    n = len(cols["kind"])
    # a task whose time was damaged (null: said by the reader) sorts last and takes no part in
    # the waits and steps -- never a number made up from a null
    timed = _valid(cols["start_ns"])
    start = _ints(pc.fill_null(cols["start_ns"], np.iinfo(np.int64).max))
    order = np.argsort(start, kind="stable")
    take = pa.array(order, pa.int64())
    cols = {k: v.take(take) for k, v in cols.items()}
    gids = gids.take(take)
    start, timed = start[order], timed[order]
    timed &= _valid(cols["dur_ns"])
    end = np.where(timed, start + _ints(pc.fill_null(cols["dur_ns"], 0)), start)
    cols["task_uid"] = pa.array(np.arange(n, dtype=np.int64))

    kinds = cols["kind"]
    kc = np.asarray(pc.fill_null(pc.is_in(kinds, pa.array(["kernel", "communication"])), False), dtype=bool)
    kc &= timed
    kc_idx = np.flatnonzero(kc)
    wait = np.zeros(n, np.int64)
    wait[kc_idx] = wait_ns(start[kc_idx], end[kc_idx])
    cols["wait_ns"] = pa.array(wait, pa.int64(), mask=~kc)

    conn = cols["connection_id"].take(pa.array(kc_idx, pa.int64()))
    launch = _lookup(conn, node_launch)
    steps = build_steps(host_steps(db), start[kc_idx], end[kc_idx], launch)
    step = assign_steps(start, steps)
    cols["step"] = pc.if_else(pa.array(timed), step, pa.nulls(n, step.type)) if not timed.all() else step

    table = pa.table({k: _as(cols[k], t) for k, t in _COLS.items()})
    for name, values in _pmu_columns(db, gids).items():
        table = table.append_column(name, values)
    data.tables["device_tasks"] = table
    data.tables["steps"] = steps


#: hardware task types that run on a compute unit: a ``TASK`` row of one of these with no
#: ``COMPUTE_TASK_INFO`` row is a task the DB names no op for (see :func:`name_unnamed_tasks`)
UNIT_TASK_TYPES = ("AI_CORE", "AI_CPU", "AI_VECTOR_CORE", "KERNEL_AICORE", "KERNEL_AIVEC", "KERNEL_AICPU")
#: the name such a task gets: the DB records no op for it
UNKNOWN = "unknown"


def name_unnamed_tasks(tasks: dict[str, pa.Array], ops: dict[str, pa.Array]) -> dict | None:
    """Tasks of a compute-unit type (``AI_CORE``, ``KERNEL_AICORE``, ...) that neither
    ``COMPUTE_TASK_INFO`` nor ``COMMUNICATION_TASK_INFO`` describes keep kind ``other`` and
    their hardware type as ``type``, but are named ``unknown``: the DB names no op, and the
    hardware type as a name made them read as AI Core kernels (db_level1 rank 0 has 9 such
    ``AI_CORE`` tasks, 4 on the communication stream, the longest 88.75 ms spanning
    ``hcom_allReduce__210_0_1``).  Where one runs on a stream that carries communication tasks,
    ``comm_op`` names the collective whose span holds the task's midpoint.  Edits ``tasks`` in
    place; returns what the diagnostic reports, or None when there is none."""
    kind = pc.fill_null(tasks["kind"], "")
    sel = pc.and_(pc.equal(kind, "other"), pc.is_in(pc.fill_null(tasks["type"], ""), pa.array(UNIT_TASK_TYPES)))
    idx = np.flatnonzero(np.asarray(sel, dtype=bool))
    if not len(idx):
        return None
    n = len(kind)
    mask = np.zeros(n, bool)
    mask[idx] = True
    tasks["name"] = pc.if_else(pa.array(mask), pa.scalar(UNKNOWN), tasks["name"])
    comm_streams = pc.unique(pc.filter(tasks["stream"], pc.equal(kind, "comm_task"))).to_pylist()
    on_comm = mask & np.asarray(pc.fill_null(pc.is_in(tasks["stream"], pa.array(comm_streams)), False), bool)
    dur = _ints(pc.fill_null(tasks["dur_ns"], 0))
    mid = _ints(pc.fill_null(tasks["start_ns"], 0)) + dur // 2
    o_start = _ints(pc.fill_null(ops["start_ns"], 0))
    o_end = o_start + _ints(pc.fill_null(ops["dur_ns"], 0))
    parent = [None] * n
    for i in np.flatnonzero(on_comm):
        hit = np.flatnonzero((o_start <= mid[i]) & (mid[i] <= o_end))
        if len(hit):
            parent[i] = ops["name"][int(hit[0])].as_py()
    tasks["comm_op"] = pc.if_else(pa.array(on_comm), pa.array(parent, pa.string()), tasks["comm_op"])
    dur = dur[idx]
    types = pc.value_counts(pc.take(tasks["type"], pa.array(idx))).to_pylist()
    return {
        "count": len(idx),
        "types": {d["values"]: d["counts"] for d in types},
        "max_ns": int(dur.max()),
        "on_comm": int(on_comm.sum()),
        "parents": sorted({p for p in parent if p}),
    }


def unnamed_note(found: dict, file, rank):
    """The info diagnostic for the tasks :func:`name_unnamed_tasks` named ``unknown``."""
    from ... import diagnostics as dg

    types = ", ".join(f"{c} {t}" for t, c in sorted(found["types"].items()))
    comm = (
        f"; {found['on_comm']} run on a communication stream, during {', '.join(found['parents'])} (comm_op)"
        if found["on_comm"]
        else ""
    )
    return dg.info(
        "unnamed-device-tasks",
        f"{found['count']} device task(s) ({types}; up to {found['max_ns'] / 1e6:.2f} ms) have no op in "
        f"COMPUTE_TASK_INFO or COMMUNICATION_TASK_INFO: they are named '{UNKNOWN}' with their hardware task type as "
        f"type and kind 'other', and count as neither compute nor communication{comm}.",
        file=file,
        fix="Nothing to re-collect: the profiler wrote no op for them. Their connection_id leads to the CANN_API call "
        "that launched them (the launches table).",
        rank=rank,
    )


def wait_ns(start, end) -> np.ndarray:
    """The msprof wait rule over rows already in start order: ``max(0, start - previous end)``,
    0 for the first row."""
    start = np.asarray(start, dtype=np.int64)
    end = np.asarray(end, dtype=np.int64)
    out = np.zeros(len(start), dtype=np.int64)
    if len(start) > 1:
        out[1:] = np.maximum(start[1:] - end[:-1], 0)
    return out


#: the columns of ``TASK`` read (name -> aliases)
_TASK = {
    "start": ("startNs",),
    "end": ("endNs",),
    "device": ("deviceId",),
    "conn": ("connectionId",),
    "gid": ("globalTaskId",),
    "type": ("taskType",),
    "ctx": ("contextId",),
    "stream": ("streamId",),
    "task": ("taskId",),
}
#: the PMU samples' ids, read column by column (their values are read on their own)
_PMU_IDS_READ = ("SELECT globalTaskId, name FROM TASK_PMU_INFO ORDER BY rowid", 2)


def reads(db: Db) -> list[tuple[str, int]]:
    """What :func:`load_device` reads column by column, in its order, for :meth:`Db.read_ahead`."""
    out = db.select_reads(("TASK", _TASK), ("COMPUTE_TASK_INFO", _COMPUTE), ("COMMUNICATION_TASK_INFO", _COMM))
    if db.has("TASK_PMU_INFO") and not db.shadowed("TASK_PMU_INFO"):
        out.append(_PMU_IDS_READ)
    return out


def _task_columns(db: Db, comm_groups: dict[str, str]) -> tuple[dict[str, pa.Array], pa.Array]:
    """The ``TASK`` rows as output columns, each row's globalTaskId where it is a kernel
    (null elsewhere; the PMU metrics join on it), and how many kernels got their type from
    their name (Level0)."""
    t = db.select("TASK", _TASK)
    n = len(t["gid"])
    gid = _arr(t["gid"])
    hw = _texts(db, t["type"])
    compute, is_kernel = _compute_info(db, gid)
    comm, is_comm = _comm_task_info(db, comm_groups, gid)
    is_comm &= ~is_kernel
    memcpy_sel = db.col("MEMCPY_INFO", "size") and db.col("MEMCPY_INFO", "globalTaskId")
    m = (
        db.select("MEMCPY_INFO", {"gid": ("globalTaskId",), "size": ("size",)})
        if memcpy_sel
        else {"gid": [], "size": []}
    )
    memcpy_bytes = _arr(m["size"]).take(_last_index(gid, _arr(m["gid"])))

    hw_text = pc.fill_null(hw, "")
    other_kind = pc.if_else(
        pc.starts_with(hw_text, "MEMCPY"),
        "memcpy",
        pc.if_else(pc.is_in(hw_text, pa.array(sorted(_SYNC))), "sync", "other"),
    )
    kern, com = pa.array(is_kernel), pa.array(is_comm)

    def pick(k_val, c_val, o_val, type_=None):
        """kernel value where the row is a kernel, comm-task value where a comm task, else other."""
        return (
            pc.if_else(kern, k_val, pc.if_else(com, c_val, o_val))
            if type_ is None
            else pc.if_else(kern, _as(k_val, type_), pc.if_else(com, _as(c_val, type_), _as(o_val, type_)))
        )

    nul_s, nul_i = pa.nulls(n, pa.string()), pa.nulls(n, pa.int64())
    comm_name = comm["name"]
    comm_name = pc.if_else(pc.fill_null(pc.equal(comm_name, "N/A"), True), hw, comm_name)  # Level0: by hardware
    cols = {
        "device": _arr(t["device"]),
        "stream": _arr(t["stream"]),
        "task_id": _arr(t["task"]),
        "context_id": _valid_ids(t["ctx"]),
        "start_ns": _arr(t["start"]),
        "dur_ns": pc.subtract(_as(_arr(t["end"]), pa.int64()), _as(_arr(t["start"]), pa.int64())),
        "connection_id": _arr(t["conn"]),
        "kind": pick(pa.scalar("kernel"), pa.scalar("comm_task"), other_kind),
        "name": pick(compute["name"], comm_name, hw, pa.string()),
        "type": pick(compute["type"], hw, hw, pa.string()),
        "core": pick(compute["core"], pa.scalar("HCCL"), nul_s, pa.string()),
        "bytes": pick(nul_i, comm["bytes"], memcpy_bytes, pa.int64()),
    }
    for k in ("block_dim", "mix_block_dim"):
        cols[k] = pick(compute[k], nul_i, nul_i, pa.int64())
    for k in (
        "op_state",
        "input_shapes",
        "input_dtypes",
        "input_formats",
        "output_shapes",
        "output_dtypes",
        "output_formats",
    ):
        cols[k] = pick(compute[k], nul_s, nul_s, pa.string())
    for k, type_ in (
        ("comm_op", pa.string()),
        ("group", pa.string()),
        ("src_rank", pa.int64()),
        ("dst_rank", pa.int64()),
        ("transport", pa.string()),
        ("link_type", pa.string()),
    ):
        null = pa.nulls(n, type_)
        cols[k] = pick(null, comm[k], null, type_)
    out = {k: _as(cols[k], _COLS[k]) if k in cols else pa.nulls(n, _COLS[k]) for k in _COLS}
    kernel_gids = pc.if_else(kern, _as(gid, pa.int64()), pa.nulls(n, pa.int64()))
    inferred = pc.sum(pc.and_(kern, pc.fill_null(compute["type_inferred"], False))).as_py() or 0
    return out, kernel_gids, int(inferred)


_COMPUTE = {
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
}
_COMM = {
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
}


def _compute_info(db: Db, gid: pa.Array) -> tuple[dict[str, pa.Array], np.ndarray]:
    """Kernel attributes from ``COMPUTE_TASK_INFO`` (aliases across versions), one per TASK row
    of ``gid`` (null where the task is no kernel), and which rows are kernels."""
    c = db.select("COMPUTE_TASK_INFO", _COMPUTE)
    rows = _last_index(gid, _arr(c["gid"]))
    strings = db.strings

    def text(v):
        return None if v is None else strings.get(v)

    def state(v):
        return clean(strings.get(v, str(v)) if isinstance(v, int) else v)

    names = _map(c["name"], text, pa.string())
    recorded = _map(c["type"], lambda v: clean(text(v)), pa.string())
    out = {
        "name": names,
        # Level0 records no opType: the kernel name says it (see .._torch_npu.type_from_name)
        "type": pc.coalesce(recorded, type_from_name(names)),
        "type_inferred": pc.and_(pc.is_null(recorded), pc.is_valid(type_from_name(names))),
        "core": _map(c["core"], lambda v: clean(text(v)), pa.string()),
        "block_dim": _arr(c["block"]),
        "mix_block_dim": _arr(c["mix"]),
        "op_state": _map(c["state"], state, pa.string()),
    }
    for key, col in (
        ("in_s", "input_shapes"),
        ("in_t", "input_dtypes"),
        ("in_f", "input_formats"),
        ("out_s", "output_shapes"),
        ("out_t", "output_dtypes"),
        ("out_f", "output_formats"),
    ):
        out[col] = _map(c[key], lambda v: normalise_list(text(v)), pa.string())
    return {k: v.take(rows) for k, v in out.items()}, _valid(rows)


def _comm_task_info(db: Db, comm_groups: dict[str, str], gid: pa.Array) -> tuple[dict[str, pa.Array], np.ndarray]:
    """Small-task attributes from ``COMMUNICATION_TASK_INFO``, one per TASK row of ``gid``, and
    which rows have them."""
    c = db.select("COMMUNICATION_TASK_INFO", _COMM)
    rows = _last_index(gid, _arr(c["gid"]))
    o = db.select("COMMUNICATION_OP", {"id": ("opId",), "name": ("opName",)})
    by_id = _texts(db, o["name"]).take(_last_index(_arr(c["op_id"]), _arr(o["id"])))
    own = _texts(db, c["op"])
    op = pc.if_else(pc.fill_null(pc.not_equal(by_id, ""), False), by_id, own)  # ``op_names.get(id) or name``
    groups = _texts(db, c["group"])
    known = _lookup(op, comm_groups, pa.string())
    has_known = (
        _valid(pc.index_in(op, value_set=pa.array(list(comm_groups), pa.string()), skip_nulls=True))
        if comm_groups
        else np.zeros(len(op), bool)
    )
    transports, links = db.enum("ENUM_HCCL_TRANSPORT_TYPE"), db.enum("ENUM_HCCL_LINK_TYPE")
    out = {
        "name": _texts(db, c["kind"]),
        "comm_op": op,
        "group": pc.if_else(pa.array(has_known), known, groups),
        "src_rank": _valid_ids(c["src"]),
        "dst_rank": _valid_ids(c["dst"]),
        "transport": _map(c["transport"], lambda v: _enum(transports, v), pa.string()),
        "link_type": _map(c["link"], lambda v: _enum(links, v), pa.string()),
        "bytes": _arr(c["size"]),
    }
    return {k: v.take(rows) for k, v in out.items()}, _valid(rows)


def _enum(table: dict[int, str], value) -> str | None:
    name = table.get(value) if value is not None else None
    return None if name is None or name in _ENUM_NONE else name


def _comm_op_columns(db: Db, comm_groups: dict[str, str]) -> dict[str, pa.Array]:
    """One ``communication`` row per ``COMMUNICATION_OP`` row (collectives: thousands, not
    millions, so a row loop is fine here)."""
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
        dict(db.rows("SELECT connectionId, min(deviceId) FROM TASK GROUP BY connectionId"))
        if db.has("TASK") and any(d is None for d in o["device"])
        else {}
    )
    names, types, groups = db.text(o["name"]), db.text(o["type"]), db.text(o["group"])
    rows: dict[str, list] = {k: [] for k in _COLS}
    for i, name in enumerate(names):
        dev = o["device"][i] if o["device"][i] is not None else conn_device.get(o["conn"][i])
        row = {
            "device": dev,
            "kind": "communication",
            "name": name,
            "type": comm_type(types[i], name),
            "core": "HCCL",
            "start_ns": o["start"][i],
            "dur_ns": _span(o["start"][i], o["end"][i]),
            "connection_id": o["conn"][i],
            "block_dim": 0,
            "comm_op": name,
            "group": comm_groups.get(name, groups[i]),
        }
        for k in rows:
            rows[k].append(row.get(k))
    return {k: pa.array(v, _COLS[k]) for k, v in rows.items()}


def _span(start, end) -> int | None:
    """``end - start``; null where either is missing (a damaged or dropped column: said by the
    reader) or the end lies before the start (a duration is never negative)."""
    if start is None or end is None or end < start:
        return None
    return end - start


def _pmu_columns(db: Db, gids: pa.Array) -> dict[str, pa.Array]:
    """Pivot the long ``TASK_PMU_INFO`` table into ``pmu_*`` columns aligned with ``gids``
    (columns in order of first appearance; where a (task, metric) repeats, the last value wins).

    Names follow the schema: ratios as is, ``*_time`` (ns in the DB) as ``pmu_<name>_ns``."""
    if not db.has("TASK_PMU_INFO"):
        return {}
    g, names, values = _pmu_rows(db)
    if not g:
        return {}
    strings = db.strings

    def column(name_id):
        name = strings.get(name_id)
        if name is None:
            return None
        return f"pmu_{name}_ns" if name.endswith("_time") else f"pmu_{name}"

    cols = _map(names, column, pa.string())
    vals = _as(_arr(values), pa.float64())
    keep = pc.and_(pc.is_valid(cols), pc.is_valid(vals))
    g, cols, vals = _arr(g).filter(keep), cols.filter(keep), vals.filter(keep)
    # the samples of each column side by side (a stable sort keeps their written order, so the
    # last value of a repeated (task, metric) still wins): one sort, where a filter per column
    # compared every sample's name with each of some 30 columns
    enc = pc.dictionary_encode(cols)  # the dictionary in order of first appearance
    k = len(enc.dictionary)
    # 16-bit codes sort by radix (NumPy's stable sort of small integers), in linear time
    codes = np.asarray(enc.indices).astype(np.int16 if k < 2**15 else np.int64)
    order = pa.array(np.argsort(codes, kind="stable"))
    bounds = np.concatenate([[0], np.cumsum(np.bincount(codes, minlength=k))])
    g, vals = g.take(order), vals.take(order)
    out = {}
    for i, col in enumerate(enc.dictionary.to_pylist()):
        lo, n = int(bounds[i]), int(bounds[i + 1] - bounds[i])
        out[col] = vals.slice(lo, n).take(_last_index(gids, g.slice(lo, n), skip_nulls=True))
    return out


def _pmu_rows(db: Db) -> list[list]:
    """``TASK_PMU_INFO``'s task ids, metric name ids and values, in the order written (rowid).

    The ids are integers, read column by column (:meth:`Db.column_lists`); the values are REAL,
    which JSON would round, so they come through ``fetchall`` on their own, one value per row
    (518 k samples of the 100-copy scaled DB: 0.6-1.1 s -> 0.34-0.54 s).  Both reads are in
    rowid order, so they pair up row by row.  A damaged table (read through its cleaned view)
    or one without rowids is read whole instead, in the order SQLite gives."""
    if not db.shadowed("TASK_PMU_INFO"):
        try:
            g, names = db.column_lists(*_PMU_IDS_READ)
            values = [v for (v,) in db.rows("SELECT value FROM TASK_PMU_INFO ORDER BY rowid")]
            return [g, names, values]
        except sqlite3.OperationalError:  # WITHOUT ROWID
            pass
    return db.column_lists("SELECT globalTaskId, name, value FROM TASK_PMU_INFO", 3)


# -- column helpers ----------------------------------------------------------------------------
def _arr(values) -> pa.Array:
    """A Python column as an Arrow array (type inferred; all-None -> null type)."""
    return values if isinstance(values, pa.Array) else pa.array(values)


def _only_ints(values: list) -> bool:
    """Whether a Python column holds only integers (and None): no bool, float or text."""
    return set(map(type, values)) <= {int, type(None)}


def _as(arr, type_: pa.DataType) -> pa.Array:
    if isinstance(arr, pa.Scalar):
        return arr.cast(type_)
    return arr if arr.type == type_ else arr.cast(type_)


def _ints(arr: pa.Array) -> np.ndarray:
    return np.asarray(_as(arr, pa.int64()).to_numpy(zero_copy_only=False), dtype=np.int64)


def _valid(arr: pa.Array) -> np.ndarray:
    return np.asarray(pc.is_valid(arr), dtype=bool)


def _valid_ids(values) -> pa.Array:
    """:func:`.reader.valid_id` column-wise: null for NULL and the 2^32-1 sentinel."""
    a = _as(_arr(values), pa.int64())
    return pc.if_else(pc.fill_null(pc.equal(a, INVALID_U32), False), pa.nulls(len(a), pa.int64()), a)


def _last_index(keys: pa.Array, table_keys: pa.Array, skip_nulls: bool = False) -> pa.Array:
    """For each of ``keys``: the row of ``table_keys`` holding it (the last such row), null
    where none -- ``dict(zip(table_keys, range(n))).get(key)``, so a null key finds a null
    table key, unless ``skip_nulls``."""
    n = len(table_keys)
    if n == 0 or len(keys) == 0:
        return pa.nulls(len(keys), pa.int64())
    if table_keys.type != keys.type and not pa.types.is_null(keys.type) and not pa.types.is_null(table_keys.type):
        table_keys = table_keys.cast(keys.type)
    if pa.types.is_null(keys.type):
        keys = keys.cast(table_keys.type) if not pa.types.is_null(table_keys.type) else keys
    rev = table_keys[::-1]
    pos = pc.index_in(keys, value_set=rev, skip_nulls=skip_nulls)
    return pc.subtract(pa.scalar(n - 1, pa.int32()), pos).cast(pa.int64())


_INT64 = pa.int64()


def _lookup(keys: pa.Array, mapping: dict, type_: pa.DataType = _INT64) -> pa.Array:
    """``mapping.get(key)`` for each non-null key (null keys give null)."""
    if not mapping or len(keys) == 0:
        return pa.nulls(len(keys), type_)
    k = pa.array(list(mapping.keys()))
    v = pa.array(list(mapping.values()), type_)
    if keys.type != k.type:
        keys = keys.cast(k.type)
    return v.take(pc.index_in(keys, value_set=k, skip_nulls=True))


def _map(values, fn: Callable, type_: pa.DataType) -> pa.Array:
    """``[fn(v) for v in values]``, with ``fn`` called once per distinct value."""
    try:
        arr = _arr(values)
        ok = pa.types.is_integer(arr.type) or pa.types.is_string(arr.type) or pa.types.is_null(arr.type)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        ok = False
    if not ok:
        cache: dict = {}
        return pa.array([cache[v] if v in cache else cache.setdefault(v, fn(v)) for v in values], type_)
    uniq = pc.unique(arr)
    mapped = pa.array([fn(u) for u in uniq.to_pylist()], type_)
    return mapped.take(pc.index_in(arr, value_set=uniq))


def _texts(db: Db, ids) -> pa.Array:
    """:meth:`.reader.Db.text` column-wise."""
    strings = db.strings
    return _map(ids, lambda v: None if v is None else strings.get(v), pa.string())
