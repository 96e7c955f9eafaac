"""Load many ranks on the workers of an existing Dask distributed cluster (the local-process
path is :func:`profinsight.store.loader.load_sources`; :func:`profinsight.api.load_parallel`
chooses between them).  Both run the same unit of work,
:func:`profinsight.store.loader._import_and_store` (``import_rank`` then store in the cache) once
per rank; only the executor differs.  Each result says where it ran
(:attr:`~profinsight.store.loader.LoadedRank.loaded_by`: the worker's address and pid).

A worker that shares the cache folder (same machine, or a shared file system) returns the
cache entry's folder; the client opens it.  Where the client cannot see that folder, the rank is
imported again locally (see ``loader._to_loaded``) — set ``PROFINSIGHT_CACHE`` to a shared path
on remote clusters.

What goes wrong on a cluster is said in words, never as a traceback: workers that cannot import
profinsight (another environment) stop the load with that fix; a worker that dies on a rank
(out of memory: ``KilledWorker``) costs only that rank, which is imported here instead, with a
diagnostic that says so.
"""

from __future__ import annotations

from .. import diagnostics as dg
from ..errors import ProfileError
from .loader import LoadedRank, _import_and_store, _to_loaded, cache_first, in_process, load_in_process


def load_sources_dask(sources, client, progress=None) -> list[LoadedRank]:
    """Like :func:`~profinsight.store.loader.load_sources`, with the ranks to import mapped on a
    Dask client (one task per rank, the largest first so that the last task to finish is a small
    one)."""
    if in_process(sources):  # the summary tier: a Dask task per rank would cost more than the read
        return load_in_process(sources, progress)
    loaded, todo = cache_first(sources, progress)
    if not todo:
        return [loaded[i] for i in range(len(sources))]
    todo = sorted(todo, key=lambda i: -_size(sources[i]))
    futures = client.map(_import_and_store, [sources[i] for i in todo], pure=False)
    done = len(loaded)
    try:
        for i, fut in zip(todo, futures):
            loaded[i] = _result(sources[i], fut)
            done += 1
            if progress:
                progress(done, len(sources), str(sources[i].path))
    finally:
        client.cancel([f for f in futures if not f.done()])
    return [loaded[i] for i in range(len(sources))]


def _result(source, fut) -> LoadedRank:
    """The loaded rank of one task; a dead worker's rank imported here, with a diagnostic."""
    try:
        result = fut.result()
    except (ModuleNotFoundError, ImportError) as exc:
        raise ProfileError(
            f"the Dask workers could not import what a rank's import needs ({type(exc).__name__}: {exc})",
            fix="install profinsight (the same version) in the workers' environment, or leave out --scheduler",
        ) from None
    except Exception as exc:  # noqa: BLE001 - a worker that died (KilledWorker, lost connection): this rank only
        if type(exc).__name__ not in ("KilledWorker", "CommClosedError", "FutureCancelledError", "CancelledError"):
            raise
        rank = _to_loaded(source, _import_and_store(source))
        rank.diagnostics.append(
            dg.warning(
                "dask-worker-lost",
                f"the Dask worker importing this rank was lost ({type(exc).__name__}: {exc}); "
                "it was imported in this process instead",
                file=source.path,
                fix="give the workers more memory (dask worker --memory-limit) for ranks this large",
                rank=source.rank_hint,
            )
        )
        return rank
    if not (isinstance(result, tuple) and len(result) == 4):  # what another release's workers return
        raise ProfileError(
            "the Dask workers run another profinsight than this client (their result has another shape)",
            fix="restart the workers (dask worker ...) from the environment this client runs in, "
            "so that both import the same profinsight",
        )
    return _to_loaded(source, result)


def _size(source) -> int:
    total = 0
    for f in source.files:
        try:
            total += f.stat().st_size
        except OSError:
            pass
    return total
