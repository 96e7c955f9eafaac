"""Read the bare event array into DuckDB, columnar, in one parse.

Why DuckDB's array reader: it streams the file with bounded memory and never builds one
Python object per event.  Why one parse into ``raw`` (args as JSON) and then the host, runtime
and device tables taken out of it: parsing the file is the cost of a pass (about 13 s per GB
here); the host and device tables convert their args with ``json_transform`` to a STRUCT of just
the keys their category uses - the conversion ``read_json`` applies to a STRUCT column, so the
values are the same - and their rows land in their own Arrow tables that the output uses as is.
``raw`` is dropped once ``ev`` (the rest) is split off; DuckDB spills it to the import's temp
folder beyond its memory limit (measured at 1 GB: about 15% less CPU and 8% less peak RSS than
three filtered read passes).  Column choices:

* ``ts`` is ``DECIMAL(38,3)``: DuckDB converts the JSON number text itself, so
  ``1682725898236567.123`` keeps its last digits (float64 would not) and ``* 1000`` gives exact
  nanoseconds.  With ``baseTimeNanoseconds`` event times are relative to it (reference 5.3);
  adding the base keeps them exact (HTA's ``int(ts*1000)`` can be 1 ns off).
* ``dur`` is read as text and cast to ``DECIMAL(38,3)`` in SQL (the same values on every
  fixture: durations are far too short to lose digits in the reader's text), so that a ``dur``
  of ``Infinity`` or ``"abc"`` is told from an absent one and counted as damage.
* ``pid``/``tid`` and every args key are ``VARCHAR``: ints on real processes, strings on the
  pseudo processes (``"Spans"``), a key written as an int in one trace and a string in another.
  ``ignore_errors`` turns a value of an impossible shape into NULL instead of failing the load
  (syntax errors still fail; see :func:`..chrome_trace.salvage`).

Flow events (``s``/``t``/``f``) are not read: launches are linked by ``args.correlation`` and
``External id``, and many traces hold unmatched ``ac2g`` flows.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from .._common import sql_str
from ..chrome_trace import damage

DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "cuda_sync")
HOST_CATS = ("cpu_op", "user_annotation", "python_function")
API_CATS = ("cuda_runtime", "cuda_driver")

DEVICE_KEYS = (
    "device",
    "stream",
    "correlation",
    "External id",
    "bytes",
    "Collective name",
    "Process Group Name",
    "In msg nelems",
    "dtype",
    "est. achieved occupancy %",
    "warps per SM",
    "blocks per SM",
    "registers per thread",
    "shared memory",
    "grid",
    "block",
    "cuda_sync_kind",
    "context",
)
HOST_KEYS = (
    "Sequence number",
    "Fwd thread id",
    "External id",
    "Call stack",
    "Input Dims",
    "Input type",
    "Python id",
    "Python parent id",
    "Collective name",
    "Process Group Name",
    "In msg nelems",
    "dtype",
    "Module Hierarchy",
)

_BASE = (
    "ph: 'VARCHAR', cat: 'VARCHAR', name: 'VARCHAR', pid: 'VARCHAR', tid: 'VARCHAR', "
    "ts: 'DECIMAL(38,3)', dur: 'VARCHAR'"
)


def cats(values) -> str:
    """SQL list literal of category names."""
    return "(" + ", ".join(f"'{v}'" for v in values) + ")"


def _struct(keys) -> str:
    fields = ", ".join('"' + k.replace('"', '""') + '" VARCHAR' for k in keys)
    return f"STRUCT({fields})".replace("'", "''")


def source(events_path: Path, args_type: str) -> str:
    """The ``read_json`` call over the event array, with ``args`` read as ``args_type``."""
    cols = f"{{{_BASE}, args: '{args_type}'}}"
    return f"read_json({sql_str(events_path)}, format='array', ignore_errors=true, columns={cols})"


def times(base_ns: int) -> str:
    """The exact-time columns ``start_ns`` (epoch ns) and ``dur_ns``: NULL, never an error, for a
    value beyond int64 nanoseconds (``-1e30``), so one damaged event cannot fail the column."""
    return (
        f"CASE WHEN abs(ts) < 1e16 THEN TRY_CAST(ts * 1000 + {int(base_ns)} AS BIGINT) END AS start_ns, "
        "CASE WHEN abs(TRY_CAST(dur AS DECIMAL(38,3))) < 1e16 "
        "THEN TRY_CAST(round(TRY_CAST(dur AS DECIMAL(38,3)) * 1000) AS BIGINT) END AS dur_ns"
    )


#: the value a damaged event was dropped for, as the message shows it (an unparsable ``ts`` reads
#: as NULL here, like an absent one: ``ignore_errors``)
_SAMPLE = damage.sample_sql(ts="CAST(CAST(ts AS DOUBLE) AS VARCHAR)", missing="NULL")
#: the columns that make two events exact copies of each other
_SAME_EVENT = "ph, cat, name, pid, tid, start_ns, dur_ns, args"


def _pass(cats_: tuple, keys: tuple) -> str:
    """Rows of ``raw`` in the categories ``cats_``, args as a STRUCT of ``keys``
    (``json_transform`` is the conversion ``read_json`` itself applies to a STRUCT column)."""
    return (
        f"SELECT cat, name, pid, tid, start_ns, dur_ns, "
        f"json_transform(args, {sql_str(_struct_json(keys))}) AS a "
        f"FROM raw WHERE ph = 'X' AND cat IN {cats(cats_)}"
    )


def _struct_json(keys) -> str:
    return orjson.dumps({k: "VARCHAR" for k in keys}).decode()


def device_pass() -> str:
    return _pass(DEVICE_CATS, DEVICE_KEYS)


def host_pass() -> str:
    return _pass(HOST_CATS, HOST_KEYS)


def load_raw(con, events_path: Path, base_ns: int) -> None:
    """Table ``raw``: the one parse of the event array (flows left out), args as JSON.  Damaged
    events (:mod:`..chrome_trace.damage`) are counted in ``trace_loss`` and left out; exact
    copies of an event are kept once."""
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE raw AS
        SELECT ph, cat, name, pid, tid, start_ns, coalesce(dur_ns, 0) AS dur_ns, args, loss,
               CASE WHEN loss IS NOT NULL THEN {_SAMPLE} END AS sample
        FROM (SELECT *, {damage.loss_kind("start_ns", "TRY_CAST(dur AS DECIMAL(38,3))")} AS loss
              FROM (SELECT ph, cat, name, pid, tid, ts, dur, {times(base_ns)}, args
                    FROM {source(events_path, "JSON")}
                    WHERE coalesce(ph, '') NOT IN ('s', 't', 'f')))""")
    damage.create_losses(con)
    damage.count_losses(con, "SELECT loss, sample FROM raw")
    con.execute("DELETE FROM raw WHERE loss IS NOT NULL")
    con.execute("ALTER TABLE raw DROP COLUMN loss")
    con.execute("ALTER TABLE raw DROP COLUMN sample")
    copies = damage.remove_duplicates(con, "raw", _SAME_EVENT, "ph IN ('X', 'i', 'I')")
    if copies:
        con.execute(f"INSERT INTO trace_loss VALUES ('duplicate', {copies}, [])")


def load_rest(con) -> None:
    """Table ``ev``: every event of ``raw`` the host, runtime and device passes do not take
    (metadata, instants, counters, other slices) with its args as JSON; ``meta`` and the name
    maps built from it.  ``raw`` is dropped."""
    taken = cats(DEVICE_CATS + HOST_CATS + API_CATS)
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE ev AS
        SELECT * FROM raw WHERE NOT (ph = 'X' AND coalesce(cat, '') IN {taken})""")
    con.execute("DROP TABLE raw")
    con.execute("CREATE OR REPLACE TEMP TABLE meta AS SELECT name, pid, tid, args FROM ev WHERE ph = 'M'")
    con.execute("""
        CREATE OR REPLACE TEMP TABLE pnames AS
        SELECT pid, coalesce(
                 max(json_extract_string(args, '$.labels'))
                   FILTER (name = 'process_labels'
                           AND starts_with(json_extract_string(args, '$.labels'), 'GPU')),
                 max(json_extract_string(args, '$.name')) FILTER (name = 'process_name')) AS process
        FROM meta WHERE name IN ('process_name', 'process_labels') GROUP BY pid""")
    con.execute("""
        CREATE OR REPLACE TEMP TABLE tnames AS
        SELECT pid, tid, max(json_extract_string(args, '$.name')) AS thread
        FROM meta WHERE name = 'thread_name' GROUP BY pid, tid""")
