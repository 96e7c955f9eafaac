"""``launches``: which host op / CANN API call launched which device task.

Recorded links, bound the way trace viewers bind them (reference 2.13.5): a flow endpoint belongs
to the innermost slice on the same pid/tid whose range contains its ``ts`` -- found with one
DuckDB ASOF join per side (latest slice start <= ts, then a containment check), no Python loop.

- ``torch_to_npu``: ``async_npu`` flow from a framework op (the NPU-level op such as ``aclnnMuls``)
  to the first device task it launched (or the HCCL op).
- ``HostToDevice``: flow from a CANN API (``Node@launch``, ``aclrtMemcpyAsync``) to a device task.
- ``connection_id``: what the flows imply but do not draw.  A CANN API and the device tasks share a
  ``connection_id`` (one launch -> all FFTS+ sub-tasks and every small task of a collective); a
  framework op is linked to every task sharing the connection_id of the task its flow reached.
  This is the link the DB export records (``PYTORCH_API -> CONNECTION_IDS -> TASK``,
  ``CANN_API.connectionId = TASK.connectionId``), so both exports give the same pairs.
"""

from __future__ import annotations


def build_launches(con) -> None:
    """Create ``launches`` (host_op_id, api_call_id, task_uid, link)."""
    con.execute(_BIND_TARGETS)
    con.execute(_ENDPOINTS)
    con.execute(_LAUNCHES)


# slices a flow endpoint can bind to, one per (pid, tid, start): the shortest (innermost).  Slices
# that start together and last as long are told apart by what they are, never by the reading-order
# id alone, so events written in another order bind the same way: a CANN API of a deeper level wins
# (``Node@launch`` runs inside ``AscendCL@hcom_allReduce_`` and carries the tasks' connection_id),
# then the name; the id only parts slices that are the same in everything.
_BIND_TARGETS = """
CREATE OR REPLACE TABLE bind_dev AS
    SELECT pid, tid, start_ns, arg_min(task_uid, (dur_ns, name, task_uid)) AS key, min(dur_ns) AS dur_ns
    FROM (
        SELECT x.pid, x.tid, x.start_ns, x.dur_ns, d.name, d.task_uid FROM device_tasks d JOIN x ON x.idx = d.hw_idx
        UNION ALL SELECT x.pid, x.tid, x.start_ns, x.dur_ns, d.name, d.task_uid FROM device_tasks d
                  JOIN x ON x.idx = d.op_idx
        UNION ALL SELECT x.pid, x.tid, x.start_ns, x.dur_ns, d.name, d.task_uid FROM device_tasks d
                  JOIN x ON x.idx = d.plane_idx)
    GROUP BY pid, tid, start_ns;
CREATE OR REPLACE TABLE bind_host AS
    SELECT pid, thread AS tid, start_ns, arg_min(op_id, (dur_ns, name, op_id)) AS key, min(dur_ns) AS dur_ns
    FROM host_ops WHERE category = 'op' GROUP BY pid, thread, start_ns;
CREATE OR REPLACE TABLE bind_api AS
    SELECT trace_pid AS pid, trace_tid AS tid, start_ns, arg_min(call_id, (dur_ns, -CASE level WHEN 'acl' THEN 0 WHEN 'model' THEN 1
                                     WHEN 'node' THEN 2 WHEN 'hccl' THEN 3 WHEN 'runtime' THEN 4 ELSE 5 END,
                                  name, call_id)) AS key,
           min(dur_ns) AS dur_ns
    FROM api_calls GROUP BY trace_pid, trace_tid, start_ns;
"""


def _bound(side: str, target: str) -> str:
    return f"""SELECT f.cat, f.id, b.key FROM (SELECT * FROM flow WHERE {side}) f
               ASOF JOIN {target} b ON f.pid = b.pid AND f.tid = b.tid AND f.ts_ns >= b.start_ns
               WHERE f.ts_ns <= b.start_ns + b.dur_ns"""


_ENDPOINTS = f"""
CREATE OR REPLACE TABLE flow_pairs AS
    WITH host_s AS ({_bound("ph = 's' AND cat = 'async_npu'", "bind_host")}),
         api_s AS ({_bound("ph = 's' AND cat = 'HostToDevice'", "bind_api")}),
         dev_f AS ({_bound("ph IN ('f', 't') AND cat IN ('async_npu', 'HostToDevice')", "bind_dev")})
    SELECT DISTINCT h.key AS host_op_id, CAST(NULL AS BIGINT) AS api_call_id, d.key AS task_uid,
           'torch_to_npu' AS link
    FROM host_s h JOIN dev_f d ON d.cat = h.cat AND d.id = h.id
    UNION ALL
    SELECT DISTINCT NULL, a.key, d.key, 'HostToDevice'
    FROM api_s a JOIN dev_f d ON d.cat = a.cat AND d.id = a.id
"""

_LAUNCHES = """
CREATE OR REPLACE TABLE launches AS
    WITH host_conn AS (
        SELECT DISTINCT p.host_op_id, d2.task_uid FROM flow_pairs p
        JOIN device_tasks d1 ON d1.task_uid = p.task_uid
        JOIN device_tasks d2 ON d2.connection_id = d1.connection_id
        WHERE p.link = 'torch_to_npu' AND d1.connection_id IS NOT NULL),
    api_conn AS (
        SELECT DISTINCT a.call_id AS api_call_id, d.task_uid FROM api_calls a
        JOIN device_tasks d ON d.connection_id = a.connection_id)
    SELECT * FROM flow_pairs
    UNION ALL
    SELECT h.host_op_id, NULL, h.task_uid, 'connection_id' FROM host_conn h
    WHERE NOT EXISTS (SELECT 1 FROM flow_pairs p WHERE p.link = 'torch_to_npu'
                      AND p.host_op_id = h.host_op_id AND p.task_uid = h.task_uid)
    UNION ALL
    SELECT NULL, a.api_call_id, a.task_uid, 'connection_id' FROM api_conn a
    WHERE NOT EXISTS (SELECT 1 FROM flow_pairs p WHERE p.link = 'HostToDevice'
                      AND p.api_call_id = a.api_call_id AND p.task_uid = a.task_uid)
    ORDER BY task_uid, link
"""
