"""The profiles a server serves, by id.

The store is built from the paths given on the command line (or by the Jupyter extension);
clients only ever name a profile by the id the store gave it.  No path from a client is ever
opened: an id that is not in the store's dictionary is unknown, whatever it looks like
(``..``, ``/etc/passwd``, a symlink name).
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

from ..discovery import Run, discover
from ..errors import ProfileError, UnknownTable

_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass
class Entry:
    id: str
    run: Run
    profile: object = None
    error: ProfileError | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class ProfileStore:
    """Profiles by id, loaded lazily on first use and kept."""

    def __init__(self, paths=(), *, prefer: str | None = None):
        self._entries: dict[str, Entry] = {}
        self.prefer = prefer
        for path in paths:
            for run in discover(path, prefer=prefer):
                self.add(run)

    def add(self, run: Run) -> str:
        """Serve ``run``; returns its id (the folder/file name, made unique and URL-safe)."""
        base = _SLUG.sub("_", Path(run.root).name).strip("._") or "profile"
        pid, n = base, 2
        while pid in self._entries:
            pid, n = f"{base}-{n}", n + 1
        self._entries[pid] = Entry(pid, run)
        return pid

    def ids(self) -> list[str]:
        return list(self._entries)

    def entry(self, pid: str) -> Entry:
        if pid not in self._entries:
            raise UnknownTable(f"no profile with id {pid!r}", fix="ids come from GET /api/profiles")
        return self._entries[pid]

    def get(self, pid: str):
        """The loaded profile ``pid`` (loaded on first use)."""
        e = self.entry(pid)
        with e.lock:
            if e.profile is None and e.error is None:
                from ..api import load
                try:
                    e.profile = load(e.run)
                except ProfileError as exc:
                    e.error = exc
            if e.error is not None:
                raise e.error
            return e.profile

    def describe(self, pid: str) -> dict:
        """What the profiles route lists for ``pid``: id, path, format, level, ranks, steps,
        diagnostics (loading the profile if needed)."""
        e = self.entry(pid)
        out = {"id": pid, "path": str(e.run.root), "format": e.run.format, "level": e.run.level,
               "ranks": [r for r in e.run.ranks if r is not None], "steps": [], "diagnostics": [],
               "loaded": False, "error": None}
        try:
            p = self.get(pid)
        except ProfileError as exc:
            out["error"] = {"error": str(exc).split("\nFix:")[0], "fix": exc.fix}
            return out
        out.update(ranks=p.ranks, steps=p.steps, loaded=True, tables=p.row_counts(),
                   diagnostics=[d.to_dict() for d in p.diagnostics])
        return out
