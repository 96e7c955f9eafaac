"""``host_ops``, ``api_calls`` and ``launches`` from ``PYTORCH_API``, ``CANN_API`` and the links.

Why it is built this way:

* ``PYTORCH_API`` times are declared TEXT: they are cast to INTEGER in SQL, never parsed in
  Python floats.  Input shapes/dtypes go through :func:`.._text.normalise_list`, the one
  definition the text importer shares, and the sample's swapped ``inputDtypes``/``inputShapes``
  columns are detected by content, once per file.
* Self/total times need the op nesting; it is found per (thread, category) with one sorted
  pass and a stack, O(n log n), so 10^6 framework events stay cheap.  Like the text export's
  ``operator_details.csv`` they are given for ``op`` rows only (null for python/queue rows).
* Device time of an op counts the rows of the text export's ``kernel_details.csv``
  (kernel + communication) whose ``connection_id`` the op owns through ``CONNECTION_IDS``; the
  other tasks (FFTS+ parents, HCCL small tasks) would count the same work twice.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...nesting import Nesting
from .._steps import assign_steps
from .._text import join_stack, normalise_list
from ..base import RankData
from .device import _map, _only_ints, _texts
from .reader import Db

CATEGORY = {50001: "op", 50002: "queue", 50003: "python", 50004: "annotation"}
API_LEVEL = {5000: "runtime", 5500: "hccl", 10000: "node", 15000: "model", 20000: "acl"}
NODE_API = 10000
_LOW32 = 0xFFFFFFFF
#: (op rows, connection ids): the connections each framework op owns, op by op
Owned = tuple[np.ndarray, np.ndarray]
NO_OWNED: Owned = (np.zeros(0, np.int64), np.zeros(0, np.int64))
_LETTERS = re.compile(r"[A-Za-z]")


def load_api_calls(db: Db, data: RankData) -> tuple[dict[int, int], dict[int, int]]:
    """Fill ``api_calls``; return (connectionId -> call_id, connectionId -> start of the node
    launch call), the two maps the device tasks and launches need."""
    if not db.has("CANN_API"):
        return {}, {}
    start, end, typ, tid, conn, name = db.column_lists(*_API_READ)
    if not start:
        return {}, {}
    levels = {**API_LEVEL, **db.enum("ENUM_API_TYPE")}
    gtid, start_a = pa.array(tid, pa.int64()), pa.array(start, pa.int64())
    data.tables["api_calls"] = pa.table(
        {
            "call_id": pa.array(np.arange(len(start), dtype=np.int64)),
            "pid": pc.shift_right(gtid, 32),
            "thread": pc.bit_wise_and(gtid, _LOW32),
            "level": _map(typ, levels.get, pa.string()),
            "name": _texts(db, name),
            "start_ns": start_a,
            # times past the damage scan are 0..2^62 with end >= start: no overflow, no null
            "dur_ns": pc.subtract(pa.array(end, pa.int64()), start_a),
            "connection_id": pa.array(conn, pa.int64()),
        }
    )
    call_of = {c: i for i, c in enumerate(conn) if c is not None}
    node_start = {c: s for c, s, t in zip(conn, start, typ) if t == NODE_API and c is not None}
    return call_of, node_start


def load_host_ops(db: Db, data: RankData) -> Owned:
    """Fill ``host_ops``; return the connection ids each op owns (for ``launches``)."""
    if not db.has("PYTORCH_API"):
        return NO_OWNED
    start, end, tid, conn, name, typ, seq, fwd, dtypes, shapes, chain = db.column_lists(*_host_ops_read(db))
    if not start:
        return NO_OWNED
    dtypes, shapes = _unswap(db, dtypes, shapes)
    n = len(start)
    start_a = np.array(start, dtype=np.int64)
    dur_a = np.array(end, dtype=np.int64) - start_a
    category = _map(typ, lambda t: CATEGORY.get(t, "op"), pa.string())
    parent, _ = _parents(start_a, start_a + dur_a, _groups(tid, typ))
    host_self = dur_a.copy()
    nested = parent >= 0
    np.subtract.at(host_self, parent[nested], dur_a[nested])

    owned = _connections(db, conn)
    per_conn = _device_time_per_connection(data)
    is_op = np.asarray(pc.equal(category, "op"), dtype=bool)
    dev_self = np.zeros(n, dtype=np.int64)
    if per_conn:
        keys = np.fromiter(per_conn, np.int64, len(per_conn))
        at, add = _fan_out(keys, np.fromiter(per_conn.values(), np.int64, len(per_conn)), owned[1])
        np.add.at(dev_self, owned[0][at], add)
    dev_total = _subtree_sums(dev_self, parent)
    stacks = _call_stacks(db)
    strings = db.strings
    gtid = pa.array(tid, pa.int64())
    data.tables["host_ops"] = pa.table(
        {
            "op_id": pa.array(np.arange(n, dtype=np.int64)),
            "pid": pc.shift_right(gtid, 32),
            "thread": pc.bit_wise_and(gtid, _LOW32),
            "category": category,
            "name": _texts(db, name),
            "start_ns": pa.array(start_a),
            "dur_ns": pa.array(dur_a),
            "step": _host_step(start_a, data.tables.get("steps")),
            # -1 / 0 are the profiler's "none" (the text importer nulls them too)
            "sequence": _none_where(pa.array(seq, pa.int64()), -1),
            "fwd_thread": _none_where(pa.array(fwd, pa.int64()), 0),
            # once per distinct id: names, shapes, dtypes and call stacks repeat in every step
            # (the call stacks, 246 k texts of the 100-copy rank, built per row: 0.22 s)
            "input_shapes": _map(shapes, lambda i: normalise_list(strings.get(i)), pa.string()),
            "input_dtypes": _map(dtypes, lambda i: normalise_list(strings.get(i)), pa.string()),
            "call_stack": _map(chain, lambda c: None if c is None else stacks.get(c), pa.string()),
            "host_self_ns": pa.array(host_self, mask=~is_op),
            "device_self_ns": pa.array(dev_self, mask=~is_op),
            "device_total_ns": pa.array(dev_total, mask=~is_op),
        }
    )
    return owned


#: the read of ``CANN_API`` (statement, columns)
_API_READ = ("SELECT startNs, endNs, type, globalTid, connectionId, name FROM CANN_API ORDER BY startNs", 6)
#: the read of ``CONNECTION_IDS``
_CONNECTIONS_READ = ("SELECT id, connectionId FROM CONNECTION_IDS", 2)


def _host_ops_read(db: Db) -> tuple[str, int]:
    """The read of ``PYTORCH_API``: the columns a schema version lacks read as NULL."""
    extra = [
        f'"{db.col("PYTORCH_API", c)}"' if db.col("PYTORCH_API", c) else "NULL"
        for c in ("sequenceNumber", "fwdThreadId", "inputDtypes", "inputShapes", "callchainId")
    ]
    sql = (
        "SELECT CAST(startNs AS INTEGER) AS s, CAST(endNs AS INTEGER), globalTid, connectionId, "
        f"name, type, {', '.join(extra)} FROM PYTORCH_API ORDER BY s"
    )
    return sql, 11


def api_reads(db: Db) -> list[tuple[str, int]]:
    """What :func:`load_api_calls` reads, for :meth:`Db.read_ahead`."""
    return [_API_READ] if db.has("CANN_API") else []


def host_ops_reads(db: Db) -> list[tuple[str, int]]:
    """What :func:`load_host_ops` reads, in its order, for :meth:`Db.read_ahead`."""
    out = [_host_ops_read(db)] if db.has("PYTORCH_API") else []
    return out + ([_CONNECTIONS_READ] if db.has("CONNECTION_IDS") else [])


def load_launches(data: RankData, owned: Owned, call_of: dict[int, int]) -> None:
    """Fill ``launches``: framework op -> task (``torch_to_npu``, through ``CONNECTION_IDS``)
    and CANN API call -> task (``connection_id``, same ``connectionId``).  Rows in the order of
    the owning ops (then each op's connections), then of the calls; a connection's tasks in
    theirs."""
    tasks = data.tables.get("device_tasks")
    if tasks is None or tasks.num_rows == 0:
        return
    conn = tasks.column("connection_id").combine_chunks()
    has = np.asarray(conn.is_valid(), dtype=bool)
    t_conn = np.asarray(conn.fill_null(0), dtype=np.int64)[has]
    t_uid = np.asarray(tasks.column("task_uid").combine_chunks(), dtype=np.int64)[has]
    at, op_uids = _fan_out(t_conn, t_uid, owned[1])
    keys, kept = _int_keys(list(call_of))
    calls = np.fromiter(call_of.values(), np.int64, len(call_of))[kept]
    api_at, api_uids = _fan_out(t_conn, t_uid, keys)
    n_op, n_api = len(at), len(api_at)
    data.tables["launches"] = pa.table(
        {
            "host_op_id": pa.concat_arrays([pa.array(owned[0][at]), pa.nulls(n_api, pa.int64())]),
            "api_call_id": pa.concat_arrays([pa.nulls(n_op, pa.int64()), pa.array(calls[api_at])]),
            "task_uid": pa.array(np.concatenate([op_uids, api_uids])),
            "link": pa.concat_arrays(
                [pa.repeat(pa.scalar("torch_to_npu"), n_op), pa.repeat(pa.scalar("connection_id"), n_api)]
            ),
        }
    )


def load_trace_slices(db: Db, data: RankData) -> None:
    """Fill ``trace_slices`` with the Python GC pauses of ``GC_RECORD`` (collected only with
    ``gc_detect_threshold``); the text export shows them as the ``Python GC`` process."""
    if not db.has("GC_RECORD"):
        return
    rows = db.rows("SELECT startNs, endNs, globalTid FROM GC_RECORD ORDER BY startNs")
    if not rows:
        return
    start, end, tid = (list(c) for c in zip(*rows))
    data.tables["trace_slices"] = pa.table(
        {
            "process": pa.array(["Python GC"] * len(rows), pa.string()),
            "thread": pa.array([None if g is None else str(g & _LOW32) for g in tid], pa.string()),
            "name": pa.array(["GC"] * len(rows), pa.string()),
            "cat": pa.array(["gc"] * len(rows), pa.string()),
            "start_ns": pa.array(start, pa.int64()),
            "dur_ns": pa.array([e - s for s, e in zip(start, end)], pa.int64()),
            "args": pa.array(["{}"] * len(rows), pa.string()),
        }
    )


def _unswap(db: Db, dtypes: list, shapes: list) -> tuple[list, list]:
    """Return the string ids of (dtypes, shapes) the right way round.  Types are words
    (``float``, ``Scalar``), dims are digits and commas; the sample DB has the two columns
    swapped.  Each text is judged once per distinct id, weighted by how often it occurs."""

    def wordy(ids) -> int:
        try:
            counts = pc.value_counts(pa.array(ids))
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # ids of mixed kinds: judged row by row
            return sum(1 for v in db.text(ids) if v and _LETTERS.search(v))
        words = db.text(counts.field("values").to_pylist())
        return sum(n for v, n in zip(words, counts.field("counts").to_pylist()) if v and _LETTERS.search(v))

    return (shapes, dtypes) if wordy(shapes) > wordy(dtypes) else (dtypes, shapes)


def _subtree_sums(own: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Each event's ``own`` plus that of every event nested in it (``parent``: the direct
    parent's index, -1 for roots): the deepest level is added to its parents first, then the
    next, one vector step per level, never a Python step per event."""
    total = own.copy()
    depth = np.zeros(len(parent), dtype=np.int64)
    up = parent.copy()
    while (has := up >= 0).any():  # depth = the number of ancestors
        depth[has] += 1
        up[has] = parent[up[has]]
    for d in range(int(depth.max(initial=0)), 0, -1):
        level = np.flatnonzero(depth == d)
        np.add.at(total, parent[level], total[level])
    return total


def _none_where(values: pa.Array, none: int) -> pa.Array:
    """``values`` with the profiler's "none" value as null."""
    return pc.if_else(pc.equal(values, none), pa.scalar(None, values.type), values)


def _groups(tid: list, typ: list) -> np.ndarray:
    """A small integer per (thread, category) of the events: the events that nest in each other.
    A missing thread is a group of its own (not thread -1); an unknown type is an ``op``, as
    :data:`CATEGORY` reads it."""
    t = pa.array(tid, pa.int64())
    missing = np.asarray(t.is_null(), dtype=np.int64)
    cat = np.asarray(_map(typ, lambda c: _CATEGORY_CODE.get(c, _OP_CODE), pa.int64()), dtype=np.int64)
    threads = np.unique(np.asarray(pc.fill_null(t, 0), dtype=np.int64), return_inverse=True)[1].reshape(-1)
    return (threads * 2 + missing) * len(_CATEGORIES) + cat


#: the category of an event type as a number (an unknown type's is the op category's)
_CATEGORIES = sorted(set(CATEGORY.values()))
_CATEGORY_CODE = {t: _CATEGORIES.index(c) for t, c in CATEGORY.items()}
_OP_CODE = _CATEGORIES.index("op")


def _parents(start: np.ndarray, end: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index of each event's direct parent (the innermost event of the same group that contains
    it), -1 for roots, and the (group, start, -end) order used, in which every parent precedes
    its children.  Sorted so, the parent of an event is the nearest earlier one that ends no
    sooner (those between end sooner, so none contains it): the pointer jumps of
    :class:`~profinsight.nesting.Nesting` find it without a Python step per event
    (246 k events: 0.18 s for the stack walk it replaced)."""
    nest = Nesting(group, start, end)
    parent = np.full(len(start), -1, dtype=np.int64)
    has = nest.parent >= 0
    parent[nest.order[has]] = nest.order[nest.parent[has]]
    return parent, nest.order


def _connections(db: Db, conn: list) -> Owned:
    """The CANN/TASK connection ids each op row owns (``PYTORCH_API.connectionId`` -> the
    ``CONNECTION_IDS`` rows of that id -> their ``connectionId``), ops in row order and each
    op's connections in ``CONNECTION_IDS`` order: what a dict of lists per id gives, by sorted
    arrays where the ids are integers (56 k rows for 246 k ops: no Python list per id).  A
    connection id that no integer equals is left out: the tasks' ids are integers."""
    if not db.has("CONNECTION_IDS"):
        return NO_OWNED
    ids, cids = db.column_lists(*_CONNECTIONS_READ)
    if not (_only_ints(ids) and _only_ints(conn)):  # what a dict matches: text to text, 3.0 to 3
        expand: dict = {}
        for i, c in zip(ids, cids):
            expand.setdefault(i, []).append(c)
        pairs = [(row, c) for row, k in enumerate(conn) if k is not None and k in expand for c in expand[k]]
        targets, kept = _int_keys([c for _, c in pairs])
        return np.array([r for r, _ in pairs], dtype=np.int64)[kept], targets
    targets, kept = _int_keys(cids)  # the rows with an integer connectionId
    id_arr = pa.array(ids, pa.int64())
    has_id = np.asarray(id_arr.is_valid(), dtype=bool)[kept]
    id_keys = np.asarray(id_arr.fill_null(0), dtype=np.int64)[kept]
    wanted, rows = _int_keys(conn)
    at, got = _fan_out(id_keys[has_id], targets[has_id], wanted)
    return rows[at], got


def _int_keys(values: list) -> tuple[np.ndarray, np.ndarray]:
    """The values that can equal an integer key, as int64 (bools and whole floats as the
    integers they equal, as a dict lookup matches them), and their positions; None and
    anything else left out."""
    if _only_ints(values):
        arr = pa.array(values, pa.int64())
        kept = np.flatnonzero(np.asarray(arr.is_valid(), dtype=bool))
        return np.asarray(arr.fill_null(0), dtype=np.int64)[kept], kept
    out, kept = [], []
    for i, v in enumerate(values):
        if isinstance(v, (int, float)) and v == v and float(v).is_integer() and -(2**63) <= v < 2**63:
            out.append(int(v)), kept.append(i)
    return np.array(out, dtype=np.int64), np.array(kept, dtype=np.int64)


def _fan_out(keys: np.ndarray, values: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each of ``wanted`` in turn, every value whose key equals it, in their order:
    (position in ``wanted``, value) pairs, as loops over a dict of lists would give them."""
    order = np.argsort(keys, kind="stable")
    sk, sv = keys[order], values[order]
    lo = np.searchsorted(sk, wanted, "left")
    cnt = np.searchsorted(sk, wanted, "right") - lo
    at = np.repeat(np.arange(len(wanted)), cnt)
    first = np.repeat(lo - (np.cumsum(cnt) - cnt), cnt)
    return at, sv[first + np.arange(len(at))]


def _device_time_per_connection(data: RankData) -> dict[int, int]:
    tasks = data.tables.get("device_tasks")
    out: dict[int, int] = {}
    if tasks is None:
        return out
    for kind, c, d in zip(
        tasks.column("kind").to_pylist(), tasks.column("connection_id").to_pylist(), tasks.column("dur_ns").to_pylist()
    ):
        if c is not None and kind in ("kernel", "communication"):
            out[c] = out.get(c, 0) + d
    return out


def _call_stacks(db: Db) -> dict[int, str]:
    """callchainId -> canonical call stack (innermost frame first)."""
    if not db.has("PYTORCH_CALLCHAINS"):
        return {}
    frames: dict[int, list] = {}
    strings = db.strings
    for cid, stack in db.rows("SELECT id, stack FROM PYTORCH_CALLCHAINS ORDER BY id, stackDepth"):
        frames.setdefault(cid, []).append(strings.get(stack))
    return {cid: join_stack(f) for cid, f in frames.items()}


def _host_step(start: np.ndarray, steps: pa.Table | None) -> pa.Array:
    """Host events take the step whose *host* range contains their start."""
    if steps is None or steps.num_rows == 0:
        return pa.nulls(len(start), pa.int64())
    host_only = pa.table(
        {
            "step": steps.column("step"),
            "host_start_ns": steps.column("host_start_ns"),
            "host_end_ns": steps.column("host_end_ns"),
            "device_start_ns": pa.nulls(steps.num_rows, pa.int64()),
            "device_end_ns": pa.nulls(steps.num_rows, pa.int64()),
        }
    )
    return assign_steps(start, host_only)
