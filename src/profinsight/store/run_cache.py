"""One cache entry for a whole run whose ranks are read in this process (the summary tier).

Why: the summary tier reads each rank's own summaries (a few KB) instead of its traces, so its
ranks are never cached one by one -- 13 Parquet files per rank would cost more to write and to
open than the summaries cost to read (1,024 ranks: 13,312 files).  But reading 1,024 rank folders
again (parsing their CSV and JSON, building and checking the tables) still took tens of seconds
on every open of the run in the viewer, and every analysis behind the Ranks view was computed
again because a profile held in memory keeps its results in memory only.  One entry per run
fixes both: the canonical tables of every rank concatenated in load order (one Parquet file per
table), the ranks' ids, diagnostics and row counts in ``meta.json``, and, because the entry is a
folder of its own in the cache, the analyses' results beside them (:mod:`.results`), as the
per-rank entries have.

The key hashes the entry layout, the package version, the schema and checks versions, the
engine's code (:func:`.results.code_fingerprint`) and, in load order, every rank source's format,
importer version, options, rank hint and the path, size and mtime of every file it reads.  A
rank file that changes, a rank added or removed (a new source list from discovery) gives a new
key: a stale entry is never read.  The entry lives under the cache root beside the per-rank
entries (``<cache>/v<schema>/run-<key>/``), never beside the user's data; it is written to a
temporary folder renamed into place, so a reader sees all of it or nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .._version import __version__
from ..diagnostics import Diagnostic
from ..importers import importer
from ..importers.checks import CHECKS_VERSION
from ..schema import SCHEMA_VERSION, TABLES
from . import prune
from .cache import write_parquet
from .root import cache_root

#: layout of a run entry; bump when what it holds or how it is named changes
RUN_CACHE_VERSION = 1
PREFIX = "run-"
_META = "meta.json"

_locks_guard = threading.Lock()
_locks: dict[str, threading.Lock] = {}


def run_key(sources) -> str:
    """The key of the run entry of ``sources`` (in their order): versions, engine code, and every
    source's format, importer version, options, rank hint and files' path, size and mtime (one
    ``stat`` per file: about 4,000 for 1,024 ranks, no file is read)."""
    from .results import code_fingerprint

    h = hashlib.sha256(
        f"run {RUN_CACHE_VERSION}|{__version__}|{SCHEMA_VERSION}|checks {CHECKS_VERSION}|{code_fingerprint()}".encode()
    )
    versions: dict[str, str] = {}
    for s in sources:
        if s.format not in versions:
            versions[s.format] = str(getattr(importer(s.format), "VERSION", "0"))
        h.update(f"\n{s.format}|{versions[s.format]}|{s.path}|{s.rank_hint}|{sorted(s.options)!r}".encode())
        for f in sorted(s.files):
            try:
                st = os.stat(f)
                h.update(f"|{os.path.abspath(f)}|{st.st_size}|{st.st_mtime_ns}".encode())
            except OSError:
                h.update(f"|{f}|missing".encode())
    return h.hexdigest()[:32]


def lock_for(key: str) -> threading.Lock:
    """One lock per run key in this process: two threads opening the same run (the server's
    first paint and its import) read the ranks once, the second then reads the entry."""
    with _locks_guard:
        return _locks.setdefault(key, threading.Lock())


class RunEntry:
    """A run entry on disk.  Each table is read once (memory-mapped) on first use and kept, so
    the ranks' slices of it (:meth:`rank_table`) cost nothing more."""

    def __init__(self, folder: Path, meta: dict):
        self.folder = folder
        ranks = meta["ranks"]
        self.ranks: list[int] = [int(r["rank"]) for r in ranks]
        self.diagnostics: list[list[Diagnostic]] = [[Diagnostic.from_dict(d) for d in r["diagnostics"]] for r in ranks]
        self.row_counts: list[dict[str, int]] = [dict(r["row_counts"]) for r in ranks]
        self._tables: dict[str, pa.Table] = {}
        self._offsets: dict[str, list[int]] = {}
        self._lock = threading.Lock()

    def table_path(self, name: str) -> Path:
        return self.folder / f"{name}.parquet"

    def read(self, name: str) -> pa.Table:
        """Table ``name`` of every rank, in load order."""
        with self._lock:
            if name not in self._tables:
                # ParquetFile, not read_table: read_table imports pandas through pyarrow.dataset
                self._tables[name] = pq.ParquetFile(self.table_path(name), memory_map=True).read()
            return self._tables[name]

    def offsets(self, name: str) -> list[int]:
        """Where each rank's rows of table ``name`` start in it (one more: the end)."""
        offsets = self._offsets.get(name)
        if offsets is None:
            offsets = [0]
            for counts in self.row_counts:
                offsets.append(offsets[-1] + int(counts.get(name, 0)))
            self._offsets[name] = offsets
        return offsets

    def rank_table(self, name: str, position: int) -> pa.Table:
        """Table ``name`` of the rank at ``position`` (a zero-copy slice of the whole table)."""
        at = self.offsets(name)
        return self.read(name).slice(at[position], at[position + 1] - at[position])


def _folder(key: str) -> Path | None:
    root = cache_root()
    return None if root is None else root / f"v{SCHEMA_VERSION}" / f"{PREFIX}{key}"


#: the entries this process read last, by key: the server's first paint and its import (and a
#: second open) share one entry's tables instead of reading its Parquet files again
LIVE = 4
_live: dict[str, RunEntry] = {}


def lookup(key: str) -> RunEntry | None:
    """The complete entry of ``key``, or None (no entry, the cache off, a damaged entry)."""
    folder = _folder(key)
    if folder is None:
        return None
    with _locks_guard:
        live = _live.get(key)
    if live is not None and live.folder == folder and (folder / _META).is_file():
        return live
    entry = _open(folder)
    if entry is not None:
        prune.touch(folder)  # used now: the size rule removes the entries used least recently
        with _locks_guard:
            _live[key] = entry
            while len(_live) > LIVE:
                _live.pop(next(iter(_live)))
    return entry


def _open(folder: Path) -> RunEntry | None:
    try:
        meta = json.loads((folder / _META).read_text(encoding="utf-8"))
        if any(not (folder / f"{name}.parquet").is_file() for name in TABLES):
            return None
        return RunEntry(folder, meta)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store(key: str, sources, datas) -> RunEntry | None:
    """Write the ranks ``datas`` (:class:`~profinsight.importers.RankData`, in the order of
    ``sources``) as the entry of ``key``, atomically; None when the cache is off or not writable
    (the caller keeps the tables in memory then)."""
    final = _folder(key)
    if final is None or any(x.code == "import-failed" for d in datas for x in d.diagnostics):
        return None  # a failed read (a bug, memory) is not the run's content: the next open tries again
    tmp = final.parent / f".tmp-{final.name}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        tmp.mkdir(parents=True)
        for name in TABLES:
            parts = [d.tables[name] for d in datas if name in d.tables]
            if not parts:
                return None  # a rank without a canonical table: not an entry that reads back whole
            table = pa.concat_tables(parts, promote_options="permissive")
            write_parquet(table, tmp / f"{name}.parquet")
        meta = {
            "version": RUN_CACHE_VERSION,
            "written": time.time(),
            "ranks": [
                {
                    "rank": d.rank if d.rank is not None else (s.rank_hint or 0),
                    "source": str(s.path),
                    "diagnostics": [x.to_dict() for x in d.diagnostics],
                    "row_counts": {n: t.num_rows for n, t in d.tables.items()},
                }
                for s, d in zip(sources, datas)
            ],
        }
        (tmp / _META).write_text(json.dumps(meta), encoding="utf-8")
        try:
            os.replace(tmp, final)
        except OSError:  # another process won the race (its entry is as good as ours), or a damaged one
            if _open(final) is None:
                shutil.rmtree(final, ignore_errors=True)
                os.replace(tmp, final)
        prune.maybe_prune()  # at most hourly: the cache keeps to PROFINSIGHT_CACHE_MAX
        return lookup(key)
    except (OSError, pa.ArrowException):
        return None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
