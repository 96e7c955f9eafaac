"""What an importer declares (:class:`Importer`: its name, what it recognises, its docs entry) and
what it hands back (:class:`RankData`: the canonical tables of one rank plus what the doctor saw)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from ..diagnostics import Diagnostic
from ..errors import ProfileError
from ..schema import PMU_PREFIX, TABLES, conform


@dataclass
class RankData:
    """Canonical tables of one rank (a rank folder or one trace file).

    ``tables`` maps canonical table names to Arrow tables; missing names are empty tables.
    ``rank`` is the rank id the importer found (``None`` when the source records none).
    """

    rank: int | None
    tables: dict[str, pa.Table] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def finish(self) -> RankData:
        """Conform every table to its declaration and fill the rank column."""
        rank = 0 if self.rank is None else int(self.rank)
        out = {}
        for name in TABLES:
            t = conform(name, self.tables.get(name))
            idx = t.schema.get_field_index("rank")
            # pa.repeat, not a Python list of the rank per row: 13 ms -> 1 ms per 450 k rows
            t = t.set_column(idx, "rank", pa.repeat(pa.scalar(rank, pa.int32()), t.num_rows))
            out[name] = t
        out["run_info"] = _with_capabilities(out)
        self.tables = out
        return self


def _with_capabilities(tables: dict[str, pa.Table]) -> pa.Table:
    """``run_info`` with its ``has_*`` capability columns filled from the tables themselves where
    the importer left them null (what was collected is what the tables hold, in every format)."""
    info = tables["run_info"]
    if not info.num_rows:
        return info
    dt, ho = tables["device_tasks"], tables["host_ops"]
    seen = {
        "has_host_ops": ho.num_rows > 0,
        "has_memory": tables["memory_samples"].num_rows > 0 or tables["memory_blocks"].num_rows > 0,
        "has_pmu": any(dt[c].null_count < dt.num_rows for c in dt.column_names if c.startswith(PMU_PREFIX)),
        "has_stack": ho.num_rows > 0 and ho["call_stack"].null_count < ho.num_rows,
    }
    for col, value in seen.items():
        idx = info.schema.get_field_index(col)
        given = info[col].to_pylist()
        filled = [value if v is None else v for v in given]
        info = info.set_column(idx, col, pa.array(filled, pa.bool_()))
    return info


@dataclass(frozen=True)
class RankSource:
    """One rank to import: ``format`` names the importer, ``path`` the folder or file,
    ``files`` every file it will read (the cache key is built from their size and mtime)."""

    format: str
    path: Path
    files: tuple[Path, ...]
    rank_hint: int | None = None
    #: importer-specific choices (e.g. which export was preferred), part of the cache key
    options: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Recognised:
    """What an importer recognised at a path.

    ``source`` is the rank to import; without one the path has the importer's shape but cannot
    be read, and ``problem`` says why (a format not supported yet, an export never parsed).
    ``level`` and ``world_size`` are what discovery groups ranks of one collection by (a run
    never mixes levels, and the ranks of one job share a world size).

    ``sources``: every rank of a path that holds several in one file or folder (a cluster
    summary writes all ranks into one table).  The path is then a run of its own, rooted at the
    ``path`` of those sources, and ``source`` is left empty."""

    source: RankSource | None = None
    problem: ProfileError | None = None
    level: str | None = None
    world_size: int | None = None
    sources: tuple[RankSource, ...] = ()


@dataclass(frozen=True)
class Layout:
    """A folder shape that several importers share (a torch_npu rank folder holds a text or a DB
    export).  Discovery asks ``claims(folder)`` once per folder, then the ``recognise`` of each
    importer of the layout -- and only for folders the layout claims."""

    name: str
    claims: Callable[[Path], bool]


@dataclass(frozen=True)
class Importer:
    """One format's declaration: what it is called, what it recognises, where it is documented.

    ``recognise(path)`` decides by content (the file name is at most a hint that orders the
    importers asked, see ``hint``) and answers None for anything that is not its own.  It must
    stay cheap -- no DuckDB, no full parse -- because discovery asks it of every file or folder
    of a walk.  ``shape`` says which it is asked about: ``"folder"`` (a folder it answers for
    is a rank folder, never entered) or ``"file"``.  ``export`` names the export of a folder
    layout that several importers share ("db", "text"): ``load(prefer=...)`` picks by it.
    ``loads`` is False for a format recognised only to say that it is not supported yet.
    ``layout``: the shared folder shape it reads (see :class:`Layout`), if any."""

    name: str
    shape: str
    recognise: Callable[[Path], Recognised | None]
    doc: str
    hint: Callable[[str], bool] = field(default=lambda name: False)
    export: str | None = None
    loads: bool = True
    layout: Layout | None = None
