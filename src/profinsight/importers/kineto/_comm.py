"""Collectives from NCCL/RCCL kernels, and the final ``device_tasks`` projection.

Why the host op is consulted: old traces name the kernel only (``ncclKernel_SendRecv_...``,
which serves all_to_all as well as send/recv), newer ones put ``Collective name``,
``In msg nelems``, ``dtype`` and ``Process Group Name`` on the kernel; either way the host side
(``record_param_comms`` cpu_op or the ``nccl:all_to_all`` annotation that launched the kernel)
often knows the collective better.  Priority: kernel args, launching host op args, the
annotation's name, the kernel name.  Bytes = element count x dtype size (reference 5.6).
"""
from __future__ import annotations


def create_comm(con) -> None:
    con.execute("""
    CREATE OR REPLACE TEMP TABLE comm AS
    SELECT d.task_uid, d.device, d.name, d.start_ns, d.dur_ns,
      coalesce(comm_type(d.coll_name), comm_type(h.coll_name),
               comm_type(regexp_extract(h.name, '^(?:nccl|rccl|gloo|c10d):+(\\w+)', 1)),
               d.type) AS type,
      coalesce(d."group", h.coll_group) AS "group",
      coalesce(d.coll_count, h.coll_count) AS count,
      coalesce(d.coll_dtype, h.coll_dtype) AS data_type
    FROM dev d LEFT JOIN host_link l ON l.task_uid = d.task_uid
               LEFT JOIN host h ON h.op_id = l.op_id
    WHERE d.kind = 'communication'""")


COMM_OPS = """
    SELECT task_uid, device, name, type, comm_category(type) AS category, "group", start_ns, dur_ns,
           count * dtype_bytes(data_type) AS bytes, data_type, count
    FROM comm ORDER BY start_ns, task_uid"""

DEVICE_TASKS = """
    SELECT d.task_uid, d.device, d.stream, d.kind, d.name, coalesce(c.type, d.type) AS type,
      d.core, d.start_ns, d.dur_ns, d.connection_id, d.comm_op,
      coalesce(c."group", d."group") AS "group",
      coalesce(c.count * dtype_bytes(c.data_type), d.bytes) AS bytes,
      t.launch_ns, d.external_id, d.context, d.grid, d.block, d.registers_per_thread,
      d.shared_memory_bytes, d.pmu_est_occupancy_ratio, d.pmu_warps_per_sm, d.pmu_blocks_per_sm
    FROM dev d LEFT JOIN comm c ON c.task_uid = d.task_uid
               LEFT JOIN task_launch t ON t.task_uid = d.task_uid
    ORDER BY d.start_ns, d.task_uid"""

HOST_OPS = """
    SELECT op_id, pid, thread, category, name, start_ns, dur_ns, sequence, fwd_thread,
           input_shapes, input_dtypes, call_stack, external_id, python_id, python_parent_id,
           module_hierarchy
    FROM host ORDER BY start_ns, op_id"""
