"""Read access to one torch_npu / msprof SQLite export, shaped for bulk use.

Why a wrapper: the DB's columns change between schema versions (``blockDim`` became
``blockNum``, new optional columns appear), viewers add tables and columns we must ignore, and
almost every text field is an id into ``STRING_IDS``.  This class answers "is that table/column
there?" from ``PRAGMA table_info`` once, reads damaged tables through cleaned views
(:mod:`.damage`: a bad value reads as null, a row that cannot be placed in time is left out), loads ``STRING_IDS`` and the ``ENUM_*`` tables once into
dicts, and hands out whole tables with ``fetchall`` — never a query per row.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

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

    def count(self, table: str) -> int:
        return (
            self.con.execute(f'SELECT count(*) FROM "{self._tables[table.upper()]}"').fetchone()[0]
            if self.has(table)
            else 0
        )

    # -- data ------------------------------------------------------------------------------
    def rows(self, sql: str, params=()) -> list[tuple]:
        return self.con.execute(sql, params).fetchall()

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
        data = self.rows(sql)
        if not data:
            return {k: [] for k in wanted}
        cols = list(zip(*data))
        return {k: list(cols[i]) for i, k in enumerate(wanted)}

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
