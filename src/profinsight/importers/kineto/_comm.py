"""Collectives from NCCL/RCCL kernels, and the canonical ``device_tasks`` as a column selection
of the device pass table.

Why the host op is consulted for collectives: old traces name the kernel only
(``ncclKernel_SendRecv_...``, which serves all_to_all as well as send/recv), newer ones put
``Collective name``, ``In msg nelems``, ``dtype`` and ``Process Group Name`` on the kernel;
either way the host side (``record_param_comms`` cpu_op or the ``nccl:all_to_all`` annotation
that launched the kernel) often knows the collective better.  Priority: kernel args, launching
host op args, the annotation's name, the kernel name.  Bytes = element count x dtype size
(reference 5.6).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ._tables import DEVICE_TASK_COLS


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

_DEVICE_COLS = ["task_uid", *DEVICE_TASK_COLS]


def device_tasks(con, dev: pa.Table) -> pa.Table:
    """``dev`` without its helper columns (the other columns share its buffers), collectives
    completed from ``comm``, and ``launch_ns`` (start of the launching call).  ``task_uid`` is
    the row index of ``dev``, so both are scattered by position, without a sort or a join."""
    out = dev.select(_DEVICE_COLS)
    n = dev.num_rows
    comm = con.sql("""SELECT task_uid, type, "group", count * dtype_bytes(data_type) AS bytes
                      FROM comm ORDER BY task_uid""").to_arrow_table()
    if comm.num_rows:
        mask = np.zeros(n, bool)
        mask[comm["task_uid"].to_numpy()] = True
        for col in ("type", "group", "bytes"):
            i = out.schema.get_field_index(col)
            merged = pc.replace_with_mask(
                out[col].combine_chunks(), pa.array(mask), comm[col].combine_chunks().cast(out.schema.field(col).type)
            )
            out = out.set_column(i, col, merged)
    launch = con.sql("SELECT task_uid, launch_ns FROM task_launch").to_arrow_table()
    values, valid = np.zeros(n, np.int64), np.zeros(n, bool)
    pos = launch["task_uid"].to_numpy()
    values[pos] = launch["launch_ns"].to_numpy()
    valid[pos] = True
    return out.append_column("launch_ns", pa.array(values, pa.int64(), mask=~valid))
