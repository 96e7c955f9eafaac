"""Read access to one torch_npu / msprof SQLite export, shaped for bulk use.

Why a wrapper: the DB's columns change between schema versions (``blockDim`` became
``blockNum``, new optional columns appear), viewers add tables and columns we must ignore, and
almost every text field is an id into ``STRING_IDS``.  This class answers "is that table/column
there?" from ``PRAGMA table_info`` once, reads damaged tables through cleaned views
(:mod:`.damage`: a bad value reads as null, a row that cannot be placed in time is left out), loads ``STRING_IDS`` and the ``ENUM_*`` tables once into
dicts, and hands out whole tables — never a query per row: column by column where it can
(:meth:`Db.column_lists`), else with ``fetchall``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson

from .._common import open_sqlite_state
from .damage import Finding, sanitise

#: the vendors' "invalid / not applicable" value for 32-bit ids (contextId, modelId, dstRank)
INVALID_U32 = 4294967295


def connect(path: Path) -> tuple[sqlite3.Connection, bool]:
    """Open ``path`` read-only, creating nothing beside it (see
    :func:`~profinsight.importers._common.open_sqlite_state`); the flag says changes still in its
    ``-wal`` file could not be read."""
    return open_sqlite_state(path)


class Db:
    """One SQLite export: tables, columns, strings and enums, read in bulk."""

    def __init__(self, con: sqlite3.Connection, path: Path):
        self.con = con
        self.path = path
        names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")]
        self._tables = {n.upper(): n for n in names}
        #: damaged values, rows and columns found (and shadowed by cleaned views) before any read
        self.findings: list[Finding] = sanitise(con, self._tables)
        self._columns: dict[str, dict[str, str]] = {}
        self._strings: dict[int, str] | None = None
        self._enums: dict[str, dict[int, str]] = {}
        self._ahead: _ReadAhead | None = None

    # -- structure -------------------------------------------------------------------------
    def has(self, table: str) -> bool:
        return table.upper() in self._tables

    def columns(self, table: str) -> dict[str, str]:
        """Lower-case column name -> real column name (empty when the table is missing)."""
        key = table.upper()
        if key not in self._columns:
            if key not in self._tables:
                self._columns[key] = {}
            else:
                rows = self.con.execute(f'PRAGMA table_info("{self._tables[key]}")').fetchall()
                self._columns[key] = {r[1].lower(): r[1] for r in rows}
        return self._columns[key]

    def col(self, table: str, *aliases: str) -> str | None:
        """The first of ``aliases`` the table has (its real spelling), else None."""
        cols = self.columns(table)
        for a in aliases:
            if a.lower() in cols:
                return cols[a.lower()]
        return None

    def shadowed(self, table: str) -> bool:
        """Whether ``table`` is read through the cleaned view of :mod:`.damage` (it was damaged)."""
        real = self._tables.get(table.upper())
        return real is not None and bool(
            self.con.execute("SELECT 1 FROM sqlite_temp_master WHERE type = 'view' AND name = ?", (real,)).fetchone()
        )

    def count(self, table: str) -> int:
        return (
            self.con.execute(f'SELECT count(*) FROM "{self._tables[table.upper()]}"').fetchone()[0]
            if self.has(table)
            else 0
        )

    # -- data ------------------------------------------------------------------------------
    def rows(self, sql: str, params=()) -> list[tuple]:
        """``fetchall`` of ``sql``, the garbage collector paused (:func:`_fetchall`)."""
        return _fetchall(self.con, sql, params)

    def column_lists(self, sql: str, n: int, params=()) -> list[list]:
        """The ``n`` columns of ``sql``'s result, one list each: what ``zip(*rows(sql))`` gives.

        Why: ``fetchall`` builds a Python tuple per row, which the transposition then takes apart
        and the garbage collector walks meanwhile (``PYTORCH_API`` of the 100-copy scaled DB,
        246 k rows x 11 columns: 0.7-1.05 s).  Here SQLite writes each column as one JSON array
        in one pass over the result (``json_group_array``: an aggregate reads an ordered
        subquery in its order, SQLite never flattens one into an aggregate) and orjson parses
        them: 0.4 s.  JSON keeps integers, text and NULL exactly but not every double (SQLite
        prints 15 digits), so a result holding a REAL value (a float among the parsed values:
        one C-level pass, 0.05 s there) is read with ``fetchall`` instead; so is one SQLite
        cannot write as JSON (a BLOB) or Python cannot decode (text that is not UTF-8, where
        ``fetchall`` then raises the error it always raised)."""
        if not params and self._ahead is not None:
            future = self._ahead.claim((sql, n))
            if future is not None:
                return future.result()
        return _columns_of(self.con, sql, n, params)

    def read_ahead(self, reads: list[tuple[str, int]]) -> None:
        """Have SQLite produce the :meth:`column_lists` results of ``reads`` (``(sql, n)``, in
        the order the loaders ask for them) one step ahead, on a second connection and thread.

        Why: the loaders alternate SQLite's work for a table (the sort and the JSON, which run
        without Python's lock) with Python's work on the table before (columns made into
        arrays), on one core while the other waits.  Read ahead, the next table is being read
        while Python builds the last one.  One read at most waits unclaimed, so memory holds
        one table more than it would, never all of them.  The second connection opens the same
        file as the first and gets the same cleaned views (:mod:`.damage`), so a result is the
        one the first connection would give; a read the loaders ask for out of the plan's order,
        or not at all, is simply read where it is asked for.  Does nothing where the rank may
        use one thread or the DB is no file."""
        from .._common import reopen_sqlite, thread_share

        if self._ahead is not None or not reads or thread_share() < 2:
            return
        twin = reopen_sqlite(self.con)
        if twin is None:
            return
        try:
            for (view,) in self.con.execute("SELECT sql FROM sqlite_temp_master WHERE type = 'view'").fetchall():
                twin.execute(view.replace("CREATE VIEW", "CREATE TEMP VIEW", 1))
        except sqlite3.Error:
            twin.close()
            return
        self._ahead = _ReadAhead(twin, reads)

    def __enter__(self) -> Db:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop reading ahead (what was read and not claimed is dropped) and close the second
        connection; the first stays open (its owner closes it)."""
        if self._ahead is not None:
            self._ahead.close()
            self._ahead = None

    def select(
        self, table: str, wanted: dict[str, tuple[str, ...]], where: str = "", order: str = ""
    ) -> dict[str, list]:
        """Whole-table read of the wanted columns (name -> aliases) as column lists.

        A wanted column the table lacks comes back as a list of None, so callers never branch
        on the schema version."""
        sql = self.select_sql(table, wanted, where, order)
        if sql is None:
            return {k: [] for k in wanted}
        return dict(zip(wanted, self.column_lists(sql, len(wanted))))

    def select_sql(
        self, table: str, wanted: dict[str, tuple[str, ...]], where: str = "", order: str = ""
    ) -> str | None:
        """The statement :meth:`select` runs (None where the table is missing): what a read
        plan (:meth:`read_ahead`) names to have it read ahead."""
        if not self.has(table):
            return None
        exprs = []
        for aliases in wanted.values():
            real = self.col(table, *aliases)
            exprs.append(f'"{real}"' if real else "NULL")
        sql = f'SELECT {", ".join(exprs)} FROM "{self._tables[table.upper()]}"'
        if where:
            sql += f" WHERE {where}"
        if order:
            sql += f" ORDER BY {order}"
        return sql

    def select_reads(self, *specs: tuple[str, dict[str, tuple[str, ...]]]) -> list[tuple[str, int]]:
        """The reads (statement, columns) of :meth:`select` for each ``(table, wanted)`` whose
        table is there: a loader's part of a read plan (:meth:`read_ahead`)."""
        reads = ((self.select_sql(table, wanted), len(wanted)) for table, wanted in specs)
        return [(sql, n) for sql, n in reads if sql is not None]

    @property
    def strings(self) -> dict[int, str]:
        """``STRING_IDS`` as a dict, loaded once."""
        if self._strings is None:
            self._strings = dict(self.rows("SELECT id, value FROM STRING_IDS")) if self.has("STRING_IDS") else {}
        return self._strings

    def text(self, ids) -> list[str | None]:
        """Map string ids to their text (None for NULL or unknown ids)."""
        s = self.strings
        return [None if i is None else s.get(i) for i in ids]

    def enum(self, table: str) -> dict[int, str]:
        """An ``ENUM_*`` table as a dict (empty when missing)."""
        key = table.upper()
        if key not in self._enums:
            self._enums[key] = (
                dict(self.rows(f'SELECT id, name FROM "{self._tables[key]}"')) if key in self._tables else {}
            )
        return self._enums[key]


def _columns_of(con: sqlite3.Connection, sql: str, n: int, params=()) -> list[list]:
    """:meth:`Db.column_lists` on connection ``con``."""
    if n < 1:
        return []
    names = [f"c{i}" for i in range(n)]
    outer = ", ".join(f"json_group_array({c})" for c in names)
    try:
        arrays = con.execute(f"WITH q({', '.join(names)}) AS ({sql}) SELECT {outer} FROM q", params).fetchone()
        cols = [orjson.loads(a) for a in arrays]
        if not any(float in set(map(type, c)) for c in cols):
            return cols
    except (sqlite3.Error, orjson.JSONDecodeError):
        pass
    data = _fetchall(con, sql, params)
    if not data:
        return [[] for _ in range(n)]
    return [list(c) for c in zip(*data)]


def _fetchall(con: sqlite3.Connection, sql: str, params=()) -> list[tuple]:
    """``fetchall`` with Python's cyclic garbage collector paused.

    Why: every row is a new tuple, which the collector counts; each 700 of them start a
    collection and every hundredth collection walks every object of the process (pandas,
    pyarrow and all).  The 518 k PMU values of the 100-copy scaled DB, one tuple each, set off
    740 collections, 7 of them full: 0.15-0.2 s of a cold ``analyze``.  A row tuple holds only
    numbers and text, so none is ever part of a cycle: pausing the collector for the fetch frees
    nothing later than it would have been freed."""
    import gc

    paused = gc.isenabled()
    gc.disable()
    try:
        return con.execute(sql, params).fetchall()
    finally:
        if paused:
            gc.enable()


class _ReadAhead:
    """The reads of a plan, each started on ``con`` (the second connection, on a thread of its
    own) when the one before it is claimed: at most one result waits."""

    def __init__(self, con: sqlite3.Connection, plan: list[tuple[str, int]]):
        from concurrent.futures import ThreadPoolExecutor

        self.con = con
        self.order = list(dict.fromkeys(plan))
        self.plan = {key: i for i, key in enumerate(self.order)}
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="profinsight-db-read")
        self.pending: tuple[int, object] | None = None
        self.last = -1  # the plan's last read started
        self._start(0)

    def _start(self, i: int) -> None:
        if i < len(self.order):
            sql, n = self.order[i]
            self.pending, self.last = (i, self.pool.submit(_columns_of, self.con, sql, n)), i

    def claim(self, key: tuple[str, int]):
        """The future of ``key`` where it is the read under way (the plan's next one starts),
        else None: the caller reads it itself.  A read under way that comes before ``key`` in
        the plan was skipped by the loaders: it is dropped and the read after ``key`` starts."""
        i = self.plan.get(key)
        if i is None:
            return None
        if self.pending is not None:
            at, future = self.pending
            if at == i:
                self.pending = None
                self._start(i + 1)
                return future
            if at > i:  # asked again for a read already claimed
                return None
            future.cancel()
            self.pending = None
        elif i <= self.last:
            return None
        self._start(i + 1)
        return None

    def close(self) -> None:
        if self.pending is not None:
            self.pending[1].cancel()
            self.pending = None
        self.pool.shutdown(wait=True)
        self.con.close()


def clean(value):
    """'' / 'N/A' (the vendors' "not collected") -> None; everything else unchanged."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip() in ("", "N/A"):
        return None
    return value


def valid_id(value):
    """An integer id, or None for NULL and the 2^32-1 sentinel."""
    if value is None or value == INVALID_U32:
        return None
    return int(value)
