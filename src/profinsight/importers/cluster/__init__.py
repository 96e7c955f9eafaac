"""Importer for msprof-analyze cluster summaries: ``cluster_analysis_output/`` (its
``cluster_step_trace_time.csv``, ``cluster_communication*.json``, ``communication_group.json``)
and ``cluster_analysis.db``.  One summary holds every rank of a job in one table, so it is a run
of its own: one rank source per rank, all pointing at the same files with the rank in their
options, and ``load_rank`` keeps that rank's rows (:mod:`._read` reads, :mod:`._tables` builds).

What a rank gets: ``steps`` rows that carry the vendor's step figures in their ``vendor_*_ns``
columns (``step_breakdown`` shows them, marked ``source = 'vendor_summary'``), ``comm_ops``
from the per-rank communication records and ``comm_links`` from the matrix, for the ranks and
steps the files cover.  There are no kernels, operators, memory or timeline of the ranks:
a diagnostic says so, and where to get them.
"""

from __future__ import annotations

from pathlib import Path

from ... import diagnostics as dg
from ..base import Importer, RankData, RankSource, Recognised
from . import _ranks
from . import _read as R
from . import _tables as T
from ._ranks import summary_sources, tier_note  # noqa: F401 - the facade builds summary runs with them

VERSION = "3"  # 3: the summary tier of rank folders (_ranks); 2: the step figures in steps.vendor_*_ns
FORMAT = "cluster"
EXPORT_KIND = "cluster_summary"


# -- recognise ------------------------------------------------------------------------------
def _recognise(path: Path) -> Recognised | None:
    path = Path(path)
    if R.is_step_csv(path):
        return _folder(path.parent, path)
    if path.name == R.COMM_JSON and not (path.parent / R.STEP_CSV).is_file() and R.is_comm_json(path):
        return _folder(path.parent, None)  # a summary without its step trace: communication only
    if R.is_cluster_db(path):
        return _run(path, (path,), R.db_ranks(path))
    return None


def _folder(folder: Path, step_csv: Path | None) -> Recognised | None:
    """The summary of ``folder``; its step trace is ``step_csv`` (under any name) where given."""
    names = R.FOLDER_FILES[1:]
    files = ((step_csv,) if step_csv else ()) + tuple(folder / n for n in names if (folder / n).is_file())
    # renamed, the step trace itself is the rank sources' path (load_rank finds it again there)
    path = folder if step_csv is None or step_csv.name == R.STEP_CSV else step_csv
    return _run(path, files, R.folder_ranks(folder, step_csv))


def _run(path: Path, files: tuple[Path, ...], ranks: list[int]) -> Recognised | None:
    if not ranks:
        return None
    sources = tuple(
        RankSource(format=FORMAT, path=path, files=files, rank_hint=r, options=(("rank", str(r)),)) for r in ranks
    )
    return Recognised(sources=sources, world_size=len(ranks))


#: the ranks of a summary are never written to the Parquet cache: a rank's share of a summary is
#: a few KB, read again faster than its 13 Parquet files are written and read back (writing them
#: was 1.2 s of the 1.7 s that loading 64 ranks' summaries took)
CACHE = False


# -- load -----------------------------------------------------------------------------------
def load_rank(source: RankSource) -> RankData:
    """The canonical tables of one rank of the summary, plus what the doctor found."""
    return load_ranks((source,))[0]


def load_ranks(sources) -> list[RankData]:
    """The ranks of ``sources`` in their order, each summary file read once: a cluster summary
    holds every rank of the job, and reading it again for each of 1,000 ranks would cost
    1,000 times the read (and filtering every record per rank, 1,000 squared)."""
    read: dict[Path, tuple[R.Summary, dict[int, R.Summary]]] = {}
    out = []
    for source in sources:
        path = Path(source.path)
        rank = int(dict(source.options).get("rank", source.rank_hint or 0))
        if dict(source.options).get("tier") == _ranks.TIER:
            out.append(_load_rank_summary(path, rank, dict(source.options).get("summary") == "db"))
            continue
        if path not in read:
            summary = _read(path)
            read[path] = (summary, R.split(summary))
        summary, parts = read[path]
        part = parts.get(rank) or R.split(summary, only=rank)[rank]
        tables = T.build(part, rank)
        tables["run_info"] = T.run_info(path, rank, summary, EXPORT_KIND, FORMAT)
        out.append(RankData(rank=rank, tables=tables, diagnostics=_diagnostics(path, rank, summary, part)))
    return out


def _read(path: Path) -> R.Summary:
    if path.suffix.lower() == ".csv":  # the step trace under another name: its folder is the summary
        return R.read_folder(path.parent, path)
    if path.is_file():
        return R.read_db(path)
    return R.read_folder(path)


def _load_rank_summary(folder: Path, rank: int, db: bool = False) -> RankData:
    """The summary tier of one torch_npu rank folder (:mod:`._ranks`): no trace parsed."""
    summary = _ranks.read_rank_folder(folder, rank, db)
    tables = T.build(summary, rank, sender_only=False)
    tables["run_info"] = T.run_info(folder, rank, summary, "rank_summary", FORMAT)
    diags = [
        dg.warning(
            "cluster-unreadable",
            f"{Path(file).name} is unreadable ({why}); the views it feeds stay empty",
            file=file,
            fix="re-export the rank: torch_npu.profiler.profiler.analyse(<rank folder>), or restore the file",
            rank=rank,
        )
        for file, why in summary.problems
    ]
    return RankData(rank=rank, tables=tables, diagnostics=diags)


def _diagnostics(path: Path, rank: int, s: R.Summary, part: R.Summary) -> list[dg.Diagnostic]:
    """What the doctor says of ``rank`` (``part``: its records) in summary ``s``."""
    where = path if path.is_file() else path / R.STEP_CSV
    comm_where = (
        path.parent / R.COMM_JSON if path.suffix.lower() == ".csv" else path if path.is_file() else path / R.COMM_JSON
    )
    out = []
    for file, why in s.problems:
        out.append(
            dg.warning(
                "cluster-unreadable",
                f"{Path(file).name} is unreadable ({why}); the views it feeds stay empty",
                file=file,
                fix="run msprof-analyze cluster again on the rank folders, or restore the file",
                rank=rank,
            )
        )
    rows = part.ranks
    if rows:
        steps = ", ".join("-" if r["step"] is None else str(r["step"]) for r in rows)
        out.append(
            dg.info(
                "cluster-vendor-figures",
                f"the step figures of rank {rank} (step {steps}) are msprof-analyze's own, from {where.name}: "
                "Computing, Communication(Not Overlapped), Overlapped, Communication, Free, Stage and Bubble as "
                "written (the steps table's vendor_* columns; the step breakdown shows them as source "
                "vendor_summary). A cluster summary holds no kernels, operators, memory or per-task times: "
                "the kernel, operator and timeline views stay empty for this rank",
                file=where,
                fix="load the per-rank profiles that msprof-analyze read (the *_ascend_pt folders) for kernels, "
                "operators and the timeline",
                rank=rank,
            )
        )
    else:
        out.append(
            dg.warning(
                "cluster-no-step-trace",
                f"rank {rank} has no row in the cluster step trace ({where.name}): no step breakdown for it",
                file=where,
                fix="run msprof-analyze cluster on the rank folders with their step_trace_time.csv "
                "(or analysis.db); it writes cluster_step_trace_time.csv",
                rank=rank,
            )
        )
    if s.ops and not part.ops:
        covered = sorted({o["rank"] for o in s.ops})
        out.append(
            dg.info(
                "cluster-no-comm",
                f"the communication records ({comm_where.name}) cover ranks {_ranges(covered)}, not rank {rank}: "
                "its collectives, communication summary and matrix rows are empty",
                file=comm_where,
                fix="run msprof-analyze cluster with every rank's communication.json (or analysis.db)",
                rank=rank,
            )
        )
    elif not s.ops:
        out.append(
            dg.info(
                "cluster-no-comm",
                "the summary has no per-op communication records: collectives and the communication views are empty",
                file=comm_where,
                fix="run msprof-analyze cluster on rank folders that hold communication.json (or analysis.db)",
                rank=rank,
            )
        )
    return out


def _ranges(ranks: list[int]) -> str:
    """``[0, 1, 2, 3, 7]`` -> ``0-3, 7``."""
    parts, start = [], None
    for i, r in enumerate(ranks):
        if start is None:
            start = r
        if i + 1 == len(ranks) or ranks[i + 1] != r + 1:
            parts.append(str(start) if start == r else f"{start}-{r}")
            start = None
    return ", ".join(parts)


def _hint(name: str) -> bool:
    return name in (R.STEP_CSV, R.COMM_JSON) or name.startswith("cluster_analysis") and name.endswith(".db")


IMPORTER = Importer(
    name=FORMAT,
    shape="file",
    recognise=_recognise,
    doc="msprof-analyze cluster summary: cluster_analysis_output/ (cluster_step_trace_time.csv, "
    "cluster_communication*.json) or cluster_analysis.db, every rank in one file",
    hint=_hint,
)
