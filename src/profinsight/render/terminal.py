"""An analysis table laid out for a terminal of a given width, as plain data (the CLI draws it).

A wide result does not fit 80–200 characters as is (``utilization`` has 34 columns; a GPU
kernel name runs to hundreds of characters), so the layout

- chooses a **unit per column** from its name and values: ``*_us`` in us or ms (ms once the
  column's largest value reaches 10,000 us), ``*_bytes`` in KiB / MiB / GiB (binary, as the
  memory views), ``*_ratio`` as a percentage; the header says the unit (``dur ms``);
- hides what a person does not read in a terminal: the chart ``label`` column, absolute epoch
  timestamps (``*_ns`` columns whose values are epoch nanoseconds: ``offset_us`` says where), and
  columns that are empty in every row — all of them stay in ``--format csv|json``;
- cuts long text (and dicts / lists, written as compact JSON) with an ellipsis;
- keeps the **key columns** (rank, step, name, type, ...) and then as many of the others, in
  order, as fit the width; the rest are named in ``hidden``;
- **transposes** a result of a few rows (one per rank-step) whose columns do not fit: one line
  per column, one value column per row — every figure visible.

``columns=`` picks and orders the columns explicitly (the CLI's ``--columns``)."""

from __future__ import annotations

import json
import math
import re

import pandas as pd

#: columns that identify a row: always kept, first
KEY_COLUMNS = ("rank", "step", "run", "pair", "component", "type", "name", "kind", "core", "position", "status")
#: columns never shown in a terminal table by default
HIDDEN_BY_DEFAULT = ("label",)
#: a text cell longer than this is cut with an ellipsis
MAX_TEXT = 40
#: values of an epoch-nanosecond column are above this (2001-09-09)
EPOCH_NS = 1e18
#: at most this many rows are transposed
TRANSPOSE_MAX_ROWS = 4
GAP = 2  # spaces between columns


def _numeric(s: pd.Series) -> pd.Series:
    return pd.to_numeric(s, errors="coerce").astype("float64")


def unit_of(name: str, s: pd.Series) -> tuple[str, float, str]:
    """(header, divisor, kind) of one column: kind ``time``, ``bytes``, ``ratio``, ``int``, ``float`` or ``text``."""
    if s.dtype == object or str(s.dtype) in ("string", "str", "category", "bool", "boolean"):
        return name, 1.0, "text"
    v = _numeric(s).abs()
    top = float(v.max()) if v.notna().any() else 0.0
    if name.endswith("_us"):
        base = name[:-3]
        return (f"{base} ms", 1e3, "time") if top >= 1e4 else (f"{base} us", 1.0, "time")
    if name.endswith("_bytes") or name == "bytes":
        base = name[: -len("_bytes")] if name != "bytes" else "size"
        for unit, div in (("GiB", 2.0**30), ("MiB", 2.0**20), ("KiB", 2.0**10)):
            if top >= div:
                return f"{base} {unit}", div, "bytes"
        return f"{base} B", 1.0, "bytes"
    if name.endswith("_ratio"):
        return f"{name[: -len('_ratio')]} %", 0.01, "ratio"
    if str(s.dtype).lower().startswith(("int", "uint")):
        return name, 1.0, "int"
    return name, 1.0, "float"


#: an HCCL collective type as HCCL writes it (``hcom_allReduce_``): the trailing underscore is how
#: HCCL builds names, not part of the name a person reads
_HCCL_TYPE = re.compile(r"^(hcom_[A-Za-z0-9]+)_$")


def display_name(v):
    """``hcom_allReduce_`` -> ``hcom_allReduce`` (any other value unchanged): names as shown; the
    data (DataFrames, JSON, CSV) keeps the raw name."""
    if isinstance(v, str):
        m = _HCCL_TYPE.match(v)
        if m:
            return m.group(1)
    return v


def cell(v, kind: str, div: float, max_text: int = MAX_TEXT) -> str:
    """One value as text in its column's unit; long text cut with an ellipsis."""
    if isinstance(v, (dict, list, tuple)):
        return _cut(json.dumps(v, ensure_ascii=False, default=str, separators=(",", ":")), max_text)
    if v is None or (not isinstance(v, str) and pd.api.types.is_scalar(v) and pd.isna(v)):
        return ""
    if kind == "text":
        return _cut(str(display_name(v)).replace("\n", " "), max_text)
    try:
        f = float(v) / div
    except (TypeError, ValueError):
        return _cut(str(v), max_text)
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    if kind == "int" or (kind == "bytes" and div == 1.0):
        return f"{int(round(f)):,}"
    if kind in ("time", "bytes", "ratio"):
        return f"{f:,.1f}" if abs(f) >= 100 else f"{f:,.2f}"
    return f"{f:,.3f}" if abs(f) < 1e4 else f"{f:,.0f}"


def _cut(s: str, n: int) -> str:
    return s if len(s) <= n else s[: max(n - 1, 1)] + "…"


def _is_epoch(name: str, s: pd.Series) -> bool:
    if not name.endswith("_ns"):
        return False
    v = _numeric(s)
    return bool(v.notna().any() and float(v.abs().max()) >= EPOCH_NS)


def default_columns(df: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(columns shown by default in order, columns left out: label, epoch ns, all-empty)."""
    keep, out = [], []
    for c in df.columns:
        s = df[c]
        if c in HIDDEN_BY_DEFAULT or _is_epoch(str(c), s) or (len(df) and s.isna().all()):
            out.append(str(c))
        else:
            keep.append(str(c))
    keys = [c for c in KEY_COLUMNS if c in keep]
    return keys + [c for c in keep if c not in keys], out


def layout(df: pd.DataFrame, width: int, columns: list[str] | None = None, max_rows: int = 200) -> dict:
    """The table as ``{"headers", "align", "rows", "hidden", "transposed", "more_rows"}``."""
    if columns:
        missing = [c for c in columns if c not in df.columns]
        if missing:
            raise KeyError(missing)
        order, hidden = list(columns), []
    else:
        order, hidden = default_columns(df)
    head = df.head(max_rows)
    specs = {c: unit_of(c, df[c]) for c in order}
    # long text (kernel names) gives way first: cut text columns shorter until everything fits
    for max_text in (MAX_TEXT, 32, 24, 16):
        texts = {c: [cell(v, specs[c][2], specs[c][1], max_text) for v in head[c]] for c in order}
        widths = {c: max([len(specs[c][0])] + [len(x) for x in texts[c]]) for c in order}
        if sum(widths.values()) + GAP * len(order) <= width:
            break
    shown, used = [], 0
    keys = [c for c in order if c in KEY_COLUMNS]
    for c in order:
        if columns or c in keys or used + widths[c] + GAP <= width:
            shown.append(c)
            used += widths[c] + GAP
    cut = [c for c in order if c not in shown]
    if cut and not columns and 0 < len(df) <= TRANSPOSE_MAX_ROWS:
        return _transposed(df, order, specs, texts, hidden)
    return {
        "headers": [specs[c][0] for c in shown],
        "align": ["left" if specs[c][2] == "text" else "right" for c in shown],
        "rows": [[texts[c][i] for c in shown] for i in range(len(head))],
        "hidden": cut + hidden,
        "transposed": False,
        "more_rows": max(len(df) - max_rows, 0),
    }


def _transposed(df, order, specs, texts, hidden) -> dict:
    keys = [c for c in order if c in KEY_COLUMNS]
    names = [" ".join(f"{k} {texts[k][i]}" for k in keys) or f"row {i + 1}" for i in range(len(df))]
    rest = [c for c in order if c not in keys]
    return {
        "headers": ["metric", *names],
        "align": ["left", *(["right"] * len(names))],
        "rows": [[specs[c][0], *texts[c]] for c in rest],
        "hidden": hidden,
        "transposed": True,
        "more_rows": 0,
    }
