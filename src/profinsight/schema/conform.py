"""Make an Arrow table obey its declaration (column order, types, missing columns as nulls)."""

from __future__ import annotations

from functools import cache

import pyarrow as pa
import pyarrow.compute as pc

from .tables import PMU_PREFIX, TABLES


@cache
def arrow_schema(name: str) -> pa.Schema:
    """The declared Arrow schema of canonical table ``name``."""
    return pa.schema([pa.field(c.name, c.type) for c in TABLES[name].columns])


@cache
def empty_table(name: str) -> pa.Table:
    """A zero-row table with the declared schema (one per name, shared: Arrow tables are
    immutable, and a 1,024-rank summary asks for ten of them a rank)."""
    return arrow_schema(name).empty_table()


def conform(name: str, table: pa.Table | None) -> pa.Table:
    """Return ``table`` with every declared column of ``name`` (in declared order, declared type).

    Missing declared columns become nulls; extra columns are kept after the declared ones
    (``pmu_*`` metrics are cast to float64). Raises ``TypeError`` when a column cannot be cast,
    which is an importer bug, not a user error.
    """
    decl = TABLES[name]
    if table is None:
        return empty_table(name)
    n = table.num_rows
    arrays, fields = [], []
    present = set(table.column_names)
    for col in decl.columns:
        if col.name in present:
            arr = table.column(col.name)
            if arr.type != col.type:
                arr = _cast(arr, col.type, f"{name}.{col.name}")
        else:
            arr = pa.nulls(n, col.type)
        arrays.append(arr)
        fields.append(pa.field(col.name, col.type))
    declared = set(decl.names)
    for extra in table.column_names:
        if extra in declared:
            continue
        arr = table.column(extra)
        if extra.startswith(PMU_PREFIX) and arr.type != pa.float64():
            arr = _cast(arr, pa.float64(), f"{name}.{extra}")
        arrays.append(arr)
        fields.append(pa.field(extra, arr.type))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _cast(arr, type_: pa.DataType, where: str):
    if pa.types.is_null(arr.type):
        return pa.nulls(len(arr), type_)
    if pa.types.is_dictionary(arr.type):
        arr = pc.cast(arr, arr.type.value_type)
    try:
        return pc.cast(arr, type_)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:  # pragma: no cover - importer bug
        raise TypeError(f"cannot cast {where} from {arr.type} to {type_}: {exc}") from exc
