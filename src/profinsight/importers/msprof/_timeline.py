"""The exported ``timeline/`` of one device -> working tables -> canonical tables, all in DuckDB SQL.

Every ``msprof_*.json`` is read through the shared Chrome-trace reader (:mod:`..chrome_trace`),
piece by piece; each piece gives up only what is needed (process / thread names, and every slice
with its monotonic start) tagged with the number of the file it came from, because msprof's pids
are synthetic and its process names are metadata *of that file*.  The ``step_trace_*`` files give
the iterations; they may each list every iteration (they do in the real files), so iterations are
kept once per (model, iteration id).

Processes, by their ``process_name`` (never by pid):

- ``Ascend Hardware``: device tasks, one lane per stream, each with ``Task Type`` / ``Stream Id``
  / ``Task Id`` (and ``Aicore Time`` / ``Total Cycle`` PMU values for kernels); its ``Step Trace``
  lane repeats the iteration trace.
- ``HCCL``: the collective on the ``Communication Kernel`` lane, its small tasks on ``Plane k``
  lanes.  A small task is on a hardware stream too (same stream, task id and start): it is
  loaded once, as ``comm_task``, with the Plane record's ranks, transport, link and bytes.
- ``CANN`` (host API of the graph engine), ``Overlap Analysis`` (msprof's own compute /
  communication / free lanes) and the step-trace detail slices: kept in ``trace_slices``.

Kinds (the text importer's naming): a hardware task that is an HCCL small task is ``comm_task``
(name = HCCL task type, ``type`` = hardware name, core HCCL); AI_CORE / AI_CPU ... tasks are
``kernel`` (core = the task type; the op type is not recorded, so ``type`` stays null);
``EVENT_*`` tasks ``sync``; ``MEMCPY*`` ``memcpy``; anything else ``other`` (name = type = the
hardware name).  The collectives are ``communication`` rows and ``comm_ops`` rows.

Timestamps are microseconds on the device's ``CLOCK_MONOTONIC_RAW`` (tens of thousands of
seconds: well inside float64's exact range at ns), converted to epoch ns with the clock pair of
``start_info`` (:func:`._layout.clock`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..chrome_trace import TraceRead, damage, read_trace_json

COMPUTE = (
    "('AI_CORE', 'AI_VECTOR_CORE', 'MIX_AIC', 'MIX_AIV', 'AI_CPU', 'DSA_SQE', 'KERNEL_AICORE', "
    "'KERNEL_AIVEC', 'KERNEL_AICPU', 'FFTS_PLUS')"
)
HW_PROCESSES = "('Ascend Hardware', 'Task Scheduler')"

#: monotonic microseconds (a JSON number read as text) -> integer ns; exact for these magnitudes.
#: A time beyond int64 ns, not finite or not a number is NULL (the event is dropped and counted:
#: :func:`losses`), never an error for the whole file
MONO_NS = "scaled_int(TRY_CAST({x} AS DOUBLE), 1000)"

_TABLES = """
CREATE OR REPLACE TABLE ms_meta (file_no INTEGER, pid VARCHAR, tid VARCHAR, name VARCHAR, value VARCHAR);
CREATE OR REPLACE TABLE ms_x (file_no INTEGER, idx BIGINT, ph VARCHAR, name VARCHAR, cat VARCHAR,
                              pid VARCHAR, tid VARCHAR, mono_ns BIGINT, dur_ns BIGINT, args JSON);
CREATE OR REPLACE TABLE ms_iter (file_no INTEGER, idx BIGINT, tid VARCHAR, pid VARCHAR, mono_ns BIGINT,
                                 dur_ns BIGINT, iteration BIGINT, end_mono_ns BIGINT, model BIGINT);
"""


def start(con) -> None:
    for stmt in _TABLES.strip().split(";"):
        if stmt.strip():
            con.execute(stmt)


_ITER_END = MONO_NS.format(x="args->>'$.\"Iteration End\"'")


#: event numbers of one slice of a sliced file start here times its position (slices of one file
#: share its file number, so that its process names, written once, name the events of every slice)
SLICE_IDX = 1 << 40


def _take(file_no: int, slices: bool, first_idx: int = 0):
    def consume(con, view: str) -> None:
        # each event once: why it cannot be kept (a damaged time, duration, pid or phase), or NULL
        loss = damage.loss_kind(MONO_NS.format(x="ts"), "TRY_CAST(dur AS DOUBLE)")
        con.execute(f"""CREATE OR REPLACE TEMP TABLE ms_piece AS
            SELECT *, {MONO_NS.format(x="ts")} AS mono, {loss} AS loss FROM {view}""")
        damage.count_losses(con, f"SELECT loss, {damage.sample_sql()} AS sample FROM ms_piece", loss_table(file_no))
        con.execute(f"""INSERT INTO ms_meta SELECT {file_no}, pid, tid, name, coalesce(args->>'name', args->>'labels')
                        FROM ms_piece WHERE ph = 'M' AND name IN ('process_name', 'thread_name', 'process_labels')""")
        con.execute(f"""INSERT INTO ms_iter
            SELECT {file_no}, idx + {first_idx}, tid, pid, mono, scaled_int(TRY_CAST(dur AS DOUBLE), 1000),
                   TRY_CAST(args->>'$."Iteration ID"' AS BIGINT),
                   {_ITER_END}, NULL
            FROM ms_piece WHERE ph = 'X' AND cat = 'Iteration Time' AND loss IS NULL""")
        if slices:
            con.execute(f"""INSERT INTO ms_x
                SELECT {file_no}, idx + {first_idx}, ph, name, cat, pid, tid, mono,
                       coalesce(scaled_int(TRY_CAST(dur AS DOUBLE), 1000), 0), args
                FROM ms_piece WHERE ph IN ('X', 'i', 'I') AND loss IS NULL""")
        con.execute("DROP TABLE ms_piece")

    return consume


def loss_table(file_no: int) -> str:
    return f"ms_loss_{int(file_no)}"


def losses(con, file_no: int) -> list:
    """The events of file ``file_no`` (all its slices) that were dropped, and the exact copies
    removed, as :class:`..chrome_trace.damage.Loss` (one per kind)."""
    found = damage.losses(con, loss_table(file_no))
    copies = damage.remove_duplicates(
        con, "ms_x", "ph, name, cat, pid, tid, mono_ns, dur_ns, CAST(args AS VARCHAR)", f"file_no = {int(file_no)}"
    )
    return found + ([damage.Loss("duplicate", copies)] if copies else [])


def read_files(con, timelines: list[Path | tuple[Path, ...]], step_traces: list[Path]) -> list[tuple[Path, TraceRead]]:
    """Read every timeline file (all events) and every step-trace file (iterations only).  A
    timeline given as a tuple is one file cut into slices: its parts are read in order as one."""
    start(con)
    for no in range(len(timelines) + len(step_traces)):
        damage.create_losses(con, loss_table(no))
    reads = []
    for no, group in enumerate(timelines):
        for k, path in enumerate(group if isinstance(group, tuple) else (group,)):
            consume = _take(no, True, k * SLICE_IDX)
            reads.append((path, read_trace_json(con, path, table=f"ms{no}_{k}", consume=consume)))
    seen: set[bytes] = set()
    for k, path in enumerate(step_traces):
        digest = _digest(path)
        if digest in seen:  # byte-identical to one already read (in the real files: all ten)
            continue
        seen.add(digest)
        no = len(timelines) + k
        reads.append((path, read_trace_json(con, path, table=f"ms{no}", consume=_take(no, False))))
    return reads


def _digest(path: Path) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    try:
        with open(path, "rb") as fh:
            while block := fh.read(1 << 20):
                h.update(block)
    except OSError:
        return str(path).encode()
    return h.digest()


_WORK = """
CREATE OR REPLACE TABLE procs AS
    SELECT file_no, pid, any_value(value) AS pname FROM ms_meta WHERE name = 'process_name' GROUP BY ALL;
CREATE OR REPLACE TABLE threads AS
    SELECT file_no, pid, tid, any_value(value) AS tname FROM ms_meta WHERE name = 'thread_name' GROUP BY ALL;
CREATE OR REPLACE TABLE xa AS
    SELECT x.*, p.pname, t.tname FROM ms_x x
    LEFT JOIN procs p USING (file_no, pid) LEFT JOIN threads t USING (file_no, pid, tid);
CREATE OR REPLACE TABLE hw AS
    SELECT file_no, idx, name, mono_ns, dur_ns,
           coalesce(int_or_null(a[2]), TRY_CAST(tid AS BIGINT)) AS stream, int_or_null(a[3]) AS task_id,
           clean(a[1]) AS task_type, num_or_null(a[4]) AS aicore_time, num_or_null(a[5]) AS total_cycle
    FROM (SELECT *, json_extract_string(args, ['Task Type', 'Stream Id', 'Task Id', 'Aicore Time(ms)',
                                               'Total Cycle']) AS a
          FROM xa WHERE pname IN {hw} AND ph = 'X')
    WHERE a[1] IS NOT NULL;
CREATE OR REPLACE TABLE plane AS
    SELECT file_no, idx, name, mono_ns, dur_ns,
           int_or_null(a[1]) AS stream, int_or_null(a[2]) AS task_id, clean(a[3]) AS task_type,
           int_or_null(a[4]) AS src_rank, int_or_null(a[5]) AS dst_rank,
           nullif(clean(a[6]), 'INVALID_TYPE') AS transport, nullif(clean(a[7]), 'INVALID_TYPE') AS link_type,
           TRY_CAST(clean(a[8]) AS BIGINT) AS bytes
    FROM (SELECT *, json_extract_string(args, ['stream id', 'task id', 'task type', 'src rank', 'dst rank',
                                               'transport type', 'link type', 'size(Byte)']) AS a
          FROM xa WHERE pname = 'HCCL' AND ph = 'X' AND coalesce(tname, '') LIKE 'Plane%');
CREATE OR REPLACE TABLE hop AS
    SELECT file_no, idx, name, mono_ns, dur_ns FROM xa
    WHERE pname = 'HCCL' AND ph = 'X' AND coalesce(tname, '') NOT LIKE 'Plane%';
CREATE OR REPLACE TABLE hw_plane AS
    SELECT h.file_no, h.idx AS hw_idx, p.idx AS plane_idx FROM hw h
    JOIN plane p ON p.file_no = h.file_no AND p.stream = h.stream AND p.task_id = h.task_id
                AND p.mono_ns = h.mono_ns
    QUALIFY row_number() OVER (PARTITION BY h.file_no, h.idx ORDER BY p.idx) = 1
       AND row_number() OVER (PARTITION BY p.file_no, p.idx ORDER BY h.idx) = 1;
CREATE OR REPLACE TABLE iters AS
    SELECT iteration, model, start_mono_ns, end_mono_ns FROM (
        SELECT i.iteration, i.file_no, i.idx,
               coalesce(i.model, TRY_CAST(regexp_extract(t.tname, 'Model ID:\\s*(\\d+)', 1) AS BIGINT)) AS model,
               i.mono_ns AS start_mono_ns, coalesce(i.end_mono_ns, i.mono_ns + i.dur_ns) AS end_mono_ns
        FROM ms_iter i LEFT JOIN threads t USING (file_no, pid, tid)
        WHERE i.iteration IS NOT NULL AND i.mono_ns IS NOT NULL)
    QUALIFY row_number() OVER (PARTITION BY model, iteration ORDER BY file_no, idx) = 1;
"""


def build_work(con) -> None:
    for stmt in _WORK.format(hw=HW_PROCESSES).strip().split(";"):
        if stmt.strip():
            con.execute(stmt)


def counts(con) -> dict:
    """What the timeline holds, for the diagnostics."""
    row = con.sql("""SELECT (SELECT count(*) FROM hw), (SELECT count(*) FROM plane), (SELECT count(*) FROM hop),
                            (SELECT count(*) FROM iters), (SELECT count(DISTINCT model) FROM iters)""").fetchall()[0]
    return dict(zip(("hw", "plane", "hop", "iters", "models"), row))


def steps_sql(off: str) -> str:
    """One step per iteration: the step trace's range, on the wall clock (no host range)."""
    return f"""SELECT iteration AS step, NULL::BIGINT AS host_start_ns, NULL::BIGINT AS host_end_ns,
                      start_mono_ns + {off} AS device_start_ns, end_mono_ns + {off} AS device_end_ns
               FROM iters ORDER BY step, model"""


def build_tasks(con, off: str, device: int) -> None:
    """``dt``: every device task once (without ``step``), ordered, with ``task_uid``."""
    con.execute(f"""CREATE OR REPLACE TABLE dt_pre AS
        SELECT 'hw' AS src, h.file_no, h.idx,
               CASE WHEN hp.plane_idx IS NOT NULL THEN 'comm_task'
                    WHEN h.task_type IN {COMPUTE} THEN 'kernel'
                    WHEN upper(h.task_type) LIKE 'EVENT%' OR upper(h.name) LIKE 'EVENT%' THEN 'sync'
                    WHEN upper(h.task_type) LIKE '%MEMCPY%' THEN 'memcpy'
                    WHEN upper(h.task_type) LIKE '%MEMSET%' THEN 'memset'
                    ELSE 'other' END AS kind,
               coalesce(p.task_type, h.name) AS name, h.name AS hw_name, h.task_type,
               h.mono_ns, h.dur_ns, h.stream, h.task_id,
               p.src_rank, p.dst_rank, p.transport, p.link_type, p.bytes,
               h.aicore_time, h.total_cycle
        FROM hw h LEFT JOIN hw_plane hp ON hp.file_no = h.file_no AND hp.hw_idx = h.idx
        LEFT JOIN plane p ON p.file_no = h.file_no AND p.idx = hp.plane_idx
        UNION ALL BY NAME
        SELECT 'plane' AS src, p.file_no, p.idx, 'comm_task' AS kind, coalesce(p.task_type, p.name) AS name,
               p.mono_ns, p.dur_ns, p.stream, p.task_id, p.src_rank, p.dst_rank, p.transport, p.link_type, p.bytes
        FROM plane p ANTI JOIN hw_plane hp ON hp.file_no = p.file_no AND hp.plane_idx = p.idx
        UNION ALL BY NAME
        SELECT 'op' AS src, file_no, idx, 'communication' AS kind, name, mono_ns, dur_ns FROM hop""")
    con.execute(f"""CREATE OR REPLACE TABLE dt AS
        WITH parent AS (
            SELECT d.src, d.file_no, d.idx,
                   CASE WHEN d.mono_ns <= o.mono_ns + o.dur_ns THEN o.name END AS parent_op
            FROM (SELECT * FROM dt_pre WHERE kind = 'comm_task') d
            ASOF LEFT JOIN hop o ON o.file_no = d.file_no AND d.mono_ns >= o.mono_ns)
        SELECT (row_number() OVER (ORDER BY d.mono_ns,
                    CASE d.kind WHEN 'communication' THEN 0 WHEN 'kernel' THEN 1 WHEN 'comm_task' THEN 2 ELSE 3 END,
                    d.file_no, d.idx)) - 1 AS task_uid,
               {int(device)} AS device, d.stream, d.task_id, d.kind, d.name,
               CASE WHEN d.kind IN ('kernel', 'communication') THEN NULL ELSE d.hw_name END AS type,
               CASE d.kind WHEN 'kernel' THEN d.task_type WHEN 'comm_task' THEN 'HCCL'
                           WHEN 'communication' THEN 'HCCL' END AS core,
               d.mono_ns + {off} AS start_ns, d.dur_ns,
               CASE WHEN d.kind = 'communication' THEN d.name ELSE pa.parent_op END AS comm_op,
               d.src_rank, d.dst_rank, d.transport, d.link_type, d.bytes,
               CASE WHEN d.kind = 'kernel' THEN CAST(round(d.aicore_time * 1000) AS BIGINT) END
                   AS pmu_aic_total_time_ns,
               CASE WHEN d.kind = 'kernel' THEN d.total_cycle END AS pmu_aic_total_cycles,
               d.task_type AS hw_task_type
        FROM dt_pre d LEFT JOIN parent pa USING (src, file_no, idx)
        ORDER BY task_uid""")


#: op type as MindSpore / GE name it inside the op name (``Default/AllReduce-op534_0`` -> AllReduce,
#: ``hcom_allReduce__586_0_1`` -> hcom_allReduce_)
_OP_TYPE = """coalesce(nullif(regexp_extract(name, '^(hcom_[A-Za-z0-9]+_)', 1), ''),
                       nullif(regexp_extract(name, '([A-Za-z0-9]+)-op\\d+(_\\d+)?$', 1), ''))"""


def comm_ops_sql() -> str:
    return f"""SELECT device, step, name, {_OP_TYPE} AS type,
                      CASE WHEN lower(name) SIMILAR TO '.*(send|receive|recv).*' THEN 'p2p' ELSE 'collective' END
                          AS category,
                      start_ns, dur_ns
               FROM dt WHERE kind = 'communication' ORDER BY start_ns"""


def slices_sql(off: str) -> str:
    """Every slice of the timeline not loaded as a device task (CANN API, overlap lanes, step trace)."""
    return f"""SELECT coalesce(x.pname, x.pid) AS process, coalesce(x.tname, x.tid) AS thread, x.name, x.cat,
                      x.mono_ns + {off} AS start_ns, x.dur_ns, CAST(x.args AS VARCHAR) AS args
               FROM xa x
               ANTI JOIN (SELECT file_no, idx FROM dt_pre) u ON u.file_no = x.file_no AND u.idx = x.idx
               ANTI JOIN (SELECT file_no, plane_idx AS idx FROM hw_plane) q ON q.file_no = x.file_no AND q.idx = x.idx
               ORDER BY start_ns, x.file_no, x.idx"""
