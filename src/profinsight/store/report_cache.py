"""Reports kept as JSON, so that asking the same question of unchanged files again is a read.

Why: the cluster view of a 64-rank job takes about two seconds to build and most of a warm
command's time would be spent importing pandas, DuckDB and pyarrow to build it again.  A report
is stored with a *witness* of its inputs: the size and mtime of every file the run read and the
mtime of every folder those files lie in (and of the run's root), which changes when a file is
added, removed or renamed there -- a new rank folder, a rank's new export.  A lookup re-stats
the witness (a few hundred ``stat`` calls for 64 ranks, no third-party import) and answers only
when every entry is unchanged; otherwise the caller builds the report again and stores it.

The entry's name hashes what was asked (the kind of report, the paths as given, resolved, and
the parameters) with the versions of the package and of the report, so a new release never
reads an old entry.  Writes go to a temporary file renamed into place; ``PROFINSIGHT_CACHE=off``
switches this cache off with the other.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from pathlib import Path

from .._version import __version__
from .prune import touch
from .root import cache_root

FOLDER = "reports"


def _entry(kind: str, version: str, question: dict) -> Path | None:
    root = cache_root()
    if root is None:
        return None
    h = hashlib.sha256(json.dumps([kind, version, __version__, question], sort_keys=True, default=str).encode())
    return root / FOLDER / f"{kind}-{h.hexdigest()[:32]}.json"


def witness(run) -> list[list]:
    """``[path, size, mtime_ns]`` of every file of ``run``'s rank sources, and ``[folder, -1,
    mtime_ns]`` of the run's root and of every folder holding those files or named as a source."""
    files, folders = set(), {Path(run.root)}
    for src in run.sources:
        p = Path(src.path)
        (folders if p.is_dir() else files).add(p)
        for f in src.files:
            files.add(Path(f))
            folders.add(Path(f).parent)
    out = []
    for f in sorted(files):
        st = _stat(f)
        out.append([str(f), st.st_size if st else None, st.st_mtime_ns if st else None])
    for d in sorted(folders):
        st = _stat(d)
        out.append([str(d), -1, st.st_mtime_ns if st else None])
    return out


def _stat(p: Path):
    try:
        return p.stat()
    except OSError:
        return None


def _fresh(entries: list) -> bool:
    for path, size, mtime in entries:
        try:
            st = os.stat(path)  # a str, not a Path: 7,000 entries (1,024 ranks) in tens of ms
        except OSError:
            st = None
        if st is None or st.st_mtime_ns != mtime or (size != -1 and st.st_size != size):
            return False
    return True


def lookup(kind: str, version: str, question: dict) -> dict | None:
    """The stored report for ``question`` when every file and folder it was built from is
    unchanged, else None."""
    path = _entry(kind, version, question)
    if path is None:
        return None
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or not _fresh(stored.get("witness") or [[str(path), 0, 0]]):
        return None
    touch(path)  # used now: the cache's size rule removes the entries used least recently
    return stored.get("report")


def store(kind: str, version: str, question: dict, seen: list, report: dict) -> Path | None:
    """Keep ``report`` for ``question`` with the witness ``seen`` -- taken (:func:`witness`) before
    the inputs were read, so that a file changed while the report was built is never answered
    from it.  None when the cache is off or not writable."""
    path = _entry(kind, version, question)
    if path is None:
        return None
    tmp = path.with_name(f".tmp-{path.name}-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps({"witness": seen, "report": report}), encoding="utf-8")
        os.replace(tmp, path)
        return path
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass
        return None
