"""How far an import has got, for a person watching a long load: the bytes of each source file
read so far and the stage the import is in.

A cold import of a 1 GB trace takes tens of seconds, and "0 of 1 rank(s) ready" says nothing
about whether it moves.  The readers that stream a file (``chrome_trace``: the byte stream of a
Kineto trace, the pieces of ``trace_view.json``) call :func:`read` as they go; the loader calls
:func:`stage` between the steps it runs.  Whoever wants to know (the server's load status)
registers a :class:`Watcher` for the files of the ranks it loads with :func:`watch`.

Watchers are found by file path, not by thread or context: a reader may run in a worker thread
of its own, and two profiles loading at once in one server each see only their own files.
Nothing is recorded when nobody watches (the CLI, the notebook), and a watcher that fails never
fails the import.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from contextlib import contextmanager
from pathlib import Path

__all__ = ["Watcher", "quiet", "read", "read_whole", "stage", "watch"]

_lock = threading.Lock()
_watchers: dict[str, Watcher] = {}
_local = threading.local()


@contextmanager
def quiet():
    """Nothing this thread reads while the block runs is reported: a second, small load of the
    same files (the server's first paint reads a rank's summaries while its import runs) must
    not move the import's progress."""
    before = getattr(_local, "quiet", False)
    _local.quiet = True
    try:
        yield
    finally:
        _local.quiet = before


def _key(path) -> str:
    try:
        return os.path.realpath(os.fspath(path))
    except (TypeError, ValueError, OSError):
        return str(path)


class Watcher:
    """Bytes read per file (the latest offset each reader reported, at most the file's size) and
    the current stage, for the files of one load.  Read from another thread without a lock: the
    values are plain ints and strings, replaced whole."""

    def __init__(self, sizes: dict[str, int]):
        self.sizes = dict(sizes)
        self.read_bytes: dict[str, int] = {}
        self.stage: str | None = None
        self.file: str | None = None

    @property
    def total(self) -> int:
        return sum(self.sizes.values())

    @property
    def done(self) -> int:
        return sum(min(v, self.sizes.get(k, v)) for k, v in list(self.read_bytes.items()))

    def on_read(self, key: str, done: int) -> None:
        if done > self.read_bytes.get(key, 0):
            self.read_bytes[key] = done
        self.file, self.stage = Path(key).name, "reading"

    def on_stage(self, name: str) -> None:
        self.stage = name

    def shown_stage(self) -> str | None:
        """The stage to tell a person: ``building`` once the streamed file is read whole (the
        importer says so itself only when it starts its next step), else the last one reported."""
        if self.stage == "reading" and self.file:
            mine = [k for k in self.sizes if Path(k).name == self.file]
            if mine and all(self.read_bytes.get(k, 0) >= self.sizes[k] for k in mine):
                return "building"
        return self.stage

    def finished(self, files: Iterable) -> None:
        """The files of a rank that finished importing count as read whole (CSV and DB readers
        do not report their bytes as they go)."""
        for f in files:
            k = _key(f)
            if k in self.sizes:
                self.read_bytes[k] = self.sizes[k]


def _size(path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


@contextmanager
def watch(files: Iterable):
    """Register a :class:`Watcher` for ``files`` while the block runs; yields it."""
    keys = {_key(f): _size(f) for f in files}
    w = Watcher(keys)
    with _lock:
        for k in keys:
            _watchers[k] = w
    try:
        yield w
    finally:
        with _lock:
            for k in keys:
                if _watchers.get(k) is w:
                    del _watchers[k]


def read(path, done: int) -> None:
    """A reader of ``path`` has read its first ``done`` bytes (file bytes: compressed bytes of
    a gzip file)."""
    if not _watchers or getattr(_local, "quiet", False):
        return
    w = _watchers.get(_key(path))
    if w is not None:
        try:
            w.on_read(_key(path), int(done))
        except Exception:  # noqa: BLE001 - watching never fails an import
            pass


def read_whole(path) -> None:
    """A reader of ``path`` is done with it: every byte counts as read (the bytes it did not
    parse -- around a trace's event array, after a cut -- hold nothing to read).  The size is
    the watcher's own: nothing is asked of the file system when nobody watches."""
    if not _watchers or getattr(_local, "quiet", False):
        return
    key = _key(path)
    w = _watchers.get(key)
    if w is not None and key in w.sizes:
        w.on_read(key, w.sizes[key])


def stage(files: Iterable, name: str) -> None:
    """The import of the rank reading ``files`` entered stage ``name`` (``parsing``,
    ``building``, ``caching``)."""
    if not _watchers or getattr(_local, "quiet", False):
        return
    for f in files:
        w = _watchers.get(_key(f))
        if w is not None:
            w.on_stage(name)
            return
