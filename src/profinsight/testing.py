"""Build a :class:`~profinsight.profile.Profile` from hand-made tables, for golden tests of
analyses and for users who want to try an analysis on data of their own.

>>> p = profile_from_tables({"device_tasks": pd.DataFrame({...}), "steps": ...})
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)

from .discovery import Run
from .importers.base import RankData, RankSource
from .profile import Profile
from .schema import TABLES
from .store.loader import LoadedRank

#: the device family a synthetic profile of a format name stands for (run_info's device_family)
_FAMILIES = {"ascend_text": "npu", "ascend_db": "npu", "kineto": "gpu"}


def profile_from_tables(tables: dict, *, ranks: list[int] | None = None, fmt: str = "synthetic") -> Profile:
    """A Profile over in-memory tables.  ``tables`` maps canonical names to DataFrames or Arrow
    tables holding any subset of the declared columns; rows are split by their ``rank`` column
    (default rank 0).  Missing tables are empty."""
    arrow = {}
    for name, t in tables.items():
        if name not in TABLES:
            raise KeyError(f"unknown table {name!r}")
        arrow[name] = pa.Table.from_pandas(t, preserve_index=False) if isinstance(t, pd.DataFrame) else t
    found = set()
    for t in arrow.values():
        if "rank" in t.column_names:
            found |= {r for r in t.column("rank").to_pylist() if r is not None}
    ranks = sorted(ranks if ranks is not None else (found or {0}))
    loaded = []
    for r in ranks:
        part = {}
        for name, t in arrow.items():
            if "rank" in t.column_names:
                mask = pa.compute.equal(t.column("rank"), r)
                part[name] = t.filter(mask).drop(["rank"])
            else:
                part[name] = t
        info = part["run_info"] if "run_info" in part else pa.table({"source_format": [fmt]})
        if "device_family" not in info.column_names:  # what an importer of ``fmt`` would state
            info = info.append_column("device_family", pa.array([_FAMILIES.get(fmt)] * info.num_rows, pa.string()))
        part["run_info"] = info
        data = RankData(r, part).finish()
        src = RankSource(fmt, Path(f"<memory rank {r}>"), (), r)
        loaded.append(LoadedRank(src, r, [], tables=data.tables))
    run = Run(fmt, Path("<memory>"), tuple(lr.source for lr in loaded))
    return Profile(run, loaded, [])
