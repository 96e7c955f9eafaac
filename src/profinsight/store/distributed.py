"""Load many ranks in parallel: local processes by default, or the workers of an existing Dask
distributed cluster (``client=`` or ``scheduler="tcp://host:8786"``).  Both run the same unit of
work, :func:`profinsight.store.loader._import_and_store` (``import_rank`` then store in the
cache) once per rank; only the executor differs.

A worker that shares the cache folder (same machine, or a shared file system) returns the
cache entry's folder; the client opens it.  Where the client cannot see that folder, the rank is
imported again locally (see ``loader._to_loaded``) — set ``PROFINSIGHT_CACHE`` to a shared path
on remote clusters.
"""

from __future__ import annotations

from ..store.loader import LoadedRank, _import_and_store, cache_first, collect, load_sources


def load_parallel(
    path,
    *,
    client=None,
    scheduler: str | None = None,
    prefer: str | None = None,
    workers: int | None = None,
    progress=None,
):
    """Load one run (see :func:`profinsight.load`) with its ranks imported in parallel: on the
    Dask ``client`` (or a client connected to ``scheduler``) when given, else in local
    processes (``workers`` of them; default: one per CPU)."""
    from ..api import resolve_run, run_diagnostics
    from ..profile import Profile

    run = resolve_run(path, prefer=prefer)
    own = None
    if client is None and scheduler:
        from distributed import Client

        client = own = Client(scheduler)
    try:
        if client is not None:
            ranks = load_sources_dask(run.sources, client, progress=progress)
        else:
            ranks = load_sources(run.sources, progress=progress, workers=workers or None)
    finally:
        if own is not None:
            own.close()
    return Profile(run, ranks, list(run.notes) + run_diagnostics(run, ranks))


def load_sources_dask(sources, client, progress=None) -> list[LoadedRank]:
    """Like :func:`~profinsight.store.loader.load_sources`, with the ranks to import mapped on a
    Dask client (one task per rank)."""
    loaded, todo = cache_first(sources, progress)
    if todo:
        futures = client.map(_import_and_store, [sources[i] for i in todo], pure=False)
        collect(sources, todo, (f.result() for f in futures), loaded, progress)
    return [loaded[i] for i in range(len(sources))]
