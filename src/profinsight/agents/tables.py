"""Results as compact JSON for an agent: a table is its column names once and its rows as lists,
cut at a row limit with a "truncated, N more" marker, so an answer stays small whatever the
profile's size.  Values keep their exact Python form (integer ns stay integers, floats keep every
digit), so what an agent reads equals what ``p.op_summary()`` holds in a notebook."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

#: rows of a table an answer holds unless the caller asks for fewer or more
DEFAULT_ROWS = 50
#: the most rows any answer holds
MAX_ROWS = 1_000
#: list items kept inside one nested value (a finding's evidence); the rest are counted
MAX_ITEMS = 20
#: characters kept of one text value
MAX_TEXT = 2_000


def row_limit(limit: int | None) -> int:
    """``limit`` bounded to 1 .. :data:`MAX_ROWS` (None: :data:`DEFAULT_ROWS`)."""
    return DEFAULT_ROWS if limit is None else max(1, min(int(limit), MAX_ROWS))


def table_json(df, limit: int | None = None) -> dict:
    """``{columns, rows, total_rows[, truncated]}`` of a DataFrame, at most ``limit`` rows."""
    n = row_limit(limit)
    head = df.head(n)
    cols = [str(c) for c in head.columns]
    data = [head[c].tolist() for c in head.columns]
    rows = [[plain(v) for v in row] for row in zip(*data)] if data else [[] for _ in range(len(head))]
    out: dict[str, Any] = {"columns": cols, "rows": rows, "total_rows": int(len(df))}
    if len(df) > n:
        out["truncated"] = f"truncated, {len(df) - n} more rows (ask with a larger max_rows, at most {MAX_ROWS})"
    return out


def arrow_json(table, limit: int | None = None) -> dict:
    """The same shape from an Arrow table (SQL answers)."""
    n = row_limit(limit)
    head = table.slice(0, n)
    cols = list(head.column_names)
    data = [head.column(c).to_pylist() for c in cols]
    rows = [[plain(v) for v in row] for row in zip(*data)] if data else []
    out: dict[str, Any] = {"columns": cols, "rows": rows, "total_rows": int(table.num_rows)}
    if table.num_rows > n:
        out["truncated"] = f"truncated, {table.num_rows - n} more rows (ask with a larger max_rows, at most {MAX_ROWS})"
    return out


def plain(v, items: int = MAX_ITEMS):
    """One value as JSON-able data: NA and NaN become null, numpy scalars Python numbers, lists
    longer than ``items`` and long texts are cut with a marker saying how much was left out."""
    if v is None:
        return None
    if isinstance(v, bool | int | str):
        return (
            v
            if not isinstance(v, str) or len(v) <= MAX_TEXT
            else v[:MAX_TEXT] + f"... ({len(v) - MAX_TEXT} more chars)"
        )
    if isinstance(v, float):
        return None if math.isnan(v) or math.isinf(v) else v
    if isinstance(v, Decimal):  # DuckDB sums integers as HUGEINT: exact, and whole
        return int(v) if v == v.to_integral_value() else float(v)
    if isinstance(v, dict):
        return {str(k): plain(x, items) for k, x in v.items()}
    if isinstance(v, list | tuple):
        out = [plain(x, items) for x in v[:items]]
        if len(v) > items:
            out.append(f"truncated, {len(v) - items} more")
        return out
    item = getattr(v, "item", None)  # numpy scalar
    if callable(item) and getattr(v, "shape", None) == ():
        return plain(item(), items)
    tolist = getattr(v, "tolist", None)  # numpy array
    if callable(tolist):
        return plain(tolist(), items)
    try:
        import pandas as pd

        if v is pd.NA or v is pd.NaT:
            return None
        if isinstance(v, pd.Timestamp):
            return v.isoformat()
    except ImportError:  # pragma: no cover - pandas is a dependency
        pass
    return str(v)
