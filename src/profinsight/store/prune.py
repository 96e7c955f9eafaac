"""Keeping the cache within a size: the entries used least recently go first.

Why: every imported rank is an entry of the cache (tens of MB for a GB-scale trace), a 1,024-rank
run adds a run entry beside a thousand rank entries, every analysis result and kept report is a
file, and a new schema version leaves the old version's whole folder unread.  Nothing removed
them, so the user's cache folder only grew.  Now the cache keeps to a size
(``PROFINSIGHT_CACHE_MAX``, default 20 GiB; ``off`` keeps everything): at most once an hour, after
an import writes an entry, the entries used least recently are removed until the cache fits.
``profinsight cache`` shows what is there and prunes or clears it on demand.

What an entry is: a rank entry or a run entry (a folder of ``v{SCHEMA}/``, with the analyses'
results kept inside it), a kept report (a file of ``reports/``), or the whole folder of another
schema version (``v{N}/``: this release never reads it).  When it was last used: its mtime,
which a lookup renews (:func:`touch`).  An entry used in the last hour is never removed by the
size rule (another process may be reading it), and an entry is removed by renaming it to a
temporary name first, so a reader sees all of it or none; the cache's own sweep removes the
rest of an interrupted removal.

The experiment record (``profinsight-experiments``) is not in the cache and never touched.
"""

from __future__ import annotations

import os
import re
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from .root import SEEN, cache_root

#: the default largest size of the cache
DEFAULT_MAX_BYTES = 20 * 2**30
#: an entry used more recently than this is never removed by the size rule
RECENT_S = 3600.0
#: the automatic prune runs at most this often per cache folder
EVERY_S = 3600.0
ENV_MAX = "PROFINSIGHT_CACHE_MAX"
_STAMP = ".last-prune"
_UNITS = {
    "": 1,
    "b": 1,
    "k": 2**10,
    "kb": 2**10,
    "m": 2**20,
    "mb": 2**20,
    "g": 2**30,
    "gb": 2**30,
    "t": 2**40,
    "tb": 2**40,
}
_OFF = {"off", "none", "no", "0", "false", "unlimited"}


def parse_size(text: str) -> int | None:
    """``"20G"`` -> 21474836480; ``"500MB"``, ``"1.5g"``, ``"1048576"``; ``"off"`` -> None.

    Raises ValueError with the accepted forms for anything else."""
    t = str(text).strip().lower()
    if t in _OFF:
        return None
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(i?b|[kmgt]i?b?|)", t)
    if not m:
        raise ValueError(f"{text!r} is not a size: write e.g. 20G, 500M, 1.5GB or off")
    unit = m.group(2).replace("i", "")
    return int(float(m.group(1)) * _UNITS[unit])


def max_bytes_from_env() -> int | None:
    """The size limit ``PROFINSIGHT_CACHE_MAX`` asks for (None: no limit); a value that is not a
    size falls back to the default rather than failing an import."""
    env = os.environ.get(ENV_MAX)
    if env is None or not env.strip():
        return DEFAULT_MAX_BYTES
    try:
        return parse_size(env)
    except ValueError:
        return DEFAULT_MAX_BYTES


@dataclass
class Entry:
    """One removable unit of the cache."""

    path: Path
    kind: str  # rank | run | report | old-version | leftover (of an interrupted removal)
    bytes: int
    used: float  # seconds since the epoch


@dataclass
class PruneResult:
    removed: list[Entry] = field(default_factory=list)
    kept: list[Entry] = field(default_factory=list)

    @property
    def freed(self) -> int:
        return sum(e.bytes for e in self.removed)

    @property
    def left(self) -> int:
        return sum(e.bytes for e in self.kept)


def touch(folder: Path) -> None:
    """Marks an entry as used now (its mtime); a read-only cache is simply not renewed."""
    try:
        os.utime(folder)
    except OSError:
        pass


def _size(path: Path) -> tuple[int, float]:
    """Bytes under ``path`` and its latest mtime (the folder's own, renewed by :func:`touch`,
    or a file's, e.g. a result written inside it)."""
    try:
        st = path.stat()
    except OSError:
        return 0, 0.0
    if not path.is_dir():
        return st.st_size, st.st_mtime
    total, latest = 0, st.st_mtime
    stack = [str(path)]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for e in it:
                    try:
                        if e.is_dir(follow_symlinks=False):
                            stack.append(e.path)
                        else:
                            s = e.stat(follow_symlinks=False)
                            total += s.st_size
                            latest = max(latest, s.st_mtime)
                    except OSError:
                        continue
        except OSError:
            continue
    return total, latest


def entries(root: Path | None = None) -> list[Entry]:
    """Every removable entry of the cache at ``root`` (default: the user's cache), oldest use first."""
    from ..schema import SCHEMA_VERSION

    root = cache_root() if root is None else Path(root)
    out: list[Entry] = []
    if root is None or not root.is_dir():
        return out
    for child in sorted(root.iterdir()):
        name = child.name
        if name.startswith(".tmp-prune-"):
            out.append(Entry(child, "leftover", *_size(child)))
            continue
        if name.startswith(".") or not child.is_dir():
            continue
        if re.fullmatch(r"v\d+", name) and name != f"v{SCHEMA_VERSION}":
            out.append(Entry(child, "old-version", *_size(child)))
        elif name == f"v{SCHEMA_VERSION}":
            for e in sorted(child.iterdir()):
                if e.name.startswith(".tmp-prune-"):
                    out.append(Entry(e, "leftover", *_size(e)))
                    continue
                if e.name.startswith(".") or not e.is_dir():
                    continue
                kind = "run" if e.name.startswith("run-") else "rank"
                out.append(Entry(e, kind, *_size(e)))
        elif name == "reports":
            for f in sorted(child.iterdir()):
                if f.is_file() and f.suffix == ".json":
                    out.append(Entry(f, "report", *_size(f)))
    out.sort(key=lambda e: (e.used, str(e.path)))
    return out


def _remove(e: Entry) -> bool:
    """Renames the entry away (atomic: a reader sees it whole or gone), then deletes it."""
    gone = e.path.parent / f".tmp-prune-{e.path.name}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        os.replace(e.path, gone)
    except OSError:
        return False
    if gone.is_dir():
        shutil.rmtree(gone, ignore_errors=True)
    else:
        try:
            gone.unlink()
        except OSError:
            pass
    return True


def prune(
    root: Path | None = None,
    *,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
    older_than_s: float | None = None,
    keep_recent_s: float = RECENT_S,
    dry_run: bool = False,
    now: float | None = None,
) -> PruneResult:
    """Removes entries, least recently used first, until the cache is at most ``max_bytes``
    (None: no size rule); with ``older_than_s``, also every entry not used for that long.  An
    entry used within ``keep_recent_s`` is never removed by the size rule.  ``dry_run`` says
    what would go and removes nothing."""
    now = time.time() if now is None else now
    found = entries(root)
    total = sum(e.bytes for e in found)
    result = PruneResult()
    for e in found:  # oldest use first
        too_old = older_than_s is not None and now - e.used > older_than_s
        too_old |= e.kind == "leftover" and now - e.used > keep_recent_s
        too_big = max_bytes is not None and total > max_bytes and now - e.used > keep_recent_s
        if (too_old or too_big) and (dry_run or _remove(e)):
            result.removed.append(e)
            total -= e.bytes
        else:
            result.kept.append(e)
    return result


def clear(root: Path | None = None, *, dry_run: bool = False) -> PruneResult:
    """Removes every entry (the cache is rebuilt on the next open), and the files that say which
    traces the entries were for (:data:`.root.SEEN`)."""
    result = prune(root, max_bytes=0, keep_recent_s=-1.0, dry_run=dry_run)
    folder = cache_root() if root is None else Path(root)
    if not dry_run and folder is not None:
        shutil.rmtree(folder / SEEN, ignore_errors=True)
    return result


def maybe_prune(now: float | None = None) -> PruneResult | None:
    """The automatic prune after an import wrote an entry: at most once per :data:`EVERY_S` per
    cache folder (a stamp file says when), to ``PROFINSIGHT_CACHE_MAX``.  Never raises: a cache
    that cannot be pruned is still a cache."""
    root = cache_root()
    limit = max_bytes_from_env()
    if root is None or limit is None:
        return None
    now = time.time() if now is None else now
    stamp = root / _STAMP
    try:
        if now - stamp.stat().st_mtime < EVERY_S:
            return None
    except OSError:
        pass
    try:
        root.mkdir(parents=True, exist_ok=True)
        stamp.touch()
        os.utime(stamp, (now, now))
        return prune(root, max_bytes=limit, now=now)
    except OSError:
        return None
