"""Read-only SQL for an agent: one SELECT over the canonical tables, bounded in rows and time.

Three locks, each of which alone would stop a write:

1. **DuckDB's own parser** (``duckdb.extract_statements``) must find exactly one statement of
   type SELECT — ``COPY ... TO``, ``CREATE``, ``ATTACH``, ``INSTALL``/``LOAD``, ``PRAGMA``/``SET``,
   ``EXPORT`` and several statements are refused before anything runs (a regex would miss
   comments, quoting and the dialect's corners).
2. **A connection of its own** per profile (never the notebook's), whose views read the cached
   Parquet files.  ``enable_external_access = false`` alone would break those views (they read
   files); allowing the cache *folder* would let ``COPY ... TO`` write there.  So the connection
   allows exactly the Parquet files of the profile (``allowed_paths``), nothing else, and then
   locks its configuration: a ``SELECT * FROM read_text('/etc/passwd')`` or a ``SET`` inside a
   query fails with DuckDB's permission error.
3. **A timer** that interrupts the query after ``timeout_s`` seconds; the answer holds at most
   ``max_rows`` rows with a "truncated, N more" marker.
"""

from __future__ import annotations

import threading
import weakref

from ..errors import ProfileError
from ..schema import TABLES
from .tables import arrow_json

DEFAULT_TIMEOUT_S = 10.0
MAX_TIMEOUT_S = 60.0
MEMORY_LIMIT = "4GB"

_CONNECTIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def check_select(query: str) -> str:
    """``query`` if DuckDB parses it as exactly one SELECT statement, else a ProfileError."""
    import duckdb

    text = (query or "").strip()
    if not text:
        raise ProfileError(
            "empty query", fix="pass one SELECT statement, e.g. SELECT kind, count(*) FROM device_tasks GROUP BY kind"
        )
    try:
        statements = duckdb.extract_statements(text)
    except duckdb.Error as exc:
        raise ProfileError(f"SQL does not parse: {exc}", fix=f"tables: {', '.join(TABLES)}") from None
    if len(statements) != 1:
        raise ProfileError(f"one statement per call, not {len(statements)}", fix="send each SELECT in its own sql call")
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        name = getattr(kind, "name", str(kind))
        raise ProfileError(
            f"only SELECT statements run here; this is a {name} statement",
            fix="the tables are read-only: query them with SELECT (export data with `profinsight export`)",
        )
    return text


def connection(profile):
    """The locked read-only connection of ``profile`` (made once, kept while the profile lives)."""
    con = _CONNECTIONS.get(profile)
    if con is None:
        con = _connect(profile)
        _CONNECTIONS[profile] = con
    return con


def _connect(profile):
    import duckdb

    con = duckdb.connect(
        ":memory:",
        config={"threads": 2, "autoinstall_known_extensions": False, "autoload_known_extensions": False},
    )
    allowed = []
    for name in TABLES:
        files = profile.parquet_files(name)
        if files:
            allowed += [str(f) for f in files]
            lst = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
            con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet([{lst}], union_by_name=true)")
        else:
            con.register(name, profile.arrow(name))
    for setting in ("SET enable_progress_bar = false", f"SET memory_limit = '{MEMORY_LIMIT}'"):
        try:
            con.execute(setting)
        except duckdb.Error:
            pass  # a setting this DuckDB lacks locks nothing
    con.execute("SET allowed_paths = $paths", {"paths": allowed})
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return con


def run_select(profile, query: str, *, max_rows: int | None = None, timeout_s: float | None = None) -> dict:
    """Run one checked SELECT on ``profile``'s locked connection: ``{columns, rows, total_rows,
    [truncated], elapsed_s}``."""
    import time

    import duckdb

    text = check_select(query)
    limit_s = DEFAULT_TIMEOUT_S if timeout_s is None else max(0.01, min(float(timeout_s), MAX_TIMEOUT_S))
    con = connection(profile)
    timer = threading.Timer(limit_s, con.interrupt)
    started = time.monotonic()
    timer.start()
    try:
        table = con.sql(text).to_arrow_table()
    except duckdb.InterruptException:
        raise ProfileError(
            f"query stopped after {limit_s:g} s", fix="narrow it (a WHERE on rank / step / start_ns, a LIMIT)"
        ) from None
    except duckdb.Error as exc:
        raise ProfileError(f"SQL error: {exc}", fix=f"tables (read-only): {', '.join(TABLES)}") from None
    finally:
        timer.cancel()
    out = arrow_json(table, max_rows)
    out["elapsed_s"] = round(time.monotonic() - started, 3)
    return out
