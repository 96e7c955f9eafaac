"""Pieces every importer shares: a DuckDB connection with exact time-parsing macros, a
read-only SQLite opener, and small conversions.

Why SQL macros: the Ascend text files write epoch microseconds with three decimals
(``1736408883704643.212``), 19 significant digits that float64 cannot hold.  ``ts_ns`` splits
the decimal text and builds integer nanoseconds exactly, vectorised inside DuckDB.
"""

from __future__ import annotations

import contextlib
import csv
import os
import re
import shutil
import sqlite3
import sys
import tempfile
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .. import _cores

if TYPE_CHECKING:  # DuckDB loads when an import starts, not when this module does
    import duckdb

_WS = "' ' || chr(9) || chr(10) || chr(13) || '\"'"
#: RE2 patterns (SQL literals) of the macros' fast paths.  A time as the exports write it: white
#: space (no quote) around digits, a dot and exactly three decimals -- 16 integer digits at most,
#: so the digits without the dot are the nanoseconds or beyond int64 (NULL, as ``ts_ns_general``)
_TS3 = "'[ \\t\\n\\r]*[+-]?[0-9]{1,16}\\.[0-9]{3}[ \\t\\n\\r]*'"
_TS3_POSITIVE = "'[ \\t\\n\\r]*[+]?[0-9]{1,16}\\.[0-9]{3}[ \\t\\n\\r]*'"
#: a cell that ``clean`` makes NULL: only white space and quotes, or N/A between them
_NOTHING = "'[ \\t\\n\\r\"]*(N/A)?[ \\t\\n\\r\"]*'"
#: a cell that ``clean`` keeps as it is: neither its first nor its last character is white space
#: or a quote (RE2's ``.`` stops at a line feed: a cell with one inside takes the general form)
_KEPT = "'[^ \\t\\n\\r\"](.*[^ \\t\\n\\r\"])?'"

MACROS = [
    # float * scale -> rounded int64, or NULL when the result is not finite or beyond int64: one
    # damaged cell (1e400, inf, NaN) becomes NULL instead of failing the cast of its whole column
    "CREATE OR REPLACE MACRO scaled_int(v, scale) AS TRY_CAST(round(v * scale) AS BIGINT)",
    # the same for a quantity that cannot be negative (a duration, a size): a negative cell is
    # damage and becomes NULL too -- never a negative duration in a table
    "CREATE OR REPLACE MACRO scaled_uint(v, scale) AS (CASE WHEN v >= 0 THEN TRY_CAST(round(v * scale) AS BIGINT) END)",
    # text cell -> clean text or NULL ('' and 'N/A' mean "not collected").  A cell with no white
    # space or quote at either end (nearly all) is kept as it is: ``trim`` with a set of
    # characters costs 2-3x a pattern test (a 45 k-row column of memory_record.csv: 18.9 -> 6.9 ms)
    f"""CREATE OR REPLACE MACRO clean(x) AS (CASE
         WHEN regexp_full_match(CAST(x AS VARCHAR), {_KEPT}) THEN nullif(CAST(x AS VARCHAR), 'N/A')
         ELSE nullif(nullif(trim(CAST(x AS VARCHAR), {_WS}), ''), 'N/A') END)""",
    # exact decimal microseconds text, already cleaned (``c``) -> integer nanoseconds
    # (a value beyond int64 -- "1e30", "inf", 20 digits -- is NULL, never an error for the column)
    """CREATE OR REPLACE MACRO ts_ns_clean(c) AS (CASE
         WHEN c IS NULL THEN NULL
         WHEN contains(lower(c), 'e') OR contains(lower(c), 'n')
           THEN scaled_int(TRY_CAST(c AS DOUBLE), 1000)
         WHEN length(split_part(c, '.', 1)) > 17 THEN NULL
         ELSE TRY_CAST(TRY_CAST(split_part(c, '.', 1) AS HUGEINT) * 1000
              + (CASE WHEN starts_with(c, '-') THEN -1 ELSE 1 END)
                * TRY_CAST(rpad(left(split_part(c, '.', 2), 3), 3, '0') AS BIGINT) AS BIGINT)
       END)""",
    # the same of any cell.  ``clean(x)`` is computed once, inside a lambda: written seven times
    # in one expression, DuckDB computes it (and ``split_part`` of it) once for EVERY row of the
    # column -- also where the macro is the ELSE of a fast path that no row leaves -- which made
    # ``ts_ns`` of a column of ordinary times 2-2.5x slower than its fast path (measured on
    # operator_memory.csv: 15.2 -> 6.1 ms per 8,280 cells)
    "CREATE OR REPLACE MACRO ts_ns_general(x) AS list_transform([clean(x)], lambda c: ts_ns_clean(c))[1]",
    # ``ts_ns`` as the exports write it (digits, a dot, three decimals, white space around: the
    # CSVs end each time with a tab) is the digits without the dot, the same integer: 2.8x faster
    # than the general form on a 456 k-row column, and no ``clean`` (a ``trim`` per cell).
    # Empty and N/A cells are NULL without it; anything else takes the general form.  (DuckDB
    # computes a sub-expression shared by several branches once only where the first WHEN holds it,
    # so each branch here is its own expression.)
    f"""CREATE OR REPLACE MACRO ts_ns(x) AS (CASE
         WHEN regexp_full_match(CAST(x AS VARCHAR), {_TS3}) THEN TRY_CAST(replace(CAST(x AS VARCHAR), '.', '') AS BIGINT)
         WHEN regexp_full_match(CAST(x AS VARCHAR), {_NOTHING}) THEN NULL
         ELSE ts_ns_general(x) END)""",
    # a point in time of a file whose clock never runs below zero (the memory CSVs): ``ts_ns``,
    # NULL for a negative cell (the sign test inside the lambda too, so ``clean`` stays single)
    f"""CREATE OR REPLACE MACRO time_ns(x) AS (CASE
         WHEN regexp_full_match(CAST(x AS VARCHAR), {_TS3_POSITIVE})
           THEN TRY_CAST(replace(CAST(x AS VARCHAR), '.', '') AS BIGINT)
         WHEN regexp_full_match(CAST(x AS VARCHAR), {_NOTHING}) THEN NULL
         ELSE list_transform([clean(x)], lambda c: CASE WHEN starts_with(c, '-') THEN NULL
                                                         ELSE ts_ns_clean(c) END)[1] END)""",
    # a number cell: ``TRY_CAST(clean(x) AS DOUBLE)``.  The cast skips the white space that clean
    # trims, so where the cell casts as it is the value is the same; only cells that do not (quoted,
    # damaged) are cleaned first: 6x faster on a column of numbers
    f"""CREATE OR REPLACE MACRO num_text(x) AS (CASE
         WHEN TRY_CAST(CAST(x AS VARCHAR) AS DOUBLE) IS NOT NULL THEN TRY_CAST(CAST(x AS VARCHAR) AS DOUBLE)
         WHEN regexp_full_match(CAST(x AS VARCHAR), {_NOTHING}) THEN NULL
         ELSE TRY_CAST(clean(x) AS DOUBLE) END)""",
    # the same for an integer cell (``0x1F `` casts only once cleaned, so the fallback stays)
    f"""CREATE OR REPLACE MACRO int_text(x) AS (CASE
         WHEN TRY_CAST(CAST(x AS VARCHAR) AS BIGINT) IS NOT NULL THEN TRY_CAST(CAST(x AS VARCHAR) AS BIGINT)
         WHEN regexp_full_match(CAST(x AS VARCHAR), {_NOTHING}) THEN NULL
         ELSE TRY_CAST(clean(x) AS BIGINT) END)""",
    # duration in (float) microseconds -> integer nanoseconds, rounded (negative: NULL)
    "CREATE OR REPLACE MACRO dur_ns(x) AS scaled_uint(num_text(x), 1000)",
    # ms (communication.json) -> ns
    "CREATE OR REPLACE MACRO ms_ns(x) AS scaled_uint(num_text(x), 1000000)",
    # integer cell or NULL; 4294967295 (2^32-1) is the vendors' 'invalid'
    "CREATE OR REPLACE MACRO int_or_null(x) AS nullif(int_text(x), 4294967295)",
    "CREATE OR REPLACE MACRO num_or_null(x) AS num_text(x)",
    # an integer cell as written (the 2^32-1 sentinel included): what a damage count checks
    "CREATE OR REPLACE MACRO int_cell(x) AS int_text(x)",
    # binary MB (memory CSVs) -> bytes
    "CREATE OR REPLACE MACRO mib_bytes(x) AS scaled_uint(num_text(x), 1048576)",
    "CREATE OR REPLACE MACRO kib_bytes(x) AS scaled_uint(num_text(x), 1024)",
    # decimal MB (communication JSON) -> bytes
    "CREATE OR REPLACE MACRO mb_bytes(x) AS scaled_uint(num_text(x), 1000000)",
]


def unconverted_cells(con, source: str, checks: list[tuple[str, str]]) -> list[tuple[int, list]]:
    """Per check ``(converted, cell)`` -- SQL expressions over ``source`` (what follows ``FROM``):
    a cell's conversion and the cell itself -- how many non-empty cells the conversion left NULL,
    and their distinct values, cleaned and sorted (what a "not usable numbers" warning shows).

    Each check's ``CASE`` is written once, in an inner query that the counts and the lists read.
    The counts come first; the values are listed only for the checks with bad cells (rarely):
    ``list(DISTINCT ...) FILTER`` costs its time even when the filter passes no row -- 60 of the
    100 ms this took over a 100 MB profile's operator_memory.csv."""
    if not checks:
        return []
    inner = ", ".join(
        f"CASE WHEN {converted} IS NULL THEN clean({cell}) END AS bad{i}" for i, (converted, cell) in enumerate(checks)
    )
    counts = ", ".join(f"count(bad{i})" for i in range(len(checks)))
    ns = con.execute(f"SELECT {counts} FROM (SELECT {inner} FROM {source})").fetchall()[0]
    bad = [i for i, n in enumerate(ns) if n]
    found: dict = {}
    if bad:
        lists = ", ".join(f"list(DISTINCT bad{i} ORDER BY bad{i}) FILTER (WHERE bad{i} IS NOT NULL)" for i in bad)
        found = dict(zip(bad, con.execute(f"SELECT {lists} FROM (SELECT {inner} FROM {source})").fetchall()[0]))
    return [(int(n), list(found.get(i) or [])) for i, n in enumerate(ns)]


def ram_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def release_memory() -> None:
    """Give the memory an import freed back to the system, after the import.

    Arrow (mimalloc) and glibc's malloc keep freed pages for their next allocation, so a
    process that imported a 1 GB Kineto rank still held 0.73 GB that no table used, and the
    advisor's work then grew on top of it: peak 1.59-1.69 GB in the advisor against 1.27 GB
    with the pages released (0.2 GB held afterwards; the release itself took 13 ms).  Where an
    allocator has no such call (another C library, another OS) nothing happens."""
    try:
        import pyarrow as pa

        pa.default_memory_pool().release_unused()
    except (ImportError, AttributeError):
        pass
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        trim = getattr(ctypes.CDLL(None), "malloc_trim", None)  # glibc only
        if trim is not None:
            trim(0)
    except OSError:
        pass


#: DuckDB threads one rank's import may use; None: every core (set by the loader when it imports
#: several ranks at once, one process each, so that together they use the cores once)
_RANK_THREADS: int | None = None


def set_rank_threads(n: int | None) -> None:
    """How many threads each rank's import may use from now on in this process (None: all cores)."""
    global _RANK_THREADS
    _RANK_THREADS = None if n is None else max(1, int(n))


def thread_share() -> int:
    """Threads one rank's work may use beside its import (writing its tables): the loader's share
    when ranks are imported side by side, else the cores (no sample of how busy they are)."""
    return _RANK_THREADS or os.cpu_count() or 1


def rank_threads() -> int:
    """DuckDB threads for importing one rank: the loader's share, else every idle core.  A lone
    rank on an idle machine is parsed by all of them (the trace's pieces in parallel); on a
    machine whose cores are already busy, a thread more only competes for them: measured on 2
    cores at load 8-11, the 100 MB Ascend import took 4.8-5.1 s CPU and 10.7-11.2 s wall with one
    thread, 5.4-5.6 s CPU and 11.5-15.1 s wall with two.

    Busy cores: the 1-minute load average, and where it says a core is taken, what the cores do
    now (:func:`busy_now`): the average still counts a heavy process for a minute after it ended
    (a 1 GB import started right after another one read load 1.2 on an idle 2-core machine and
    took 36.3 s with one thread; the import alone takes 25 s with two)."""
    if _RANK_THREADS:
        return _RANK_THREADS
    cpus = os.cpu_count() or 1
    try:
        busy = os.getloadavg()[0]
    except OSError:
        busy = 0.0
    if busy >= 1:
        now = busy_now()
        if now is not None:
            busy = min(busy, now)
    return max(1, min(cpus, cpus - int(busy)))


#: (when, busy cores) of the last :func:`busy_now` sample: one sample serves this process a while
_BUSY: list = [float("-inf"), None]
BUSY_WINDOW_S = 0.1
BUSY_REUSE_S = _cores.REUSE_S
#: where the window of the next sample began (:func:`mark_busy`, or the command line's
#: :func:`profinsight._cores.mark` as it starts): (monotonic s, all jiffies, idle jiffies, CPU s
#: of the marking thread, that thread's id), or None
_MARK: list = _cores.MARK
_jiffies = _cores.jiffies


def mark_busy() -> None:
    """Begin the window of the next :func:`busy_now` sample now, as a rank's import begins: the
    import's first steps (finding the trace's array, reading its metadata) then fill the window
    that the sample would otherwise wait 0.1 s for.  What this thread itself does meanwhile is
    not counted as a busy core.  A mark this thread made within :data:`BUSY_REUSE_S` stays (the
    command line marks as it starts, before its imports: :mod:`profinsight._cores`)."""
    _cores.mark(_jiffies)


def busy_now() -> float | None:
    """Cores busy right now, this thread's own work left out: the share of non-idle time of all
    cores in ``/proc/stat`` over at least :data:`BUSY_WINDOW_S`, times the cores (None where
    there is no ``/proc/stat``).  The window starts at :func:`mark_busy` when this thread marked
    it within :data:`BUSY_REUSE_S` (it waits only for what is left of the window), else now.  A
    sample is reused for :data:`BUSY_REUSE_S` (the ranks of one load ask one after another)."""
    import threading

    when, value = _BUSY
    if time.monotonic() - when < BUSY_REUSE_S:
        return value
    mark, _MARK[0] = _MARK[0], None
    try:
        if mark is None or mark[4] != threading.get_ident() or time.monotonic() - mark[0] > BUSY_REUSE_S:
            mark = (time.monotonic(), *_jiffies(), time.thread_time())
        time.sleep(max(0.0, BUSY_WINDOW_S - (time.monotonic() - mark[0])))
        total1, idle1 = _jiffies()
        own = (time.thread_time() - mark[3]) * os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        value = None
    else:
        span = total1 - mark[1]
        busy = max(span - (idle1 - mark[2]) - own, 0.0)
        value = busy / span * (os.cpu_count() or 1) if span > 0 else None
    _BUSY[:] = [time.monotonic(), value]
    return value


def duck(threads: int = 2, memory_limit: int | None = None, macros: bool = True) -> duckdb.DuckDBPyConnection:
    """A fresh in-memory DuckDB connection with the parsing macros installed (``macros=False``:
    without them, for an importer whose SQL uses none: 17 statements, 20 ms of CPU).

    Extensions are never auto-installed: nothing may download at run time.  Memory: DuckDB is
    capped at ``memory_limit`` bytes (default 40% of RAM) and spills working data (in-memory
    tables included) to a private folder under the system temp dir instead of growing; the
    folder goes away when the connection is closed.
    """
    if memory_limit is None:
        ram = ram_bytes()
        memory_limit = int(ram * 0.4) if ram else 4 << 30
    tmp = temp_dir("duck")
    import duckdb  # here, not at import: discovery and a warm re-open never need it

    con = duckdb.connect(
        ":memory:",
        config={
            "threads": threads,
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": True,
            "memory_limit": f"{max(int(memory_limit), 256 << 20) // (1 << 20)}MB",
            "temp_directory": tmp,
        },
    )
    _DUCK_TEMP[con] = weakref.finalize(con, shutil.rmtree, tmp, True)
    # DuckDB draws its own progress bar on stderr for long queries: never in a user's terminal.
    # Inside a Jupyter kernel without ipywidgets DuckDB refuses the setting itself (its bar is
    # off there anyway), so a refusal must not stop the import.
    try:
        con.execute("SET enable_progress_bar = false")
    except duckdb.Error:
        pass
    for m in MACROS if macros else ():
        con.execute(m)
    return con


@contextlib.contextmanager
def cursors(con, n: int) -> Iterator[list]:
    """``n`` cursors of DuckDB connection ``con``, closed at the end: one per thread that works on
    the import's database beside the thread that owns ``con`` (a connection is for one thread at a
    time; a cursor shares its database, its tables and macros, not its TEMP tables or registered
    Arrow tables)."""
    made = [con.cursor() for _ in range(n)]
    try:
        yield made
    finally:
        for cur in made:
            cur.close()


def close_duck(con) -> None:
    """Close a connection made by :func:`duck` and remove its spill folder now (not when the
    connection object is collected, which a traceback kept in a notebook can delay for hours)."""
    try:
        con.close()
    finally:
        done = _DUCK_TEMP.pop(con, None)
        if done is not None:
            done()


#: duck() connection -> the finaliser that removes its spill folder
_DUCK_TEMP: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

#: the temporary folders an import makes, by kind: ``profinsight-<kind>-<pid>-<random>``
TEMP_KINDS = ("duck", "out", "trace", "db", "kineto", "file")
_TEMP_RE = re.compile(r"^profinsight-(" + "|".join(TEMP_KINDS) + r")-(?:(\d+)-)?[A-Za-z0-9_]+$")
#: a folder of the old naming (no pid) older than this is from a run that is gone
LEGACY_STALE_S = 24 * 3600
_swept: set[str] = set()


def temp_dir(kind: str) -> str:
    """A new private temporary folder ``profinsight-<kind>-<pid>-XXXXXXXX``.  Its maker removes it
    on every exit path (``finally``); one left by a run that was killed (``kill -9``, power loss)
    carries a pid that is no longer running, and the first import of the next run in the same
    temporary directory removes it (:func:`sweep_stale_temp`)."""
    root = tempfile.gettempdir()
    if root not in _swept:
        _swept.add(root)
        sweep_stale_temp(root)
    return tempfile.mkdtemp(prefix=f"profinsight-{kind}-{os.getpid()}-")


@contextlib.contextmanager
def temp_folder(kind: str) -> Iterator[str]:
    """:func:`temp_dir` as a context: the folder is removed on leaving it, however it is left."""
    tmp = temp_dir(kind)
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def sweep_stale_temp(root: str | Path | None = None) -> list[str]:
    """Remove the temporary folders of profinsight runs that are no longer running from ``root``
    (default: the system temporary directory); the names of those removed.  A folder is stale
    when the pid in its name runs no process, or, named the old way without a pid, when it was
    last changed over a day ago.  Folders of live processes (this one included) are kept."""
    root = Path(root or tempfile.gettempdir())
    gone = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return gone
    now = time.time()
    for entry in entries:
        m = _TEMP_RE.match(entry.name)
        if m is None:
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid != os.getuid():
                continue
            stale = (
                not _running(int(m.group(2)))
                if m.group(2)
                else now - entry.stat(follow_symlinks=False).st_mtime > LEGACY_STALE_S
            )
        except (OSError, OverflowError):
            continue
        if stale:
            shutil.rmtree(entry.path, ignore_errors=True)
            gone.append(entry.name)
    return gone


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


def sql_str(value: str | Path) -> str:
    """Quote a value (usually a path) as a SQL string literal."""
    return "'" + str(value).replace("'", "''") + "'"


def header_names(path: Path, limit: int = 1 << 20) -> list[str]:
    """The column names on the first line of CSV ``path`` (CSV quoting, a UTF-8 BOM dropped),
    made unique as DuckDB's sniffer makes them (``a``, ``a_1``); empty when the file has no
    readable first line within ``limit`` bytes."""
    try:
        with open(path, encoding="utf-8-sig", errors="replace", newline="") as fh:
            first = fh.readline(limit)
    except OSError:
        return []
    row = next(csv.reader([first.rstrip("\r\n")]), [])
    names: list[str] = []
    seen: set[str] = set()
    for i, raw in enumerate(row):
        name = raw or f"column{i}"
        base, n = name, 0
        while name in seen:
            n += 1
            name = f"{base}_{n}"
        seen.add(name)
        names.append(name)
    return names


def read_csv_by_header(con, path: Path, table: str) -> tuple[int, int]:
    """Read CSV ``path`` into DuckDB table ``table`` as text columns named by its header, without
    DuckDB's dialect sniffer; returns (rows kept, rows dropped as malformed).

    Why: the sniffer, and the strict parser, give up on a whole file when a few rows disagree
    with the rest (garbage lines appended to a short file, an LF line in a CRLF file), and every
    row that does fit would be lost with it.  Here the file is read leniently (mixed line ends,
    stray quotes), one spare column past the header catches rows with too many cells and NULL
    padding marks rows with too few (an empty cell reads as ``''``, a missing one as NULL, until
    the kept rows turn ``''`` back into NULL as the sniffing reader gives it); both kinds of row
    are dropped and counted, as the strict reader's rejects table counts them.  Kept as the
    fallback, not the first read: it runs on one thread."""
    names = header_names(path)
    if not names:
        raise ValueError(f"{path.name} has no header line")
    spare = next(f"spare{i}" for i in range(len(names) + 1) if f"spare{i}" not in names)
    quoted = ['"' + n.replace('"', '""') + '"' for n in names]
    columns = "{" + ", ".join(f"{sql_str(n)}: 'VARCHAR'" for n in [*names, spare]) + "}"
    raw = f"{table}_lenient"
    con.execute(f"""CREATE OR REPLACE TEMP TABLE {raw} AS SELECT * FROM read_csv({sql_str(path)}, all_varchar=true,
        header=true, delim=',', quote='"', escape='"', auto_detect=false, columns={columns}, strict_mode=false,
        null_padding=true, parallel=false, nullstr={sql_str(chr(0))})""")
    keep = ", ".join(f"nullif({q}, '') AS {q}" for q in quoted)
    con.execute(f"""CREATE OR REPLACE TABLE {table} AS SELECT {keep} FROM {raw}
        WHERE {quoted[-1]} IS NOT NULL AND "{spare}" IS NULL""")
    total = con.sql(f"SELECT count(*) FROM {raw}").fetchall()[0][0]
    kept = con.sql(f"SELECT count(*) FROM {table}").fetchall()[0][0]
    con.execute(f"DROP TABLE {raw}")
    return kept, total - kept


class CopiedDb(sqlite3.Connection):
    """A connection to a temporary copy of a DB and its WAL; closing it removes the copy."""

    _copy_dir: str | None = None

    def close(self) -> None:
        super().close()
        if self._copy_dir is not None:
            shutil.rmtree(self._copy_dir, ignore_errors=True)
            self._copy_dir = None


def open_sqlite_state(path: str | Path) -> tuple[sqlite3.Connection, bool]:
    """Open a SQLite export read-only without ever creating a file beside it; the flag says the
    DB's ``-wal`` held changes that could not be read (the copy below failed).

    ``mode=ro`` is not enough: in a writable folder SQLite still creates ``-shm`` / ``-wal`` next
    to a WAL-mode DB, inside the user's profile (and as root it does so in a read-only folder
    too).  So the DB is opened ``immutable=1``, which takes no lock and writes nothing but ignores
    the write-ahead log; where a non-empty ``-wal`` lies beside it (a viewer or an interrupted
    export left changes there), the DB and its WAL are copied to a temporary folder and the copy
    is opened, and closing the connection removes the copy."""
    path = Path(path).resolve()
    wal = path.with_name(path.name + "-wal")
    try:
        pending = wal.stat().st_size > 0
    except OSError:
        pending = False
    if pending:
        tmp = temp_dir("db")
        try:
            copy = Path(tmp) / path.name
            shutil.copyfile(path, copy)
            shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
            con = sqlite3.connect(f"{copy.as_uri()}?mode=ro", uri=True, factory=CopiedDb)
            con._copy_dir = tmp
            con.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return con, False
        except (OSError, sqlite3.Error):
            shutil.rmtree(tmp, ignore_errors=True)
    con = sqlite3.connect(f"{path.as_uri()}?immutable=1", uri=True)
    con.execute("SELECT count(*) FROM sqlite_master").fetchone()
    return con, pending


def reopen_sqlite(con: sqlite3.Connection) -> sqlite3.Connection | None:
    """A second read-only connection to the file ``con`` reads, opened as ``con`` was (the
    temporary copy with its WAL, or the DB itself immutable), for work on another thread; None
    for a DB that is no file (in memory)."""
    file = next((r[2] for r in con.execute("PRAGMA database_list") if r[1] == "main"), "")
    if not file:
        return None
    mode = "mode=ro" if isinstance(con, CopiedDb) else "immutable=1"
    return sqlite3.connect(f"{Path(file).as_uri()}?{mode}", uri=True, check_same_thread=False)


def open_sqlite(path: str | Path) -> sqlite3.Connection:
    """:func:`open_sqlite_state` without the flag."""
    return open_sqlite_state(path)[0]


def us_text_to_ns(text: str | None) -> int | None:
    """Exact Python twin of the ``ts_ns`` macro for single values (metadata, tests)."""
    if text is None:
        return None
    s = str(text).strip(' \t\r\n"')
    if s in ("", "N/A"):
        return None
    if "e" in s.lower():
        return round(float(s) * 1000)
    neg = s.startswith("-")
    whole, _, frac = s.lstrip("-+").partition(".")
    ns = int(whole or "0") * 1000 + int((frac[:3]).ljust(3, "0"))
    return -ns if neg else ns
