"""Load many ranks on the workers of an existing Dask distributed cluster (the local-process
path is :func:`profinsight.store.loader.load_sources`; :func:`profinsight.api.load_parallel`
chooses between them).  Both run the same unit of
work, :func:`profinsight.store.loader._import_and_store` (``import_rank`` then store in the
cache) once per rank; only the executor differs.

A worker that shares the cache folder (same machine, or a shared file system) returns the
cache entry's folder; the client opens it.  Where the client cannot see that folder, the rank is
imported again locally (see ``loader._to_loaded``) — set ``PROFINSIGHT_CACHE`` to a shared path
on remote clusters.
"""

from __future__ import annotations

from .loader import LoadedRank, _import_and_store, cache_first, collect, in_process, load_in_process


def load_sources_dask(sources, client, progress=None) -> list[LoadedRank]:
    """Like :func:`~profinsight.store.loader.load_sources`, with the ranks to import mapped on a
    Dask client (one task per rank)."""
    if in_process(sources):  # the summary tier: a Dask task per rank would cost more than the read
        return load_in_process(sources, progress)
    loaded, todo = cache_first(sources, progress)
    if todo:
        futures = client.map(_import_and_store, [sources[i] for i in todo], pure=False)
        collect(sources, todo, (f.result() for f in futures), loaded, progress)
    return [loaded[i] for i in range(len(sources))]
