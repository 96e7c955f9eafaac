"""The profiles a server serves, by id.

The store is built from the paths given on the command line (or by the Jupyter extension);
clients only ever name a profile by the id the store gave it.  No path from a client is ever
opened: an id that is not in the store's dictionary is unknown, whatever it looks like
(``..``, ``/etc/passwd``, a symlink name).

With ``root`` (the Jupyter extension passes Jupyter's ``root_dir``) the store also serves the
profiles under that folder, named by their path relative to it (``runs/job1``): such an id is
checked before anything is opened -- relative, no ``..``, no hidden component, and the resolved
path (symlinks followed) and every file of the run must stay inside ``root`` -- else 404.
Without ``root`` (``profinsight serve``) nothing changes.
"""
from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..discovery import Run, discover
from ..errors import NotAProfile, ProfileError, UnknownTable

_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")
ROOT_ID = ":root"  # root mode: the id of a run that is the root folder itself (no path starts with ':')


@dataclass
class Entry:
    id: str
    run: Run
    profile: object = None
    error: ProfileError | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: load progress, read without the lock by the status route while a load runs
    stage: str | None = None
    done: int = 0
    total: int = 0
    started: float | None = None
    finished: float | None = None


class ProfileStore:
    """Profiles by id, loaded lazily on first use and kept."""

    def __init__(self, paths=(), *, prefer: str | None = None, root: str | Path | None = None):
        self._entries: dict[str, Entry] = {}
        self.prefer = prefer
        self.root = None if root is None else Path(root).expanduser().resolve()
        self._lock = threading.Lock()
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
        if pid not in self._entries and self.root is not None:
            self.open_relative(pid)
        if pid not in self._entries:
            raise UnknownTable(f"no profile with id {pid!r}", fix="ids come from GET /api/profiles")
        return self._entries[pid]

    def get(self, pid: str):
        """The loaded profile ``pid`` (loaded on first use)."""
        e = self.entry(pid)
        with e.lock:
            if e.profile is None and e.error is None:
                from ..api import load

                def progress(done: int, total: int, detail: str) -> None:
                    e.done, e.total = done, total
                    e.stage = "cached" if detail == "cached" else "importing"

                e.started, e.stage, e.total = time.monotonic(), "importing", len(e.run.sources)
                try:
                    e.profile = load(e.run, progress=progress)
                except ProfileError as exc:
                    e.error = exc
                finally:
                    e.finished = time.monotonic()
            if e.error is not None:
                raise e.error
            return e.profile

    def status(self, pid: str) -> dict:
        """Where loading ``pid`` stands, answered at once (never waits for the load):
        state idle | loading | loaded | error, stage, ranks done / total, seconds so far."""
        e = self.entry(pid)
        state = ("error" if e.error is not None else "loaded" if e.profile is not None
                 else "loading" if e.started is not None else "idle")
        end = e.finished if e.finished is not None else time.monotonic()
        return {"id": pid, "state": state, "stage": e.stage if state == "loading" else None,
                "done": e.done, "total": e.total or len(e.run.sources),
                "elapsed_s": round(end - e.started, 3) if e.started is not None else 0.0}

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

    # --- root mode (the Jupyter extension) ----------------------------------------------
    def _inside(self, path: Path) -> bool:
        try:
            Path(path).resolve().relative_to(self.root)
            return True
        except (ValueError, OSError):
            return False

    def _rel_id(self, run: Run) -> str | None:
        """``run``'s id in root mode, or None when it (or a file it reads) leaves the root."""
        if not self._inside(run.root) or not all(
                self._inside(s.path) and all(self._inside(f) for f in s.files) for s in run.sources):
            return None
        rel = Path(run.root).resolve().relative_to(self.root).as_posix()
        return rel if rel != "." else ROOT_ID

    def _add_rel(self, run: Run) -> str | None:
        rid = self._rel_id(run)
        if rid is None:
            return None
        with self._lock:
            if rid not in self._entries:
                self._entries[rid] = Entry(rid, run)
        return rid

    def open_relative(self, rel: str) -> str:
        """Serve the run at ``rel`` (a path relative to ``root``); returns its id (``rel``
        normalised).  Raises 404 (:class:`UnknownTable`) for anything that is not one run inside
        the root."""
        refuse = UnknownTable(f"no profile with id {rel!r} under the Jupyter root",
                              fix="give a path relative to the Jupyter root, without '..'; ids come from GET /api/profiles")
        if self.root is None:
            raise refuse
        is_root = rel == ROOT_ID
        parts = [] if is_root else rel.replace("\\", "/").split("/")
        if not is_root and (not rel or not rel or "\x00" in rel or rel.startswith(("/", "\\")) or Path(rel).is_absolute()
                or any(p in ("", ".", "..") or p.startswith(".") for p in parts) or ":" in parts[0]):
            raise refuse
        target = self.root.joinpath(*parts) if parts else self.root
        if not self._inside(target) or not target.exists():
            raise refuse
        try:
            runs = discover(target, prefer=self.prefer)
        except NotAProfile:
            raise refuse from None
        ids = [i for i in (self._rel_id(r) for r in runs) if i is not None]
        want = target.resolve().relative_to(self.root).as_posix()
        want = ROOT_ID if want == "." else want
        for run in runs:
            if self._rel_id(run) == want:
                return self._add_rel(run)
        if ids:
            raise UnknownTable(f"{rel!r} is not a run but a folder holding {len(ids)} run(s)",
                               fix=f"open one of: {', '.join(ids[:10])}")
        raise refuse

    def refresh(self) -> list[str]:
        """Root mode: add every run found under ``root`` (ids are relative paths).  Without a
        root: nothing to do.  Returns the ids."""
        if self.root is not None:
            try:
                runs = discover(self.root, prefer=self.prefer)
            except ProfileError:
                runs = []
            for run in runs:
                self._add_rel(run)
        return self.ids()
