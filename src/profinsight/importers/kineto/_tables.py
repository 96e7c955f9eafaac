"""The working tables - ``dev`` (device activity), ``host`` (framework ops), ``api`` (runtime
calls) - and the tables that are plain projections of the remaining events (memory, counters,
trace slices).

Why tables plus views: each pass stores its rows once, already converted (``TRY_CAST`` of the
text that :mod:`._events` read, so a key written as an int in one trace and a string in another
never fails the load); the views add the row id (``rowid``, file order within the pass) as
``task_uid`` / ``op_id`` / ``call_id``.  Host ops and API calls share one table, so their ids
never collide.
"""
from __future__ import annotations

from . import _events
from ._events import API_CATS, DEVICE_CATS, HOST_CATS, cats


def create_host_api(con, events_path, base_ns: int) -> None:
    """Tables ``hx`` and views ``host``, ``api``."""
    con.execute(f"""
    CREATE OR REPLACE TABLE hx AS
    WITH h AS ({_events.host_pass(events_path, base_ns)})
    SELECT cat, TRY_CAST(pid AS BIGINT) AS pid, TRY_CAST(tid AS BIGINT) AS thread, name,
      start_ns, dur_ns,
      CASE cat WHEN 'cpu_op' THEN 'op' WHEN 'user_annotation' THEN 'annotation'
               WHEN 'python_function' THEN 'python' END AS category,
      TRY_CAST(a."Sequence number" AS BIGINT) AS sequence,
      TRY_CAST(a."Fwd thread id" AS BIGINT) AS fwd_thread,
      kineto_shapes(TRY_CAST(a."Input Dims" AS JSON)) AS input_shapes,
      kineto_dtypes(TRY_CAST(a."Input type" AS JSON)) AS input_dtypes,
      nullif(a."Call stack", '') AS call_stack,
      TRY_CAST(a."External id" AS BIGINT) AS external_id,
      TRY_CAST(a."Python id" AS BIGINT) AS python_id,
      TRY_CAST(a."Python parent id" AS BIGINT) AS python_parent_id,
      nullif(a."Module Hierarchy", '') AS module_hierarchy,
      a."Collective name" AS coll_name, a."Process Group Name" AS coll_group,
      TRY_CAST(a."In msg nelems" AS BIGINT) AS coll_count, a.dtype AS coll_dtype,
      TRY_CAST(a.correlation AS BIGINT) AS connection_id, nullif(a.kernel, '') AS item
    FROM h""")
    con.execute(f"""
    CREATE OR REPLACE VIEW host AS
    SELECT rowid AS op_id, pid, thread, category, name, start_ns, dur_ns, sequence, fwd_thread,
      input_shapes, input_dtypes, call_stack, external_id, python_id, python_parent_id,
      module_hierarchy, coll_name, coll_group, coll_count, coll_dtype
    FROM hx WHERE cat IN {cats(HOST_CATS)}""")
    con.execute(f"""
    CREATE OR REPLACE VIEW api AS
    SELECT rowid AS call_id, pid, thread, cat AS level, name, start_ns, dur_ns, connection_id,
      item, external_id
    FROM hx WHERE cat IN {cats(API_CATS)}""")


def create_dev(con, events_path, base_ns: int, comm_core: str) -> None:
    """Table ``dx`` and view ``dev``: one row per device activity, with the collective
    helpers ``coll_*`` that :mod:`._comm` completes from the host side."""
    con.execute(f"""
    CREATE OR REPLACE TABLE dx AS
    WITH d AS ({_events.device_pass(events_path, base_ns)}),
    k AS (
      SELECT *, CASE cat
          WHEN 'kernel' THEN CASE WHEN a."Collective name" IS NOT NULL
                                   OR regexp_matches(name, '(^|\\s)(nccl|rccl)\\w*Kernel')
                              THEN 'communication' ELSE 'kernel' END
          WHEN 'gpu_memcpy' THEN 'memcpy' WHEN 'gpu_memset' THEN 'memset' ELSE 'sync' END AS kind
      FROM d)
    SELECT pid,
      coalesce(TRY_CAST(a.device AS INTEGER), TRY_CAST(pid AS INTEGER)) AS device,
      coalesce(TRY_CAST(a.stream AS BIGINT), TRY_CAST(tid AS BIGINT)) AS stream,
      kind, name,
      CASE kind WHEN 'kernel' THEN kernel_family(name)
                WHEN 'communication' THEN coalesce(comm_type(a."Collective name"), nccl_kernel_type(name))
                WHEN 'memcpy' THEN coalesce(nullif(regexp_extract(name, '^(Memcpy\\s+\\S+)', 1), ''), name)
                WHEN 'memset' THEN 'Memset'
                ELSE coalesce(a.cuda_sync_kind, name) END AS type,
      CASE kind WHEN 'kernel' THEN 'GPU' WHEN 'communication' THEN '{comm_core}'
                WHEN 'sync' THEN 'GPU' ELSE 'DMA' END AS core,
      start_ns, dur_ns,
      TRY_CAST(a.correlation AS BIGINT) AS connection_id,
      CASE WHEN kind = 'communication' THEN name END AS comm_op,
      a."Process Group Name" AS "group",
      CASE WHEN kind IN ('memcpy', 'memset') THEN TRY_CAST(a.bytes AS BIGINT) END AS bytes,
      TRY_CAST(a."External id" AS BIGINT) AS external_id,
      TRY_CAST(a.context AS BIGINT) AS context,
      regexp_replace(a.grid, '[\\[\\]\\s]', '', 'g') AS grid,
      regexp_replace(a.block, '[\\[\\]\\s]', '', 'g') AS block,
      TRY_CAST(a."registers per thread" AS BIGINT) AS registers_per_thread,
      TRY_CAST(a."shared memory" AS BIGINT) AS shared_memory_bytes,
      TRY_CAST(a."est. achieved occupancy %" AS DOUBLE) / 100 AS pmu_est_occupancy_ratio,
      TRY_CAST(a."warps per SM" AS DOUBLE) AS pmu_warps_per_sm,
      TRY_CAST(a."blocks per SM" AS DOUBLE) AS pmu_blocks_per_sm,
      a."Collective name" AS coll_name, TRY_CAST(a."In msg nelems" AS BIGINT) AS coll_count,
      a.dtype AS coll_dtype
    FROM k""")
    con.execute("CREATE OR REPLACE VIEW dev AS SELECT rowid AS task_uid, * FROM dx")
    con.execute("""
        CREATE OR REPLACE TEMP TABLE gpu_pids AS
        SELECT DISTINCT pid FROM dx UNION
        SELECT DISTINCT pid FROM meta
        WHERE name = 'process_labels' AND starts_with(json_extract_string(args, '$.labels'), 'GPU')""")


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
    SELECT o.device, h.name, o.component, abs(o.bytes) AS size_bytes,
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

__all__ = ["DEVICE_CATS", "HOST_CATS", "API_CATS", "create_host_api", "create_dev",
           "create_memory", "MEMORY_SAMPLES", "MEMORY_BLOCKS", "COUNTERS", "TRACE_SLICES"]
