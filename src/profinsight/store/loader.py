"""Turn a run into loaded ranks: from the cache when it is fresh, else import (several ranks side
by side: in processes, or on threads of this process when they are small) and store.

Importing one rank is the unit of work; the same function runs in a local process pool or,
later, on a Dask worker.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

import pyarrow as pa

from .. import diagnostics as dg
from ..errors import ProfileError
from ..importers import RankData, RankSource, cacheable, load_rank, load_ranks, progress
from . import cache, run_cache
from .root import cache_root

Progress = Callable[[int, int, str], None]


@dataclass
class LoadedRank:
    """One rank ready to read: either a cache entry or tables held in memory."""

    source: RankSource
    rank: int
    diagnostics: list[dg.Diagnostic]
    cached: cache.CachedRank | None = None
    tables: dict[str, pa.Table] | None = None
    #: where the rank was imported this time: ``{"pid": ..., "host": ..., "worker": <Dask worker
    #: address or None>}``; None when it came from the cache or was read in this process
    loaded_by: dict | None = None
    #: the run entry (:mod:`.run_cache`) that holds this rank's tables with every other rank of
    #: its run, and the rank's position in it (a summary-tier rank read once for the whole run)
    shared: run_cache.RunEntry | None = None
    position: int = 0

    def read(self, name: str) -> pa.Table:
        if self.tables is not None:
            return self.tables[name]
        if self.shared is not None:
            return self.shared.rank_table(name, self.position)
        return self.cached.read(name)

    def row_count(self, name: str) -> int:
        if self.tables is not None:
            return self.tables[name].num_rows
        if self.shared is not None:
            return self.shared.row_counts[self.position].get(name, 0)
        return self.cached.row_counts.get(name, 0)

    @property
    def entry_folder(self):
        """The cache entry its tables lie in (its own, or its run's), or None when in memory."""
        return self.shared.folder if self.shared is not None else self.parquet_path

    @property
    def parquet_path(self):
        return None if self.cached is None else self.cached.folder


def import_rank(source: RankSource) -> RankData:
    """Import one rank; an unexpected importer failure becomes an error diagnostic, never a
    traceback (the data of other ranks still loads).  A :class:`ProfileError` (e.g. the machine
    ran out of memory) is a condition the user can act on: its own message and fix are kept."""
    try:
        return load_rank(source)
    except ProfileError as exc:
        data = RankData(source.rank_hint)
        data.diagnostics.append(
            dg.error(
                "import-failed",
                exc.args[0] if exc.args else str(exc),
                file=exc.file or source.path,
                fix=exc.fix,
                rank=source.rank_hint,
            )
        )
        return data.finish()
    except Exception as exc:  # noqa: BLE001 - the boundary between a bug and the user
        data = RankData(source.rank_hint)
        data.diagnostics.append(
            dg.error(
                "import-failed",
                f"could not read this {source.format} profile: {type(exc).__name__}: {exc}",
                file=source.path,
                fix="run with --debug and report the message; other ranks were loaded",
                rank=source.rank_hint,
            )
        )
        return data.finish()


#: a rank imported in this process whose tables hold at most this many bytes stays in memory for
#: the rest of the process as well as in the cache (:func:`_import_and_store`).  The tables of a
#: trace hold about 0.8x its size, all of it added to the command's peak: a 100 MB Kineto
#: trace's 78 MiB, kept, took a cold ``analyze`` from 400-420 to 459-477 MB; a 300 MB one's
#: 234 MiB would take it from 745-758 to 901-908 MB (3x the file), so it is let go
KEEP_MAX_BYTES = 128 * 2**20


def _import_and_store(source: RankSource, threads: int | None = None, keep: bool = False):
    """The unit of work of every executor: import one rank and store it in the cache.  Returns
    ``(how, cache folder, tables or None, where it ran)``.  ``threads``: the DuckDB threads the
    import may use (its share of the cores when several ranks are imported at once; None: the
    idle cores, for ranks imported one at a time).

    ``keep`` (the one rank of a load, imported in the process that reads it next): the tables
    just stored are also returned when they hold at most :data:`KEEP_MAX_BYTES`, and the
    profile reads them where they are instead of the Parquet files just written -- each
    analysis's SQL scans its columns again, and a Parquet scan decodes them again every time
    (a cold ``analyze`` of a 100 MB trace, 12 interleaved pairs: Kineto 2.24 -> 2.07 s, every
    pair faster; Ascend text, 8 pairs: 3.68 -> 2.97 s).  Larger tables are let go, as before:
    the memory they hold is the import's peak (the tables of a 100 MB trace hold 69-79 MB)."""
    from ..importers._common import release_memory, set_rank_threads

    set_rank_threads(threads)
    progress.stage(source.files, "importing")
    data = import_rank(source)
    where = _where()
    if any(d.code == "import-failed" for d in data.diagnostics):
        # a failed import (out of memory, a bug) is not the profile's content: never cache it,
        # so the next load tries again
        return ("memory", None, data, where)
    progress.stage(source.files, "caching")
    entry = cache.store(source, data)
    if entry is not None:
        if not keep or sum(t.nbytes for t in data.tables.values()) > KEEP_MAX_BYTES:
            data = None  # the tables are in the cache now: what held them goes back to the system
        release_memory()  # and the import's working buffers, free but kept by the allocators
        return ("cached", entry.folder, data, where)
    return ("memory", None, data, where)


def _where() -> dict:
    """The process that ran a rank's import (and the Dask worker, when it is one)."""
    import socket
    import sys

    worker = None
    if "distributed" in sys.modules:  # only a process that imported Dask can be its worker
        try:
            from distributed import get_worker

            worker = get_worker().address
        except (ImportError, ValueError):
            worker = None
    return {"pid": os.getpid(), "host": socket.gethostname(), "worker": worker}


def load_sources(
    sources: tuple[RankSource, ...], progress: Progress | None = None, workers: int | None = None
) -> list[LoadedRank]:
    """Load every rank source, cache first; ranks to import run side by side, in processes
    (:func:`_side_by_side`), or on threads where together they hold under
    :data:`PARALLEL_MIN_BYTES` (:func:`_threads_side_by_side`); ``workers=1`` imports them one
    after the other.  Ranks of a format that is not cached (summaries: a few KB a rank) are read
    here, all at once."""
    if in_process(sources):
        return load_in_process(sources, progress)
    loaded, todo = cache_first(sources, progress)
    n_workers = min(len(todo), workers or os.cpu_count() or 1)
    if workers is None and n_workers > 1 and _source_bytes(sources[i] for i in todo) < PARALLEL_MIN_BYTES:
        # starting a process costs ~1.5 s of imports: not worth it for small ranks, but threads
        # of this process cost nothing to start
        _threads_side_by_side(sources, todo, n_workers, loaded, progress)
    elif n_workers > 1:
        _side_by_side(sources, todo, n_workers, loaded, progress)
    else:
        # one rank: its tables may stay in memory for the reads that follow (``keep``); of
        # several, some would come from the cache or another process, and a profile whose
        # ranks are not all held reads each table whole into memory, not the columns a query asks
        keep = len(sources) == 1
        collect(sources, todo, (_import_and_store(sources[i], keep=keep) for i in todo), loaded, progress)
    return [loaded[i] for i in range(len(sources))]


def _threads_side_by_side(
    sources, todo: list[int], n_workers: int, loaded: dict[int, LoadedRank], progress=None
) -> None:
    """Import the small ranks ``todo`` ``n_workers`` at a time on threads of this process, each
    with its share of the cores as DuckDB threads.  A small rank's import is mostly fixed costs
    (opening DuckDB, a few dozen statements, writing the cache), run on one core whatever the
    threads it is given, so two of them side by side keep both cores busy where one after the
    other leaves one idle.  Measured on 2 cores, a cold ``compare`` of two ranks (medians of
    alternating runs): Ascend text 2 x 5 MB 2.21 -> 1.71 s, 2 x 31 MB 2.63 -> 2.37 s; Kineto
    2 x 5 MB 1.76 -> 1.41 s, 2 x 24 MB 2.29 -> 1.72 s.  At 2 x 100 MB threads were no faster
    than processes (4.7-5.3 s against 4.2-5.3 s) and held both imports' memory in one process
    (peak 720-790 MB against 490-510 MB), so larger ranks keep :func:`_side_by_side`.  Results
    arrive, and are reported, in ``todo`` order, as one after the other gives them."""
    from concurrent.futures import ThreadPoolExecutor

    from ..importers._common import set_rank_threads

    share = max(1, (os.cpu_count() or 1) // n_workers)
    try:
        with ThreadPoolExecutor(n_workers, thread_name_prefix="profinsight-import") as pool:
            collect(sources, todo, pool.map(lambda i: _import_and_store(sources[i], share), todo), loaded, progress)
    finally:
        set_rank_threads(None)


def _side_by_side(sources, todo: list[int], n_workers: int, loaded: dict[int, LoadedRank], progress=None) -> None:
    """Import the ranks ``todo`` of ``sources`` ``n_workers`` at a time: this process is one of
    the workers (it has the importers loaded already; a spawned process pays ~0.5 s CPU to load
    them) and ``n_workers - 1`` spawned processes are the others, each given the next rank as it
    finishes one.  Every worker parses with its share of the cores."""
    from collections import deque
    from concurrent.futures import FIRST_COMPLETED, wait

    from ..importers._common import set_rank_threads

    share = max(1, (os.cpu_count() or 1) // n_workers)
    pending, running = deque(todo), {}
    done = len(loaded)

    def arrived(i, result):
        nonlocal done
        if result[0] == "retry":  # an importer asked the worker for pandas: imported here instead
            result = _import_and_store(sources[i])
        loaded[i] = _to_loaded(sources[i], result)
        done += 1
        if progress:
            progress(done, len(sources), str(sources[i].path))

    with ProcessPoolExecutor(max_workers=n_workers - 1, mp_context=_worker_context()) as pool:
        while pending or running:
            while pending and len(running) < n_workers - 1:
                i = pending.pop()  # the pool takes from the end, this process from the front
                with _forking():
                    running[pool.submit(_import_in_worker, sources[i], share)] = i
            if pending:
                i = pending.popleft()
                try:
                    arrived(i, _import_and_store(sources[i], share))
                finally:
                    set_rank_threads(None)
            else:
                wait(running, return_when=FIRST_COMPLETED)
            for fut in [f for f in running if f.done()]:
                arrived(running.pop(fut), fut.result())


#: what a worker of :func:`_side_by_side` says when code asks it for pandas
PANDAS_HELD_BACK = "pandas is held back in a rank import worker"


class _PandasHeldBack:
    """A meta-path finder that refuses pandas (see :func:`_import_in_worker`)."""

    def find_spec(self, name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(PANDAS_HELD_BACK, name=name)
        return None


def _import_in_worker(source: RankSource, threads: int | None = None):
    """:func:`_import_and_store` in a worker process of :func:`_side_by_side`, without pandas.

    Why: no importer uses pandas, but pyarrow imports it the first time it asks whether an
    argument is a pandas object (``pa.array`` of a NumPy array, ``Table.from_pylist``, a compute
    call with a Python scalar).  A worker that only imports and caches a rank then pays ~0.25 s
    CPU for nothing, taken on a 2-core machine from the other rank's import: a cold ``compare``
    of two 100 MB Kineto ranks 2.56 -> 2.48 s, CPU 4.73 -> 4.50 s.  Refused by a finder rather
    than hidden in ``sys.modules`` (pyarrow reads the version of whatever it finds there), and
    only where pandas is not imported already (a forked worker of a process that has it).
    Should an importer ever import pandas, the rank comes back as ``"retry"`` and this process
    imports it, where pandas is allowed: slower, nothing lost."""
    import sys

    if "pandas" not in sys.modules and not any(isinstance(f, _PandasHeldBack) for f in sys.meta_path):
        sys.meta_path.insert(0, _PandasHeldBack())
    result = _import_and_store(source, threads)
    data = result[2]
    if data is not None and any(
        d.code == "import-failed" and PANDAS_HELD_BACK in (d.message or "") for d in data.diagnostics
    ):
        return ("retry", None, None, result[3])
    return result


def _worker_context():
    """How the worker processes of :func:`_side_by_side` start.  Forked when this process runs
    no Python thread but this one (the command line writing to a file or a pipe, a script): a
    forked worker has the importers imported already, where a spawned one imports them again
    (0.5-0.8 s CPU taken from the other ranks' imports; a cold ``compare`` of two 100 MB Kineto
    ranks 2.79-2.85 -> 2.47-2.57 s).  Spawned otherwise: a notebook's kernel, a server, the
    progress bar's thread on a terminal or a caller's own threads may hold a lock (of a stream,
    say) that a forked child would wait on forever."""
    import threading

    if (
        "fork" in mp.get_all_start_methods()
        and threading.current_thread() is threading.main_thread()
        and threading.active_count() == 1
    ):
        return mp.get_context("fork")
    return mp.get_context("spawn")


@contextmanager
def _forking():
    """Around a submit that may fork the pool's workers: Python's warning that a process with
    threads is being forked (3.12+) is not shown -- the threads it counts are the numeric
    libraries' own idle ones (BLAS, jemalloc), which prepare for a fork themselves.  What this
    process has buffered for stdout is written out before the fork by multiprocessing itself."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*fork.*")
        yield


def import_isolated(sources, stop=None, progress: Progress | None = None) -> list[int]:
    """Import and cache ``sources`` one at a time in one spawned worker process, skipping those
    already cached: the background import of a summary-tier view, so that the process that asked
    (a server answering the browser) keeps its interpreter to itself.  ``stop`` (an Event) ends
    it -- between ranks, or during one, by ending the worker (half a second at most: a server
    that stops leaves no import running behind it).  Returns the positions imported."""
    from concurrent.futures import TimeoutError as Pending

    todo = [i for i, s in enumerate(sources) if cache.lookup(s) is None]
    done: list[int] = []
    if not todo:
        return done
    pool = ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn"))
    try:
        for n, i in enumerate(todo):
            fut = pool.submit(_import_and_store, sources[i])
            while True:
                if stop is not None and stop.is_set():
                    _end(pool)
                    return done
                try:
                    fut.result(timeout=0.5)
                    break
                except Pending:
                    continue
            done.append(i)
            if progress:
                progress(n + 1, len(todo), str(sources[i].path))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return done


def _end(pool: ProcessPoolExecutor) -> None:
    """End the pool's worker now (its rank was not stored: a cache entry is only one once it is
    complete, so nothing half-written is ever read)."""
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        proc.terminate()
    pool.shutdown(wait=True, cancel_futures=True)


def in_process(sources) -> bool:
    """Whether ``sources`` are ranks read in this process and never cached (the summary tier):
    a process or a Dask task per rank would cost more than reading the rank."""
    return bool(sources) and all(not cacheable(s.format) for s in sources)


def watched_files(sources) -> list[str]:
    """The files whose bytes a load's progress follows (:mod:`..importers.progress`): every file
    of every rank that is imported and cached; none for summary-tier ranks, read whole in this
    process (a few KB each: their progress is counted by rank)."""
    sources = list(sources)
    return [] if in_process(sources) else [str(f) for s in sources for f in s.files]


def load_in_process(sources, progress: Progress | None = None) -> list[LoadedRank]:
    """Every rank of ``sources`` read in this process (the importer reads a file that holds many
    ranks once), kept as one run entry of the cache (:mod:`.run_cache`) and read from it on the
    next load while no rank's files changed.  An importer failure falls back to one rank at a
    time, so a bad rank costs only itself (``import_rank`` turns it into a diagnostic)."""
    sources = tuple(sources)
    if not sources:
        return []
    key = run_cache.run_key(sources) if cache_root() is not None else None
    if key is None:
        return _in_memory(sources, _read_ranks(sources, progress))
    with run_cache.lock_for(key):  # a second thread opening the same run waits, then reads the entry
        entry = run_cache.lookup(key)
        if entry is None or len(entry.ranks) != len(sources):
            datas = _read_ranks(sources, progress)
            entry = run_cache.store(key, sources, datas)
            if entry is None:
                return _in_memory(sources, datas)
        elif progress:
            progress(len(sources), len(sources), "cached")
    return [
        LoadedRank(src, entry.ranks[i], list(entry.diagnostics[i]), shared=entry, position=i)
        for i, src in enumerate(sources)
    ]


#: ranks read per call of the importer when each rank has files of its own (progress between calls)
READ_CHUNK = 64


def _read_ranks(sources, progress: Progress | None = None) -> list[RankData]:
    """The ranks of ``sources`` read by their importer, ``READ_CHUNK`` ranks a call where each rank
    has its own folder (so progress is reported while a run of 1,024 ranks is read), all at once
    where ranks share a file (a cluster summary holds every rank: it is read once)."""
    own = len({str(s.path) for s in sources}) == len(sources)
    step = READ_CHUNK if own else len(sources)
    datas: list[RankData] = []
    for at in range(0, len(sources), step):
        chunk = sources[at : at + step]
        try:
            datas.extend(load_ranks(chunk))
        except Exception:  # noqa: BLE001 - retried rank by rank, where each failure is reported
            datas.extend(import_rank(s) for s in chunk)
        if progress:
            progress(len(datas), len(sources), str(chunk[-1].path))
    return datas


def _in_memory(sources, datas) -> list[LoadedRank]:
    out = []
    for src, data in zip(sources, datas):
        rank = (src.rank_hint or 0) if data.rank is None else int(data.rank)
        out.append(LoadedRank(src, rank, list(data.diagnostics), tables=data.tables))
    return out


def cache_first(sources, progress: Progress | None = None) -> tuple[dict[int, LoadedRank], list[int]]:
    """The ranks whose cache entry is fresh (by position) and the positions still to import."""
    loaded: dict[int, LoadedRank] = {}
    todo = []
    for i, src in enumerate(sources):
        hit = cache.lookup(src)
        if hit is not None:
            loaded[i] = LoadedRank(src, hit.rank, hit.diagnostics, cached=hit)
        else:
            todo.append(i)
    if progress:
        progress(len(loaded), len(sources), "cached")
    return loaded, todo


def collect(sources, todo: list[int], results, loaded: dict[int, LoadedRank], progress: Progress | None = None) -> None:
    """Turn the results of ``_import_and_store`` (in ``todo`` order, from any executor) into
    loaded ranks, reporting progress as each arrives."""
    done = len(loaded)
    for i, result in zip(todo, results):
        loaded[i] = _to_loaded(sources[i], result)
        done += 1
        if progress:
            progress(done, len(sources), str(sources[i].path))


#: below this many source bytes to import, ranks are imported in this process, on threads
PARALLEL_MIN_BYTES = 64 * 2**20


def _source_bytes(sources) -> int:
    total = 0
    for src in sources:
        for f in src.files:
            try:
                total += f.stat().st_size
            except OSError:
                pass
    return total


def _to_loaded(source: RankSource, result) -> LoadedRank:
    how, folder, data, where = result
    if how == "cached":
        entry = cache._open(folder)
        if entry is not None:
            tables = data.tables if data is not None else None  # kept in memory too (``keep``)
            return LoadedRank(source, entry.rank, entry.diagnostics, cached=entry, tables=tables, loaded_by=where)
        data = import_rank(source)  # the entry vanished (cache cleared meanwhile): keep in memory
        where = _where()
    rank = 0 if data.rank is None else int(data.rank)
    return LoadedRank(source, rank, list(data.diagnostics), tables=data.tables, loaded_by=where)
