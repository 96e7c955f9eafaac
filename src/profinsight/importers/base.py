"""What an importer hands back: the canonical tables of one rank plus what the doctor saw."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from ..diagnostics import Diagnostic
from ..schema import TABLES, conform


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
            t = t.set_column(idx, "rank", pa.array([rank] * t.num_rows, pa.int32()))
            out[name] = t
        self.tables = out
        return self


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
