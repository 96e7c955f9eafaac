"""The first paint of a run: what can be said about it before its traces are imported.

Opening an uncached 1 GB profile starts an import of tens of seconds.  The person who opened it
should see the run at once: what discovery saw (format, level, ranks, files, bytes) and, where
the profiler wrote its own summaries beside the traces (torch_npu's ``step_trace_time.csv``,
``communication.json``, ``communication_matrix.json`` in ``ASCEND_PROFILER_OUTPUT``), the step
breakdown and the communication per type from them — the cluster importer's summary tier reads
those files without parsing a trace (a few KB per rank, well under a second).  The answer says
where its figures come from (``source: "vendor_summary"``): the import that follows computes
them again from the tasks themselves.
"""

from __future__ import annotations

import time
from dataclasses import replace

from ..discovery import Run
from ..errors import ProfileError

#: the vendor files the summary tier reads, as a person recognises them
SUMMARY_FILES = ("step_trace_time.csv", "communication.json", "communication_matrix.json")


def first_paint(run: Run, tiered: Run | None = None) -> dict:
    """``GET api/profiles/ID/summary``: discovery's view of ``run`` plus, where present, its
    vendor summaries (``vendor``: step_breakdown and comm_summary payloads), never importing a
    trace.  ``vendor`` is None when the run has no summaries (Kineto, a DB-only export) or they
    cannot be read (``vendor_error`` says why).  ``tiered``: the run in the tier it opens in,
    where the caller knows it -- a run that opens in the summary tier is read from that tier's
    own sources, so the first paint and the import share one cache entry and its results."""
    started = time.monotonic()
    files, size = 0, 0
    for s in run.sources:
        for f in s.files:
            try:
                size, files = size + f.stat().st_size, files + 1
            except OSError:
                pass
    out = {
        "format": run.format,
        "level": run.level,
        "ranks": [r for r in run.ranks if r is not None],
        "rank_count": len(run.sources),
        "files": files,
        "size_bytes": size,
        "vendor": None,
        "vendor_error": None,
    }
    try:
        out["vendor"] = _vendor(run, tiered)
    except ProfileError as exc:
        out["vendor_error"] = str(exc).split("\nFix:")[0]
    out["elapsed_s"] = round(time.monotonic() - started, 3)
    return out


def _vendor(run: Run, tiered: Run | None = None) -> dict | None:
    """The step breakdown and communication per type from the ranks' own summaries."""
    if run.format not in ("ascend_text", "ascend_db"):
        return None
    from ..api import load
    from ..importers import progress
    from ..importers.cluster import summary_sources

    if tiered is not None and tiered.format == "cluster":
        summary = tiered
    else:
        sources = summary_sources(run.sources)
        if not sources:
            return None
        summary = replace(run, format="cluster", sources=sources)
    from ..render.notebook import payload

    sources = summary.sources
    with progress.quiet():  # the import of the same rank folders may be running: its progress is its own
        prof = load(summary)
    steps = prof.step_breakdown()
    comm = prof.comm_summary()
    names = sorted({f.name for s in sources for f in s.files} & set(SUMMARY_FILES))
    return {
        "source": "vendor_summary",
        "files": names,
        "steps": payload(steps, None, {}),
        "comm": payload(comm, None, {}),
    }


def ready_ranks(run: Run, positions) -> dict:
    """``GET api/profiles/ID/ready``: the step breakdown of the ranks of ``run`` already imported
    (``positions`` in ``run.sources``) while the others still import, from their own tasks -- the
    first ready rank is on the page before the last.  Only ranks whose cache entry is written are
    read (a rank kept in memory by the import would be imported a second time)."""
    from ..api import load
    from ..importers import progress
    from ..render.notebook import payload
    from ..store import cache

    keep = [i for i in sorted(positions) if cache.lookup(run.sources[i]) is not None]
    if not keep:
        return {"ranks": [], "steps": None}
    sub = replace(run, sources=tuple(run.sources[i] for i in keep))
    with progress.quiet():
        prof = load(sub)
    return {"ranks": [r for r in prof.ranks], "steps": payload(prof.step_breakdown(), None, {})}
