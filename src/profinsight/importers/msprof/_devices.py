"""Which device each process of an msprof timeline belongs to, and keeping one device's events.

A timeline can hold the events of several devices: current CANN's one ``msprof_*.json`` of the
output folder always does where several devices were profiled, and a device folder's own
``timeline/`` may.  A device process (``process_labels`` ``NPU...``) says its device in one of two
ways (reference 2.13):

1. its label, ``NPU <id>`` (newer CANN);
2. its ``pid``, ``os_pid << 10 | sort_index << 5 | device`` -- but only where the file encodes pids
   that way.  Older timelines do not (the real 2023 collection: ``Ascend Hardware`` is pid 3, the
   HCCL process 1003611, i.e. ``os_pid * 100 + sort_index``), and their low bits are no device.
   A file's pids are taken as encoded when every device process of it shares one non-zero
   ``pid >> 10`` (the profiled program's own pid): older pids never do (3 >> 10 is 0).

A device process neither way attributes has no known device.  Where several devices share the
file it cannot be split: it is kept whole by one rank (the lowest device's, so nothing is counted
twice) and a warning says so; in a device folder's own timeline it is that folder's.  A device
folder's timeline is split only where it names more than one device (its device may number
itself differently from its folder, e.g. under ``ASCEND_RT_VISIBLE_DEVICES``).
"""

from __future__ import annotations

from ... import diagnostics as dg

#: the device bits of an encoded pid; host processes carry 31 there
DEVICE_BITS = 31


def attribute(con) -> None:
    """Table ``npu_procs`` (file_no, pid, device or null) of every device process of ``ms_meta``."""
    con.execute(f"""CREATE OR REPLACE TABLE npu_procs AS
        WITH npu AS (
            SELECT file_no, pid, any_value(value) AS label, TRY_CAST(pid AS BIGINT) AS p FROM ms_meta
            WHERE name = 'process_labels' AND upper(trim(value)) LIKE 'NPU%' GROUP BY file_no, pid),
        enc AS (
            SELECT file_no, count(DISTINCT p >> 10) = 1 AND min(p >> 10) > 0 AS encoded FROM npu GROUP BY file_no)
        SELECT file_no, pid,
               coalesce(TRY_CAST(nullif(regexp_extract(label, '^\\s*NPU\\s*:?\\s*(\\d+)\\s*$', 1), '') AS BIGINT),
                        CASE WHEN encoded THEN p & {DEVICE_BITS} END) AS device
        FROM npu JOIN enc USING (file_no)""")


def keep_device(con, device: int, keep_host: bool, shared: bool, lowest: bool, where, rank) -> list:
    """Drop from ``ms_x`` / ``ms_iter`` the events of other devices' processes; host processes
    only where ``keep_host``.  ``shared``: several devices' events share the files (a process of
    no known device then goes to the ``lowest`` device's rank); otherwise such a process is this
    device's own.  Returns the diagnostics."""
    attribute(con)
    unknown, known = con.sql("SELECT count(*) - count(device), count(DISTINCT device) FROM npu_procs").fetchall()[0]
    if not shared and known <= 1:
        return []  # a device folder's timeline of one device (whatever number it gives itself): all its own
    mine = f"device = {int(device)}"
    if unknown and (not shared or lowest):
        mine += " OR device IS NULL"
    for table in ("ms_x", "ms_iter"):
        con.execute(f"""DELETE FROM {table} WHERE EXISTS (SELECT 1 FROM npu_procs n
            WHERE n.file_no = {table}.file_no AND n.pid = {table}.pid AND NOT coalesce({mine}, false))""")
    if not keep_host:
        con.execute("""DELETE FROM ms_x WHERE NOT EXISTS (SELECT 1 FROM npu_procs n
            WHERE n.file_no = ms_x.file_no AND n.pid = ms_x.pid)""")
    if not (unknown and shared):
        return []
    whose = (
        "this rank keeps them whole" if lowest else f"they are kept whole by the lowest device's rank, not rank {rank}"
    )
    return [
        dg.warning(
            "msprof-device-unknown",
            f"{unknown} device process(es) of the timeline name no device (no 'NPU <id>' label, and the file's pids do "
            f"not encode one): the events of the devices sharing this timeline cannot be told apart, so {whose}",
            file=where,
            fix="export with a current CANN (its timeline names each process's device), or export each device's "
            "collection on its own",
            rank=rank,
        )
    ]
