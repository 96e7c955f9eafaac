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
        return self.con.execute(sql, params).fetchall()

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
        if n < 1:
            return []
        names = [f"c{i}" for i in range(n)]
        outer = ", ".join(f"json_group_array({c})" for c in names)
        try:
            arrays = self.con.execute(f"WITH q({', '.join(names)}) AS ({sql}) SELECT {outer} FROM q", params).fetchone()
            cols = [orjson.loads(a) for a in arrays]
            if not any(float in set(map(type, c)) for c in cols):
                return cols
        except (sqlite3.Error, orjson.JSONDecodeError):
            pass
        data = self.rows(sql, params)
        if not data:
            return [[] for _ in range(n)]
        return [list(c) for c in zip(*data)]

    def select(
        self, table: str, wanted: dict[str, tuple[str, ...]], where: str = "", order: str = ""
    ) -> dict[str, list]:
        """Whole-table read of the wanted columns (name -> aliases) as column lists.

        A wanted column the table lacks comes back as a list of None, so callers never branch
        on the schema version."""
        if not self.has(table):
            return {k: [] for k in wanted}
        exprs = []
        for aliases in wanted.values():
            real = self.col(table, *aliases)
            exprs.append(f'"{real}"' if real else "NULL")
        sql = f'SELECT {", ".join(exprs)} FROM "{self._tables[table.upper()]}"'
        if where:
            sql += f" WHERE {where}"
        if order:
            sql += f" ORDER BY {order}"
        return dict(zip(wanted, self.column_lists(sql, len(wanted))))

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
