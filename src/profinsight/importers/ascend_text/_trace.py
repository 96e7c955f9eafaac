"""Split the ``trace_view.json`` events into typed working tables.

The trace is read in pieces (:mod:`..chrome_trace`); :func:`take_piece` copies out of each piece
only what the import needs, so the raw events (``args`` JSON included) never all sit in memory:

- ``tr_meta``: process / thread name metadata.
- ``tr_x``: every slice (X, and i/I as zero-length) with exact ``start_ns``; framework slices
  (a host category) carry their args values already extracted (``ha9``), every other slice its
  ``args`` JSON, because which keys it needs depends on its process, and process names are
  metadata that may come anywhere in the file.
- ``tr_cv``: counter samples, one row per value of a counter (C) event, already named.
- ``flow``: flow endpoints (s/f/t).
- ``trace_loss``: the events dropped as damaged (:mod:`..chrome_trace.damage`), counted by kind;
  exact copies of a slice are removed (and counted) when the pieces are joined.

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

from ..chrome_trace import damage

HW_PROCESSES = "('Ascend Hardware', 'Task Scheduler')"
HCCL_PROCESSES = "('HCCL', 'Communication')"
CANN_PROCESSES = "('CANN', 'AscendCL', 'Runtime', 'GE')"
HOST_CATEGORIES = "('cpu_op', 'python_function', 'enqueue', 'dequeue', 'user_annotation')"


_PROCS = """CREATE OR REPLACE TABLE procs AS
    SELECT pid, any_value(value) AS pname FROM tr_meta WHERE name = 'process_name' GROUP BY pid"""

_THREADS = """CREATE OR REPLACE TABLE threads AS
    SELECT pid, tid, any_value(value) AS tname FROM tr_meta WHERE name = 'thread_name' GROUP BY pid, tid"""

#: args keys each kind of slice needs, pulled out of the JSON in the one pass that builds ``xf``
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

# every slice, with the args values its kind needs (``ha``: host / CANN, ``da``: device kinds,
# disjoint within each column) and the args text of slices that may end in trace_slices
_SLICES_FULL = f"""CREATE OR REPLACE TABLE xf AS
    SELECT * EXCLUDE (ha9, args),
           CASE WHEN {_IS_HOST} THEN ha9[1:{len(HOST_KEYS)}]
                WHEN {_IS_CANN} THEN coalesce(ha9[{len(HOST_KEYS) + 1}:],
                                              json_extract_string(args, {_keys(CANN_KEYS)})) END AS ha,
           CASE WHEN {_IS_HW} THEN json_extract_string(args, {_keys(HW_KEYS)})
                WHEN {_IS_HCCL} THEN json_extract_string(args, {_keys(HCCL_KEYS)})
                WHEN {_IS_PLANE} THEN json_extract_string(args, {_keys(PLANE_KEYS)}) END AS da,
           CASE WHEN NOT {_IS_HOST} AND NOT {_IS_CANN} THEN CAST(args AS VARCHAR) END AS args_text
    FROM (SELECT e.idx, e.ph, e.name, e.cat, e.pid_text, e.tid_text,
                 TRY_CAST(e.pid_text AS BIGINT) AS pid, TRY_CAST(e.tid_text AS BIGINT) AS tid,
                 e.start_ns, e.dur_ns, p.pname, t.tname, e.ha9, e.args
          FROM tr_x e
          LEFT JOIN procs p ON p.pid = e.pid_text
          LEFT JOIN threads t ON t.pid = e.pid_text AND t.tid = e.tid_text)"""

_SLICES = """CREATE OR REPLACE TABLE x AS
    SELECT idx, ph, name, cat, pid_text, tid_text, pid, tid, start_ns, dur_ns, pname, tname, args_text FROM xf"""

_HW = f"""CREATE OR REPLACE TABLE hw AS
    SELECT x.idx, x.name, x.pid, x.tid, x.start_ns, x.dur_ns,
           coalesce(int_or_null(da[1]), x.tid) AS stream,
           int_or_null(da[2]) AS task_id,
           int_or_null(da[3]) AS context_id,
           clean(da[4]) AS hw_task_type,
           TRY_CAST(da[5] AS BIGINT) AS connection_id,
           TRY_CAST(coalesce(da[6], da[7]) AS BIGINT) AS bytes
    FROM xf x WHERE {_IS_HW}"""

_HCCL_OP = f"""CREATE OR REPLACE TABLE hccl_op AS
    SELECT x.idx, x.name, x.pid, x.tid, x.tname, x.start_ns, x.dur_ns,
           TRY_CAST(da[1] AS BIGINT) AS connection_id,
           clean(da[2]) AS data_type, clean(da[3]) AS algorithm,
           TRY_CAST(da[4] AS BIGINT) AS count
    FROM xf x WHERE {_IS_HCCL}"""

_PLANE = f"""CREATE OR REPLACE TABLE plane AS
    SELECT x.idx, x.name, x.pid, x.tid, x.start_ns, x.dur_ns,
           TRY_CAST(regexp_extract(x.tname, 'Plane\\s*(\\d+)', 1) AS BIGINT) AS plane_id,
           int_or_null(da[1]) AS stream, int_or_null(da[2]) AS task_id,
           int_or_null(da[3]) AS context_id, clean(da[4]) AS task_type,
           int_or_null(da[5]) AS src_rank, int_or_null(da[6]) AS dst_rank,
           nullif(clean(da[7]), 'INVALID_TYPE') AS transport,
           nullif(clean(da[8]), 'INVALID_TYPE') AS link_type,
           TRY_CAST(da[9] AS BIGINT) AS bytes
    FROM xf x WHERE {_IS_PLANE}"""

_CANN = f"""CREATE OR REPLACE TABLE cann AS
    SELECT idx, name, pid, tid, start_ns, dur_ns, ha[1] AS a_thread, ha[2] AS a_level,
           ha[3] AS a_connection_id, ha[4] AS a_item
    FROM xf WHERE {_IS_CANN}"""

_HOST = f"""CREATE OR REPLACE TABLE host AS
    SELECT idx, name, cat, pid, tid, start_ns, dur_ns, ha[1] AS a_sequence, ha[2] AS a_fwd_thread,
           ha[3] AS a_input_dims, ha[4] AS a_input_type, ha[5] AS a_call_stack
    FROM xf WHERE {_IS_HOST}"""

_FLOW_COLS = "idx BIGINT, ph VARCHAR, cat VARCHAR, name VARCHAR, id VARCHAR, pid BIGINT, tid BIGINT, ts_ns BIGINT"
_FLOW = """INSERT INTO flow
    SELECT idx, ph, cat, name, id, TRY_CAST(pid AS BIGINT) AS pid, TRY_CAST(tid AS BIGINT) AS tid, ts_ns
    FROM (SELECT *, trace_ts_ns(ts) AS ts_ns FROM {v} WHERE ph IN ('s', 'f', 't') AND id IS NOT NULL)
    WHERE pid IS NOT NULL AND ts_ns IS NOT NULL"""

#: one piece's damaged events (:mod:`..chrome_trace.damage`): the rows the statements below skip
_LOSS = damage.loss_kind("trace_ts_ns(ts)", "TRY_CAST(dur AS DOUBLE)")
_PIECE_LOSSES = f"SELECT loss, {damage.sample_sql()} AS sample FROM (SELECT ts, dur, ph, {_LOSS} AS loss FROM {{v}})"
#: the columns that make two slices exact copies of each other
_SAME_SLICE = "ph, name, cat, pid_text, tid_text, start_ns, dur_ns, ha9, args"


def start_split(con) -> None:
    """Create the empty tables :func:`take_piece` appends to."""
    con.execute("CREATE OR REPLACE TABLE tr_meta (pid VARCHAR, tid VARCHAR, name VARCHAR, value VARCHAR)")
    con.execute(
        "CREATE OR REPLACE TABLE tr_x (idx BIGINT, ph VARCHAR, name VARCHAR, cat VARCHAR, "
        "pid_text VARCHAR, tid_text VARCHAR, start_ns BIGINT, dur_ns BIGINT, ha9 VARCHAR[], args JSON)"
    )
    con.execute(
        "CREATE OR REPLACE TABLE tr_cv (idx BIGINT, pid VARCHAR, name VARCHAR, ts_ns BIGINT, key VARCHAR, "
        "key_is_name BOOLEAN, value DOUBLE)"
    )
    con.execute(f"CREATE OR REPLACE TABLE flow ({_FLOW_COLS})")
    damage.create_losses(con)


def take_piece(con, view: str) -> None:
    """Copy what the import needs out of one piece of the trace (``view``: its raw events); the
    damaged events are counted and left out."""
    damage.count_losses(con, _PIECE_LOSSES.format(v=view))
    con.execute(f"""INSERT INTO tr_meta SELECT pid, tid, name, args->>'name' FROM {view}
                    WHERE ph = 'M' AND name IN ('process_name', 'thread_name')""")
    con.execute(_PIECE_SLICES.format(v=view))
    con.execute(_PIECE_COUNTERS.format(v=view))
    con.execute(_FLOW.format(v=view))


# framework slices get their host keys (and, for the odd one in a CANN process, the CANN keys)
# extracted here: they are most of the file's bytes, and their args JSON is not kept
_PIECE_SLICES = f"""INSERT INTO tr_x
    SELECT idx, ph, name, cat, pid, tid, start_ns, coalesce(scaled_int(dur_us, 1000), 0) AS dur_ns,
           CASE WHEN host THEN json_extract_string(args, {_keys(HOST_KEYS + CANN_KEYS)}) END AS ha9,
           CASE WHEN NOT host THEN args END AS args
    FROM (SELECT *, trace_ts_ns(ts) AS start_ns, TRY_CAST(dur AS DOUBLE) AS dur_us,
                 coalesce(cat IN {HOST_CATEGORIES}, false) AS host FROM {{v}}
          WHERE ph IN ('X', 'i', 'I') AND ts IS NOT NULL AND pid IS NOT NULL)
    WHERE {damage.loss_kind("start_ns", "dur_us")} IS NULL"""


def finish_split(con) -> None:
    """Create the working tables from the pieces' tables (one pass each; no Python per event);
    exact copies of a slice are kept once (and counted in ``trace_loss``)."""
    copies = damage.remove_duplicates(con, "tr_x", _SAME_SLICE)
    if copies:
        con.execute(f"INSERT INTO trace_loss VALUES ('duplicate', {copies}, [])")
    for sql in (
        _PROCS,
        _THREADS,
        "DROP TABLE tr_meta",
        _SLICES_FULL,
        "DROP TABLE tr_x",
        _SLICES,
        _HW,
        _HCCL_OP,
        _PLANE,
        _CANN,
        _HOST,
    ):
        con.execute(sql)
    con.execute("DROP TABLE xf")


def build_counters(con) -> None:
    """Working table ``counter_units``: the unit of each distinct counter key, worked out once
    per key (a few dozen) rather than once per sample.  The samples themselves (``tr_cv``) were
    taken piece by piece while the trace was read (:data:`_PIECE_COUNTERS`)."""
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

#: one piece's counter samples: one row per numeric, non-id argument of every C event, named as
#: ``counters`` names it.  ``json_each`` parses each event's args once (extracting key by key
#: re-parsed the text per key and cost ten times as much), and the per-event count and id text
#: are a window and a GROUP BY over one piece only, never over every sample of the file
_PIECE_COUNTERS = f"""INSERT INTO tr_cv
    WITH kv AS (
        SELECT c.idx, c.pid, c.name, c.ts_ns, je.key, je.type AS jt, je.value->>'$' AS v
        FROM (SELECT idx, pid, name, trace_ts_ns(ts) AS ts_ns, args FROM {{v}} WHERE ph = 'C' AND pid IS NOT NULL) c,
             json_each(c.args) je
        WHERE c.ts_ns IS NOT NULL AND je.key IS NOT NULL),
    ids AS (SELECT idx, string_agg(key || ' ' || v, ', ' ORDER BY key) AS id_text FROM kv
            WHERE {_IS_ID} GROUP BY idx),
    vals AS (SELECT *, count(*) OVER (PARTITION BY idx) AS n FROM kv
             WHERE (jt IN ('DOUBLE', 'BIGINT', 'UBIGINT', 'INTEGER')
                    OR (jt = 'VARCHAR' AND TRY_CAST(v AS DOUBLE) IS NOT NULL))
               AND NOT {_IS_ID})
    SELECT idx, pid,
           (CASE WHEN n > 1 THEN replace(name, 'write_band_width', 'write_bandwidth') || '/' || key
                 ELSE replace(name, 'write_band_width', 'write_bandwidth') END)
             || coalesce(' (' || id_text || ')', '') AS name,
           ts_ns, key, key = name AS key_is_name, TRY_CAST(v AS DOUBLE) AS value
    FROM vals LEFT JOIN ids USING (idx)"""


def slices_sql(used: str) -> str:
    """``trace_slices``: every slice not loaded into another table (``used``: table of idx)."""
    return f"""SELECT coalesce(x.pname, x.pid_text) AS process, coalesce(x.tname, x.tid_text) AS thread,
                      x.name, x.cat, x.start_ns, x.dur_ns, x.args_text AS args
               FROM x ANTI JOIN {used} u ON u.idx = x.idx"""
