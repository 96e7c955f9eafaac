"""Damaged values of a CANN SQLite export: each costs that value (or its row), never the table or
the rank, and every loss is counted in one diagnostic naming the table and the column.

A DB edited or copied after it was written can hold what the importers cannot take: text or a
fraction in an ``INTEGER`` column (SQLite stores whatever it is given), NaN (stored as NULL), a
time beyond any plausible clock (``TASK.endNs = 2^63-1``), an end before its start, a column
missing from a table (``no such column`` stops any query naming it).  Everything the importers
read goes through :func:`sanitise` first, once per DB:

* one aggregate query per table counts the bad values of every column (by the column's declared
  affinity: an ``INTEGER`` column must hold integers, a ``NUMERIC``/``REAL`` one finite numbers, a
  time column -- ``*Ns``, ``timestamp``, ``*Time`` -- an integer in ``[0, 2^62]`` ns, as number or
  digits);
* where a table has damage or lacks a column the importers name, a ``TEMP VIEW`` of the same name
  shadows it (unqualified names resolve to ``temp`` first): the bad values read as NULL, a
  missing column reads as NULL, and rows that cannot be placed in time (no usable start, end or
  timestamp; an end before the start) are left out.  An undamaged table is read as it is, at no
  cost; nothing is written to the DB (temp objects live in the connection's own temp store).

:func:`diagnostics` turns the findings into one diagnostic per (table, column, problem) with the
count, the first rowid, up to three of the values as they read, and the fix.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from ... import diagnostics as dg

#: the latest time taken as real (ns since 1970: about the year 2116); INT64_MAX is damage
MAX_TIME_NS = 1 << 62
#: diagnostic codes
BAD_VALUES = "db-bad-values"
ROWS_DROPPED = "db-rows-dropped"
COLUMN_MISSING = "db-column-missing"
NAMES_MISSING = "db-names-missing"
STEP_FAILED = "db-table-unreadable"

FIX = (
    "The DB was changed or damaged after the profiler wrote it: export the profile again "
    "(torch_npu: torch_npu.profiler.profiler.analyse on the rank folder; msprof: msprof --export=on) "
    "for complete data."
)

#: the columns the importers name, per table: one a DB lacks reads as NULL and is said
EXPECTED: dict[str, tuple[str, ...]] = {
    "TASK": ("startNs", "endNs", "deviceId", "connectionId", "globalTaskId", "taskType", "streamId", "taskId"),
    "COMPUTE_TASK_INFO": ("globalTaskId", "name", "taskType", "opType"),
    "COMMUNICATION_TASK_INFO": ("globalTaskId", "name", "taskType", "groupName", "opId", "srcRank", "dstRank"),
    "COMMUNICATION_OP": ("opName", "startNs", "endNs", "connectionId", "groupName", "opId", "opType"),
    "CANN_API": ("startNs", "endNs", "type", "globalTid", "connectionId", "name"),
    "PYTORCH_API": ("startNs", "endNs", "globalTid", "connectionId", "name", "type"),
    "CONNECTION_IDS": ("id", "connectionId"),
    "PYTORCH_CALLCHAINS": ("id", "stack", "stackDepth"),
    "GC_RECORD": ("startNs", "endNs", "globalTid"),
    "STEP_TIME": ("id", "startNs", "endNs"),
    "STRING_IDS": ("id", "value"),
    "RANK_DEVICE_MAP": ("rankId", "deviceId"),
    "TASK_PMU_INFO": ("globalTaskId", "name", "value"),
    "MEMCPY_INFO": ("globalTaskId", "size"),
    "MEMORY_RECORD": ("component", "timestamp", "totalAllocated", "totalReserved", "totalActive", "deviceId"),
    "OP_MEMORY": ("name", "size", "allocationTime", "releaseTime", "deviceId"),
    "NPU_MODULE_MEM": ("moduleId", "timestampNs", "totalReserved", "deviceId"),
    "NPU_OP_MEM": ("operatorName", "addr", "type", "size", "timestampNs", "component", "deviceId"),
    "NPU_MEM": ("type", "ddr", "hbm", "timestampNs", "deviceId"),
    "AICORE_FREQ": ("deviceId", "timestampNs", "freq"),
    "HBM": ("deviceId", "timestampNs", "bandwidth", "hbmId", "type"),
    "LLC": ("deviceId", "llcId", "timestampNs", "hitRate", "throughput", "mode"),
    "ACC_PMU": ("deviceId", "timestampNs", "accId", "readBwLevel", "writeBwLevel", "readOstLevel", "writeOstLevel"),
    "SOC_BANDWIDTH_LEVEL": ("l2BufferBwLevel", "mataBwLevel", "timestampNs", "deviceId"),
    "SESSION_TIME_INFO": ("startTimeNs", "endTimeNs"),
    "META_DATA": ("name", "value"),
    "NPU_INFO": ("id", "name"),
    "HOST_INFO": ("hostName",),
}
#: columns holding ``STRING_IDS`` ids whose text a view shows as a name
NAME_IDS: dict[str, str] = {
    "COMPUTE_TASK_INFO": "name",
    "COMMUNICATION_OP": "opName",
    "CANN_API": "name",
    "PYTORCH_API": "name",
}
_TIME_NAMES = {"timestamp", "allocationtime", "releasetime", "activereleasetime"}


@dataclass(frozen=True)
class Finding:
    """One kind of damage in one column (``column`` None: the row as a whole)."""

    code: str
    table: str
    column: str | None
    count: int
    first_row: int | None = None
    samples: tuple[str, ...] = ()
    why: str = ""


def is_time(column: str) -> bool:
    low = column.lower()
    return low.endswith("ns") or low in _TIME_NAMES


def _affinity(declared: str) -> str:
    """SQLite's affinity rules for a declared column type."""
    t = (declared or "").upper()
    if "INT" in t:
        return "integer"
    if any(k in t for k in ("CHAR", "CLOB", "TEXT")):
        return "text"
    if not t or "BLOB" in t:
        return "blob"
    return "real"


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _clean(column: str, declared: str) -> tuple[str, str | None, str]:
    """(SQL of the usable value, SQL that is true where the stored value is damaged -- None where
    nothing can be judged --, what a damaged value is, in words)."""
    c = _q(column)
    if is_time(column):
        # digits only, 1-19 of them; most such texts equal their own integer's text, a cheaper
        # test than the pattern, which then judges only the others ('007', '-5', '5e3')
        digits = (
            f"(typeof({c}) = 'text' AND length({c}) BETWEEN 1 AND 19"
            f" AND ({c} = CAST(CAST({c} AS INTEGER) AS TEXT) OR {c} NOT GLOB '*[^0-9]*'))"
        )
        branches = [
            f" WHEN typeof({c}) = 'integer' AND {c} BETWEEN 0 AND {MAX_TIME_NS} THEN {c}",
            f" WHEN typeof({c}) = 'real' AND {c} BETWEEN 0 AND {MAX_TIME_NS} AND {c} = CAST({c} AS INTEGER)"
            f" THEN CAST({c} AS INTEGER)",
            f" WHEN {digits} AND CAST({c} AS INTEGER) BETWEEN 0 AND {MAX_TIME_NS} THEN CAST({c} AS INTEGER)",
        ]
        # the branches exclude each other (each tests its own storage class), so their order
        # changes no value, only how many tests a row takes: a column declared TEXT (the framework
        # events' times) holds text, and tried first it skips two failed tests per value
        # (PYTORCH_API's 246 k x 2 times of the 100-copy rank: 0.22 -> 0.08 s per column)
        if _affinity(declared) == "text":
            branches.insert(0, branches.pop())
        value = f"(CASE{''.join(branches)} END)"
        return value, f"({c} IS NOT NULL AND {value} IS NULL)", "not a time in ns (negative, beyond 2^62 or no integer)"
    aff = _affinity(declared)
    if aff == "integer":
        # NULL first: a stored integer then costs one storage-class test, where NOT IN tested
        # it against two names (ten id columns of 246 k rows: 0.25 -> 0.13 s)
        return (
            f"(CASE WHEN typeof({c}) = 'integer' THEN {c} END)",
            f"({c} IS NOT NULL AND typeof({c}) <> 'integer')",
            "not an integer",
        )
    if aff == "real":
        ok = f"(typeof({c}) = 'integer' OR (typeof({c}) = 'real' AND abs({c}) <= 1e300))"
        return (f"(CASE WHEN {ok} THEN {c} END)", f"({c} IS NOT NULL AND NOT {ok})", "not a finite number")
    return c, None, ""


def sanitise(con: sqlite3.Connection, tables: dict[str, str]) -> list[Finding]:
    """Check every table of :data:`EXPECTED` that ``tables`` (upper-case name -> real name)
    holds; shadow the damaged ones with a cleaned ``TEMP VIEW``; return what was found.

    The checks read every row of every table (a second of SQLite work for a 53 MB export) and
    SQLite runs them without Python's lock, so they run on two connections at once where the
    rank may use two cores (:func:`_scans`); the views are made afterwards on ``con``, in the
    order of :data:`EXPECTED`, and the findings come in that order whatever finished first."""
    keys = [k for k in EXPECTED if k in tables]
    tasks = [lambda c, k=k: _checked(c, k, tables[k], EXPECTED[k]) for k in keys]
    tasks.append(lambda c: (_names_missing(c, tables), None))
    found: list[Finding] = []
    for key, (findings, shadow) in zip([*keys, None], _scans(con, tasks)):
        if shadow is not None:
            try:
                _shadow(con, *shadow)
            except sqlite3.Error as exc:  # as a table too damaged to scan
                findings = [Finding(STEP_FAILED, key, None, 0, why=str(exc))]
        found += findings
    return found


def _scans(con: sqlite3.Connection, tasks: list) -> list:
    """``task(connection)`` of every task, in order: on ``con`` alone, or on ``con`` and a second
    connection to the same file (:func:`~profinsight.importers._common.reopen_sqlite`) taking the
    tasks in turn, when the rank may use two threads.  Every task reads only ``main.`` tables,
    so none sees the views another one's results will make."""
    from .._common import reopen_sqlite, thread_share

    twin = reopen_sqlite(con) if thread_share() > 1 and len(tasks) > 1 else None
    if twin is None:
        return [task(con) for task in tasks]
    import threading

    results: list = [None] * len(tasks)
    taken = iter(range(len(tasks)))
    lock = threading.Lock()

    def work(c: sqlite3.Connection) -> None:
        while True:
            with lock:
                i = next(taken, None)
            if i is None:
                return
            results[i] = tasks[i](c)

    other = threading.Thread(target=work, args=(twin,), name="profinsight-db-scan")
    other.start()
    try:
        work(con)
    finally:
        other.join()
        twin.close()
    return results


def _checked(
    con: sqlite3.Connection, key: str, real: str, expected: tuple[str, ...]
) -> tuple[list[Finding], tuple | None]:
    """:func:`_scan_table`, or the table's one finding when it is too damaged to scan (its
    readers say why)."""
    try:
        return _scan_table(con, key, real, expected)
    except sqlite3.Error as exc:
        return [Finding(STEP_FAILED, key, None, 0, why=str(exc))], None


def _scan_table(
    con: sqlite3.Connection, key: str, real: str, expected: tuple[str, ...]
) -> tuple[list[Finding], tuple | None]:
    """(what one table holds that the importers cannot take, the arguments of its cleaned
    view -- None where it needs none)."""
    info = con.execute(f"PRAGMA main.table_info({_q(real)})").fetchall()
    declared = {r[1]: r[2] for r in info}
    lower = {c.lower(): c for c in declared}
    missing = [c for c in expected if c.lower() not in lower]
    cleaned = {c: _clean(c, t) for c, t in declared.items()}
    start, end = lower.get("startns"), lower.get("endns")
    stamp = lower.get("timestampns") or lower.get("timestamp")
    required = [c for c in ((start, end) if start and end else (stamp,)) if c]

    checks: list[tuple[str, str | None, str, str]] = []  # (code, column, condition, why)
    for c in declared:
        bad = cleaned[c][1]
        if bad is not None and c not in required:
            checks.append((BAD_VALUES, c, bad, cleaned[c][2]))
    keep = [f"{cleaned[c][0]} IS NOT NULL" for c in required]
    for c in required:
        checks.append((ROWS_DROPPED, c, f"{cleaned[c][0]} IS NULL", "no usable time"))
    quick = [cond for _, _, cond, _ in checks]
    if start and end:
        checks.append((ROWS_DROPPED, None, f"{cleaned[end][0]} < {cleaned[start][0]}", f"{end} before {start}"))
        keep.append(f"{cleaned[end][0]} >= {cleaned[start][0]}")
        # where both times are usable each is its CAST: the same answer for "any row", since a
        # row with an unusable time is caught by the checks before (two casts, not two CASEs)
        quick.append(f"CAST({_q(end)} AS INTEGER) < CAST({_q(start)} AS INTEGER)")
    found = [Finding(COLUMN_MISSING, key, c, 0, why="missing") for c in missing]
    if checks and _any_row(con, real, quick):
        aggs = []
        for _, col, cond, _ in checks:
            sample = f"CAST({_q(col)} AS TEXT)" if col else "NULL"
            aggs += [f"count(*) FILTER (WHERE {cond})", f"min(rowid) FILTER (WHERE {cond})"]
            aggs += [f"min({sample}) FILTER (WHERE {cond})", f"max({sample}) FILTER (WHERE {cond})"]
        row = con.execute(f"SELECT {', '.join(aggs)} FROM main.{_q(real)}").fetchone()
        for i, (code, col, _, why) in enumerate(checks):
            n, first, lo, hi = row[4 * i : 4 * i + 4]
            if n:
                samples = tuple(dict.fromkeys(s if s is not None else "NULL" for s in (lo, hi))) if col else ()
                found.append(Finding(code, key, col, int(n), first, samples, why))
    if not found:
        return found, None
    return found, (real, declared, cleaned, missing, keep if any(f.code == ROWS_DROPPED for f in found) else [])


def _any_row(con: sqlite3.Connection, real: str, conditions: list[str]) -> bool:
    """Whether any row of ``real`` meets one of ``conditions``: one cheap pass that stops at the
    first such row, before the counting pass (four aggregates per condition, each testing it on
    every row) that only a damaged table needs.  An undamaged table, nearly every table of every
    real export, is read once with each condition tested once per row (the fixture rank's export
    copied 100 times over, 62 MB: the scan of its tables 5.3 -> 1.1-1.3 s with the digits test of
    :func:`_clean`)."""
    # a condition that is NULL for a row is not true of it, in a WHERE as under coalesce(c, false),
    # and NULL OR TRUE is TRUE: the conditions need no coalesce (a call per condition and row)
    where = " OR ".join(f"({c})" for c in conditions)
    return con.execute(f"SELECT EXISTS (SELECT 1 FROM main.{_q(real)} WHERE {where})").fetchone()[0] == 1


def _shadow(con, real: str, declared: dict, cleaned: dict, missing: list[str], keep: list[str]) -> None:
    cols = [f"{cleaned[c][0]} AS {_q(c)}" for c in declared] + [f"NULL AS {_q(c)}" for c in missing]
    where = f" WHERE {' AND '.join(keep)}" if keep else ""
    con.execute(f"CREATE TEMP VIEW {_q(real)} AS SELECT {', '.join(cols)} FROM main.{_q(real)}{where}")


def _names_missing(con: sqlite3.Connection, tables: dict[str, str]) -> list[Finding]:
    """Name ids that ``STRING_IDS`` does not hold (a half-deleted ``STRING_IDS``): the rows keep
    their place, their names read as empty."""
    strings = tables.get("STRING_IDS")
    if strings is None:
        return []
    out = []
    for key, col in NAME_IDS.items():
        real = tables.get(key)
        if real is None:
            continue
        try:
            row = con.execute(
                f"SELECT count(*), min(rowid), min({_q(col)}), max({_q(col)}) FROM main.{_q(real)} "
                f"WHERE {_q(col)} IS NOT NULL AND {_q(col)} NOT IN (SELECT id FROM main.{_q(strings)})"
            ).fetchone()
        except sqlite3.Error:
            continue
        if row[0]:
            samples = tuple(dict.fromkeys(str(s) for s in row[2:]))
            out.append(Finding(NAMES_MISSING, key, col, int(row[0]), row[1], samples, "id not in STRING_IDS"))
    return out


def diagnostics(found: list[Finding], file, rank=None) -> list[dg.Diagnostic]:
    """One diagnostic per finding: file, table, column, how many, the first rowid, the fix."""
    out = []
    for f in found:
        where = f"table {f.table}" + (f", column {f.column}" if f.column else "")
        first = f"; first at rowid {f.first_row}" if f.first_row is not None else ""
        shown = ", ".join(_show(s) for s in f.samples[:3])
        values = f" ({shown})" if shown else ""
        if f.code == BAD_VALUES:
            msg = f"{where}: {f.count} value(s) {f.why}{values}{first}: read as null, their rows kept."
        elif f.code == ROWS_DROPPED:
            why = f.why if f.column is None else f"{f.why} in {f.column}"
            msg = f"table {f.table}: {f.count} row(s) had {why}{values}{first}: dropped."
        elif f.code == COLUMN_MISSING:
            msg = f"{where} is missing: read as null (what it holds is unknown for every row)."
        elif f.code == NAMES_MISSING:
            msg = f"{where}: {f.count} name id(s) are not in STRING_IDS{values}{first}: their names are empty."
        else:
            msg = f"{where} could not be read ({f.why}): what depends on it is empty."
        make = dg.error if f.code == STEP_FAILED else dg.warning
        out.append(make(f.code, msg, file=file, fix=FIX, rank=rank))
    return out


def _show(value: str) -> str:
    try:
        float(value)
    except (TypeError, ValueError):
        return repr(str(value)[:40])
    return str(value)


#: what a loader step may raise on values a check above did not foresee
STEP_ERRORS: tuple[type[BaseException], ...] = (sqlite3.Error, ValueError, TypeError, ArithmeticError, KeyError)


def guarded(data, file, what: str, step, *args):
    """Run one loader step; where it fails on damaged data, say what is lost and go on (the
    other tables of the rank still load).  Returns the step's result, or None."""
    import pyarrow as pa

    try:
        return step(*args)
    except (*STEP_ERRORS, pa.ArrowException) as exc:
        data.diagnostics.append(
            dg.error(
                STEP_FAILED,
                f"{what} could not be read ({type(exc).__name__}: {str(exc)[:200]}): what it fills is empty or incomplete; "
                "the rest of the rank was loaded.",
                file=file,
                fix=FIX,
                rank=data.rank,
            )
        )
        return None


__all__ = [
    "BAD_VALUES",
    "COLUMN_MISSING",
    "EXPECTED",
    "FIX",
    "MAX_TIME_NS",
    "NAMES_MISSING",
    "ROWS_DROPPED",
    "STEP_FAILED",
    "Finding",
    "diagnostics",
    "guarded",
    "is_time",
    "sanitise",
]
