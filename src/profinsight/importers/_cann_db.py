"""Opening a CANN SQLite export (``msprof_*.db``) without ever writing beside the user's file.

Why not ``mode=ro``: in a writable folder SQLite still creates ``-shm`` / ``-wal`` files next to
a WAL-mode DB, i.e. inside the user's profile.  So the DB is opened ``immutable=1`` (SQLite then
takes no lock and writes nothing).  ``immutable`` ignores the write-ahead log, though: where a
non-empty ``-wal`` lies beside the DB (a viewer or an interrupted export left changes in it), the
DB and its WAL are copied into a temporary folder and the copy is opened there, where SQLite may
replay the log and create its ``-shm``; the folder goes when the connection is closed.  An empty
``-wal`` holds no change, so the DB is read in place (immutable reads the same rows) and no copy
of a large file is made for nothing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ._common import CopiedDb, open_sqlite_state

#: the first 16 bytes of every SQLite 3 database file
SQLITE_MAGIC = b"SQLite format 3\x00"


def is_sqlite(path: Path) -> bool:
    """Whether ``path`` is a SQLite 3 database file (its header), without opening it as one."""
    try:
        with open(path, "rb") as f:
            return f.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def table_names(path: Path) -> set[str] | None:
    """Upper-case names of the tables and views of the SQLite file ``path`` (read immutable:
    cheap, writes nothing); None when it is no readable SQLite file."""
    if not is_sqlite(path):
        return None
    try:
        con = sqlite3.connect(f"{Path(path).resolve().as_uri()}?immutable=1", uri=True)
        try:
            rows = con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')").fetchall()
        finally:
            con.close()
    except sqlite3.Error:
        return None
    return {r[0].upper() for r in rows}


@dataclass(frozen=True)
class Opened:
    """An open export: the connection, and whether pending WAL changes were read (from a copy)
    or could not be (``wal_ignored``: the copy failed, the DB was read immutable without them)."""

    con: sqlite3.Connection
    wal_read: bool = False
    wal_ignored: bool = False


@contextmanager
def open_export(path: str | Path) -> Iterator[Opened]:
    """A read-only connection to the SQLite export ``path`` that creates no file beside it
    (:func:`profinsight.importers._common.open_sqlite_state`, shared with the torch_npu DB
    importer); closed, and any temporary copy removed, on exit."""
    con, wal_ignored = open_sqlite_state(path)
    try:
        yield Opened(con, isinstance(con, CopiedDb), wal_ignored)
    finally:
        con.close()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
