"""Memory CSVs -> ``memory_samples``, ``memory_blocks``, ``module_memory``.

Sizes in these files are *binary* MB / KB (reference 1.x: DB ``totalReserved = 1522532352`` bytes
<-> CSV ``1452.0`` MB), so MB -> x 2^20 (``mib_bytes``) and KB -> x 1024 (``kib_bytes``).
APP rows of memory_record.csv have only a reserved value.  operator_memory.csv rows named
``cann::...`` are graph-engine allocations (component ``GE``), the others the framework's
caching allocator (``PTA``).  The device is the ``{id}`` of ``NPU:{id}``.
"""

from __future__ import annotations

from . import _files as F

_DEVICE = "TRY_CAST(regexp_extract({col}, '(\\d+)\\s*$', 1) AS INTEGER)"


#: value columns whose damaged cells become NULL (and are counted); a damaged sample time drops
#: its row instead (:func:`_drop_untimed`)
_MR_MB = ("Total Allocated(MB)", "Total Reserved(MB)", "Total Active(MB)")
_OM_CONVERSIONS = {
    "Size(KB)": "kib_bytes",
    **dict.fromkeys(("Allocation Time(us)", "Release Time(us)", "Active Release Time(us)"), "time_ns"),
    **dict.fromkeys(
        (
            f"{when} Total {what}(MB)"
            for when in ("Allocation", "Release")
            for what in ("Allocated", "Reserved", "Active")
        ),
        "mib_bytes",
    ),
}


def _device(cols: list[str], *names: str) -> str:
    return _DEVICE.format(col=f"clean({F.pick(cols, *names)})")


#: SQL: a cell with nothing in it (NULL or white space)
_EMPTY = "coalesce(trim({col}), '') = ''"


def _holds_a_block(cols: list[str]) -> str:
    """SQL: an operator_memory.csv row holds a block -- its size or its allocation time has
    something in it (TRUE where the file lacks either column: nothing to judge by)."""
    size, alloc = F.pick(cols, "Size(KB)"), F.pick(cols, "Allocation Time(us)")
    if "NULL" in (size, alloc):
        return "TRUE"
    return f"NOT ({_EMPTY.format(col=size)} AND {_EMPTY.format(col=alloc)})"


def load_memory(con, inputs: F.Inputs) -> dict[str, str]:
    """Create tables ``memory_samples``, ``memory_blocks``, ``module_memory`` for the files that
    exist; returns {canonical table: DuckDB table} for those created."""
    made = {}
    cols = inputs.read_csv(con, F.MEMORY_RECORD, "mr_raw")
    if cols is not None:
        p = lambda *n: F.pick(cols, *n)  # noqa: E731
        con.execute(f"""CREATE OR REPLACE TABLE memory_samples AS
            SELECT {_device(cols, "Device Type", "Device")} AS device, clean({p("Component")}) AS component,
                   ts_ns({p("Timestamp(us)")}) AS ts_ns, mib_bytes({p("Total Allocated(MB)")}) AS allocated_bytes,
                   mib_bytes({p("Total Reserved(MB)")}) AS reserved_bytes,
                   mib_bytes({p("Total Active(MB)")}) AS active_bytes, clean({p("Stream Ptr")}) AS stream_ptr
            FROM mr_raw""")
        inputs.report_unconverted(con, F.MEMORY_RECORD, "mr_raw", cols, dict.fromkeys(_MR_MB, "mib_bytes"))
        _drop_untimed(con, inputs, "memory_samples", "ts_ns", F.MEMORY_RECORD)
        made["memory_samples"] = "memory_samples"
    cols = inputs.read_csv(con, F.OPERATOR_MEMORY, "om_raw")
    if cols is not None:
        p = lambda *n: F.pick(cols, *n)  # noqa: E731
        con.execute(f"""CREATE OR REPLACE TABLE memory_blocks AS
            SELECT {_device(cols, "Device Type", "Device")} AS device, clean({p("Name")}) AS name,
                   CASE WHEN clean({p("Name")}) LIKE 'cann::%' THEN 'GE' ELSE 'PTA' END AS component,
                   kib_bytes({p("Size(KB)")}) AS size_bytes, time_ns({p("Allocation Time(us)")}) AS alloc_ns,
                   time_ns({p("Release Time(us)")}) AS release_ns,
                   time_ns({p("Active Release Time(us)")}) AS active_release_ns,
                   mib_bytes({p("Allocation Total Allocated(MB)")}) AS alloc_total_allocated_bytes,
                   mib_bytes({p("Allocation Total Reserved(MB)")}) AS alloc_total_reserved_bytes,
                   mib_bytes({p("Allocation Total Active(MB)")}) AS alloc_total_active_bytes,
                   mib_bytes({p("Release Total Allocated(MB)")}) AS release_total_allocated_bytes,
                   mib_bytes({p("Release Total Reserved(MB)")}) AS release_total_reserved_bytes,
                   mib_bytes({p("Release Total Active(MB)")}) AS release_total_active_bytes,
                   clean({p("Stream Ptr")}) AS stream_ptr
            FROM om_raw WHERE {_holds_a_block(cols)}""")
        # a row with neither a size nor an allocation time (both cells empty, not merely
        # unreadable: those are said as values and keep their rows) is no block: the exports
        # write both on every row, so it is a damaged or stray line
        empty = (
            con.sql("SELECT count(*) FROM om_raw").fetchall()[0][0]
            - con.sql("SELECT count(*) FROM memory_blocks").fetchall()[0][0]
        )
        inputs.report_dropped(F.OPERATOR_MEMORY, empty, "they hold neither a size nor an allocation time")
        inputs.report_unconverted(con, F.OPERATOR_MEMORY, "om_raw", cols, _OM_CONVERSIONS)
        made["memory_blocks"] = "memory_blocks"
    cols = inputs.read_csv(con, F.MODULE_MEMORY, "mm_raw")
    if cols is not None:
        p = lambda *n: F.pick(cols, *n)  # noqa: E731
        con.execute(f"""CREATE OR REPLACE TABLE module_memory AS
            SELECT coalesce({_device(cols, "Device")}, int_or_null({p("Device_id")})) AS device,
                   clean({p("Component")}) AS component, ts_ns({p("Timestamp(us)")}) AS ts_ns,
                   mib_bytes({p("Total Reserved(MB)")}) AS reserved_bytes
            FROM mm_raw""")
        inputs.report_unconverted(con, F.MODULE_MEMORY, "mm_raw", cols, {"Total Reserved(MB)": "mib_bytes"})
        _drop_untimed(con, inputs, "module_memory", "ts_ns", F.MODULE_MEMORY)
        made["module_memory"] = "module_memory"
    return made


def _drop_untimed(con, inputs: F.Inputs, table: str, col: str, file: str) -> None:
    """A sample without a time (or with a negative one: no clock of the export runs below zero)
    cannot be placed on the curve: drop it and say so."""
    n = con.sql(f"SELECT count(*) FROM {table} WHERE {col} IS NULL OR {col} < 0").fetchall()[0][0]
    if n:
        con.execute(f"DELETE FROM {table} WHERE {col} IS NULL OR {col} < 0")
        inputs.report_dropped(file, n, "their timestamp is empty, negative or not a number")


def memory_device(con, made: dict[str, str]) -> int | None:
    """The device id the memory files name (``NPU:{id}``), if any."""
    for table in ("memory_samples", "memory_blocks", "module_memory"):
        if table in made:
            d = con.sql(f"SELECT min(device) FROM {table}").fetchall()[0][0]
            if d is not None:
                return int(d)
    return None
