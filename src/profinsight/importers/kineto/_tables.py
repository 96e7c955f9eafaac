"""The working tables - ``host`` (framework ops), ``api`` (runtime calls), ``dev`` (device
activity) - and the tables that are plain projections of the remaining events (memory, counters,
trace slices).

Why Arrow tables registered in DuckDB: each pass is converted once (``TRY_CAST`` of the text
that :mod:`._events` read, so a key written as an int in one trace and a string in another
never fails the load) straight into Arrow, which DuckDB then scans without copying; the output
tables are column selections of the same buffers, so the rows exist once in memory, not once
in DuckDB and again in Arrow.  The row number in file order (within the pass) is the id:
``task_uid``, ``op_id``, ``call_id``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import _events
from ._events import API_CATS, DEVICE_CATS, HOST_CATS, cats

#: the canonical host_ops columns (plus extras) of the host pass table
HOST_COLS = [
    "op_id",
    "pid",
    "thread",
    "category",
    "name",
    "start_ns",
    "dur_ns",
    "sequence",
    "fwd_thread",
    "input_shapes",
    "input_dtypes",
    "call_stack",
    "external_id",
    "python_id",
    "python_parent_id",
    "module_hierarchy",
]


def read_host(con, legacy: bool = False) -> pa.Table:
    """Arrow table ``host`` (framework ops, registered in ``con``), ``op_id`` = file order;
    ``legacy``: the trace spells categories and arg keys the old way (see :mod:`._events`)."""
    host = _with_rid(
        con.sql(f"""
    WITH h AS ({_events.host_pass(legacy)})
    SELECT TRY_CAST(pid AS BIGINT) AS pid, TRY_CAST(tid AS BIGINT) AS thread,
      CASE cat WHEN 'cpu_op' THEN 'op' WHEN 'user_annotation' THEN 'annotation'
               ELSE 'python' END AS category,
      name, start_ns, dur_ns,
      TRY_CAST(a."Sequence number" AS BIGINT) AS sequence,
      TRY_CAST(a."Fwd thread id" AS BIGINT) AS fwd_thread,
      a."Input Dims" AS input_shapes, a."Input type" AS input_dtypes,
      nullif(a."Call stack", '') AS call_stack,
      TRY_CAST(a."External id" AS BIGINT) AS external_id,
      TRY_CAST(a."Python id" AS BIGINT) AS python_id,
      TRY_CAST(a."Python parent id" AS BIGINT) AS python_parent_id,
      nullif(a."Module Hierarchy", '') AS module_hierarchy,
      a."Collective name" AS coll_name, a."Process Group Name" AS coll_group,
      TRY_CAST(a."In msg nelems" AS BIGINT) AS coll_count, a.dtype AS coll_dtype
    FROM h""").to_arrow_table(),
        "op_id",
    )
    host = _per_value(con, host, "input_shapes", "kineto_shapes")
    host = _per_value(con, host, "input_dtypes", "kineto_dtypes")
    con.register("host", host)
    return host


def _per_value(con, table: pa.Table, column: str, macro: str) -> pa.Table:
    """``column`` of ``table`` through the SQL macro ``macro``, computed once per distinct value
    (shapes and dtypes repeat in every step: a few thousand values for a hundred thousand ops)."""
    out = _once_per_value(con, table[column], f"{macro}(x) AS v")["v"]
    return table.set_column(table.schema.get_field_index(column), column, out)


def _once_per_value(con, values, select: str, null_encoding: str = "mask", dictionary: bool = False) -> pa.Table:
    """The SQL ``select`` (over the column ``x``) of each row of ``values``, computed once per
    distinct value and taken onto the rows by the value's dictionary index.  ``null_encoding``:
    ``"mask"`` leaves a null row null, ``"encode"`` computes ``select`` for null as for any value.
    ``dictionary``: the string columns stay dictionary arrays (the row's index into the values),
    for a table that only DuckDB reads before it is dropped -- taken, a column that repeats a
    kernel's name held another copy of every name (205 MB at 1 GB, at the import's peak)."""
    enc = pc.dictionary_encode(values, null_encoding=null_encoding).combine_chunks()
    con.register("distinct_values", pa.table({"x": enc.dictionary}))
    try:  # a projection of one scan keeps its rows' order: value i of the dictionary is row i
        out = con.sql(f"SELECT {select} FROM distinct_values").to_arrow_table()
    finally:
        con.unregister("distinct_values")

    def per_row(c: pa.ChunkedArray) -> pa.Array:
        c = c.combine_chunks()
        if dictionary and pa.types.is_string(c.type):
            return pa.DictionaryArray.from_arrays(enc.indices, c)
        return pc.take(c, enc.indices)

    return pa.table([per_row(c) for c in out.columns], names=out.column_names)


def read_api(con) -> pa.Table:
    """Arrow table ``api`` (CUDA/HIP runtime and driver calls, taken out of ``raw``),
    ``call_id`` = file order; ``External id`` is ``external id`` in old traces."""
    api = _with_rid(
        con.sql(f"""
    WITH c AS (
      SELECT pid, tid, cat, name, start_ns, dur_ns,
             json_extract_string(args, ['$.correlation', '$.kernel', '$."External id"', '$."external id"']) AS a
      FROM raw WHERE ph = 'X' AND cat IN {cats(API_CATS)} ORDER BY rowid)
    SELECT TRY_CAST(pid AS BIGINT) AS pid, TRY_CAST(tid AS BIGINT) AS thread, cat AS level,
      name, start_ns, dur_ns, TRY_CAST(a[1] AS BIGINT) AS connection_id,
      nullif(a[2], '') AS item, TRY_CAST(coalesce(a[3], a[4]) AS BIGINT) AS external_id
    FROM c""").to_arrow_table(),
        "call_id",
    )
    con.register("api", api)
    return api


def read_dev(con, comm_core: str, legacy: bool = False) -> pa.Table:
    """Arrow table ``dev`` (registered in ``con``): one row per device activity, ``task_uid``
    = file order within the pass, with the collective helpers ``coll_*`` that :mod:`._comm`
    completes from the host side.

    What a task's name says (its kernel family, whether it is an NCCL/RCCL kernel, the collective
    it runs, the copy's direction) is worked out once per distinct name and taken onto the rows
    by the name's dictionary index, and the columns that depend on it by a projection of that
    table: no join, so the rows keep the file order of the pass.  (A join with the per-name
    values lost it, and the whole table was sorted back: at 1 GB, 1.3 s and a second copy of it,
    the import's peak.)"""
    d = con.sql(f"""
    WITH d AS ({_events.device_pass(legacy)})
    SELECT rid, pid, cat, name, start_ns, dur_ns,
      coalesce(TRY_CAST(a.device AS INTEGER), TRY_CAST(pid AS INTEGER)) AS device,
      coalesce(TRY_CAST(a.stream AS BIGINT), TRY_CAST(tid AS BIGINT)) AS stream,
      a.cuda_sync_kind AS sync_kind, comm_type(a."Collective name") AS coll_type,
      TRY_CAST(a.correlation AS BIGINT) AS connection_id,
      a."Process Group Name" AS "group",
      TRY_CAST(a.bytes AS BIGINT) AS all_bytes,
      TRY_CAST(a."External id" AS BIGINT) AS external_id,
      TRY_CAST(a.context AS BIGINT) AS context,
      a.grid AS grid, a.block AS block,
      TRY_CAST(a."registers per thread" AS BIGINT) AS registers_per_thread,
      TRY_CAST(a."shared memory" AS BIGINT) AS shared_memory_bytes,
      TRY_CAST(a."est. achieved occupancy %" AS DOUBLE) / 100 AS pmu_est_occupancy_ratio,
      TRY_CAST(a."warps per SM" AS DOUBLE) AS pmu_warps_per_sm,
      TRY_CAST(a."blocks per SM" AS DOUBLE) AS pmu_blocks_per_sm,
      a."Collective name" AS coll_name, TRY_CAST(a."In msg nelems" AS BIGINT) AS coll_count,
      a.dtype AS coll_dtype
    FROM d""").to_arrow_table()
    rid = d["rid"].to_numpy()
    if len(rid) > 1 and not (rid[1:] > rid[:-1]).all():  # a scan keeps file order; should it not, sort
        d = d.take(pc.sort_indices(d["rid"]))
    d = _by_name(con, d)
    con.register("dev_parts", d)
    try:  # only the columns that depend on the kind are made; the others are d's own buffers
        made = con.sql(f"""
    SELECT kind,
      CASE kind WHEN 'kernel' THEN family
                WHEN 'communication' THEN coalesce(coll_type, nccl_type)
                WHEN 'memcpy' THEN copy_type
                WHEN 'memset' THEN 'Memset'
                ELSE coalesce(sync_kind, name) END AS type,
      CASE kind WHEN 'kernel' THEN 'GPU' WHEN 'communication' THEN '{comm_core}'
                WHEN 'sync' THEN 'GPU' ELSE 'DMA' END AS core,
      CASE WHEN kind = 'communication' THEN name END AS comm_op,
      CASE WHEN kind IN ('memcpy', 'memset') THEN all_bytes END AS bytes
    FROM (SELECT *, CASE cat
            WHEN 'kernel' THEN CASE WHEN coll_name IS NOT NULL OR nccl THEN 'communication' ELSE 'kernel' END
            WHEN 'gpu_memcpy' THEN 'memcpy' WHEN 'gpu_memset' THEN 'memset' ELSE 'sync' END AS kind
          FROM dev_parts)""").to_arrow_table()
    finally:
        con.unregister("dev_parts")
    # a projection of one scan keeps its rows' order: row i of ``made`` is row i of ``d``
    dev = pa.table({c: (made[c] if c in made.column_names else d[c]) for c in _DEV_COLS})
    del d, made
    dev = _with_rid(dev, "task_uid")
    # a handful of launch shapes repeat over every kernel: converted once per distinct value
    dev = _per_value(con, dev, "grid", "kineto_dims")
    dev = _per_value(con, dev, "block", "kineto_dims")
    con.register("dev", dev)
    return dev


#: the columns of ``dev`` that device_tasks takes as they are (after ``task_uid``)
DEVICE_TASK_COLS = (
    "device",
    "stream",
    "kind",
    "name",
    "type",
    "core",
    "start_ns",
    "dur_ns",
    "connection_id",
    "comm_op",
    "group",
    "bytes",
    "external_id",
    "context",
    "grid",
    "block",
    "registers_per_thread",
    "shared_memory_bytes",
    "pmu_est_occupancy_ratio",
    "pmu_warps_per_sm",
    "pmu_blocks_per_sm",
)
#: the device pass table's columns, in order (``task_uid`` is put first by :func:`_with_rid`)
_DEV_COLS = ("pid", *DEVICE_TASK_COLS, "coll_name", "coll_count", "coll_dtype")


def _by_name(con, d: pa.Table) -> pa.Table:
    """``d`` with what each row's name says -- ``family``, ``nccl``, ``nccl_type``, ``copy_type`` --
    computed once per distinct name (a null name too, as a value of its own)."""
    nm = _once_per_value(
        con,
        d["name"],
        """kernel_family(x) AS family,
           regexp_matches(x, '(^|\\s)(nccl|rccl)\\w*Kernel') AS nccl,
           nccl_kernel_type(x) AS nccl_type,
           coalesce(nullif(regexp_extract(x, '^(Memcpy\\s+\\S+)', 1), ''), x) AS copy_type""",
        null_encoding="encode",
        dictionary=True,
    )
    for col in nm.column_names:
        d = d.append_column(col, nm[col])
    return d


def create_gpu_pids(con) -> None:
    """``gpu_pids``: processes with device activity or a GPU label (needs ``dev`` and ``meta``); a
    table of the database, which the counters read from a cursor of their own."""
    con.execute("""
        CREATE OR REPLACE TABLE gpu_pids AS
        SELECT DISTINCT pid FROM dev UNION
        SELECT DISTINCT pid FROM meta
        WHERE name = 'process_labels' AND starts_with(json_extract_string(args, '$.labels'), 'GPU')""")


def _with_rid(table: pa.Table, name: str) -> pa.Table:
    """Prepend the row number (file order within the pass) as the table's id column."""
    return table.add_column(0, name, pa.array(np.arange(table.num_rows, dtype=np.int64)))


def create_memory(con) -> None:
    """``mem``: the ``[memory]`` instant events of profile_memory."""
    con.execute("""
    CREATE OR REPLACE TEMP TABLE mem AS
    WITH m AS (
      SELECT rowid AS mid, pid, tid, start_ns,
             json_extract_string(args, ['$.Addr', '$.Bytes', '$."Total Allocated"',
                 '$."Total Reserved"', '$."Device Type"', '$."Device Id"']) AS a
      FROM ev WHERE ph IN ('i', 'I') AND name = '[memory]')
    SELECT mid, TRY_CAST(pid AS BIGINT) AS pid, TRY_CAST(tid AS BIGINT) AS thread, start_ns AS ts_ns,
      a[1] AS addr, TRY_CAST(a[2] AS BIGINT) AS bytes,
      TRY_CAST(a[3] AS BIGINT) AS total_allocated, TRY_CAST(a[4] AS BIGINT) AS total_reserved,
      TRY_CAST(a[5] AS INTEGER) AS device_type,
      CASE WHEN TRY_CAST(a[6] AS INTEGER) >= 0 THEN TRY_CAST(a[6] AS INTEGER) END AS device,
      CASE TRY_CAST(a[5] AS INTEGER) WHEN 0 THEN 'CPU' WHEN 1 THEN 'CUDA'
           ELSE 'DEVICE_TYPE_' || coalesce(a[5], '?') END AS component
    FROM m""")


MEMORY_SAMPLES = """
    SELECT device, component, ts_ns, total_allocated AS allocated_bytes,
           total_reserved AS reserved_bytes
    FROM mem ORDER BY ts_ns, mid"""

# Pair each allocation with the next event on the same address: a free (negative Bytes) there
# is its release.  A free with no allocation before it was allocated before the window.
MEMORY_BLOCKS = """
    WITH o AS (
      SELECT m.*, e.op_id,
        lead(bytes) OVER w AS next_bytes, lead(ts_ns) OVER w AS next_ts,
        lead(total_allocated) OVER w AS next_alloc, lead(total_reserved) OVER w AS next_res,
        lag(bytes) OVER w AS prev_bytes
      FROM mem m LEFT JOIN mem_enc e ON e.pt = m.mid
      WINDOW w AS (PARTITION BY device_type, device, addr ORDER BY ts_ns, mid))
    SELECT o.device, CASE WHEN o.bytes > 0 THEN h.name END AS name, o.component,
      abs(o.bytes) AS size_bytes,
      CASE WHEN o.bytes > 0 THEN o.ts_ns END AS alloc_ns,
      CASE WHEN o.bytes > 0 THEN (CASE WHEN o.next_bytes < 0 THEN o.next_ts END) ELSE o.ts_ns END
        AS release_ns,
      CASE WHEN o.bytes > 0 THEN o.total_allocated END AS alloc_total_allocated_bytes,
      CASE WHEN o.bytes > 0 THEN o.total_reserved END AS alloc_total_reserved_bytes,
      CASE WHEN o.bytes > 0 THEN (CASE WHEN o.next_bytes < 0 THEN o.next_alloc END)
           ELSE o.total_allocated END AS release_total_allocated_bytes,
      CASE WHEN o.bytes > 0 THEN (CASE WHEN o.next_bytes < 0 THEN o.next_res END)
           ELSE o.total_reserved END AS release_total_reserved_bytes,
      o.addr
    FROM o LEFT JOIN host h ON h.op_id = o.op_id
    WHERE o.bytes > 0 OR (o.bytes < 0 AND (o.prev_bytes IS NULL OR o.prev_bytes < 0))
    ORDER BY coalesce(alloc_ns, release_ns), o.mid"""

COUNTERS = """
    WITH c AS (SELECT rowid AS id, name, pid, start_ns, args, unnest(json_keys(args)) AS k
               FROM ev WHERE ph = 'C' AND json_type(args) = 'OBJECT')
    SELECT CASE WHEN pid IN (SELECT pid FROM gpu_pids) THEN TRY_CAST(pid AS INTEGER) END AS device,
      c.name AS track, k AS name, start_ns AS ts_ns,
      TRY_CAST(json_extract_string(args, k) AS DOUBLE) AS value, NULL::VARCHAR AS unit
    FROM c ORDER BY id, k"""

# Every slice or instant no other table took (GPU annotations, profiler spans, overhead, CUPTI
# ranges, markers), with process/thread names from the metadata events.
TRACE_SLICES = """
    SELECT coalesce(p.process, e.pid) AS process, coalesce(t.thread, e.tid) AS thread,
      e.name, e.cat, e.start_ns, e.dur_ns, CAST(e.args AS VARCHAR) AS args
    FROM ev e LEFT JOIN pnames p ON p.pid = e.pid
              LEFT JOIN tnames t ON t.pid = e.pid AND t.tid = e.tid
    WHERE e.ph NOT IN ('M', 'C') AND NOT (e.ph IN ('i', 'I') AND e.name = '[memory]')
    ORDER BY e.start_ns, e.rowid"""

__all__ = [
    "DEVICE_CATS",
    "HOST_CATS",
    "API_CATS",
    "read_host",
    "read_api",
    "read_dev",
    "create_memory",
    "MEMORY_SAMPLES",
    "MEMORY_BLOCKS",
    "COUNTERS",
    "TRACE_SLICES",
]
