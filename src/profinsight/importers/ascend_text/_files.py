"""Where the text export keeps its files, and reading its CSVs into DuckDB.

Why DuckDB for the CSVs: cells hold quoted multi-line lists (``Call Stack``), files mix CRLF and
LF, and ``kernel_details.csv`` can have a million rows.  ``read_csv(all_varchar=true)`` handles all
of that in C++; conversions happen in SQL with the exact macros of :mod:`.._common`.  Rows the
reader cannot split (wrong column count, broken quoting) are counted through DuckDB's rejects
table, so a damaged file still loads and the doctor says how many rows were dropped; a file whose
dialect the sniffer refuses is read again by its header (:func:`.._common.read_csv_by_header`).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from ... import diagnostics as dg
from .._common import read_csv_by_header, sql_str, unconverted_cells

OUTPUT = "ASCEND_PROFILER_OUTPUT"

#: the deliverables this importer reads, in ASCEND_PROFILER_OUTPUT
TRACE = "trace_view.json"
KERNELS = "kernel_details.csv"
OPERATORS = "operator_details.csv"
MEMORY_RECORD = "memory_record.csv"
OPERATOR_MEMORY = "operator_memory.csv"
MODULE_MEMORY = "npu_module_mem.csv"
L2_CACHE = "l2_cache.csv"
COMMUNICATION = "communication.json"
COMM_MATRIX = "communication_matrix.json"
READ = (TRACE, KERNELS, OPERATORS, MEMORY_RECORD, OPERATOR_MEMORY, MODULE_MEMORY, L2_CACHE, COMMUNICATION, COMM_MATRIX)
STEP_TRACE = "step_trace_time.csv"
#: the vendor's summaries, read only where the files above hold no device task (``_summary``)
SUMMARIES = (STEP_TRACE, "analysis.db")
#: files whose presence marks a text export (any one is enough; analysis.db is not one: a DB
#: export holds it too)
MARKERS = READ + (STEP_TRACE, "op_statistic.csv", "api_statistic.csv")


def rank_folder(path: Path) -> Path | None:
    """The rank folder for ``path`` (the folder itself or its ASCEND_PROFILER_OUTPUT child) when
    it holds text deliverables; None otherwise."""
    path = Path(path)
    if not path.is_dir():
        return None
    if path.name == OUTPUT:
        path = path.parent
    out = path / OUTPUT
    if not out.is_dir():
        return None
    if any((out / name).is_file() for name in MARKERS):
        return path
    return None


def info_file(folder: Path) -> Path | None:
    """``profiler_info_{rank}.json`` (``profiler_info.json`` on a single card)."""
    found = sorted(folder.glob("profiler_info*.json"))
    return found[0] if found else None


def source_files(folder: Path) -> tuple[Path, ...]:
    """Every file :func:`load_rank` reads, sorted (the cache key is built from them)."""
    files = [p for p in (info_file(folder), folder / "profiler_metadata.json") if p and p.is_file()]
    files += [folder / OUTPUT / n for n in READ + SUMMARIES if (folder / OUTPUT / n).is_file()]
    return tuple(sorted(files))


class Inputs:
    """The files of one rank folder plus the diagnostics raised while reading them."""

    def __init__(self, folder: Path, rank: int | None):
        self.folder = folder
        self.out = folder / OUTPUT
        self.rank = rank
        self.diagnostics: list[dg.Diagnostic] = []

    def set_rank(self, rank: int | None) -> None:
        """The rank is known only once profiler_info was read; stamp it on what came before."""
        self.rank = rank
        self.diagnostics = [dataclasses.replace(d, rank=rank) for d in self.diagnostics]

    def path(self, name: str) -> Path:
        return self.out / name

    def has(self, name: str) -> bool:
        p = self.out / name
        return p.is_file() and p.stat().st_size > 0

    def add(self, severity: str, code: str, message: str, file=None, fix=None) -> None:
        make = {"info": dg.info, "warning": dg.warning, "error": dg.error}[severity]
        self.diagnostics.append(make(code, message, file=file, fix=fix, rank=self.rank))

    def read_csv(self, con, name: str, table: str) -> list[str] | None:
        """Load CSV ``name`` into DuckDB table ``table`` (all text).  Returns its column names,
        or None when the file is missing, empty or unreadable (with a diagnostic for the last
        two; callers decide what a missing file disables)."""
        path = self.path(name)
        if not path.is_file():
            return None
        if path.stat().st_size == 0:
            self.add(
                "warning",
                "empty-file",
                f"{name} is empty (0 bytes); its views stay empty.",
                path,
                "Re-export the profile: torch_npu.profiler.profiler.analyse(<rank folder>).",
            )
            return None
        rejects, scan = f"{table}_rejects", f"{table}_rejects_scan"
        try:
            con.execute(f"""CREATE OR REPLACE TABLE {table} AS SELECT * FROM read_csv({sql_str(path)},
                all_varchar=true, header=true, delim=',', quote='"', escape='"', store_rejects=true,
                rejects_table='{rejects}', rejects_scan='{scan}', auto_detect=true)""")
            bad = con.sql(f"SELECT count(DISTINCT line) FROM {rejects}").fetchall()[0][0]
        except Exception:  # noqa: BLE001 - the sniffer or the strict parser refused the whole file
            try:
                bad = read_csv_by_header(con, path, table)[1]
            except Exception as exc:  # noqa: BLE001 - any reader failure is a user-facing file problem
                self.add(
                    "warning",
                    "csv-unreadable",
                    f"{name} could not be read ({str(exc).splitlines()[0]}); its views stay empty.",
                    path,
                    "Re-export the profile or restore the file.",
                )
                return None
        if bad:
            good = con.sql(f"SELECT count(*) FROM {table}").fetchall()[0][0]
            self.add(
                "warning",
                "csv-bad-rows",
                f"{name}: {bad} malformed row(s) were dropped, {good} loaded.",
                path,
                "The file was damaged or cut; re-export the profile for complete data.",
            )
        self._drop_cut_row(con, name, path, table)
        cols = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]
        if not con.sql(f"SELECT count(*) FROM {table}").fetchall()[0][0]:
            self.add("info", "empty-file", f"{name} has a header but no rows.", path)
        return cols

    def _drop_cut_row(self, con, name: str, path: Path, table: str) -> None:
        """The exports end every CSV with a line break: a file that does not was cut short (an
        interrupted copy), and its last row may hold half a value (``12.3`` of ``12.345``).  That
        row is dropped and the cut said; the rows before it are whole."""
        try:
            with open(path, "rb") as fh:
                fh.seek(-1, os.SEEK_END)
                whole = fh.read(1) in (b"\n", b"\r")
        except OSError:
            return
        if whole:
            return
        gone = con.execute(f"DELETE FROM {table} WHERE rowid = (SELECT max(rowid) FROM {table})").fetchall()
        kept = con.sql(f"SELECT count(*) FROM {table}").fetchall()[0][0]
        self.add(
            "warning",
            "csv-truncated",
            f"{name} does not end with a line break: it was cut short; its last row "
            f"({'dropped' if gone and gone[0][0] else 'none'}) may have been incomplete, {kept} row(s) loaded.",
            path,
            "The file was cut while it was copied or written; copy or export it again for complete data.",
        )

    def report_unconverted(self, con, name: str, raw: str, cols: list[str], conversions: dict[str, str]) -> None:
        """One warning per column of CSV ``name`` (read into ``raw``) holding cells that its
        conversion -- ``conversions[column]``, a macro such as ``mib_bytes`` -- could not turn
        into a value (``abc``, ``1e400``): each such value became NULL and its row stayed.  One
        scan of ``raw`` counts them for all the columns; a second, only when some are bad, lists
        examples of those columns' (:func:`.._common.unconverted_cells`)."""
        present = [(c, m) for c, m in conversions.items() if c in cols]
        if not present:
            return
        checks = [(f"{macro}({pick(cols, c)})", pick(cols, c)) for c, macro in present]
        for (c, _), (n, samples) in zip(present, unconverted_cells(con, raw, checks)):
            if n:
                shown = ", ".join(repr(v[:40]) for v in samples[:3])
                self.add(
                    "warning",
                    "csv-bad-values",
                    f"{name}: {n} value(s) of column {c!r} are not usable numbers ({shown}): set to null, "
                    "their rows kept.",
                    self.path(name),
                    "The file was damaged or edited; re-export the profile for complete data.",
                )

    def report_dropped(self, name: str, dropped: int, why: str) -> None:
        """Rows that split fine but hold no usable value (e.g. an unparsable start time)."""
        if dropped:
            self.add(
                "warning",
                "csv-bad-rows",
                f"{name}: {dropped} row(s) dropped because {why}.",
                self.path(name),
                "The file was damaged; re-export the profile for complete data.",
            )


def pick(cols: list[str], *names: str) -> str:
    """SQL reference to the first of ``names`` present in ``cols`` (header aliases across
    versions, e.g. ``Block Dim``/``Block Num``), else ``NULL``."""
    for n in names:
        if n in cols:
            return '"' + n.replace('"', '""') + '"'
    return "NULL"
