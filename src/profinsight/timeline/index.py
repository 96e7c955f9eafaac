"""The timeline index of a profile: every slice of every canonical table with a stable track id
and a nesting depth, in per-track level-of-detail tables, built once per rank and persisted
with the rank's Parquet cache (persist.py).

Layout (tracks, depth) is computed here; drawing lives in the frontend (STYLE habit 6).

Track ids are URL-safe and stable across loads of the same profile::

    r{rank}/thread/{pid}.{thread}   host_ops        (unit "Python")
    r{rank}/api/{thread}            api_calls       (unit "CANN" / "CUDA API")
    r{rank}/stream/{stream|none}    device_tasks    (unit "Ascend Hardware" / "GPU")
    r{rank}/hccl/{plane}            device_tasks    (unit "HCCL": a collective's tasks on plane N)
    r{rank}/comm/{hash(group)}      comm_ops        (unit "Communication")
    r{rank}/ts/{hash(proc,thread)}  trace_slices    (unit: the recorded process name)
    r{rank}/ctr/{hash}              counters        (unit: the counter group)
    r{rank}/mem/{hash}              memory_samples  (unit "Memory": allocated/reserved/active)

A collective that is both a device task without a stream and a ``comm_ops`` row (same rank,
start and duration) is drawn once, on its group's track; one that is a kernel on a device stream
(Kineto's NCCL kernels) is drawn once, on that stream.
"""

from __future__ import annotations

import weakref

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import capabilities
from . import persist
from .lod import CounterTrack, RankPart, SliceTrack

SLICES = "_timeline_slices"

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


#: a collective's internal task that the trace puts on an HCCL plane: drawn on that plane's own
#: track (unit "HCCL", "Plane N"), as the vendor's viewer does, not stacked on its stream
_PLANE_TASK = "kind = 'comm_task' AND plane_id IS NOT NULL"
#: a collective recorded both as a device task without a stream and as a comm_ops row (Ascend
#: kernel_details + communication.json): drawn once, on its group's track
_DRAWN_AS_COMM_OP = """kind = 'communication' AND stream IS NULL AND EXISTS (SELECT 1 FROM comm_ops c
    WHERE c.rank = d.rank AND c.start_ns = d.start_ns AND c.dur_ns IS NOT DISTINCT FROM d.dur_ns)"""


#: a collective that is a kernel on a device stream (Kineto: the NCCL kernel is both a device task
#: on its stream and a comm_ops row): drawn once, on the stream it ran on, so that it is neither
#: seen nor counted twice; alignment and highlights find it there (align.py)
_DRAWN_ON_STREAM = """EXISTS (SELECT 1 FROM device_tasks d WHERE d.rank = o.rank AND d.start_ns = o.start_ns
    AND coalesce(d.dur_ns, 0) = o.dur_ns AND d.kind = 'communication' AND d.stream IS NOT NULL)"""


def _slice_sources(device_unit: str, api_unit: str) -> list[str]:
    return [
        """SELECT rank, 'r' || rank || '/thread/' || coalesce(pid, 0) || '.' || coalesce(thread, 0) AS track,
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
            FROM device_tasks d WHERE start_ns IS NOT NULL AND NOT ({_PLANE_TASK}) AND NOT ({_DRAWN_AS_COMM_OP})""",
        f"""SELECT rank, 'r' || rank || '/hccl/' || plane_id, 'device_task', task_uid, name, start_ns,
               coalesce(dur_ns, 0), 'HCCL', 'communication', 'Plane ' || plane_id
            FROM device_tasks d WHERE start_ns IS NOT NULL AND {_PLANE_TASK}""",
        f"""SELECT * FROM (SELECT rank, 'r' || rank || '/comm/' || {_GROUP_HASH} AS track, 'comm_op',
               row_number() OVER (PARTITION BY rank ORDER BY {SYNTHETIC_ORDER["comm_ops"]}) - 1,
               name, start_ns, coalesce(dur_ns, 0) AS dur_ns, 'Communication', 'communication',
               'Group ' || coalesce("group", '?')
            FROM comm_ops WHERE start_ns IS NOT NULL) o WHERE NOT ({_DRAWN_ON_STREAM})""",
        f"""SELECT rank, 'r' || rank || '/ts/' || {_h("coalesce(process, '') || chr(31) || coalesce(thread, '')")},
               'trace_slice', row_number() OVER (PARTITION BY rank ORDER BY {SYNTHETIC_ORDER["trace_slices"]}) - 1,
               name, start_ns, coalesce(dur_ns, 0), coalesce(nullif(process, ''), 'Other'), 'slices',
               coalesce(nullif(thread, ''), '?')
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


#: tables the index is built from
_INPUTS = ("host_ops", "api_calls", "device_tasks", "comm_ops", "trace_slices", "counters", "memory_samples")
#: columns of the slice rows kept for search, flows and details (a DuckDB view, made on first use)
_ROW_COLUMNS = ("rank", "track", "source", "id", "name", "start_ns", "dur_ns", "depth")


class TimelineIndex:
    """The timeline of one profile: track list, per-track level-of-detail tables (numpy) for
    window queries, and the slice rows for search, flows and details.

    Built per rank and persisted inside that rank's Parquet cache entry (timeline/persist.py),
    so a new process opens the timeline of a cached profile by memory-mapping it instead of
    rebuilding it (about 12 s for 5 M events).  ``cache=False`` always builds in memory."""

    def __init__(self, profile, cache: bool = True):
        self.profile = profile
        # the unit names of the vendor's viewers: what was recorded, never which file format
        gpu_like = capabilities.device_family(profile) in ("gpu", "cpu")
        units = ("GPU", "CUDA API") if gpu_like else ("Ascend Hardware", "CANN")
        self.parts = [_rank_part(r, units, cache) for r in profile._ranks]
        key = lambda t: (t["rank"], t["unit"], t["id"])  # noqa: E731
        tracks = [t for p in self.parts for t in p.tracks]
        self.tracks = sorted((t for t in tracks if t["kind"] == "slice"), key=key) + sorted(
            (t for t in tracks if t["kind"] == "counter"), key=key
        )
        self.by_id = {t["id"]: t for t in self.tracks}
        self.origin_ns = min([t["start_ns"] for t in self.tracks if t["start_ns"] is not None], default=0)
        # window queries run on numpy level-of-detail tables (see lod.py), not on DuckDB: a
        # zoomed-out window of a large profile would otherwise scan millions of rows per frame
        self.slice_tracks, self.counter_tracks, self.names_of = {}, {}, {}
        for p in self.parts:
            self.slice_tracks.update(p.slice_tracks)
            self.counter_tracks.update(p.counter_tracks)
            self.names_of.update((t, p.names) for t in p.slice_tracks)
        self._table = None

    def slice_table(self) -> str:
        """Name of the DuckDB view of every slice row (columns rank, track, source, id, name,
        start_ns, dur_ns, depth) on the profile's connection, made on first use: only search,
        flows and details need it, and a view over the persisted Parquet costs nothing."""
        if self._table is None:
            con = self.profile.connection()
            files = [p.rows_file for p in self.parts]
            if files and all(f is not None for f in files):
                lst = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
                con.execute(f"CREATE OR REPLACE VIEW {SLICES} AS SELECT * FROM read_parquet([{lst}])")
            else:
                import pyarrow.parquet as pq

                tables = [p.rows if p.rows is not None else pq.ParquetFile(p.rows_file).read() for p in self.parts]
                con.register(SLICES, pa.concat_tables(tables) if tables else _empty_rows())
            self._table = SLICES
        return self._table


def _rank_part(loaded, units: tuple[str, str], cache: bool) -> RankPart:
    entry = loaded.parquet_path if cache else None
    if entry is not None:
        part = persist.load(entry, units)
        if part is not None:
            return part
    part = build_rank(loaded, units)
    if entry is not None:
        saved = persist.save(entry, units, part)
        if saved is not None:
            return saved  # memory-mapped: the built arrays can go
    return part


def build_rank(loaded, units: tuple[str, str]) -> RankPart:
    """Build one rank's index from its canonical tables (DuckDB for the unions and sorting,
    numpy for depth and the level-of-detail tables)."""
    con = _rank_connection(loaded)
    try:
        union = " UNION ALL ".join(_slice_sources(*units))
        rows = con.sql(f"SELECT * FROM ({union}) ORDER BY track, start_ns, dur_ns DESC").to_arrow_table()
        counters = " UNION ALL ".join(_COUNTER_SOURCES)
        crows = con.sql(f"SELECT * FROM ({counters}) ORDER BY track, ts_ns").to_arrow_table()
    finally:
        con.close()
    rows = rows.append_column("depth", pa.array(nesting_depth(rows), pa.int32()))
    t0 = min(
        [
            int(pc.min(c).as_py())
            for c, t in ((rows.column("start_ns"), rows), (crows.column("ts_ns"), crows))
            if t.num_rows
        ],
        default=0,
    )
    slice_tracks, names, tracks = _slice_lod(rows, t0)
    counter_tracks, ctracks = _counter_lod(crows, t0)
    return RankPart(tracks + ctracks, slice_tracks, counter_tracks, names, rows=rows.select(list(_ROW_COLUMNS)))


def _rank_connection(loaded):
    """A private DuckDB connection with views of one rank's tables (its Parquet cache files,
    or its in-memory tables)."""
    import duckdb

    from ..schema import conform

    con = duckdb.connect(":memory:", config={"threads": 2, "autoinstall_known_extensions": False})
    try:
        con.execute("SET enable_progress_bar = false")
    except duckdb.Error:
        pass
    for name in _INPUTS:
        src = name if name != "device_tasks" else "_device_tasks"
        if loaded.parquet_path is not None:
            f = str(loaded.parquet_path / f"{name}.parquet").replace("'", "''")
            con.execute(f"CREATE VIEW {src} AS SELECT * FROM read_parquet('{f}')")
        else:
            con.register(src, conform(name, loaded.read(name)))
    # plane_id (the HCCL plane of a collective's task) is recorded by some exports only
    cols = {r[0] for r in con.sql("DESCRIBE _device_tasks").fetchall()}
    extra = "" if "plane_id" in cols else ", CAST(NULL AS BIGINT) AS plane_id"
    con.execute(f"CREATE VIEW device_tasks AS SELECT *{extra} FROM _device_tasks")
    return con


def _empty_rows() -> pa.Table:
    return pa.table(
        {
            "rank": pa.array([], pa.int64()),
            "track": pa.array([], pa.string()),
            "source": pa.array([], pa.string()),
            "id": pa.array([], pa.int64()),
            "name": pa.array([], pa.string()),
            "start_ns": pa.array([], pa.int64()),
            "dur_ns": pa.array([], pa.int64()),
            "depth": pa.array([], pa.int32()),
        }
    )


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


def _bounds(track: pa.ChunkedArray):
    """(track id, lo, hi) of each run of a column sorted by track."""
    enc = pc.dictionary_encode(track).combine_chunks()
    codes = enc.indices.to_numpy(zero_copy_only=False)
    n = len(codes)
    if not n:
        return []
    starts = np.r_[0, np.flatnonzero(codes[1:] != codes[:-1]) + 1]
    ends = np.r_[starts[1:], n]
    names = enc.dictionary.to_pylist()
    return [(names[codes[lo]], int(lo), int(hi)) for lo, hi in zip(starts, ends)]


def _first(col: pa.ChunkedArray, idx: np.ndarray) -> list:
    return col.take(pa.array(idx, pa.int64())).to_pylist()


def _slice_lod(rows: pa.Table, t0: int):
    """(SliceTrack per track id, name dictionary, track list) from the rows sorted by (track,
    start, duration desc)."""
    name = pc.dictionary_encode(pc.fill_null(rows.column("name"), "").combine_chunks())
    names = np.array(name.dictionary.to_pylist(), dtype=object)
    codes = name.indices.to_numpy(zero_copy_only=False).astype(np.int32)
    start = rows.column("start_ns").to_numpy().astype(np.int64)
    dur = rows.column("dur_ns").to_numpy().astype(np.int64)
    depth = rows.column("depth").to_numpy().astype(np.int32)
    ids = pc.fill_null(rows.column("id"), -1).to_numpy().astype(np.int64)
    out, tracks = {}, []
    runs = _bounds(rows.column("track"))
    if not runs:
        return out, names, tracks
    lo = np.array([r[1] for r in runs])
    meta = {c: _first(rows.column(c), lo) for c in ("rank", "unit", "unit_kind", "label", "source")}
    for i, (tid, lo, hi) in enumerate(runs):
        out[tid] = SliceTrack(start[lo:hi], dur[lo:hi], depth[lo:hi], ids[lo:hi], codes[lo:hi], t0)
        tracks.append(
            {
                "id": tid,
                "rank": int(meta["rank"][i]),
                "unit": meta["unit"][i],
                "unit_kind": meta["unit_kind"][i],
                "name": meta["label"][i],
                "kind": "slice",
                "source": meta["source"][i],
                "rows": hi - lo,
                "start_ns": int(start[lo:hi].min()),
                "end_ns": int((start[lo:hi] + dur[lo:hi]).max()),
                "depth": int(depth[lo:hi].max()) + 1,
                "max_dur_ns": int(dur[lo:hi].max()),
                "value_unit": None,
            }
        )
    return out, names, tracks


def _counter_lod(rows: pa.Table, t0: int):
    ts = rows.column("ts_ns").to_numpy().astype(np.int64)
    value = rows.column("value").to_numpy().astype(np.float64)
    out, tracks = {}, []
    runs = _bounds(rows.column("track"))
    if not runs:
        return out, tracks
    lo = np.array([r[1] for r in runs])
    meta = {c: _first(rows.column(c), lo) for c in ("rank", "unit", "unit_kind", "label", "value_unit")}
    for i, (tid, lo, hi) in enumerate(runs):
        out[tid] = CounterTrack(ts[lo:hi], value[lo:hi], t0)
        tracks.append(
            {
                "id": tid,
                "rank": int(meta["rank"][i]),
                "unit": meta["unit"][i],
                "unit_kind": meta["unit_kind"][i],
                "name": meta["label"][i],
                "kind": "counter",
                "source": None,
                "rows": hi - lo,
                "start_ns": int(ts[lo]),
                "end_ns": int(ts[hi - 1]),
                "depth": 1,
                "max_dur_ns": 0,
                "value_unit": meta["value_unit"][i],
            }
        )
    return out, tracks


_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def index_of(profile) -> TimelineIndex:
    """The timeline index of ``profile``: kept for the life of the profile, read from the
    profile's cache when a current copy is there, else built (and stored there)."""
    idx = _CACHE.get(profile)
    if idx is None:
        idx = _CACHE[profile] = TimelineIndex(profile)
    return idx
