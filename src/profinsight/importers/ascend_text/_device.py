"""``device_tasks``: kernel_details rows + every other device activity of the trace, each once.

Sources and how duplicates are avoided:

- kernel_details.csv rows are the ``kernel`` and ``communication`` rows, exactly (start, duration
  and wait as written).  Each is matched to its trace event -- an ``Ascend Hardware`` task for a
  kernel (same name, stream/task id when the CSV has them, start within 1 us, nearest first), the
  HCCL group-lane op for a communication row -- and that event is not loaded again; it only
  contributes connection_id, stream/task id (Level0 CSVs have none) and the hardware task type.
- HCCL small tasks are on both ``Ascend Hardware`` and the HCCL ``Plane k`` lanes; they are matched
  on (stream, task id, sub-task id, start) and loaded once as ``comm_task``, with the Plane
  record's rich fields (src/dst rank, transport, link type, bytes, plane).
- Every other Ascend Hardware task gets its kind from its name / hardware type.

Naming shared with the DB importer (``ascend_db.device``): a ``comm_task`` row's ``name`` is the
HCCL task type (``Notify_Wait``, ``Notify_Record``, ``Memcpy``, ``Reduce_Inline`` -- the Plane
lane's name = DB ``COMMUNICATION_TASK_INFO.taskType``; at Level0 the text has no Plane lanes and
the hardware name stands in), ``type`` the hardware task name (``Notify Wait``, ``Write Value``,
``SDMA`` = DB ``TASK.taskType``), ``core`` = ``HCCL``, ``comm_op`` = its parent collective (same
connection_id, else the op whose time range contains its start), ``group`` = the parent's group.
memcpy / memset / sync / other rows have ``name`` = ``type`` = the hardware task name
(``MEMCPY_ASYNC``, ``EVENT_RECORD``) and ``core`` null.  Every row from the trace carries the
trace's SQE-level task type (``PCIE_DMA_SQE``, ``AI_CORE`` for vector kernels too) in the extra
column ``hw_task_type``.
"""

from __future__ import annotations

from .._steps import earliest_containing

COMPUTE_HW = (
    "('AI_CORE', 'AI_VECTOR_CORE', 'MIX_AIC', 'MIX_AIV', 'AI_CPU', 'DSA_SQE', 'KERNEL_AICORE', "
    "'KERNEL_AIVEC', 'KERNEL_AICPU', 'FFTS_PLUS')"
)
SMALL_TASKS = (
    "('Notify Wait', 'Notify Record', 'Write Value', 'SDMA', 'RDMA', 'Reduce Inline', "
    "'Notify_Wait', 'Notify_Record', 'Memcpy', 'Reduce_Inline', 'RDMASend', 'Local Copy')"
)
_KINDS = "CASE kind WHEN 'communication' THEN 0 WHEN 'kernel' THEN 1 WHEN 'comm_task' THEN 2 ELSE 3 END"


def build_device_tasks(con, pmu_cols: list[str], have_kd: bool, device: int | None, have_l2: bool) -> None:
    """Create ``device_tasks`` (final columns + internal ``hw_idx``/``op_idx``/``plane_idx``).
    Needs ``kd``, the trace working tables, ``comm_groups`` and ``steps``."""
    con.execute(_CANDIDATES)
    con.execute(_MATCH_KD)
    con.execute(_MATCH_PLANE)
    dev = "NULL" if device is None else str(int(device))
    pmu = "".join(f", k.{c}" for c in pmu_cols)
    parts = [_from_kd(dev, pmu), _from_hw(dev, have_kd), _from_plane(dev)] + ([] if have_kd else [_from_ops(dev)])
    # pre_id: a row's source and its row there, as one number (a window numbering the rows
    # would run on one thread over whole rows)
    con.execute(
        "CREATE OR REPLACE TABLE dt_pre AS SELECT "
        "(CASE src WHEN 'kd' THEN 0 WHEN 'hw' THEN 1 WHEN 'plane' THEN 2 ELSE 3 END) * 1099511627776 + src_order "
        "AS pre_id, * FROM (" + " UNION ALL BY NAME ".join(parts) + ")"
    )
    con.execute(_PARENTS)
    con.register("task_step_arrow", _task_steps(con))
    con.register("task_uid_arrow", _task_uids(con))
    try:
        # rows in no particular order: the output is sorted by task_uid once, when it is written
        con.execute("""CREATE OR REPLACE TABLE device_tasks AS
            SELECT u.task_uid, d.* EXCLUDE (comm_op, "group", step, src, src_order),
                   coalesce(d.comm_op, pa.parent_op) AS comm_op, coalesce(d."group", pa.parent_group) AS "group",
                   coalesce(d.step, ts.step) AS step
            FROM dt_pre d JOIN task_uid_arrow u USING (pre_id)
            LEFT JOIN parents pa USING (pre_id) LEFT JOIN task_step_arrow ts USING (pre_id)""")
    finally:
        con.unregister("task_step_arrow")
        con.unregister("task_uid_arrow")
    if have_l2:
        con.execute(_L2_JOIN)


def _task_uids(con):
    """(pre_id, task_uid): the position of each task in (start, kind, source, source row) order,
    from those narrow columns sorted in Arrow rather than a window over whole rows."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    keys = con.sql(f"SELECT pre_id, start_ns, {_KINDS} AS k, src, src_order FROM dt_pre").to_arrow_table()
    order = pc.sort_indices(
        keys,
        sort_keys=[("start_ns", "ascending"), ("k", "ascending"), ("src", "ascending"), ("src_order", "ascending")],
    ).to_numpy()  # nulls last, as SQL's ORDER BY
    uid = np.empty(len(order), dtype=np.int64)
    uid[order] = np.arange(len(order), dtype=np.int64)
    return pa.table({"pre_id": keys.column("pre_id"), "task_uid": pa.array(uid)})


def _task_steps(con):
    """(pre_id, step) for the tasks without a step of their own (kernel_details ``Step Id``):
    the step whose device range (else host range) contains the task's start, the one that
    starts first on the host where ranges overlap -- one binary search per task
    (:func:`.._steps.earliest_containing`) instead of a range join against every step."""
    import pyarrow as pa

    bounds = con.sql(
        "SELECT step, host_start_ns, coalesce(device_start_ns, host_start_ns) AS lo, "
        "coalesce(device_end_ns, host_end_ns) AS hi FROM steps"
    ).to_arrow_table()
    tasks = con.sql("SELECT pre_id, start_ns FROM dt_pre WHERE step IS NULL").to_arrow_table()
    return pa.table(
        {
            "pre_id": tasks.column("pre_id"),
            "step": earliest_containing(
                tasks.column("start_ns"),
                bounds.column("lo"),
                bounds.column("hi"),
                bounds.column("step"),
                rank=bounds.column("host_start_ns"),
            ),
        }
    )


# l2_cache.csv rows go to kernels by (stream, task id, name, n-th occurrence)
_L2_JOIN = """CREATE OR REPLACE TABLE device_tasks AS
    WITH kk AS (SELECT pre_id, stream, task_id, name,
                       row_number() OVER (PARTITION BY stream, task_id, name ORDER BY start_ns, task_uid) AS occ
                FROM device_tasks WHERE kind = 'kernel')
    SELECT d.*, l2.pmu_l2_cache_hit_ratio, l2.pmu_l2_cache_victim_ratio
    FROM device_tasks d LEFT JOIN kk USING (pre_id)
    LEFT JOIN l2 ON l2.stream = kk.stream AND l2.task_id = kk.task_id AND l2.name = kk.name AND l2.occ = kk.occ"""


# trace events a kernel_details row can be: Ascend Hardware tasks and HCCL group-lane ops
_CANDIDATES = """CREATE OR REPLACE TABLE cand AS
    SELECT idx, name, start_ns, stream, task_id FROM hw
    UNION ALL SELECT idx, name, start_ns, NULL, NULL FROM hccl_op"""

# exact (name, start) first; then the nearest within 1 us for what is left; one event per row
_MATCH_KD = """CREATE OR REPLACE TABLE kd_match AS
    WITH exact AS (
        SELECT k.kd_row, c.idx, 0 AS d FROM kd k JOIN cand c ON c.name = k.name AND c.start_ns = k.start_ns
        WHERE (k.stream IS NULL OR k.stream = c.stream) AND (k.task_id IS NULL OR k.task_id = c.task_id)
        QUALIFY row_number() OVER (PARTITION BY c.idx ORDER BY k.kd_row) = 1
           AND row_number() OVER (PARTITION BY k.kd_row ORDER BY c.idx) = 1),
    rest_kd AS (SELECT * FROM kd ANTI JOIN exact USING (kd_row)),
    rest_c AS (SELECT * FROM cand ANTI JOIN exact USING (idx)),
    near AS (
        SELECT k.kd_row, c.idx, abs(c.start_ns - k.start_ns) AS d
        FROM rest_kd k ASOF JOIN rest_c c ON k.name = c.name AND k.start_ns + 1000 >= c.start_ns
        WHERE c.start_ns >= k.start_ns - 1000
          AND (k.stream IS NULL OR k.stream = c.stream) AND (k.task_id IS NULL OR k.task_id = c.task_id)
        QUALIFY row_number() OVER (PARTITION BY c.idx ORDER BY d, k.kd_row) = 1)
    SELECT * FROM exact UNION ALL SELECT * FROM near"""

_MATCH_PLANE = """CREATE OR REPLACE TABLE hw_plane AS
    SELECT h.idx AS hw_idx, p.idx AS plane_idx FROM hw h
    JOIN plane p ON p.stream = h.stream AND p.task_id = h.task_id AND p.start_ns = h.start_ns
                AND p.context_id IS NOT DISTINCT FROM h.context_id
    QUALIFY row_number() OVER (PARTITION BY h.idx ORDER BY p.idx) = 1
       AND row_number() OVER (PARTITION BY p.idx ORDER BY h.idx) = 1"""


def _from_kd(dev: str, pmu: str) -> str:
    return f"""SELECT 'kd' AS src, k.kd_row AS src_order, k.kind, k.name, k.type, k.core, k.start_ns, k.dur_ns,
            k.wait_ns, k.step, coalesce(k.device, {dev}) AS device,
            coalesce(k.stream, h.stream) AS stream, coalesce(k.task_id, h.task_id) AS task_id,
            coalesce(k.context_id, h.context_id) AS context_id, k.block_dim, k.mix_block_dim, k.op_state,
            k.input_shapes, k.input_dtypes, k.input_formats, k.output_shapes, k.output_dtypes, k.output_formats,
            coalesce(h.connection_id, o.connection_id) AS connection_id,
            CASE WHEN k.kind = 'communication' THEN k.name END AS comm_op,
            CASE WHEN k.kind = 'communication' THEN coalesce(g."group", o.tname) END AS "group",
            h.hw_task_type, k.hf32_eligible, h.idx AS hw_idx, o.idx AS op_idx{pmu}
        FROM kd k LEFT JOIN kd_match m USING (kd_row)
        LEFT JOIN hw h ON h.idx = m.idx LEFT JOIN hccl_op o ON o.idx = m.idx
        LEFT JOIN comm_groups g ON g.name = k.name"""


def _from_hw(dev: str, have_kd: bool) -> str:
    kernel_rule = "" if have_kd else f"WHEN h.hw_task_type IN {COMPUTE_HW} THEN 'kernel'"
    return f"""SELECT * REPLACE (CASE WHEN kind = 'kernel' THEN NULL ELSE type END AS type),
            CASE kind WHEN 'comm_task' THEN 'HCCL' WHEN 'kernel' THEN hw_task_type END AS core FROM (
        SELECT 'hw' AS src, h.idx AS src_order,
            CASE {kernel_rule}
                 WHEN hp.plane_idx IS NOT NULL
                      OR h.connection_id IN (SELECT connection_id FROM hccl_op) THEN 'comm_task'
                 WHEN upper(h.name) LIKE '%MEMCPY%' THEN 'memcpy'
                 WHEN upper(h.name) LIKE '%MEMSET%' THEN 'memset'
                 WHEN upper(h.name) LIKE 'EVENT%' OR upper(h.name) LIKE '%STREAM_WAIT%'
                      OR upper(coalesce(h.hw_task_type, '')) LIKE 'EVENT%' THEN 'sync'
                 WHEN h.hw_task_type IN {SMALL_TASKS} OR h.name IN {SMALL_TASKS} THEN 'comm_task'
                 ELSE 'other' END AS kind,
            coalesce(p.task_type, h.name) AS name, h.name AS type, h.start_ns, h.dur_ns, {dev} AS device,
            h.stream, h.task_id, h.context_id,
            h.connection_id, p.src_rank, p.dst_rank, p.transport, p.link_type, coalesce(p.bytes, h.bytes) AS bytes,
            h.hw_task_type, p.plane_id, h.idx AS hw_idx, p.idx AS plane_idx
        FROM hw h LEFT JOIN hw_plane hp ON hp.hw_idx = h.idx LEFT JOIN plane p ON p.idx = hp.plane_idx
        WHERE h.idx NOT IN (SELECT idx FROM kd_match))"""


def _from_plane(dev: str) -> str:
    return f"""SELECT 'plane' AS src, p.idx AS src_order, 'comm_task' AS kind,
            coalesce(p.task_type, p.name) AS name, 'HCCL' AS core,
            p.start_ns, p.dur_ns, {dev} AS device, p.stream, p.task_id, p.context_id,
            p.src_rank, p.dst_rank, p.transport, p.link_type, p.bytes, p.plane_id, p.idx AS plane_idx
        FROM plane p WHERE p.idx NOT IN (SELECT plane_idx FROM hw_plane)"""


def _from_ops(dev: str) -> str:
    """Without kernel_details.csv the HCCL group-lane ops are the communication rows."""
    return f"""SELECT 'op' AS src, o.idx AS src_order, 'communication' AS kind, o.name,
            regexp_extract(o.name, '^(hcom_[A-Za-z0-9]+_)', 1) AS type, 'HCCL' AS core, o.start_ns, o.dur_ns,
            {dev} AS device, o.connection_id, o.name AS comm_op, coalesce(g."group", o.tname) AS "group",
            o.idx AS op_idx
        FROM hccl_op o LEFT JOIN comm_groups g ON g.name = o.name"""


# parent collective of each comm_task: same connection_id, else the op containing its start
_PARENTS = """CREATE OR REPLACE TABLE parents AS
    WITH pre AS (SELECT * FROM dt_pre),
    comm AS (SELECT name, "group", start_ns, dur_ns, connection_id FROM pre WHERE kind = 'communication'),
    by_conn AS (SELECT connection_id, min(name) AS name, min("group") AS "group" FROM comm
                WHERE connection_id IS NOT NULL GROUP BY connection_id),
    tasks AS (SELECT pre_id, connection_id, start_ns FROM pre WHERE kind = 'comm_task')
    SELECT t.pre_id,
           coalesce(b.name, CASE WHEN t.start_ns <= c.start_ns + c.dur_ns THEN c.name END) AS parent_op,
           CASE WHEN b.name IS NOT NULL THEN b."group"
                WHEN t.start_ns <= c.start_ns + c.dur_ns THEN c."group" END AS parent_group
    FROM tasks t LEFT JOIN by_conn b ON b.connection_id = t.connection_id
    ASOF LEFT JOIN comm c ON t.start_ns >= c.start_ns"""
