"""The memory CSVs of ``mindstudio_profiler_output/`` -> ``memory_samples``, ``memory_blocks``,
``module_memory`` and the ``NPU MEM`` counters, in DuckDB SQL.

msprof writes them itself (reference 4.2), unlike torch_npu's copies: every file starts with a
``Device_id`` column (several devices share a file: this rank's rows are kept) and sizes are in
**KB** (binary: x 1024), not MB --

- ``npu_mem_*.csv``: ``Device_id, event, ddr(KB), hbm(KB), memory(KB), timestamp(us)``, the
  process (``app``) and whole-device (``device``) readings.  ``app`` rows are the APP memory curve
  (its HBM figure, as the torch_npu DB reads ``NPU_MEM``); both kinds are ``NPU MEM`` counters
  named as the timeline names them (``APP/HBM``, ``Device/DDR`` ... in KB).
- ``memory_record_*.csv``: ``Device_id, Component, Timestamp(us), Total Allocated(KB), Total
  Reserved(KB), Device``, the graph engine's allocator (``GE``).
- ``operator_memory_*.csv``: ``Device_id, Name, Size(KB), Allocation Time(us), Duration(us),
  Allocation/Release Total Allocated/Reserved(KB), Device``; graph-engine blocks (named
  ``cann::<op>`` as the torch_npu exports name them), released at allocation + duration.
- ``npu_module_mem_*.csv``: ``Device_id, Component, Timestamp(us), Total Reserved(KB), Device``.

Times are on the timeline's clock: a time past 2001 (epoch us) is already on the wall clock,
anything smaller is the device's monotonic clock and takes the collection's clock offset.  A
damaged cell becomes null and is counted (one warning per file and column); a sample without a
usable time cannot be placed and its row is dropped (counted too).  A file missing a column it
needs costs only that column.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from ... import diagnostics as dg
from .._common import unconverted_cells
from . import _output as O
from ._summaries import _device_filter, _pick, read_parts

#: the memory deliverables, by stem, and the canonical table each feeds
STEMS = {
    "npu_mem": "memory_samples",
    "memory_record": "memory_samples",
    "operator_memory": "memory_blocks",
    "npu_module_mem": "module_memory",
}
#: a time above this many ns is on the wall clock (after 2001-09-09), not since boot
EPOCH_NS = 10**18
_FIX = "export the collection again (msprof --export=on --output=<PROF_DIR>)"


def files(where: Path) -> dict[str, list[Path]]:
    """The memory CSVs of an output folder, by stem (slices in order, as one file)."""
    found = {stem: O.flat(O.parts(where, stem, "csv")) for stem in STEMS}
    return {k: v for k, v in found.items() if v}


def _when(col: str, off: str) -> str:
    """A time cell (us, maybe tab-suffixed) on the wall clock, in ns; null when unusable or negative."""
    return f"(CASE WHEN time_ns({col}) > {EPOCH_NS} THEN time_ns({col}) ELSE time_ns({col}) + {off} END)"


def _apply(conversion: str, col: str) -> str:
    return conversion.format(x=col) if "{x}" in conversion else f"{conversion}({col})"


#: a signed KB figure (a block allocated before the capture, a component's -1) -> bytes
SIGNED_KB = "TRY_CAST(round(TRY_CAST(clean({x}) AS DOUBLE) * 1024) AS BIGINT)"


class _File:
    """One memory deliverable read into DuckDB: its header, the SQL of its columns, and the
    bookkeeping of what could not be converted."""

    def __init__(self, con, paths: list[Path], table: str, device: int | None, rank, diags: list):
        self.con, self.paths, self.table, self.rank, self.diags = con, paths, table, rank, diags
        self.cols = read_parts(con, paths, table, rank, diags) or []
        self.where = _device_filter(self.cols, device)

    def col(self, *names: str) -> str:
        return _pick(self.cols, *names)

    def has(self, *names: str) -> bool:
        return self.col(*names) != "NULL"

    def report_bad(self, conversions: dict[tuple[str, ...], str]) -> None:
        """One warning per column whose non-empty cells its conversion left null; a conversion is
        a macro name (``kib_bytes``) or an SQL template over ``{x}``."""
        present = [(names, macro) for names, macro in conversions.items() if self.has(*names)]
        if not present:
            return
        checks = [(_apply(m, self.col(*n)), self.col(*n)) for n, m in present]
        source = f"{self.table} WHERE {self.where}"
        for (names, _), (n, samples) in zip(present, unconverted_cells(self.con, source, checks)):
            if n:
                shown = ", ".join(repr(v[:40]) for v in samples[:3])
                col = next(c for c in names if c in self.cols)
                self.diags.append(
                    dg.warning(
                        "csv-bad-values",
                        f"{self.paths[0].name}: {n} value(s) of column {col!r} are not usable numbers ({shown}): set "
                        "to null, their rows kept",
                        file=self.paths[0],
                        fix=_FIX,
                        rank=self.rank,
                    )
                )

    def drop_untimed(self, table: str, why: str = "their timestamp is empty, negative or not a number") -> None:
        n = self.con.sql(f"SELECT count(*) FROM {table} WHERE ts_ns IS NULL").fetchall()[0][0]
        if n:
            self.con.execute(f"DELETE FROM {table} WHERE ts_ns IS NULL")
            self.diags.append(
                dg.warning(
                    "csv-bad-rows",
                    f"{self.paths[0].name}: {n} row(s) dropped because {why}",
                    file=self.paths[0],
                    fix=_FIX,
                    rank=self.rank,
                )
            )


def load(con, where: Path, device: int | None, dev: int, off: str, rank, diags: list) -> dict[str, pa.Table]:
    """The memory tables of one rank from the output folder ``where``; ``device`` filters shared
    files (None: keep every row), ``dev`` is the rank's device, ``off`` the clock offset (SQL)."""
    found = files(where)
    out: dict[str, pa.Table] = {}
    samples = []
    if "npu_mem" in found:
        f = _File(con, found["npu_mem"], "npm_raw", device, rank, diags)
        if f.cols:
            ts = _when(f.col("timestamp(us)", "Timestamp(us)"), off)
            con.execute(f"""CREATE OR REPLACE TABLE npm AS
                SELECT {dev}::INTEGER AS device, lower(clean({f.col("event", "Event")})) AS event, {ts} AS ts_ns,
                       kib_bytes({f.col("ddr(KB)")}) AS ddr, kib_bytes({f.col("hbm(KB)")}) AS hbm,
                       kib_bytes({f.col("memory(KB)")}) AS memory
                FROM npm_raw WHERE {f.where}""")
            f.report_bad({("ddr(KB)",): "kib_bytes", ("hbm(KB)",): "kib_bytes", ("memory(KB)",): "kib_bytes"})
            f.drop_untimed("npm")
            samples.append("""SELECT device, 'APP' AS component, ts_ns, NULL::BIGINT AS allocated_bytes,
                                     hbm AS reserved_bytes, NULL::BIGINT AS active_bytes, NULL AS stream_ptr
                              FROM npm WHERE event = 'app'""")
            out["counters"] = con.sql("""
                SELECT device, 'NPU MEM' AS track, who || '/' || what AS name, ts_ns, v / 1024.0 AS value, 'KB' AS unit
                FROM (SELECT device, ts_ns, CASE event WHEN 'app' THEN 'APP' WHEN 'device' THEN 'Device' ELSE event END
                             AS who, ddr, hbm, memory FROM npm)
                UNPIVOT (v FOR what IN (ddr AS 'DDR', hbm AS 'HBM', memory AS 'Memory'))
                ORDER BY name, ts_ns""").to_arrow_table()
    if "memory_record" in found:
        f = _File(con, found["memory_record"], "mr_raw", device, rank, diags)
        if f.cols:
            ts = _when(f.col("Timestamp(us)"), off)
            con.execute(f"""CREATE OR REPLACE TABLE mrec AS
                SELECT {dev}::INTEGER AS device, coalesce(clean({f.col("Component")}), 'GE') AS component,
                       {ts} AS ts_ns, kib_bytes({f.col("Total Allocated(KB)")}) AS allocated_bytes,
                       kib_bytes({f.col("Total Reserved(KB)")}) AS reserved_bytes, NULL::BIGINT AS active_bytes,
                       NULL AS stream_ptr
                FROM mr_raw WHERE {f.where}""")
            f.report_bad({("Total Allocated(KB)",): "kib_bytes", ("Total Reserved(KB)",): "kib_bytes"})
            f.drop_untimed("mrec")
            samples.append("SELECT * FROM mrec")
    if samples:
        out["memory_samples"] = con.sql(
            " UNION ALL BY NAME ".join(f"({s})" for s in samples) + " ORDER BY component, ts_ns"
        ).to_arrow_table()
    if "operator_memory" in found:
        f = _File(con, found["operator_memory"], "om_raw", device, rank, diags)
        if f.cols:
            name = f"clean({f.col('Name')})"
            alloc = _when(f.col("Allocation Time(us)"), off)
            total = {
                "alloc_total_allocated_bytes": "Allocation Total Allocated(KB)",
                "alloc_total_reserved_bytes": "Allocation Total Reserved(KB)",
                "release_total_allocated_bytes": "Release Total Allocated(KB)",
                "release_total_reserved_bytes": "Release Total Reserved(KB)",
            }
            totals = ", ".join(f"kib_bytes({f.col(c)}) AS {k}" for k, c in total.items())
            out["memory_blocks"] = con.sql(f"""
                SELECT {dev}::INTEGER AS device,
                       CASE WHEN {name} IS NULL OR starts_with({name}, 'cann::') THEN {name} ELSE 'cann::' || {name} END
                           AS name,
                       'GE' AS component, {_apply(SIGNED_KB, f.col("Size(KB)"))} AS size_bytes,
                       {alloc} AS alloc_ns, {alloc} + dur_ns({f.col("Duration(us)")}) AS release_ns,
                       NULL::BIGINT AS active_release_ns, {totals},
                       NULL::BIGINT AS alloc_total_active_bytes, NULL::BIGINT AS release_total_active_bytes,
                       NULL AS stream_ptr
                FROM om_raw WHERE {f.where} ORDER BY alloc_ns""").to_arrow_table()
            f.report_bad(
                {
                    ("Size(KB)",): SIGNED_KB,
                    ("Allocation Time(us)",): "time_ns",
                    ("Duration(us)",): "dur_ns",
                    **{(c,): "kib_bytes" for c in total.values()},
                }
            )
    if "npu_module_mem" in found:
        f = _File(con, found["npu_module_mem"], "mm_raw", device, rank, diags)
        if f.cols:
            ts = _when(f.col("Timestamp(us)"), off)
            # -1 KB means "only releases seen" (reference 2.7): kept as written, in bytes
            reserved = _apply(SIGNED_KB, f.col("Total Reserved(KB)"))
            con.execute(f"""CREATE OR REPLACE TABLE mmod AS
                SELECT {dev}::INTEGER AS device, clean({f.col("Component")}) AS component, {ts} AS ts_ns,
                       {reserved} AS reserved_bytes
                FROM mm_raw WHERE {f.where}""")
            f.report_bad({("Total Reserved(KB)",): SIGNED_KB})
            f.drop_untimed("mmod")
            out["module_memory"] = con.sql("SELECT * FROM mmod ORDER BY component, ts_ns").to_arrow_table()
    return out
