"""The canonical tables, declared once.

Every importer translates its format into exactly these tables; every analysis, surface and
doc page reads the declaration from here.  Times are integer nanoseconds (``*_ns``), sizes
integer bytes (``*_bytes``).  A table may carry extra columns (for example the PMU metrics
``pmu_*`` whose set depends on the profiler's ``aic_metrics``), but never lacks a declared one:
:func:`conform` adds missing declared columns as nulls and casts to the declared types.
"""

from __future__ import annotations

from .conform import arrow_schema, conform, empty_table
from .tables import PMU_PREFIX, TABLES, Column, Table

#: part of every cache key: bumped when a declared table gains or changes a column
#: (3: the steps table's vendor_* figures, which DuckDB reads straight from cached Parquet;
#: 2: the run_info capability columns)
SCHEMA_VERSION = 3

__all__ = ["TABLES", "Column", "Table", "PMU_PREFIX", "conform", "empty_table", "arrow_schema", "SCHEMA_VERSION"]
