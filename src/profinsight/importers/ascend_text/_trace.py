"""Split the ``trace_view.json`` events into typed working tables.

The trace is read in pieces (:mod:`..chrome_trace`), several at a time, one per DuckDB thread.
:func:`take_piece` is the one statement that reads them: it parses each event once and appends
what the import needs to ``tr_all`` (``rowid`` = the event's position in the file): the time in
ns, a damaged event's loss, framework slices' args values already extracted (``ha9``; their args
JSON is most of the file's bytes and is not kept), and the args JSON of every other slice, counter
and metadata event -- which keys a slice needs depends on its process, and process names are
metadata that may come anywhere in the file.  :func:`finish_split` then reads ``tr_all``, a table
already stripped to what is needed, once per working table:

- ``procs`` / ``threads``: process and thread names.
- ``tr_cv``: counter samples, one row per value of a counter (C) event, already named.
- ``flow``: flow endpoints (s/f/t).
- ``trace_loss``: the events dropped as damaged (:mod:`..chrome_trace.damage`), counted by kind;
  exact copies of a slice are left out (and counted).

Processes are identified by their ``process_name`` metadata, never by pid (msprof pids are
synthetic).  :func:`finish_split` then builds, all with the event's ``idx`` (its position in the
file):

- ``x``: every slice with process/thread names and the args text of slices that may end in
  trace_slices.
- ``hw``: ``Ascend Hardware`` tasks with stream, task id, sub-task id, hardware task type.
- ``hccl_op``: ops on the HCCL group lane; ``plane``: HCCL small tasks on the ``Plane k`` lanes.
- ``cann``: CANN API slices; ``host``: framework slices (cpu_op, python_function, queue ...).
"""

from __future__ import annotations

from ..chrome_trace import ASCEND_EXTRA, TraceRead, _native, damage, read_trace_json

HW_PROCESSES = "('Ascend Hardware', 'Task Scheduler')"
HCCL_PROCESSES = "('HCCL', 'Communication')"
CANN_PROCESSES = "('CANN', 'AscendCL', 'Runtime', 'GE')"
HOST_CATEGORIES = "('cpu_op', 'python_function', 'enqueue', 'dequeue', 'user_annotation')"


#: args keys each kind of slice needs, pulled out of the JSON once (framework keys by :func:`take_piece`, the others when ``x`` is built)
#: (no table joins ``ev`` back for ``args``)
HOST_KEYS = ("Sequence number", "Fwd thread id", "Input Dims", "Input type", "Call stack")
CANN_KEYS = ("Thread Id", "level", "connection_id", "item_id")
HW_KEYS = ("Physic Stream Id", "Task Id", "Subtask Id", "Task Type", "connection_id", "size(B)", "size(Byte)")
HCCL_KEYS = ("connection_id", "data_type", "alg_type", "count")
PLANE_KEYS = (
    "stream id",
    "task id",
    "context id",
    "task type",
    "src rank",
    "dst rank",
    "transport type",
    "link type",
    "size(Byte)",
)


def _keys(keys) -> str:
    return "[" + ", ".join("'" + k.replace("'", "''") + "'" for k in keys) + "]"


_IS_HOST = f"(cat IN {HOST_CATEGORIES} AND coalesce(pname, '') NOT IN {CANN_PROCESSES})"
_IS_CANN = f"(ph = 'X' AND (pname IN {CANN_PROCESSES} OR (pname IS NULL AND cat IS NULL AND name LIKE '%@%')))"
_IS_HW = f"(pname IN {HW_PROCESSES} AND ph = 'X')"
_IS_HCCL = f"(pname IN {HCCL_PROCESSES} AND ph = 'X' AND coalesce(tname, '') NOT LIKE 'Plane%')"
_IS_PLANE = f"(pname IN {HCCL_PROCESSES} AND ph = 'X' AND tname LIKE 'Plane%')"

# every slice (``x``), with the args values its kind needs (``ha``: CANN, ``da``: device kinds,
# disjoint), and the args text of slices that may end in trace_slices.  Framework slices keep
# their extracted values in ``tr_all`` only: ``host`` takes them from there, so their call stacks
# (most of the trace's bytes) are copied once
_SLICES = f"""CREATE OR REPLACE TABLE x AS
    SELECT * EXCLUDE (ha9, args),
           CASE WHEN {_IS_CANN} THEN coalesce(ha9[{len(HOST_KEYS) + 1}:],
                                              json_extract_string(args, {_keys(CANN_KEYS)})) END AS ha,
           CASE WHEN {_IS_HW} THEN json_extract_string(args, {_keys(HW_KEYS)})
                WHEN {_IS_HCCL} THEN json_extract_string(args, {_keys(HCCL_KEYS)})
                WHEN {_IS_PLANE} THEN json_extract_string(args, {_keys(PLANE_KEYS)}) END AS da,
           CASE WHEN NOT {_IS_HOST} AND NOT {_IS_CANN} THEN CAST(args AS VARCHAR) END AS args_text
    FROM (SELECT e.idx, e.ph, e.name, e.cat, e.pid_text, e.tid_text,
                 TRY_CAST(e.pid_text AS BIGINT) AS pid, TRY_CAST(e.tid_text AS BIGINT) AS tid,
                 e.start_ns, e.dur_ns, p.pname, t.tname,
                 CASE WHEN e.ha9 IS NOT NULL AND coalesce(p.pname, '') IN {CANN_PROCESSES} THEN e.ha9 END AS ha9,
                 e.args
          FROM tr_x e
          LEFT JOIN procs p ON p.pid = e.pid_text
          LEFT JOIN threads t ON t.pid = e.pid_text AND t.tid = e.tid_text)"""

_HW = f"""CREATE OR REPLACE TABLE hw AS
    SELECT x.idx, x.name, x.pid, x.tid, x.start_ns, x.dur_ns,
           coalesce(int_or_null(da[1]), x.tid) AS stream,
           int_or_null(da[2]) AS task_id,
           int_or_null(da[3]) AS context_id,
           clean(da[4]) AS hw_task_type,
           TRY_CAST(da[5] AS BIGINT) AS connection_id,
           TRY_CAST(coalesce(da[6], da[7]) AS BIGINT) AS bytes
    FROM x WHERE {_IS_HW}"""

_HCCL_OP = f"""CREATE OR REPLACE TABLE hccl_op AS
    SELECT x.idx, x.name, x.pid, x.tid, x.tname, x.start_ns, x.dur_ns,
           TRY_CAST(da[1] AS BIGINT) AS connection_id,
           clean(da[2]) AS data_type, clean(da[3]) AS algorithm,
           TRY_CAST(da[4] AS BIGINT) AS count
    FROM x WHERE {_IS_HCCL}"""

_PLANE = f"""CREATE OR REPLACE TABLE plane AS
    SELECT x.idx, x.name, x.pid, x.tid, x.start_ns, x.dur_ns,
           TRY_CAST(regexp_extract(x.tname, 'Plane\\s*(\\d+)', 1) AS BIGINT) AS plane_id,
           int_or_null(da[1]) AS stream, int_or_null(da[2]) AS task_id,
           int_or_null(da[3]) AS context_id, clean(da[4]) AS task_type,
           int_or_null(da[5]) AS src_rank, int_or_null(da[6]) AS dst_rank,
           nullif(clean(da[7]), 'INVALID_TYPE') AS transport,
           nullif(clean(da[8]), 'INVALID_TYPE') AS link_type,
           TRY_CAST(da[9] AS BIGINT) AS bytes
    FROM x WHERE {_IS_PLANE}"""

_CANN = f"""CREATE OR REPLACE TABLE cann AS
    SELECT idx, name, pid, tid, start_ns, dur_ns, ha[1] AS a_thread, ha[2] AS a_level,
           ha[3] AS a_connection_id, ha[4] AS a_item
    FROM x WHERE {_IS_CANN}"""

_HOST = f"""CREATE OR REPLACE TABLE host AS
    SELECT idx, name, cat, TRY_CAST(pid_text AS BIGINT) AS pid, TRY_CAST(tid_text AS BIGINT) AS tid, start_ns, dur_ns,
           ha9[1] AS a_sequence, ha9[2] AS a_fwd_thread, ha9[3] AS a_input_dims, ha9[4] AS a_input_type,
           ha9[5] AS a_call_stack
    FROM (SELECT e.*, p.pname FROM tr_x e LEFT JOIN procs p ON p.pid = e.pid_text WHERE e.ha9 IS NOT NULL)
    WHERE {_IS_HOST}"""

#: one row per event of the trace, in file order (``rowid`` is the event's ``idx``), with only
#: what the import needs: the time already in ns, a damaged event's loss (:mod:`..chrome_trace.damage`)
#: and the value it lost for, the args values of framework slices already extracted (``ha9``;
#: they are most of the file's bytes, and their args JSON is not kept), and the args JSON of the
#: other slices, counters and metadata.  The statement that fills it is the only one that reads
#: the raw trace (:func:`take_piece`), so each event's JSON is parsed once.
_ALL_COLS = (
    "ph VARCHAR, name VARCHAR, cat VARCHAR, pid VARCHAR, tid VARCHAR, id VARCHAR, start_ns BIGINT, dur_ns BIGINT, "
    f"loss VARCHAR, sample VARCHAR, ha9 VARCHAR[], args VARCHAR, ents {_native.ENTRIES_TYPE}"
)
#: what only the compiled scanner reads: the key/value pairs of each counter event's args, which
#: :data:`_COUNTERS` would otherwise get by converting the args JSON to a MAP (0.11 s of the 0.19 s
#: the statement took on the 199 k counter events of the 100 MB trace, against 17 ms to take them
#: from the scanner's columns); NULL where DuckDB's reader read the event, or where the
#: conversion would give something else (a nested value): :data:`_COUNTERS` converts those itself
EXTRA = ASCEND_EXTRA  # {"args_entries": _native.entries("args", ("ph", "C"))}, kept beside the reader

_LOSS = damage.loss_kind("start_ns", "dur_us")
_IS_SLICE = "ph IN ('X', 'i', 'I')"
_TAKE = f"""INSERT INTO tr_all
    SELECT ph, name, cat, pid, tid, id, start_ns, coalesce(scaled_int(dur_us, 1000), 0) AS dur_ns, loss,
           CASE WHEN loss IS NOT NULL THEN {damage.sample_sql()} END AS sample,
           CASE WHEN host THEN json_extract_string(args, {_keys(HOST_KEYS + CANN_KEYS)}) END AS ha9,
           CASE WHEN NOT host AND ph IN ('X', 'i', 'I', 'C', 'M') THEN args END AS args,
           CASE WHEN ph = 'C' THEN args_entries END AS ents
    FROM (SELECT *, {_LOSS} AS loss
          FROM (SELECT ph, name, cat, pid, tid, id, ts, dur, args, args_entries, trace_ts_ns(ts) AS start_ns,
                       TRY_CAST(dur AS DOUBLE) AS dur_us,
                       coalesce({_IS_SLICE} AND cat IN {HOST_CATEGORIES}, false) AS host
                FROM {{v}}))"""

#: the columns that make two slices exact copies of each other
_SAME_SLICE = "ph, name, cat, pid, tid, start_ns, dur_ns, ha9, args"
#: the narrow part of it: slices that differ here are no copies
_SLICE_KEY = "ph, name, pid, tid, start_ns, dur_ns"
_SLICE_OK = f"{_IS_SLICE} AND loss IS NULL"


def start_split(con) -> None:
    """Create the empty table :func:`take_piece` appends to."""
    con.execute(f"CREATE OR REPLACE TABLE tr_all ({_ALL_COLS})")
    damage.create_losses(con)


def read(con, path, **options) -> TraceRead:
    """Fill ``tr_all`` from the trace at ``path`` (:func:`..chrome_trace.read_trace_json`'s
    ``options``): :func:`take_piece` over each batch of events, with the scanner's entries of the
    counter events' args (:data:`EXTRA`), which the statement reads."""
    return read_trace_json(con, path, "ev", take=take_piece, extra=EXTRA, **options)


def take_piece(con, source: str) -> int:
    """Append the events of ``source`` (raw trace events, one or more pieces of the file in file
    order) to ``tr_all`` in one statement; how many there were.  Damaged events are kept with
    their loss, so that every event keeps its position (``idx``) and the losses are counted once."""
    return con.execute(_TAKE.format(v=source)).fetchall()[0][0]


_PROCS = """CREATE OR REPLACE TABLE procs AS
    SELECT pid, any_value(args->>'name') AS pname FROM tr_all
    WHERE ph = 'M' AND name = 'process_name' GROUP BY pid"""

_THREADS = """CREATE OR REPLACE TABLE threads AS
    SELECT pid, tid, any_value(args->>'name') AS tname FROM tr_all
    WHERE ph = 'M' AND name = 'thread_name' GROUP BY pid, tid"""

_FLOW = """CREATE OR REPLACE TABLE flow AS
    SELECT idx, ph, cat, name, id, TRY_CAST(pid AS BIGINT) AS pid, TRY_CAST(tid AS BIGINT) AS tid, start_ns AS ts_ns
    FROM (SELECT rowid AS idx, * FROM tr_all WHERE ph IN ('s', 'f', 't') AND id IS NOT NULL)
    WHERE TRY_CAST(pid AS BIGINT) IS NOT NULL AND start_ns IS NOT NULL"""

_LOSSES = """SELECT loss, sample FROM tr_all WHERE loss IS NOT NULL"""


def finish_split(con) -> None:
    """Create the working tables from ``tr_all`` (one pass each over a table already stripped
    to what is needed; no Python per event); exact copies of a slice are kept once (and counted
    in ``trace_loss``).  ``tr_all`` is dropped at the end."""
    damage.count_losses(con, _LOSSES)
    copies = damage.duplicate_rows(con, "tr_all", _SAME_SLICE, _SLICE_OK, "tr_dup", key=_SLICE_KEY)
    if copies:
        con.execute(f"INSERT INTO trace_loss VALUES ('duplicate', {copies}, [])")
    dup = " AND rowid NOT IN (SELECT rid FROM tr_dup)" if copies else ""
    con.execute(f"""CREATE OR REPLACE TEMP VIEW tr_x AS
        SELECT rowid AS idx, ph, name, cat, pid AS pid_text, tid AS tid_text, start_ns, dur_ns, ha9, args
        FROM tr_all WHERE {_SLICE_OK}{dup}""")
    for sql in (_PROCS, _THREADS, _FLOW, _COUNTERS, _HOST, _SLICES, "DROP VIEW tr_x", "DROP TABLE tr_all"):
        con.execute(sql)
    con.execute("DROP TABLE IF EXISTS tr_dup")
    for sql in (_HW, _HCCL_OP, _PLANE, _CANN):
        con.execute(sql)


def build_counters(con) -> None:
    """Working table ``counter_units``: the unit of each distinct counter key, worked out once
    per key (a few dozen) rather than once per sample.  The samples themselves (``tr_cv``) were
    taken from the trace by :func:`finish_split` (:data:`_COUNTERS`)."""
    con.execute(f"""CREATE OR REPLACE TABLE counter_units AS
        SELECT key, CASE WHEN regexp_matches(key, {_UNIT_PAREN}) THEN regexp_extract(key, {_UNIT_PAREN}, 1)
                         WHEN key IN ('MHz', 'GHz', 'KB', 'MB', 'GB', 'B', '%', 'us', 'ns', 'ms') THEN key
                    END AS key_unit
        FROM (SELECT DISTINCT key FROM tr_cv)""")


def counters_sql(device: int | None) -> str:
    """``counters`` rows with the rank's device, from the samples (``tr_cv``), the process names
    (``procs``) and ``counter_units``.

    name = the event name, or ``{event}/{key}`` when the event carries several values; an id
    argument (``acc_id``) is folded into the name as ``{event} ({key} {value})``.  unit = the
    text in the key's parentheses (``Read(MB/s)`` -> ``MB/s``), or the key itself when it is a
    unit (``MHz``, ``KB``), ``level`` for Stars Soc Info / Acc PMU levels, ``MB/s`` for QoS.
    LLC ``Hit Rate(%)`` is written as a fraction (0.875 where the DB's ``LLC.hitRate`` says 85.9
    for the same kind of sample); it is scaled to percent so the unit is true and both exports
    agree.  The timeline's typo ``write_band_width`` is written ``write_bandwidth`` (the DB's name).
    Rows come sorted by track, name and time (file order within a tie).
    """
    dev = "NULL" if device is None else int(device)
    return f"""SELECT {dev} AS device, track, name, ts_ns,
           CASE WHEN track = 'LLC' AND unit = '%' THEN value * 100 ELSE value END AS value, unit
    FROM (SELECT track, name, ts_ns, value, idx,
                 coalesce(key_unit, CASE WHEN key_is_name OR track IN ('Stars Soc Info', 'Acc PMU') THEN 'level'
                                         WHEN track LIKE 'QoS%' THEN 'MB/s' END) AS unit
          FROM (SELECT coalesce(p.pname, c.pid) AS track, c.*, u.key_unit
                FROM tr_cv c LEFT JOIN procs p ON p.pid = c.pid LEFT JOIN counter_units u ON u.key = c.key))
    ORDER BY track, name, ts_ns, idx"""


_UNIT_PAREN = "'\\(([^)]*)\\)\\s*$'"
_IS_ID = "(key = 'id' OR key LIKE '%\\_id' ESCAPE '\\')"

#: the counter samples: one row per numeric, non-id argument of every C event, named as
#: ``counters`` names it.  Each event's args entries are taken once -- from the scanner
#: (:data:`EXTRA`), else by parsing its args into a map -- and its value count and id text are
#: list functions over those entries (no window, GROUP BY or join over the samples).  Args a map
#: cannot hold (a key written twice, an array) take the general path, ``json_each`` with a GROUP
#: BY over those few events, which keeps every value as before
_C_EVENTS = "SELECT rowid AS idx, pid, name, start_ns AS ts_ns, args, ents FROM tr_all WHERE ph = 'C' AND loss IS NULL"
_IS_ID_E = "(e.key = 'id' OR e.key LIKE '%\\_id' ESCAPE '\\')"
_NAMED = """(CASE WHEN n > 1 THEN replace(name, 'write_band_width', 'write_bandwidth') || '/' || key
                  ELSE replace(name, 'write_band_width', 'write_bandwidth') END)
             || coalesce(' (' || id_text || ')', '')"""
_COUNTERS = f"""CREATE OR REPLACE TABLE tr_cv AS
    WITH c AS (SELECT * REPLACE (coalesce(ents, map_entries(json_transform(args, '"MAP(VARCHAR, VARCHAR)"'))) AS ents)
               FROM ({_C_EVENTS})),
    mapped AS (
        SELECT idx, pid, name, ts_ns, len(vals) AS n, v.key AS key, v.value AS v,
               nullif(array_to_string(list_transform(list_sort(list_filter(ents, lambda e: {_IS_ID_E})),
                                                     lambda e: e.key || ' ' || e.value), ', '), '') AS id_text
        FROM (SELECT *, unnest(vals) AS v
              FROM (SELECT *, list_filter(ents, lambda e: TRY_CAST(e.value AS DOUBLE) IS NOT NULL
                                                           AND NOT {_IS_ID_E}) AS vals
                    FROM (SELECT * FROM c WHERE ents IS NOT NULL)))),
    kv AS (
        SELECT c.idx, c.pid, c.name, c.ts_ns, je.key, je.type AS jt, je.value->>'$' AS v
        FROM (SELECT * FROM c WHERE ents IS NULL AND json_type(args) IN ('OBJECT', 'ARRAY')) c, json_each(c.args) je
        WHERE je.key IS NOT NULL),
    ids AS (SELECT idx, string_agg(key || ' ' || v, ', ' ORDER BY key) AS id_text FROM kv
            WHERE {_IS_ID} GROUP BY idx),
    vals AS (SELECT *, count(*) OVER (PARTITION BY idx) AS n FROM kv
             WHERE (jt IN ('DOUBLE', 'BIGINT', 'UBIGINT', 'INTEGER')
                    OR (jt = 'VARCHAR' AND TRY_CAST(v AS DOUBLE) IS NOT NULL))
               AND NOT {_IS_ID}),
    general AS (SELECT idx, pid, name, ts_ns, n, key, v, id_text FROM vals LEFT JOIN ids USING (idx))
    SELECT idx, pid, {_NAMED} AS name, ts_ns, key, key = name AS key_is_name, TRY_CAST(v AS DOUBLE) AS value
    FROM (SELECT * FROM mapped UNION ALL SELECT * FROM general)"""


def slices_sql(used: str) -> str:
    """``trace_slices``: every slice not loaded into another table (``used``: table of idx)."""
    return f"""SELECT coalesce(x.pname, x.pid_text) AS process, coalesce(x.tname, x.tid_text) AS thread,
                      x.name, x.cat, x.start_ns, x.dur_ns, x.args_text AS args
               FROM x ANTI JOIN {used} u ON u.idx = x.idx"""
