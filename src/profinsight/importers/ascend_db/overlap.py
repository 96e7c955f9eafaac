"""``OVERLAP_ANALYSIS``: the profiler's own compute / communication / free intervals, or a viewer's.

Newer msprof (mid-2026 on) writes the table itself; MindStudio Insight writes one too when it
opens a DB, together with its ``status_info`` table (``OVERLAP_ANALYSIS_STATUS``, ...), which no
profiler writes.  So the rule is: a DB with ``status_info`` holds a viewer's table -- not read,
and said so; a DB without it holds the profiler's -- read into ``trace_slices`` as the
``Overlap Analysis`` process (one lane per type, as the text export's trace_view.json draws it),
each slice's ``args`` naming its source, and its totals put in a note beside the figures
``step_breakdown`` derives from the device tasks (which stay the figures of every format, so that
no analysis depends on which export it reads).
"""

from __future__ import annotations

import json

import pyarrow as pa

from ... import diagnostics as dg
from ..base import RankData
from .reader import Db

#: ENUM_OVERLAP_ANALYSIS_TYPE -> the lane names of trace_view.json's Overlap Analysis process
LANES = {0: "Computing", 1: "Communication", 2: "Communication(Not Overlapped)", 3: "Free"}
_ENUM = {"COMPUTE": 0, "COMMUNICATION": 1, "COMM_NOT_OVERLAP_COMP": 2, "FREE": 3}
SOURCE = "OVERLAP_ANALYSIS (written by the profiler)"


def load_overlap(db: Db, data: RankData, viewer_code: str = "db-viewer-overlap") -> None:
    """Read the profiler's ``OVERLAP_ANALYSIS`` into ``trace_slices``, or say why it is not read."""
    if not db.has("OVERLAP_ANALYSIS"):
        return
    if db.has("status_info"):
        data.diagnostics.append(
            dg.info(
                viewer_code,
                "OVERLAP_ANALYSIS was written by a viewer (the DB has its status_info table), not by the "
                "profiler: it is not read; the overlap figures are computed from the device tasks",
                file=db.path,
                rank=data.rank,
            )
        )
        return
    start, end = db.col("OVERLAP_ANALYSIS", "startNs"), db.col("OVERLAP_ANALYSIS", "endNs")
    kind = db.col("OVERLAP_ANALYSIS", "type")
    if not (start and end and kind):
        return
    rows = db.rows(f'SELECT "{start}", "{end}", "{kind}" FROM OVERLAP_ANALYSIS ORDER BY "{start}"')
    names = _type_names(db)
    lanes = [LANES.get(names.get(t, t)) or f"type {t}" for _, _, t in rows]
    args = json.dumps({"source": SOURCE})
    table = pa.table(
        {
            "process": pa.array(["Overlap Analysis"] * len(rows), pa.string()),
            "thread": pa.array(lanes, pa.string()),
            "name": pa.array(lanes, pa.string()),
            "cat": pa.array(["overlap_analysis"] * len(rows), pa.string()),
            "start_ns": pa.array([s for s, _, _ in rows], pa.int64()),
            "dur_ns": pa.array([e - s for s, e, _ in rows], pa.int64()),
            "args": pa.array([args] * len(rows), pa.string()),
        }
    )
    have = data.tables.get("trace_slices")
    data.tables["trace_slices"] = table if have is None else pa.concat_tables([have, table], promote_options="default")
    data.diagnostics.append(_note(db, data.rank, rows, lanes))


def _type_names(db: Db) -> dict[int, int]:
    """Type id -> the lane number of :data:`LANES`, through ``ENUM_OVERLAP_ANALYSIS_TYPE`` where
    the DB has it (the ids are 0..3 as in the reference otherwise)."""
    if not db.has("ENUM_OVERLAP_ANALYSIS_TYPE"):
        return {}
    out = {}
    for i, name in db.rows("SELECT id, name FROM ENUM_OVERLAP_ANALYSIS_TYPE"):
        if str(name).upper() in _ENUM:
            out[i] = _ENUM[str(name).upper()]
    return out


def _note(db: Db, rank, rows: list, lanes: list[str]) -> dg.Diagnostic:
    totals: dict[str, int] = {}
    for (s, e, _), lane in zip(rows, lanes):
        totals[lane] = totals.get(lane, 0) + (e - s)
    said = ", ".join(f"{lane} {ns / 1e3:.3f} us" for lane, ns in totals.items())
    return dg.info(
        "db-profiler-overlap",
        f"OVERLAP_ANALYSIS was written by the profiler (no viewer's status_info table): read into the timeline "
        f"as the Overlap Analysis lanes (trace_slices, args source '{SOURCE}'), totals {said}. step_breakdown's "
        "figures are derived from the device tasks (source 'tasks'), as in every format; these are the profiler's own",
        file=db.path,
        rank=rank,
    )
