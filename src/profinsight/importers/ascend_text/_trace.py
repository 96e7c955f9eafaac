"""Split the one DuckDB table of ``trace_view.json`` events (``ev``) into typed working tables.

Processes are identified by their ``process_name`` metadata, never by pid (msprof pids are
synthetic).  Working tables, all with the event's ``idx`` (its position in the file):

- ``x``: every slice (X, and i/I as zero-length) with process/thread names, exact ``start_ns``.
- ``hw``: ``Ascend Hardware`` tasks with stream, task id, sub-task id, hardware task type.
- ``hccl_op``: ops on the HCCL group lane; ``plane``: HCCL small tasks on the ``Plane k`` lanes.
- ``cann``: CANN API slices; ``host``: framework slices (cpu_op, python_function, queue ...).
- ``flow``: flow endpoints (s/f/t) with exact ``ts_ns``.
"""
from __future__ import annotations

HW_PROCESSES = "('Ascend Hardware', 'Task Scheduler')"
HCCL_PROCESSES = "('HCCL', 'Communication')"
CANN_PROCESSES = "('CANN', 'AscendCL', 'Runtime', 'GE')"
HOST_CATEGORIES = "('cpu_op', 'python_function', 'enqueue', 'dequeue', 'user_annotation')"


def split_trace(con) -> None:
    """Create the working tables from ``ev`` (one pass each; no Python per event)."""
    for sql in (_PROCS, _THREADS, _SLICES, _HW, _HCCL_OP, _PLANE, _CANN, _HOST, _FLOW):
        con.execute(sql)


_PROCS = """CREATE OR REPLACE TABLE procs AS
    SELECT pid, any_value(args->>'name') AS pname FROM ev
    WHERE ph = 'M' AND name = 'process_name' GROUP BY pid"""

_THREADS = """CREATE OR REPLACE TABLE threads AS
    SELECT pid, tid, any_value(args->>'name') AS tname FROM ev
    WHERE ph = 'M' AND name = 'thread_name' GROUP BY pid, tid"""

# slim on purpose: copying ``args`` here costs 10x the rest; tables that need it join ``ev``
_SLICES = """CREATE OR REPLACE TABLE x AS
    SELECT e.idx, e.ph, e.name, e.cat, e.pid AS pid_text, e.tid AS tid_text,
           TRY_CAST(e.pid AS BIGINT) AS pid, TRY_CAST(e.tid AS BIGINT) AS tid,
           trace_ts_ns(e.ts) AS start_ns,
           coalesce(CAST(round(TRY_CAST(e.dur AS DOUBLE) * 1000) AS BIGINT), 0) AS dur_ns, p.pname, t.tname
    FROM ev e
    LEFT JOIN procs p ON p.pid = e.pid
    LEFT JOIN threads t ON t.pid = e.pid AND t.tid = e.tid
    WHERE e.ph IN ('X', 'i', 'I') AND e.ts IS NOT NULL AND trace_ts_ns(e.ts) IS NOT NULL"""

_HW = f"""CREATE OR REPLACE TABLE hw AS
    SELECT x.idx, x.name, x.pid, x.tid, x.start_ns, x.dur_ns,
           coalesce(int_or_null(e.args->>'Physic Stream Id'), x.tid) AS stream,
           int_or_null(e.args->>'Task Id') AS task_id,
           int_or_null(e.args->>'Subtask Id') AS context_id,
           clean(e.args->>'Task Type') AS hw_task_type,
           TRY_CAST(e.args->>'connection_id' AS BIGINT) AS connection_id,
           TRY_CAST(coalesce(e.args->>'size(B)', e.args->>'size(Byte)') AS BIGINT) AS bytes
    FROM x JOIN ev e USING (idx) WHERE x.pname IN {HW_PROCESSES} AND x.ph = 'X'"""

_HCCL_OP = f"""CREATE OR REPLACE TABLE hccl_op AS
    SELECT x.idx, x.name, x.pid, x.tid, x.tname, x.start_ns, x.dur_ns,
           TRY_CAST(e.args->>'connection_id' AS BIGINT) AS connection_id,
           clean(e.args->>'data_type') AS data_type, clean(e.args->>'alg_type') AS algorithm,
           TRY_CAST(e.args->>'count' AS BIGINT) AS count
    FROM x JOIN ev e USING (idx)
    WHERE x.pname IN {HCCL_PROCESSES} AND x.ph = 'X' AND coalesce(x.tname, '') NOT LIKE 'Plane%'"""

_PLANE = f"""CREATE OR REPLACE TABLE plane AS
    SELECT x.idx, x.name, x.pid, x.tid, x.start_ns, x.dur_ns,
           TRY_CAST(regexp_extract(x.tname, 'Plane\\s*(\\d+)', 1) AS BIGINT) AS plane_id,
           int_or_null(e.args->>'stream id') AS stream, int_or_null(e.args->>'task id') AS task_id,
           int_or_null(e.args->>'context id') AS context_id, clean(e.args->>'task type') AS task_type,
           int_or_null(e.args->>'src rank') AS src_rank, int_or_null(e.args->>'dst rank') AS dst_rank,
           nullif(clean(e.args->>'transport type'), 'INVALID_TYPE') AS transport,
           nullif(clean(e.args->>'link type'), 'INVALID_TYPE') AS link_type,
           TRY_CAST(e.args->>'size(Byte)' AS BIGINT) AS bytes
    FROM x JOIN ev e USING (idx) WHERE x.pname IN {HCCL_PROCESSES} AND x.ph = 'X' AND x.tname LIKE 'Plane%'"""

_CANN = f"""CREATE OR REPLACE TABLE cann AS
    SELECT x.idx, x.name, x.pid, x.tid, x.start_ns, x.dur_ns FROM x
    WHERE x.ph = 'X' AND (x.pname IN {CANN_PROCESSES}
                          OR (x.pname IS NULL AND x.cat IS NULL AND x.name LIKE '%@%'))"""

_HOST = f"""CREATE OR REPLACE TABLE host AS
    SELECT idx, name, cat, pid, tid, start_ns, dur_ns FROM x
    WHERE cat IN {HOST_CATEGORIES} AND coalesce(pname, '') NOT IN {CANN_PROCESSES}"""

_FLOW = """CREATE OR REPLACE TABLE flow AS
    SELECT idx, ph, cat, name, id, TRY_CAST(pid AS BIGINT) AS pid, TRY_CAST(tid AS BIGINT) AS tid,
           trace_ts_ns(ts) AS ts_ns
    FROM ev WHERE ph IN ('s', 'f', 't') AND id IS NOT NULL"""


def counters_sql(device: int | None) -> str:
    """``counters`` from C events: one row per numeric argument that is not an id.

    name = the event name, or ``{event}/{key}`` when the event carries several values; an id
    argument (``acc_id``) is folded into the name as ``{event} ({key} {value})``.  unit = the
    text in the key's parentheses (``Read(MB/s)`` -> ``MB/s``), or the key itself when it is a
    unit (``MHz``, ``KB``), ``level`` for Stars Soc Info / Acc PMU levels, ``MB/s`` for QoS.
    LLC ``Hit Rate(%)`` is written as a fraction (0.875 where the DB's ``LLC.hitRate`` says 85.9
    for the same kind of sample); it is scaled to percent so the unit is true and both exports
    agree.  The timeline's typo ``write_band_width`` is written ``write_bandwidth`` (the DB's name).
    """
    dev = "NULL" if device is None else int(device)
    return f"""WITH c AS (
        SELECT e.idx, coalesce(p.pname, e.pid) AS track, e.name, trace_ts_ns(e.ts) AS ts_ns, e.args
        FROM ev e LEFT JOIN procs p ON p.pid = e.pid WHERE e.ph = 'C'),
      kv AS (SELECT c.*, k AS key, json_type(args->k) AS jt, args->>k AS v
             FROM c, unnest(json_keys(args)) AS t(k)),
      ids AS (SELECT idx, string_agg(key || ' ' || v, ', ' ORDER BY key) AS id_text FROM kv
              WHERE key = 'id' OR key LIKE '%\\_id' ESCAPE '\\' GROUP BY idx),
      vals AS (SELECT kv.*, replace(kv.name, 'write_band_width', 'write_bandwidth') AS ename,
                      count(*) OVER (PARTITION BY idx) AS n FROM kv
               WHERE (jt IN ('DOUBLE', 'BIGINT', 'UBIGINT', 'INTEGER')
                      OR (jt = 'VARCHAR' AND TRY_CAST(v AS DOUBLE) IS NOT NULL))
                 AND NOT (key = 'id' OR key LIKE '%\\_id' ESCAPE '\\'))
    SELECT device, track, name, ts_ns,
           CASE WHEN track = 'LLC' AND unit = '%' THEN value * 100 ELSE value END AS value, unit FROM (
    SELECT {dev} AS device, track,
           (CASE WHEN n > 1 THEN ename || '/' || key ELSE ename END)
             || coalesce(' (' || ids.id_text || ')', '') AS name,
           ts_ns, TRY_CAST(v AS DOUBLE) AS value,
           CASE WHEN regexp_matches(key, '\\(([^)]*)\\)\\s*$') THEN regexp_extract(key, '\\(([^)]*)\\)\\s*$', 1)
                WHEN key IN ('MHz', 'GHz', 'KB', 'MB', 'GB', 'B', '%', 'us', 'ns', 'ms') THEN key
                WHEN key = vals.name OR track IN ('Stars Soc Info', 'Acc PMU') THEN 'level'
                WHEN track LIKE 'QoS%' THEN 'MB/s'
           END AS unit
    FROM vals LEFT JOIN ids USING (idx)
    WHERE ts_ns IS NOT NULL)"""


def slices_sql(used: str) -> str:
    """``trace_slices``: every slice not loaded into another table (``used``: table of idx)."""
    return f"""SELECT coalesce(x.pname, x.pid_text) AS process, coalesce(x.tname, x.tid_text) AS thread,
                      x.name, x.cat, x.start_ns, x.dur_ns, CAST(e.args AS VARCHAR) AS args
               FROM (SELECT * FROM x ANTI JOIN {used} u ON u.idx = x.idx) x JOIN ev e USING (idx)"""
