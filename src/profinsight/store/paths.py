"""Where the cache lives, without importing what reads or writes it: ``doctor --env`` and the
Jupyter handlers ask for the folder at start-up speed (the cache module itself imports pyarrow
and every importer)."""

from __future__ import annotations

import os
from pathlib import Path

#: values of ``PROFINSIGHT_CACHE`` that switch the cache off
OFF = {"off", "0", "none", "false", "no"}


def cache_root() -> Path | None:
    """The cache folder, or None when caching is switched off."""
    env = os.environ.get("PROFINSIGHT_CACHE")
    if env is not None and env.strip().lower() in OFF:
        return None
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("profinsight"))
