"""The summary tier: a rank's own summaries, without its traces.

torch_npu writes, beside the traces of every rank (``trace_view.json``, ``kernel_details.csv``),
the rank's own summaries in ``ASCEND_PROFILER_OUTPUT``: ``step_trace_time.csv`` (the step
figures), ``communication.json`` (per op: time split, bytes per link type) and
``communication_matrix.json`` (per link).  They are the same records msprof-analyze's cluster
summary holds for every rank at once (:mod:`._read`), one rank per folder, nested by step first
(``{"step<N>": {"p2p" | "collective": {op: record}}}``).  This module reads them into a
:class:`~._read.Summary` so that the cluster importer's tables (:mod:`._tables`) serve a run of
rank folders -- the step breakdown, collectives, matrix, slow ranks and links -- in a fraction
of a second per rank, with no trace parsed.  :func:`summary_sources` turns the rank sources of a
torch_npu run into sources of this tier.
"""

from __future__ import annotations

import json
import os
from decimal import Decimal
from pathlib import Path

from ... import diagnostics as dg
from ..base import RankSource
from . import _read as R

OUTPUT = "ASCEND_PROFILER_OUTPUT"
STEP_CSV = "step_trace_time.csv"
COMM = "communication.json"
MATRIX = "communication_matrix.json"
META = "profiler_metadata.json"
ANALYSIS_DB = "analysis.db"
TIER = "rank_summary"


def output(folder: Path) -> Path:
    return Path(folder) / OUTPUT


def rank_files(folder: Path, db: bool = False, inside: set[str] | None = None) -> tuple[Path, ...]:
    """The files the summary tier reads for a rank folder (its witness is built from them):
    the text summaries, or (``db``) the DB export's ``analysis.db``."""
    out = output(folder)
    names = (ANALYSIS_DB,) if db else (STEP_CSV, COMM, MATRIX)
    inside = _files_in(out) if inside is None else inside
    files = [out / n for n in names if n in inside]
    top = _files_in(Path(folder))
    files += [Path(folder) / n for n in (META,) if n in top]
    files += [Path(folder) / n for n in sorted(top) if n.startswith("profiler_info") and n.endswith(".json")]
    return tuple(files)


def _files_in(folder: Path) -> set[str]:
    """The names of the files in ``folder`` (one listing: 1,024 rank folders are checked on every
    open of a run, a ``stat`` per name asked would cost seconds)."""
    try:
        with os.scandir(folder) as it:
            return {e.name for e in it if e.is_file()}
    except OSError:
        return set()


def summary_sources(sources) -> tuple[RankSource, ...] | None:
    """Sources of the summary tier for the rank folders of ``sources`` (torch_npu rank folders
    with ranks), or None where a rank has neither its ``step_trace_time.csv`` nor (DB export) its
    ``analysis.db`` (its summary is not there: the full import is the only way).  A DB export
    (format ``ascend_db``) reads ``analysis.db`` where it has one; a text export its CSV and JSON."""
    out = []
    for s in sources:
        folder = Path(s.path)
        inside = _files_in(output(folder))
        db = s.format == "ascend_db" and ANALYSIS_DB in inside
        if s.rank_hint is None or not (db or STEP_CSV in inside):
            return None
        out.append(
            RankSource(
                format="cluster",
                path=folder,
                files=rank_files(folder, db, inside),
                rank_hint=s.rank_hint,
                options=(("rank", str(s.rank_hint)), ("tier", TIER)) + ((("summary", "db"),) if db else ()),
            )
        )
    return tuple(out)


def tier_note(root: Path, sources) -> dg.Diagnostic:
    """The one note of a run loaded in the summary tier (one for the run, not one per rank: a
    1,024-rank job would otherwise list 1,024 identical notes)."""
    first = Path(sources[0].path)
    return dg.info(
        "summary-tier",
        f"the {len(sources)} ranks come from their own summaries ({_names(sources)}): "
        "the step figures are the vendor's (source vendor_summary), the collectives and links as written; no "
        "trace was parsed, so the kernels, operators, memory and timeline of the ranks are not loaded",
        file=root,
        fix=f"load one rank folder itself (profinsight.load('{first}')) for its kernels and timeline, or "
        "tier='full' (CLI: profinsight ranks --tier full) for every rank's tasks",
    )


def _names(sources) -> str:
    if any(dict(s.options).get("summary") == "db" for s in sources):
        return f"{ANALYSIS_DB}, {META}"
    return f"{STEP_CSV}, {COMM}, {MATRIX}, {META}"


def read_rank_folder(folder: Path, rank: int, db: bool = False) -> R.Summary:
    """The summaries of one rank folder as a :class:`~._read.Summary` holding that rank (``db``:
    from its ``analysis.db``)."""
    src = output(folder)
    if db:
        out = R.read_db(src / ANALYSIS_DB, rank)
        _metadata(folder, out)
        return out
    out = R.Summary()
    _step_csv(src / STEP_CSV, rank, out)
    comm = _exact_json(src / COMM, out.problems)
    if isinstance(comm, dict):
        R._comm_json(_by_category(comm, str(rank)), out)
    matrix = R._json(src / MATRIX, out.problems)
    if isinstance(matrix, dict):
        R._matrix_json(_by_category(matrix, None), out)
    _metadata(folder, out)
    return out


def _metadata(folder: Path, out: R.Summary) -> None:
    meta = R._json(Path(folder) / META, out.problems)
    if isinstance(meta, dict):
        out.metadata = {k: v for k, v in meta.items() if k != "ENV_VARIABLES"}


def _exact_json(path: Path, problems: list):
    """A JSON file with its decimals as written (``Decimal``): the op start timestamps are epoch
    microseconds with two decimals, more digits than a float holds, and the rank importers keep
    every nanosecond of them."""
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_bytes(), parse_float=Decimal)
    except (OSError, ValueError) as exc:
        problems.append((path, str(exc)))
        return None


def _by_category(data: dict, rank: str | None) -> dict:
    """``{step: {category: {op: rec}}}`` -> ``{category: {step: {op: {rank: rec}}}}`` (the
    cluster layout; ``rank`` None keeps the op's value as it is: the matrix's links)."""
    out: dict = {}
    for step, cats in data.items():
        for cat, ops in (cats or {}).items():
            if not isinstance(ops, dict):
                continue
            dst = out.setdefault(cat, {}).setdefault(step, {})
            for key, rec in ops.items():
                dst[key] = {rank: rec} if rank is not None else rec
    return out


def _step_csv(path: Path, rank: int, out: R.Summary) -> None:
    """A rank's ``step_trace_time.csv``: one row per step, the figures of :data:`._read.FIGURES`."""
    if not path.is_file():
        return
    rows = R.csv_rows(path, out)
    if not rows:
        return
    idx = {h.strip(): i for i, h in enumerate(rows[0])}
    if "Step" not in idx:
        out.problems.append((path, "no Step column"))
        return
    for row in rows[1:]:
        row = row + [""] * (len(rows[0]) - len(row))
        values = [row[idx[c]] if c in idx else None for c, _, _ in R.FIGURES]
        rec = {"step": R.step_of(row[idx["Step"]]), **{k: R._float(v) for (_, _, k), v in zip(R.FIGURES, values)}}
        if "Preparing" in idx:
            rec["preparing"] = R._float(row[idx["Preparing"]])
        out.ranks.append({"rank": rank, **rec})
