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
