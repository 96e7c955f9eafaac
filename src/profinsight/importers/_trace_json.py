"""Read a Chrome-trace JSON *array* (Ascend ``trace_view.json``, ``msprof_*.json``) into a DuckDB
table, once, and survive a file that was cut short.

Why DuckDB ``read_json``: these files reach gigabytes; DuckDB parses them in C++ without building
Python objects, and every canonical table is then derived from the one DuckDB table with SQL.

Why the recovery path: a profile copied off a cluster is often truncated (disk full, interrupted
``scp``).  The events before the cut are still valid, so instead of refusing the file we find the
last complete top-level event, parse ``prefix + "]"`` and report how much was lost.  Only that
path is slow (it copies the readable prefix to a temporary file).
"""
from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path


from ._common import sql_str

#: every key of a Chrome-trace event we keep; values that are numbers in one producer and strings
#: in another (``ts``, ``id``, ``pid``) are read as text and converted in SQL
TRACE_COLUMNS = {
    "ph": "VARCHAR", "name": "VARCHAR", "pid": "VARCHAR", "tid": "VARCHAR", "ts": "VARCHAR",
    "dur": "VARCHAR", "cat": "VARCHAR", "id": "VARCHAR", "bp": "VARCHAR", "s": "VARCHAR",
    "args": "JSON",
}

# a '}' that closes one array element followed by the ',' and '{' of the next one
_BOUNDARY = re.compile(rb"\}\s*,\s*\{")
_TAIL_TRIES = 4
_MAX_OBJECT = 1 << 30


@dataclass(frozen=True)
class TraceRead:
    """What reading one trace file gave: ``events`` rows in the table; when the file was cut
    short, ``truncated`` with the bytes after the last readable event (``lost_bytes``) and an
    estimate of the events they held."""
    events: int
    total_bytes: int
    truncated: bool = False
    lost_bytes: int = 0
    lost_events_estimate: int = 0
    error: str | None = None

    @property
    def lost_fraction(self) -> float:
        return self.lost_bytes / self.total_bytes if self.total_bytes else 0.0

    def describe(self, name: str) -> str:
        """One sentence for a diagnostic: what was read and what was lost."""
        read_mb = (self.total_bytes - self.lost_bytes) / 1e6
        if self.lost_bytes == 0:
            return f"{name} lacks its closing ']': read all {self.events} events ({read_mb:.1f} MB)"
        if self.lost_fraction >= 0.01:
            return (f"{name} is truncated: read {self.events} events, about {self.lost_fraction:.0%} of the file "
                    f"({self.lost_bytes / 1e6:.1f} MB, roughly {self.lost_events_estimate} events) was lost")
        return (f"{name} is truncated: read {self.events} events ({read_mb:.1f} MB); the file ends inside an "
                f"event, so every event after the cut is lost")


def read_trace_json(con: "duckdb.DuckDBPyConnection", path: str | Path, table: str = "ev") -> TraceRead:
    """Create ``table`` (``idx`` = 0-based event order, then :data:`TRACE_COLUMNS`) from the JSON
    array at ``path``.  A truncated or invalid file loads its longest readable prefix."""
    path = Path(path)
    size = path.stat().st_size
    try:
        n = _load(con, path, table)
        return TraceRead(events=n, total_bytes=size)
    except _duck_error() as exc:
        first_error = str(exc).splitlines()[0]
    cut = _find_readable_prefix(con, path, size, table)
    if cut is None:
        create_empty_trace(con, table)
        return TraceRead(0, size, True, size, 0, first_error)
    n = con.sql(f"SELECT count(*) FROM {table}_raw").fetchall()[0][0]
    lost = size - cut
    per_event = cut / n if n else 0
    return TraceRead(n, size, True, lost, int(lost / per_event) if per_event else 0, first_error)


def _load(con, path: Path, table: str) -> int:
    # no row_number() window: it is an extra single-threaded pass that buffers the whole table.
    # The raw rows keep file order (insertion order is preserved), so ``rowid`` is the 0-based
    # event order; ``table`` is a view that names it ``idx``.
    cols = "{" + ", ".join(f"{k}: '{v}'" for k, v in TRACE_COLUMNS.items()) + "}"
    con.execute(f"""CREATE OR REPLACE TABLE {table}_raw AS
        SELECT * FROM read_json({sql_str(path)}, format='array', columns={cols},
                                maximum_object_size={_MAX_OBJECT})""")
    con.execute(f"CREATE OR REPLACE VIEW {table} AS SELECT rowid AS idx, * FROM {table}_raw")
    return con.sql(f"SELECT count(*) FROM {table}_raw").fetchall()[0][0]


def create_empty_trace(con, table: str) -> None:
    """An empty event table with the columns :func:`read_trace_json` creates."""
    cols = ", ".join(f"{k} {v}" for k, v in TRACE_COLUMNS.items())
    con.execute(f"CREATE OR REPLACE TABLE {table}_raw ({cols})")
    con.execute(f"CREATE OR REPLACE VIEW {table} AS SELECT rowid AS idx, * FROM {table}_raw")


def drop_trace(con, table: str = "ev") -> None:
    """Free the event table (view and raw rows) once nothing needs it any more."""
    con.execute(f"DROP VIEW IF EXISTS {table}")
    con.execute(f"DROP TABLE IF EXISTS {table}_raw")


def _find_readable_prefix(con, path: Path, size: int, table: str) -> int | None:
    """Byte length of the longest prefix that parses as an array once closed with ``]``; the
    table holds its events.  Tries the last few element boundaries first (a file cut at the
    end), then bisects over every boundary (damage in the middle)."""
    with open(path, "rb") as fh:
        head = fh.read(4096).lstrip(b" \t\r\n\xef\xbb\xbf")
    if not head.startswith(b"["):  # not a JSON array at all: nothing to recover
        return None
    tried: set[int] = set()
    for cut in _tail_boundaries(path, size):
        if len(tried) >= _TAIL_TRIES:
            break
        tried.add(cut)
        if _try_prefix(con, path, cut, table):
            return cut
    cuts = [c for c in _all_boundaries(path) if c not in tried]
    lo, hi, best = 0, len(cuts) - 1, None
    while lo <= hi:  # readable(prefix) is monotone: shorter prefixes of a readable one read too
        mid = (lo + hi) // 2
        if _try_prefix(con, path, cuts[mid], table):
            best, lo = cuts[mid], mid + 1
        else:
            hi = mid - 1
    if best is not None:
        _try_prefix(con, path, best, table)
    return best


def _tail_boundaries(path: Path, size: int):
    """Element boundaries (offset just after the closing ``}``), last first, from the file's
    end; the window grows until some are found."""
    window = 1 << 20
    while True:
        start = max(0, size - window)
        with open(path, "rb") as fh:
            fh.seek(start)
            data = fh.read(size - start)
        found = [start + m.start() + 1 for m in _BOUNDARY.finditer(data)]
        if data.rstrip().endswith(b"}"):  # only the closing ']' is missing
            found.append(start + len(data.rstrip()))
        if found or start == 0:
            yield from reversed(found)
            return
        window *= 8


def _all_boundaries(path: Path, chunk: int = 64 << 20) -> list[int]:
    out: list[int] = []
    overlap = 4096  # whitespace runs between '}' ',' '{' are short in practice
    with open(path, "rb") as fh:
        pos = 0
        while True:
            fh.seek(pos)
            data = fh.read(chunk + overlap)
            if not data:
                break
            for m in _BOUNDARY.finditer(data):
                if m.start() < chunk or len(data) <= chunk:
                    out.append(pos + m.start() + 1)
            if len(data) <= chunk:
                break
            pos += chunk
    return sorted(set(out))


def _try_prefix(con, path: Path, cut: int, table: str) -> bool:
    fd, tmp = tempfile.mkstemp(suffix=".json", prefix="profinsight-trace-")
    try:
        with os.fdopen(fd, "wb") as out, open(path, "rb") as src:
            _copy_bytes(src, out, cut)
            out.write(b"]")
        _load(con, Path(tmp), table)
        return True
    except _duck_error():
        return False
    finally:
        os.unlink(tmp)


def _copy_bytes(src, dst, n: int, block: int = 16 << 20) -> None:
    if n <= 0:
        return
    remaining = n
    while remaining:
        buf = src.read(min(block, remaining))
        if not buf:
            break
        dst.write(buf)
        remaining -= len(buf)


__all__ = ["TRACE_COLUMNS", "TraceRead", "create_empty_trace", "drop_trace", "read_trace_json"]


def _duck_error():
    """DuckDB's error base class, imported on use (discovery must not load DuckDB)."""
    import duckdb
    return duckdb.Error
