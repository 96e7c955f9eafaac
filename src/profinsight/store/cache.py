"""On-disk cache of imported ranks: one Parquet file per canonical table plus ``meta.json``.

Why: re-opening a GB-scale profile must take well under a second.  The cache lives *outside*
the data folder (profiles are often on read-only or shared storage): the user cache dir by
default, ``PROFINSIGHT_CACHE`` to move it, ``PROFINSIGHT_CACHE=off`` to disable it.

The key hashes the importer, its version, the schema version and every source file's path,
size and mtime, so a changed source invalidates the entry.  Writes go to a temporary folder
renamed into place at the end (atomic on one filesystem): an interrupted write never leaves an
entry that loads, because an entry is only an entry once ``meta.json`` exists in its final name.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .._version import __version__
from ..diagnostics import Diagnostic
from ..importers import RankData, RankSource, importer
from ..importers.checks import CHECKS_VERSION
from ..schema import SCHEMA_VERSION, TABLES
from . import prune
from .root import cache_root, mark_seen

_META = "meta.json"


def cache_key(source: RankSource) -> str:
    """Stable key of one rank source: importer + versions + every file's path/size/mtime."""
    h = hashlib.sha256()
    mod = importer(source.format)
    h.update(f"{source.format}|{getattr(mod, 'VERSION', '0')}|{SCHEMA_VERSION}|{__version__}".encode())
    h.update(f"|checks {CHECKS_VERSION}".encode())  # the diagnostics every rank gets are cached with it
    h.update(repr(sorted(source.options)).encode())
    for f in sorted(source.files):
        try:
            st = f.stat()
            h.update(f"|{f.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode())
        except OSError:
            h.update(f"|{f}|missing".encode())
    return h.hexdigest()[:32]


@dataclass
class CachedRank:
    """A rank whose tables are on disk; tables are read on first use (memory-mapped)."""

    folder: Path
    rank: int
    diagnostics: list[Diagnostic]
    row_counts: dict[str, int]

    def table_path(self, name: str) -> Path:
        return self.folder / f"{name}.parquet"

    def read(self, name: str) -> pa.Table:
        # ParquetFile, not read_table: read_table goes through pyarrow.dataset, which imports
        # pandas (half a second) — a warm re-open should not pay for it
        return pq.ParquetFile(self.table_path(name), memory_map=True).read()


def lookup(source: RankSource) -> CachedRank | None:
    """The cached entry of ``source`` if a complete one exists."""
    root = cache_root()
    if root is None:
        return None
    folder = root / f"v{SCHEMA_VERSION}" / cache_key(source)
    entry = _open(folder)
    if entry is not None:
        prune.touch(folder)  # used now: the size rule removes the entries used least recently
    return entry


def _open(folder: Path) -> CachedRank | None:
    meta_path = folder / _META
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if any(not (folder / f"{name}.parquet").is_file() for name in TABLES):
        return None
    return CachedRank(
        folder,
        int(meta["rank"]),
        [Diagnostic.from_dict(d) for d in meta.get("diagnostics", [])],
        dict(meta.get("row_counts", {})),
    )


def store(source: RankSource, data: RankData) -> CachedRank | None:
    """Write ``data`` for ``source`` atomically; None when caching is off or the folder is
    not writable (the caller keeps the tables in memory then)."""
    root = cache_root()
    if root is None:
        return None
    final = root / f"v{SCHEMA_VERSION}" / cache_key(source)
    tmp = final.parent / f".tmp-{final.name}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        tmp.mkdir(parents=True)
        write_tables(data.tables, tmp)
        meta = {
            "rank": data.rank if data.rank is not None else 0,
            "source": {"format": source.format, "path": str(source.path)},
            "diagnostics": [d.to_dict() for d in data.diagnostics],
            "row_counts": {n: t.num_rows for n, t in data.tables.items()},
            "written": time.time(),
        }
        (tmp / _META).write_text(json.dumps(meta), encoding="utf-8")
        try:
            os.replace(tmp, final)
        except OSError:  # another process won the race: its entry is as good as ours
            shutil.rmtree(tmp, ignore_errors=True)
        mark_seen(source.files, final)
        _sweep(final.parent)
        prune.maybe_prune()  # at most hourly: the cache keeps to PROFINSIGHT_CACHE_MAX
        return _open(final)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        return None


def write_tables(tables: dict[str, pa.Table], folder: Path) -> None:
    """Each table as ``folder/<name>.parquet``, two at a time when the rank's import may use two
    cores: a Parquet file is encoded and compressed on one thread, with the GIL released, so a
    second writer takes the other core (the 100 MB Kineto rank's tables: 0.14 -> 0.08 s wall).
    The largest tables start first; the first error is raised, as one after the other would."""
    from ..importers._common import thread_share

    order = sorted(tables, key=lambda n: tables[n].nbytes, reverse=True)
    workers = min(thread_share(), 2, len(order))
    if workers < 2:
        for name in order:
            write_parquet(tables[name], folder / f"{name}.parquet")
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(workers) as pool:
        done = [pool.submit(write_parquet, tables[n], folder / f"{n}.parquet") for n in order]
        for f in done:
            f.result()


def write_parquet(table: pa.Table, path: Path) -> None:
    """One canonical table as a cache file: zstd, dictionary encoding for the text columns only.

    Dictionary encoding pays where values repeat (names, kinds, streams); on times, durations and
    ids nearly every value differs, so the writer built a dictionary per column chunk only to drop
    it when it outgrew its page and write the values plain.  Text only: the 300 MB scaled Ascend
    profile's thirteen tables take 0.27-0.30 s CPU to write instead of 0.36-0.39 and 5.3 MB instead
    of 7.3 MB, and read back (pyarrow, DuckDB) in the same time as the same tables."""
    text = [f.name for f in table.schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
    text += [f.name for f in table.schema if pa.types.is_dictionary(f.type)]
    pq.write_table(table, path, compression="zstd", use_dictionary=text)


def store_beside(entry: Path, name: str, write, keep_prefix: str | None = None) -> Path | None:
    """Write a derived artefact (e.g. the timeline index) as sub-folder ``name`` of cache entry
    ``entry``, atomically: ``write(tmp_folder)`` fills a temporary folder that is renamed into
    place, so a reader sees all of it or nothing.  It lives inside the entry, so it shares the
    entry's key and goes when the entry goes; ``keep_prefix`` removes sibling folders with that
    prefix but another name (older versions of the artefact).  None when the entry is not
    writable (the caller keeps its data in memory)."""
    final = entry / name
    tmp = entry / f".tmp-{name}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        tmp.mkdir()
        write(tmp)
        try:
            os.replace(tmp, final)
        except OSError:  # another process won the race: its copy is as good as ours
            shutil.rmtree(tmp, ignore_errors=True)
        if keep_prefix:
            for old in entry.glob(keep_prefix + "*"):
                if old.name != name and old.is_dir():
                    shutil.rmtree(old, ignore_errors=True)
        _sweep(entry)
        return final if final.is_dir() else None
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        return None


def _sweep(folder: Path, max_age_s: float = 3600.0) -> None:
    """Remove temporary folders left by interrupted writes."""
    now = time.time()
    try:
        for p in folder.glob(".tmp-*"):
            try:
                if now - p.stat().st_mtime > max_age_s:
                    shutil.rmtree(p, ignore_errors=True)
            except OSError:
                pass
    except OSError:
        pass
