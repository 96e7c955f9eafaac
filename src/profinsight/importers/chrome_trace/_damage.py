"""Damaged events of a Chrome trace: each costs that event only, and every loss is counted.

A trace copied or edited after it was written can hold events that no table can take: a
timestamp that is not a number or lies beyond int64 nanoseconds (``"abc"``, ``Infinity``,
``-1e30``, ``1e308``), no ``pid``, a phase (``ph``) the format does not know, a negative or
non-finite duration.  Such an event is dropped; nothing is clamped, so no table ever holds a
negative duration or an invented time.  Exact copies of an event are kept once.

Both Chrome-trace importers classify their events with :func:`loss_kind` in the SQL that
already reads them (one extra CASE per event, no Python per event), add up the losses with
:func:`count_losses` (piece by piece where the trace is read in pieces), and turn the totals
into one diagnostic per kind of loss with :func:`describe_losses`.
"""

from __future__ import annotations

from dataclasses import dataclass

#: every phase of the Trace Event Format
PHASES = ("B", "E", "X", "i", "I", "C", "M", "s", "t", "f", "b", "e", "n", "S", "T", "p", "F")
PHASES += ("N", "O", "D", "P", "R", "(", ")", "c", "V", "v")
#: phases that are placed on a timeline: they need a process and a time
TIMED = ("X", "i", "I", "C", "B", "E", "s", "t", "f", "b", "e", "n")
#: the codes of the diagnostics this module writes
DROPPED = "events-dropped"
DUPLICATED = "events-duplicated"

FIX = "The trace was damaged after it was written: export or copy it again for complete data."


def _sql_list(values) -> str:
    return "(" + ", ".join("'" + v.replace("'", "''") + "'" for v in values) + ")"


#: the longest duration taken as real, in microseconds: its nanoseconds still fit in int64
MAX_DUR_US = 9e15


def loss_kind(start_ns: str, dur_us: str, ph: str = "ph", pid: str = "pid", dur: str = "dur") -> str:
    """SQL: why the event cannot be kept -- ``'phase'``, ``'pid'``, ``'ts'``, ``'dur'`` (the
    first that applies) -- or NULL when it is fine.  ``start_ns`` is the importer's converted
    time (NULL where the text did not convert), ``dur_us`` the duration as a number (NULL where
    ``dur`` is not one); each is referenced once, because a macro written twice in one
    expression is computed twice.  A slice without a ``dur`` at all is kept (zero-length, as
    before); a negative, non-finite or unreadable one is not."""
    timed = f"{ph} IN {_sql_list(TIMED)}"
    return f"""(CASE WHEN {ph} IS NULL OR {ph} NOT IN {_sql_list(PHASES)} THEN 'phase'
                    WHEN {timed} AND {pid} IS NULL THEN 'pid'
                    WHEN {timed} AND {start_ns} IS NULL THEN 'ts'
                    WHEN {ph} = 'X' AND {dur} IS NOT NULL
                         AND NOT coalesce({dur_us} BETWEEN 0 AND {MAX_DUR_US:.0f}, false) THEN 'dur'
               END)"""


def create_losses(con, table: str = "trace_loss") -> None:
    """The empty table :func:`count_losses` adds to: (kind, events, up to three example values)."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE {table} (kind VARCHAR, n BIGINT, samples VARCHAR[])")


def count_losses(con, relation: str, table: str = "trace_loss") -> None:
    """Add the losses of ``relation`` (a query or view with columns ``loss`` -- :func:`loss_kind`
    -- and ``sample``, the offending text or NULL) to ``table``."""
    con.execute(f"""INSERT INTO {table}
        SELECT loss, count(*), list(DISTINCT sample ORDER BY sample) FILTER (sample IS NOT NULL)[1:3]
        FROM ({relation}) WHERE loss IS NOT NULL GROUP BY loss""")


def sample_sql(ts: str = "ts", dur: str = "dur", ph: str = "ph", missing: str = "'missing'") -> str:
    """SQL: the value an event lost for, as it read (``'abc'``, ``Infinity``), for the message;
    ``missing`` stands for an absent ``ts`` (NULL where the reader cannot tell absent from bad)."""
    return f"""(CASE loss WHEN 'ts' THEN coalesce(CAST({ts} AS VARCHAR), {missing})
                         WHEN 'dur' THEN CAST({dur} AS VARCHAR)
                         WHEN 'phase' THEN coalesce({ph}, 'missing') END)"""


@dataclass(frozen=True)
class Loss:
    """Events lost for one reason (``kind`` as :func:`loss_kind` names it, or ``'duplicate'``)."""

    kind: str
    events: int
    samples: tuple[str, ...] = ()


def losses(con, table: str = "trace_loss") -> list[Loss]:
    """The totals of ``table``, one per kind, in a fixed order."""
    rows = con.execute(f"""SELECT kind, sum(n), flatten(list(samples)) FROM {table}
                           GROUP BY kind ORDER BY kind""").fetchall()
    out = []
    for kind, n, samples in rows:
        seen = sorted({s for s in samples or () if s is not None})[:3]
        out.append(Loss(kind, int(n), tuple(seen)))
    return out


_WHAT = {
    "ts": ("had no usable timestamp", "ts"),
    "dur": ("had a negative or unusable duration", "dur"),
    "pid": ("had no pid (process id)", None),
    "phase": ("had an unknown or missing phase", "ph"),
}


def describe_losses(found: list[Loss], name: str) -> list[tuple[str, str]]:
    """(code, message) of one diagnostic per kind of loss in ``found``, naming the file ``name``."""
    out = []
    for loss in found:
        if loss.kind == "duplicate":
            out.append(
                (
                    DUPLICATED,
                    f"{loss.events} event(s) of {name} were exact copies of an earlier event (same phase, "
                    "process, thread, time, duration, name and args): each is counted once.",
                )
            )
            continue
        what, key = _WHAT[loss.kind]
        shown = ", ".join(_show(s) for s in loss.samples)
        values = f" ({key} = {shown})" if key and shown else ""
        out.append((DROPPED, f"{loss.events} event(s) of {name} {what}{values}: dropped."))
    return out


def _show(value: str) -> str:
    """A sample as the message shows it: numbers and words as they read, other text quoted."""
    if value in ("missing", "Infinity", "-Infinity", "NaN"):
        return value
    try:
        float(value)
    except ValueError:
        return repr(value[:40])
    return value


def remove_duplicates(con, table: str, columns: str, where: str = "TRUE", key: str | None = None) -> int:
    """Delete from ``table`` the rows matching ``where`` that repeat an earlier row (file order:
    ``rowid``) on every one of ``columns`` (a comma list); how many went.  A count of distinct
    64-bit hashes finds out cheaply whether there are any; only then are they found exactly.
    ``key`` as in :func:`duplicate_rows`."""
    for cols in ([key] if key else []) + [columns]:
        n = con.execute(f"SELECT count(*) - count(DISTINCT hash({cols})) FROM {table} WHERE {where}").fetchall()[0][0]
        if not n:
            return 0
    gone = con.execute(f"""DELETE FROM {table} WHERE rowid IN (
        SELECT rid FROM (SELECT rowid AS rid, row_number() OVER (PARTITION BY {columns} ORDER BY rowid) AS k
                         FROM {table} WHERE {where}) WHERE k > 1)""").fetchall()
    return int(gone[0][0]) if gone else 0


def duplicate_rows(con, table: str, columns: str, where: str, into: str, key: str | None = None) -> int:
    """How many rows of ``table`` matching ``where`` repeat an earlier row (file order:
    ``rowid``) on every one of ``columns``; when there are any, their rowids (``rid``) are put in
    table ``into``, for a reader to leave out.  Nothing is deleted, so every rowid keeps meaning
    the event's position in the file.  A count of distinct 64-bit hashes finds out cheaply whether
    there are any; only then are they found exactly.  ``key``: a few narrow ones of ``columns``
    (time, name, thread): rows that differ there cannot be copies, so when no two rows share
    them the wide columns (call stacks, args) are never hashed."""
    for cols in ([key] if key else []) + [columns]:
        n = con.execute(f"SELECT count(*) - count(DISTINCT hash({cols})) FROM {table} WHERE {where}").fetchall()[0][0]
        if not n:
            return 0
    con.execute(f"""CREATE OR REPLACE TABLE {into} AS
        SELECT rid FROM (SELECT rowid AS rid, row_number() OVER (PARTITION BY {columns} ORDER BY rowid) AS k
                         FROM {table} WHERE {where}) WHERE k > 1""")
    return con.execute(f"SELECT count(*) FROM {into}").fetchall()[0][0]


__all__ = [
    "DROPPED",
    "DUPLICATED",
    "FIX",
    "PHASES",
    "TIMED",
    "Loss",
    "count_losses",
    "create_losses",
    "describe_losses",
    "duplicate_rows",
    "loss_kind",
    "losses",
    "remove_duplicates",
    "sample_sql",
]
