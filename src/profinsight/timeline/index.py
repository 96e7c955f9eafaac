"""The timeline index of a profile: every slice of every canonical table on one DuckDB table,
with a stable track id and a nesting depth, built once per profile and cached.

Layout (tracks, depth) is computed here; drawing lives in the frontend (STYLE habit 6).

Track ids are URL-safe and stable across loads of the same profile::

    r{rank}/thread/{pid}.{thread}   host_ops        (unit "Python")
    r{rank}/api/{thread}            api_calls       (unit "CANN" / "CUDA API")
    r{rank}/stream/{stream|none}    device_tasks    (unit "Ascend Hardware" / "GPU")
    r{rank}/comm/{hash(group)}      comm_ops        (unit "Communication")
    r{rank}/ts/{hash(proc,thread)}  trace_slices    (unit: the recorded process name)
    r{rank}/ctr/{hash}              counters        (unit: the counter group)
    r{rank}/mem/{hash}              memory_samples  (unit "Memory": allocated/reserved/active)
"""
from __future__ import annotations

import weakref

import numpy as np
import pyarrow as pa

SLICES = "_timeline_slices"
COUNTERS = "_timeline_counters"

#: selection kinds (the ``source`` column) -> canonical table and its id column
SOURCES = {
    "device_task": ("device_tasks", "task_uid"),
    "host_op": ("host_ops", "op_id"),
    "api_call": ("api_calls", "call_id"),
    "comm_op": ("comm_ops", None),
    "trace_slice": ("trace_slices", None),
}

#: row order that numbers rows of tables without an id column (comm_ops, trace_slices)
SYNTHETIC_ORDER = {
    "comm_ops": 'start_ns, dur_ns, name, "group"',
    "trace_slices": "start_ns, dur_ns, process, thread, name, args",
}


def _h(expr: str) -> str:
    return f"substr(md5({expr}), 1, 10)"


_GROUP_HASH = _h("coalesce(\"group\", '')")


def _slice_sources(device_unit: str, api_unit: str) -> list[str]:
    return [
        f"""SELECT rank, 'r' || rank || '/thread/' || coalesce(pid, 0) || '.' || coalesce(thread, 0) AS track,
               'host_op' AS source, op_id AS id, name, start_ns, coalesce(dur_ns, 0) AS dur_ns,
               'Python' AS unit, 'host' AS unit_kind,
               'Thread ' || coalesce(thread, 0) || ' (pid ' || coalesce(pid, 0) || ')' AS label
            FROM host_ops WHERE start_ns IS NOT NULL""",
        f"""SELECT rank, 'r' || rank || '/api/' || coalesce(thread, 0), 'api_call', call_id, name, start_ns,
               coalesce(dur_ns, 0), '{api_unit}', 'api', 'Thread ' || coalesce(thread, 0)
            FROM api_calls WHERE start_ns IS NOT NULL""",
        f"""SELECT rank, 'r' || rank || '/stream/' || coalesce(CAST(stream AS VARCHAR), 'none'), 'device_task',
               task_uid, name, start_ns, coalesce(dur_ns, 0), '{device_unit}', 'device',
               coalesce('Stream ' || stream, 'No stream')
            FROM device_tasks WHERE start_ns IS NOT NULL""",
        f"""SELECT rank, 'r' || rank || '/comm/' || {_GROUP_HASH}, 'comm_op',
               row_number() OVER (PARTITION BY rank ORDER BY {SYNTHETIC_ORDER['comm_ops']}) - 1,
               name, start_ns, coalesce(dur_ns, 0), 'Communication', 'communication',
               'Group ' || coalesce("group", '?')
            FROM comm_ops WHERE start_ns IS NOT NULL""",
        f"""SELECT rank, 'r' || rank || '/ts/' || {_h("coalesce(process, '') || chr(31) || coalesce(thread, '')")},
               'trace_slice', row_number() OVER (PARTITION BY rank ORDER BY {SYNTHETIC_ORDER['trace_slices']}) - 1,
               name, start_ns, coalesce(dur_ns, 0), coalesce(process, 'Other'), 'slices', coalesce(thread, '?')
            FROM trace_slices WHERE start_ns IS NOT NULL""",
    ]


_COUNTER_SOURCES = [
    f"""SELECT rank, 'r' || rank || '/ctr/' || {_h("coalesce(track, '') || chr(31) || coalesce(name, '') || chr(31) || coalesce(device, -1)")}
           AS track, ts_ns, value, coalesce(track, 'Counters') AS unit, 'counter' AS unit_kind,
           coalesce(name, '?') AS label, unit AS value_unit
        FROM counters WHERE ts_ns IS NOT NULL AND value IS NOT NULL""",
] + [
    f"""SELECT rank, 'r' || rank || '/mem/' || {_h(f"coalesce(component, '') || chr(31) || coalesce(device, -1) || '{col}'")},
           ts_ns, CAST({col}_bytes AS DOUBLE), 'Memory', 'memory', coalesce(component, '?') || ' {col}', 'bytes'
        FROM memory_samples WHERE ts_ns IS NOT NULL AND {col}_bytes IS NOT NULL"""
    for col in ("allocated", "reserved", "active")
]


class TimelineIndex:
    """The materialised timeline of one profile (two DuckDB tables on its connection)."""

    def __init__(self, profile):
        self.profile = profile
        con = profile.connection()
        kineto = profile.format == "kineto"
        union = " UNION ALL ".join(_slice_sources("GPU" if kineto else "Ascend Hardware",
                                                   "CUDA API" if kineto else "CANN"))
        rows = con.sql(f"SELECT * FROM ({union}) ORDER BY track, start_ns, dur_ns DESC").to_arrow_table()
        rows = rows.append_column("depth", pa.array(nesting_depth(rows), pa.int32()))
        con.register("_timeline_rows", rows)
        con.execute(f"CREATE OR REPLACE TABLE {SLICES} AS SELECT * FROM _timeline_rows ORDER BY track, start_ns")
        con.unregister("_timeline_rows")
        counters = " UNION ALL ".join(_COUNTER_SOURCES)
        con.execute(f"CREATE OR REPLACE TABLE {COUNTERS} AS SELECT * FROM ({counters}) ORDER BY track, ts_ns")
        self.tracks = _track_rows(con)
        self.by_id = {t["id"]: t for t in self.tracks}
        self.origin_ns = min([t["start_ns"] for t in self.tracks if t["start_ns"] is not None], default=0)


def nesting_depth(rows: pa.Table) -> np.ndarray:
    """Nesting level of each row, rows sorted by (track, start asc, duration desc).

    For properly nested or disjoint intervals the depth of a row is the number of rows before it
    on its track minus the number of those that ended by its start; computed per track with
    numpy (no Python loop over rows).  Partially overlapping rows get a depth that keeps them
    apart from the row they overlap in most cases."""
    n = rows.num_rows
    depth = np.zeros(n, dtype=np.int32)
    if not n:
        return depth
    track = rows.column("track").to_numpy(zero_copy_only=False)
    start = rows.column("start_ns").to_numpy().astype(np.int64)
    end = start + rows.column("dur_ns").to_numpy().astype(np.int64)
    bounds = np.flatnonzero(track[1:] != track[:-1]) + 1
    for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, n]):
        s, e = start[lo:hi], end[lo:hi]
        pos = np.arange(hi - lo)
        closed = np.searchsorted(np.sort(e), s, side="right")  # rows that ended by my start
        # zero-length rows at my start that sort at or after me ended "by my start" without
        # being before me: do not count them
        zs = s[e == s]
        zeros_here = np.searchsorted(zs, s, side="right") - np.searchsorted(zs, s, side="left")
        group_end = np.searchsorted(s, s, side="right")
        closed -= np.minimum(zeros_here, group_end - pos)
        depth[lo:hi] = np.maximum(pos - closed, 0)
    return depth


def _track_rows(con) -> list[dict]:
    slices = con.sql(f"""SELECT track AS id, rank, unit, unit_kind, label AS name, 'slice' AS kind, source,
        count(*) AS rows, min(start_ns) AS start_ns, max(start_ns + dur_ns) AS end_ns,
        max(depth) + 1 AS depth, max(dur_ns) AS max_dur_ns, NULL AS value_unit
        FROM {SLICES} GROUP BY ALL ORDER BY rank, unit, id""").to_arrow_table().to_pylist()
    counters = con.sql(f"""SELECT track AS id, rank, unit, unit_kind, label AS name, 'counter' AS kind,
        NULL AS source, count(*) AS rows, min(ts_ns) AS start_ns, max(ts_ns) AS end_ns, 1 AS depth,
        0 AS max_dur_ns, any_value(value_unit) AS value_unit
        FROM {COUNTERS} GROUP BY ALL ORDER BY rank, unit, id""").to_arrow_table().to_pylist()
    return slices + counters


_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def index_of(profile) -> TimelineIndex:
    """The cached timeline index of ``profile`` (built on first use)."""
    idx = _CACHE.get(profile)
    if idx is None:
        idx = _CACHE[profile] = TimelineIndex(profile)
    return idx
