"""Read the bare event array into DuckDB, columnar, in one parse.

Why DuckDB's array reader: it streams the file with bounded memory and never builds one
Python object per event.  Why one parse into ``raw`` (args as JSON) and then the host, runtime
and device tables taken out of it: parsing the file is the cost of a pass (about 13 s per GB
here); the host and device tables convert their args with ``json_transform`` to a STRUCT of just
the keys their category uses - the conversion ``read_json`` applies to a STRUCT column, so the
values are the same - and their rows land in their own Arrow tables that the output uses as is.
``raw`` is dropped once ``ev`` (the rest) is split off; DuckDB spills it to the import's temp
folder beyond its memory limit (measured at 1 GB: about 15% less CPU and 8% less peak RSS than
three filtered read passes).  The array is read in pieces cut at event boundaries, several at a
time, one per DuckDB thread, by the reader ``trace_view.json`` uses
(:func:`..chrome_trace.read_trace_json`); the one ``INSERT`` per batch is the parse.  Column choices:

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

Old traces (PyTorch 1.8-1.13, every TensorBoard-plugin sample) spell the categories differently:
``Operator`` for ``cpu_op``, ``Runtime`` for ``cuda_runtime``, ``Kernel``, ``Memcpy``, ``Memset``
capitalised, and their args too: ``Input dims`` (not ``Input Dims``) on ops, ``external id`` (lower
case) on kernels, copies and runtime calls.  ``raw`` carries every category in today's spelling
(:data:`CAT_ALIASES`, compared case-insensitively, so later passes know one set of names); the
old arg keys are read beside the new ones (:data:`LEGACY_KEYS`) and the first present wins.
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson

from .._common import sql_str
from ..chrome_trace import KINETO_COLUMNS, TraceRead, damage, read_trace_json

#: old (PyTorch 1.8-1.13) category names -> today's, compared lower case; today's names in any case
#: are folded to lower case, every other category is kept as written (``Trace``, ``async``)
CAT_ALIASES = {
    "operator": "cpu_op",
    "runtime": "cuda_runtime",
    "driver": "cuda_driver",
    "memcpy": "gpu_memcpy",
    "memset": "gpu_memset",
    "python": "python_function",
    "user annotation": "user_annotation",
    "gpu user annotation": "gpu_user_annotation",
}
#: today's arg key -> its old spelling (json_transform matches keys exactly, and a STRUCT cannot
#: hold two keys that differ only in case, so the old one is read with a second transform)
LEGACY_KEYS = {"External id": "external id", "Input Dims": "Input dims"}

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


def _today() -> tuple:
    return DEVICE_CATS + HOST_CATS + API_CATS + ("gpu_user_annotation", "cuda_profiler_range")


def _old_spelling() -> str:
    """SQL condition: ``cat`` is a Kineto category in an old spelling (see :data:`CAT_ALIASES`)."""
    return (
        f"cat IS NOT NULL AND cat NOT IN {cats(_today())} "
        f"AND (lower(cat) IN {cats(_today())} OR lower(cat) IN {cats(CAT_ALIASES)})"
    )


def _canonical_cat() -> str:
    """SQL expression: an old-spelled ``cat`` in today's spelling."""
    old = " ".join(f"WHEN '{k}' THEN '{v}'" for k, v in CAT_ALIASES.items())
    return f"CASE lower(cat) {old} ELSE lower(cat) END"


def cats(values) -> str:
    """SQL list literal of category names."""
    return "(" + ", ".join(f"'{v}'" for v in values) + ")"


def _struct(keys) -> str:
    fields = ", ".join('"' + k.replace('"', '""') + '" VARCHAR' for k in keys)
    return f"STRUCT({fields})".replace("'", "''")


#: a bound every real ``ts`` lies within, as an exact DECIMAL: comparing ``ts`` with it costs a
#: 128-bit compare, where ``abs(ts) < 1e16`` converts every ``ts`` to DOUBLE (measured: 0.12 s CPU
#: of the 0.75 s parse of a 100 MB trace)
_TS_SAFE = "CAST(9000000000000000 AS DECIMAL(38,3))"


#: half the width (us, 10 days) of the window around a trace's first ``ts`` in which times are
#: converted in 64-bit decimals: an offset of at most 9e11 us is 9e17 ns, and a product in
#: DECIMAL(18,3) may not reach 1e18 (DuckDB raises, not NULL, beyond it)
NEAR_US = 9 * 10**11
#: the 64-bit reading of ``dur`` (NULL where it does not fit 18 digits: the 128-bit path reads it)
_DUR18 = "TRY_CAST(dur AS DECIMAL(18,3))"


def _dec(value: int) -> str:
    return f"CAST('{int(value)}' AS DECIMAL(38,3))"


def times(base_ns: int, near_us: int | None = None) -> str:
    """The exact-time columns ``start_ns`` (epoch ns) and ``dur_ns``: NULL, never an error, for a
    value beyond int64 nanoseconds (``-1e30``), so one damaged event cannot fail the column.  A
    ``ts`` within +-9e15 passes ``abs(ts) < 1e16`` for certain, so only the others are tested
    that way: the same values, the DOUBLE comparison left to the rare outlier.

    Why the first branches: turning a 128-bit DECIMAL into BIGINT divides a 128-bit integer, the
    most expensive step of the parse (60 ms of ts and 45 ms of dur per 274 k events).  A ``ts``
    within :data:`NEAR_US` of ``near_us`` (the trace's first time, :func:`first_ts_us`) is taken
    as its offset from there in a 64-bit DECIMAL, and a ``dur`` that fits 18 digits the same way
    (4 and 10 ms): the same exact values, since every step is exact and cannot overflow inside
    the window, and a CASE computes a branch only for the rows it selects.  Other values take the
    128-bit path, so ``near_us`` decides only how fast a time converts, never what it becomes."""
    base_ns = int(base_ns)
    start = f"TRY_CAST(ts * 1000 + {base_ns} AS BIGINT)"
    near = ""
    if near_us is not None and abs(near_us) <= 9 * 10**15 - NEAR_US and abs(near_us * 1000 + base_ns) <= 4 * 10**18:
        # |offset| <= 9e14 ns and |constant| <= 4e18: the sum stays within int64
        near = (
            f"WHEN ts BETWEEN {_dec(near_us - NEAR_US)} AND {_dec(near_us + NEAR_US)} "
            f"THEN CAST(CAST(ts - {_dec(near_us)} AS DECIMAL(18,3)) * 1000 AS BIGINT) + {near_us * 1000 + base_ns} "
        )
    return (
        f"CASE {near}WHEN ts BETWEEN -{_TS_SAFE} AND {_TS_SAFE} THEN {start} "
        f"WHEN abs(ts) < 1e16 THEN {start} END AS start_ns, "
        f"CASE WHEN {_DUR18} BETWEEN -{NEAR_US} AND {NEAR_US} THEN CAST({_DUR18} * 1000 AS BIGINT) "
        "WHEN abs(TRY_CAST(dur AS DECIMAL(38,3))) < 1e16 "
        "THEN TRY_CAST(round(TRY_CAST(dur AS DECIMAL(38,3)) * 1000) AS BIGINT) END AS dur_ns"
    )


#: the first ``"ts": <integer part>`` of an event array (any event's; only a hint for :func:`times`)
_FIRST_TS = re.compile(rb'"ts"\s*:\s*(-?\d{1,16})(?!\d)')


def first_ts_us(path: Path, start: int = 0, window: int = 1 << 16) -> int | None:
    """The integer part of the first ``ts`` within ``window`` bytes of ``path`` from ``start``
    (where the event array begins), or None: the centre of :func:`times`' 64-bit window."""
    try:
        with open(path, "rb") as f:
            f.seek(start)
            head = f.read(window)
    except OSError:
        return None
    m = _FIRST_TS.search(head)
    return int(m.group(1)) if m else None


#: the value a damaged event was dropped for, as the message shows it (an unparsable ``ts`` reads
#: as NULL here, like an absent one: ``ignore_errors``)
_SAMPLE = damage.sample_sql(ts="CAST(CAST(ts AS DOUBLE) AS VARCHAR)", missing="NULL")
#: the columns that make two events exact copies of each other
_SAME_EVENT = "ph, cat, name, pid, tid, start_ns, dur_ns, args"
#: the narrow part of it: events that differ here are no copies
_EVENT_KEY = "ph, name, pid, tid, start_ns, dur_ns"


def _pass(cats_: tuple, keys: tuple, legacy: bool, rid: bool = False) -> str:
    """Rows of ``raw`` in the categories ``cats_``, args as a STRUCT of ``keys``
    (``json_transform`` is the conversion ``read_json`` itself applies to a STRUCT column); in an
    old trace a key's old spelling fills it where today's is absent.  ``rid``: a first column
    ``rid``, the row's place in the file (for a caller that joins, then restores file order)."""
    r = "rowid AS rid, " if rid else ""
    r_out = "rid, " if rid else ""
    a = f"json_transform(args, {sql_str(_struct_json(keys))})"
    old = {k: LEGACY_KEYS[k] for k in keys if k in LEGACY_KEYS} if legacy else {}
    if old:
        fields = ", ".join(
            f"{_q(k)} := coalesce(a.{_q(k)}, b.{_q(old[k])})" if k in old else f"{_q(k)} := a.{_q(k)}" for k in keys
        )
        return (
            f"SELECT {r_out}cat, name, pid, tid, start_ns, dur_ns, struct_pack({fields}) AS a FROM ("
            f"SELECT {r}cat, name, pid, tid, start_ns, dur_ns, {a} AS a, "
            f"json_transform(args, {sql_str(_struct_json(old.values()))}) AS b "
            f"FROM raw WHERE ph = 'X' AND cat IN {cats(cats_)})"
        )
    return f"SELECT {r}cat, name, pid, tid, start_ns, dur_ns, {a} AS a FROM raw WHERE ph = 'X' AND cat IN {cats(cats_)}"


def _q(key: str) -> str:
    return '"' + key.replace('"', '""') + '"'


def _struct_json(keys) -> str:
    return orjson.dumps({k: "VARCHAR" for k in keys}).decode()


def device_pass(legacy: bool = False) -> str:
    return _pass(DEVICE_CATS, DEVICE_KEYS, legacy, rid=True)


def host_pass(legacy: bool = False) -> str:
    return _pass(HOST_CATS, HOST_KEYS, legacy)


#: the columns of the event array as :func:`load_raw` reads them (see the module docstring)
COLUMNS = KINETO_COLUMNS  # defined beside the reader, see chrome_trace.KINETO_COLUMNS
_RAW_COLS = (
    "ph VARCHAR, cat VARCHAR, name VARCHAR, pid VARCHAR, tid VARCHAR, start_ns BIGINT, dur_ns BIGINT, "
    "args VARCHAR, loss VARCHAR, sample VARCHAR"
)


class Malformed(Exception):
    """A piece of the event array is not valid JSON (the caller salvages what parses)."""


def _take(base_ns: int, near_us: int | None = None):
    """The one statement per batch of pieces: parse, convert the times (:func:`times`), classify
    damage."""

    def take(con, src: str) -> int:
        return con.execute(f"""
            INSERT INTO raw
            SELECT ph, cat, name, pid, tid, start_ns, coalesce(dur_ns, 0) AS dur_ns, args, loss,
                   CASE WHEN loss IS NOT NULL THEN {_SAMPLE} END AS sample
            FROM (SELECT *, {damage.loss_kind("start_ns", "TRY_CAST(dur AS DECIMAL(38,3))")} AS loss
                  FROM (SELECT ph, cat, name, pid, tid, ts, dur, {times(base_ns, near_us)}, args
                        FROM {src}
                        WHERE coalesce(ph, '') NOT IN ('s', 't', 'f')))""").fetchall()[0][0]

    return take


def load_raw(
    con, events_path: Path, base_ns: int, span: tuple[int, int] | None = None, resync: bool = True
) -> tuple[bool, TraceRead]:
    """Table ``raw``: the one parse of the event array (flows left out), args as JSON, every
    category in today's spelling.  The array is read in pieces cut at event boundaries, several
    at a time, one per DuckDB thread (:func:`..chrome_trace.read_trace_json`).  Damaged events
    (:mod:`..chrome_trace.damage`) are counted in ``trace_loss`` and left out; exact copies of an
    event are kept once.  Returns whether the trace spelled its categories the old way (one scan
    of the ``cat`` column; only then are the rows rewritten and the old arg keys read), and the
    read itself (``resync``: broken events in the middle were skipped, and it counts them).
    Raises :class:`Malformed` when part of the array is not valid JSON and the read could not
    go on after it.  ``span``: the array is that byte range of ``events_path`` (the trace
    itself, read in place)."""
    # a table of the database, not a TEMP one: the passes read it from cursors of their own
    con.execute(f"CREATE OR REPLACE TABLE raw ({_RAW_COLS})")
    near = first_ts_us(events_path, span[0] if span else 0)
    got = read_trace_json(
        con,
        events_path,
        "kineto",
        take=_take(base_ns, near),
        columns=COLUMNS,
        ignore_errors=True,
        span=span,
        resync=resync,
    )
    if got.truncated:
        raise Malformed(got.error or "the event list is not valid JSON")
    damage.create_losses(con)
    damage.count_losses(con, "SELECT loss, sample FROM raw")
    con.execute("DELETE FROM raw WHERE loss IS NOT NULL")
    con.execute("ALTER TABLE raw DROP COLUMN loss")
    con.execute("ALTER TABLE raw DROP COLUMN sample")
    copies = damage.remove_duplicates(con, "raw", _SAME_EVENT, "ph IN ('X', 'i', 'I')", key=_EVENT_KEY)
    if copies:
        con.execute(f"INSERT INTO trace_loss VALUES ('duplicate', {copies}, [])")
    legacy = con.execute(f"SELECT count(*) FROM (SELECT 1 FROM raw WHERE {_old_spelling()} LIMIT 1)").fetchall()[0][0]
    if legacy:
        con.execute(f"UPDATE raw SET cat = {_canonical_cat()} WHERE {_old_spelling()}")
    return bool(legacy), got


def load_rest(con) -> None:
    """Table ``ev``: every event of ``raw`` the host, runtime and device passes do not take
    (metadata, instants, counters, other slices) with its args as JSON; ``meta`` and the name
    maps built from it.  ``raw`` is dropped.  Tables of the database, not TEMP ones: the import
    reads them from a cursor of its own beside the launch links (``kineto._beside_links``)."""
    taken = cats(DEVICE_CATS + HOST_CATS + API_CATS)
    con.execute(f"""
        CREATE OR REPLACE TABLE ev AS
        SELECT * FROM raw WHERE NOT (ph = 'X' AND coalesce(cat, '') IN {taken})""")
    con.execute("DROP TABLE raw")
    con.execute("CREATE OR REPLACE TABLE meta AS SELECT name, pid, tid, args FROM ev WHERE ph = 'M'")
    con.execute("""
        CREATE OR REPLACE TABLE pnames AS
        SELECT pid, coalesce(
                 max(json_extract_string(args, '$.labels'))
                   FILTER (name = 'process_labels'
                           AND starts_with(json_extract_string(args, '$.labels'), 'GPU')),
                 max(json_extract_string(args, '$.name')) FILTER (name = 'process_name')) AS process
        FROM meta WHERE name IN ('process_name', 'process_labels') GROUP BY pid""")
    con.execute("""
        CREATE OR REPLACE TABLE tnames AS
        SELECT pid, tid, max(json_extract_string(args, '$.name')) AS thread
        FROM meta WHERE name = 'thread_name' GROUP BY pid, tid""")
