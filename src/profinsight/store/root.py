"""Where the cache lives (no third-party import here: a warm command that only reads a cached
report must not pay for pyarrow)."""

from __future__ import annotations

import os
from pathlib import Path

_OFF = {"off", "0", "none", "false", "no"}


def cache_root() -> Path | None:
    """The cache folder, or None when caching is switched off."""
    env = os.environ.get("PROFINSIGHT_CACHE")
    if env is not None and env.strip().lower() in _OFF:
        return None
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("profinsight"))


#: a folder of the cache with one small file per trace file a rank entry was written for, named
#: by the file's identity (:func:`file_key`) and holding the entry's folder, so that a command asks
#: whether its trace is cached before it has loaded the importers that make the entry's key
#: (:func:`seen`); an entry pruned or cleared away answers no by itself
SEEN = ".seen"


def file_key(path: str | Path) -> str | None:
    """The identity of a file: its resolved path, size and modification time, hashed (None where
    it cannot be read)."""
    import hashlib

    try:
        p = Path(path).resolve()
        st = p.stat()
    except OSError:
        return None
    return hashlib.sha256(f"{p}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()[:32]


def mark_seen(paths, entry: Path) -> None:
    """Say that the rank entry ``entry`` (a folder of the cache) was written for the files
    ``paths`` as they are now."""
    root = cache_root()
    if root is None:
        return
    try:
        where = entry.relative_to(root).as_posix()
        (root / SEEN).mkdir(parents=True, exist_ok=True)
        for path in paths:
            key = file_key(path)
            if key:
                (root / SEEN / key).write_text(where, encoding="utf-8")
    except (OSError, ValueError):
        pass  # only a hint: without it a warm command reads the trace ahead for nothing


def seen(path: str | Path) -> bool:
    """Whether a complete rank entry is in the cache for the file at ``path`` as it is now (a hint:
    the cache's own lookup, by the entry's key, is the answer)."""
    root = cache_root()
    key = file_key(path)
    if root is None or key is None:
        return False
    try:
        where = (root / SEEN / key).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return False
    return bool(where) and (root / where / "meta.json").is_file()
