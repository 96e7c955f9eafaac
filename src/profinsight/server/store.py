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

:meth:`ProfileStore.runs` is the cheap listing behind ``GET api/runs`` (the JupyterLab sidebar):
what discovery saw (format, level, ranks, size on disk, whether the cache is warm) and a doctor
status from the discovery notes and the cached ranks' diagnostics -- it never imports a profile,
so a root with many large runs lists in the time it takes to walk the folders.  The scan is kept
until a refresh; it is discovery's public :func:`~profinsight.discovery.scan` (bounded in depth and
folder count, skipping hidden folders, ``node_modules``, ``__pycache__``, ``site-packages``,
virtual environments and symlinks that leave the root).
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import diagnostics as dg
from .. import discovery
from ..discovery import SCAN_SKIP, Run
from ..errors import NotAProfile, ProfileError, UnknownTable
from ..store.kept_runs import discover_kept

_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")
ROOT_ID = ":root"  # root mode: the id of a run that is the root folder itself (no path starts with ':')
#: at most this many folders are listed per scan (a home folder as Jupyter root stays cheap)
SCAN_MAX_DIRS = discovery.SCAN_MAX_DIRS


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
    #: the background full import of a summary-tier run (most suspicious ranks first): ranks
    #: planned, ranks in the cache so far
    background: list[int] = field(default_factory=list)
    background_done: list[int] = field(default_factory=list)
    #: bytes read per source file while an import runs (importers.progress)
    watcher: object = None
    #: positions (in run.sources) of the ranks loaded so far
    ready: set = field(default_factory=set)
    #: the run's first-paint summary (summary()), computed once
    summary: dict | None = None
    summary_lock: threading.Lock = field(default_factory=threading.Lock)
    #: the run in the tier it opens in (:func:`tier_for`), worked out once: the first paint and
    #: the import read the same rank summaries (one run entry of the cache) and watch their files
    tiered: Run | None = None
    #: the bytes of the run's files, stated once (the status route's total before a load starts)
    size: int | None = None
    tiered_lock: threading.Lock = field(default_factory=threading.Lock)


#: how many of a summary-tier run's ranks are imported in full in the background, most suspicious
#: first (``PROFINSIGHT_BACKGROUND_RANKS``; 0: none): opening one of them is then a warm read
BACKGROUND_RANKS = 4
#: a run of more ranks than this opens in the summary tier where its ranks have their summaries
#: (the cluster view in seconds; the traces of 1,024 ranks would take an hour); ``PROFINSIGHT_SUMMARY_RANKS``
#: moves the bar
SUMMARY_RANKS = 16


def tier_for(run: Run) -> str:
    """The tier a served run opens in: ``auto`` (the summary tier where every rank has its
    summaries) for a run of more than :data:`SUMMARY_RANKS` ranks, else ``full``."""
    import os

    try:
        bar = int(os.environ.get("PROFINSIGHT_SUMMARY_RANKS", SUMMARY_RANKS))
    except ValueError:
        bar = SUMMARY_RANKS
    return "auto" if len(run.sources) > bar else "full"


def _close(ref) -> None:
    store = ref()
    if store is not None:
        store.close()


def _tier(profile) -> str:
    from ..api import tier_of

    return tier_of(profile.run)


class ProfileStore:
    """Profiles by id, loaded lazily on first use and kept."""

    def __init__(self, paths=(), *, prefer: str | None = None, root: str | Path | None = None):
        self._entries: dict[str, Entry] = {}
        self.prefer = prefer
        self.root = None if root is None else Path(root).expanduser().resolve()
        self._lock = threading.Lock()
        self._scan: dict | None = None  # root mode: the last listing (see runs())
        self._rank_ids: dict[tuple[str, int], str] = {}  # (run id, rank) -> id of that rank opened alone
        self._stop = threading.Event()  # ends the background imports (close(), and at exit)
        self._threads: list[threading.Thread] = []
        for path in paths:
            for run in discover_kept(path, prefer=prefer):
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
                from ..importers import progress as bytes_progress
                from ..store.loader import watched_files

                by_path = {str(s.path): i for i, s in enumerate(e.run.sources)}

                def progress(done: int, total: int, detail: str) -> None:
                    e.done, e.total = done, total
                    e.stage = "cached" if detail == "cached" else "importing"
                    i = by_path.get(detail)
                    if i is not None:
                        e.ready.add(i)
                        if e.watcher is not None:
                            e.watcher.finished(e.run.sources[i].files)

                e.started, e.stage, e.total = time.monotonic(), "importing", len(e.run.sources)
                try:
                    run = self.tiered(e)
                    # bytes are watched where traces stream; a summary-tier run's ranks (a few KB each,
                    # read whole) report progress by rank instead
                    with bytes_progress.watch(watched_files(run.sources)) as w:
                        e.watcher = w
                        e.profile = load(run, progress=progress)
                except ProfileError as exc:
                    e.error = exc
                finally:
                    e.finished = time.monotonic()
                if e.profile is not None and e.run.format != "cluster" and _tier(e.profile) == "summary":
                    self._background(e)
            if e.error is not None:
                raise e.error
            return e.profile

    def tiered(self, e: Entry) -> Run:
        """``e``'s run in the tier it opens in (:func:`tier_for`), worked out once per entry."""
        with e.tiered_lock:
            if e.tiered is None:
                from ..api import tiered

                e.tiered = tiered(e.run, tier_for(e.run))
            return e.tiered

    def _background(self, e: Entry) -> None:
        """Import the most suspicious ranks of a summary-tier run in full, in one spawned process,
        so that opening one of them (:meth:`open_rank`) is a warm read."""
        import os

        try:
            n = int(os.environ.get("PROFINSIGHT_BACKGROUND_RANKS", BACKGROUND_RANKS))
        except ValueError:
            n = BACKGROUND_RANKS
        if n <= 0:
            return
        from ..api import import_full, suspicious_ranks

        profile = e.profile
        e.background = suspicious_ranks(profile)[:n]

        def work():
            for r in e.background:
                if self._stop.is_set():
                    return
                try:
                    e.background_done.extend(import_full(profile, [r], stop=self._stop))
                except Exception:  # noqa: BLE001 - a background warm-up never fails the view; opening the rank reports
                    continue

        t = threading.Thread(target=work, name=f"profinsight-background-{e.id}", daemon=True)
        self._threads.append(t)
        if len(self._threads) == 1:
            import atexit
            import weakref

            atexit.register(_close, weakref.ref(self))  # a server that exits ends its imports first
        t.start()

    def close(self, timeout: float = 5.0) -> None:
        """Stop the background imports: the worker of a rank being imported is ended."""
        self._stop.set()
        for t in self._threads:
            t.join(timeout)

    def open_rank(self, pid: str, rank: int) -> str:
        """The id under which rank ``rank`` of run ``pid`` is served on its own, in full (its
        traces: timeline, kernels, operators); the rank folder comes from the run, never from
        the client."""
        e = self.entry(pid)
        with self._lock:
            if (pid, rank) in self._rank_ids:
                return self._rank_ids[(pid, rank)]
        from ..api import rank_run

        run = rank_run(e.run, rank, prefer=self.prefer)
        if len(e.run.sources) == 1:
            return pid
        rid = self._add_rel(run) if self.root is not None else self.add(run)
        if rid is None:
            raise UnknownTable(f"rank {rank} of {pid!r} lies outside the Jupyter root", fix="serve it directly")
        with self._lock:
            self._rank_ids[(pid, rank)] = rid
        return rid

    def status(self, pid: str) -> dict:
        """Where loading ``pid`` stands, answered at once (never waits for the load):
        state idle | loading | loaded | error, stage, ranks done / total, seconds so far."""
        e = self.entry(pid)
        state = (
            "error"
            if e.error is not None
            else "loaded"
            if e.profile is not None
            else "loading"
            if e.started is not None
            else "idle"
        )
        end = e.finished if e.finished is not None else time.monotonic()
        w = e.watcher
        stage = e.stage if state == "loading" else None
        if state == "loading" and w is not None and w.stage:
            stage = w.shown_stage()
        if w is not None:
            total_bytes = w.total
        else:  # before the load: the run's size, stated once, and for a large run by the first paint
            # (off the event loop: stating the 12,000 files of 1,024 ranks here would hold every request)
            if e.size is None and len(e.run.sources) <= SUMMARY_RANKS:
                e.size = _run_bytes(e.run)
            total_bytes = e.size or 0
        return {
            "id": pid,
            "state": state,
            "stage": stage,
            "done": e.done,
            "total": e.total or len(e.run.sources),
            "elapsed_s": round(end - e.started, 3) if e.started is not None else 0.0,
            "background": {"ranks": list(e.background), "done": list(e.background_done)},
            "bytes_done": (total_bytes if state == "loaded" else w.done if w is not None else 0),
            "bytes_total": total_bytes,
            "file": w.file if w is not None and state == "loading" else None,
            "ranks_ready": sorted(r for i in e.ready for r in [e.run.sources[i].rank_hint] if r is not None),
        }

    def warm(self, first_paint: bool = True) -> None:
        """Import the engine (DuckDB, pandas, pyarrow, the analyses) and, with ``first_paint``,
        compute the served runs' first paint: a server that has just started then answers the
        first ``summary`` at once instead of importing its libraries while the profile's import
        imports the same ones.  Meant for a background worker; a failure is only a cold start."""
        try:
            from .. import api  # noqa: F401 - the imports are the point
            from ..registry import all_analyses

            all_analyses()
            if first_paint and self.root is None:
                for pid in self.ids():
                    self.first_paint(pid)
        except Exception:  # noqa: BLE001 - warming is an optimisation, never an error
            pass

    def first_paint(self, pid: str) -> dict:
        """What ``pid`` is before its import (:func:`.summary.first_paint`), computed once."""
        from .summary import first_paint

        e = self.entry(pid)
        with e.summary_lock:
            if e.summary is None:
                try:
                    tiered = self.tiered(e)
                except ProfileError:
                    tiered = e.run  # the import says why; the first paint still shows what discovery saw
                e.summary = {"id": pid, **first_paint(e.run, tiered)}
                e.size = e.summary["size_bytes"]
            return e.summary

    def ready(self, pid: str) -> dict:
        """The ranks of ``pid`` imported so far, while the rest import (:func:`.summary.ready_ranks`);
        once loaded, the loaded profile's own answer is the views' (``ranks: []`` here)."""
        from .summary import ready_ranks

        e = self.entry(pid)
        if e.profile is not None or e.started is None:
            return {"id": pid, "ranks": [], "steps": None}
        return {"id": pid, **ready_ranks(e.run, set(e.ready))}

    def describe(self, pid: str, load: bool = True, lang: str = "en") -> dict:
        """What the profiles route lists for ``pid``: id, path, format, level, ranks, steps,
        diagnostics (loading the profile if needed; their message and fix in ``lang`` where the
        catalogue knows them).  ``load=False`` never starts a load: a profile not loaded yet is
        described from discovery alone (``loaded: False``)."""
        e = self.entry(pid)
        out = {
            "id": pid,
            "path": str(e.run.root),
            "format": e.run.format,
            "level": e.run.level,
            "ranks": [r for r in e.run.ranks if r is not None],
            "steps": [],
            "diagnostics": [],
            "loaded": False,
            "error": None,
        }
        if not load and e.profile is None and e.error is None:
            return out
        try:
            p = self.get(pid)
        except ProfileError as exc:
            out["error"] = {"error": str(exc).split("\nFix:")[0], "fix": exc.fix}
            return out
        out.update(
            ranks=p.ranks,
            steps=p.steps,
            loaded=True,
            tier=_tier(p),
            tables=p.row_counts(),
            diagnostics=[_localized(d, lang) for d in p.diagnostics],
        )
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
            self._inside(s.path) and all(self._inside(f) for f in s.files) for s in run.sources
        ):
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
        refuse = UnknownTable(
            f"no profile with id {rel!r} under the Jupyter root",
            fix="give a path relative to the Jupyter root, without '..'; ids come from GET /api/profiles",
        )
        if self.root is None:
            raise refuse
        try:
            target = self._checked_target(rel)
        except UnknownTable:
            raise refuse from None
        try:
            runs = discover_kept(target, prefer=self.prefer)
        except NotAProfile as exc:  # what the path looks like and what to open instead, root-relative
            said = exc.args[0] if exc.args else str(exc)
            root = str(self.root)
            raise UnknownTable(said.replace(root + "/", ""), fix=(exc.fix or "").replace(root + "/", "")) from None
        ids = [i for i in (self._rel_id(r) for r in runs) if i is not None]
        want = target.resolve().relative_to(self.root).as_posix()
        want = ROOT_ID if want == "." else want
        for run in runs:
            if self._rel_id(run) == want:
                return self._add_rel(run)
        if ids:
            raise UnknownTable(
                f"{rel!r} is not a run but a folder holding {len(ids)} run(s)",
                fix=f"open one of: {', '.join(ids[:10])}",
            )
        raise refuse

    def refresh(self) -> list[str]:
        """Root mode: add every run found under ``root`` (ids are relative paths).  Without a
        root: nothing to do.  Returns the ids."""
        if self.root is not None:
            try:
                runs = discover_kept(self.root, prefer=self.prefer)
            except ProfileError:
                runs = []
            for run in runs:
                self._add_rel(run)
        return self.ids()

    # --- the cheap listing (GET api/runs) ---------------------------------------------------
    def runs(self, *, refresh: bool = False, under: str | None = None) -> dict:
        """The runs to list, without importing any: ``{runs: [...], problems: [...], truncated,
        scanned_at, elapsed_s}``.  Root mode scans the root (kept until ``refresh``) or, with
        ``under`` (a root-relative folder or file), only that part (not kept).  Without a root
        the served entries are listed."""
        if self.root is None:
            if under:
                raise UnknownTable(
                    f"no folder {under!r}: this server has no root folder", fix="ids come from GET api/runs"
                )
            return {
                "runs": [self._run_entry(pid, self._entries[pid].run) for pid in self.ids()],
                "problems": [],
                "truncated": False,
                "scanned_at": time.time(),
                "elapsed_s": 0.0,
            }
        if under:
            top = self._checked_target(under)
            return self._scan_under(top)
        with self._lock:
            cached = self._scan
        if cached is not None and not refresh:
            out = dict(cached)
            out["runs"] = [self._refresh_status(r) for r in cached["runs"]]
            return out
        out = self._scan_under(self.root, replace=refresh)
        with self._lock:
            self._scan = out
        return out

    def relative_id(self, path: str | Path) -> str:
        """Root mode: the id (root-relative path) of an absolute ``path`` inside the root, e.g.
        a profile a notebook kernel loaded; 404 (:class:`UnknownTable`) when it is outside."""
        refuse = UnknownTable(
            f"{path} is not under the Jupyter root",
            fix="open profiles that live under the folder Jupyter was started in",
        )
        if self.root is None or not str(path) or "\x00" in str(path):
            raise refuse
        p = Path(path).expanduser()
        if not p.is_absolute() or not self._inside(p) or not p.exists():
            raise refuse
        rel = p.resolve().relative_to(self.root).as_posix()
        rid = ROOT_ID if rel == "." else rel
        self._checked_target(rid)  # the same refusals as an id from a client (hidden parts, ...)
        return rid

    def _checked_target(self, rel: str) -> Path:
        """The path ``rel`` names under the root, refused (404) like :meth:`open_relative`."""
        refuse = UnknownTable(
            f"nothing at {rel!r} under the Jupyter root", fix="give a path relative to the Jupyter root, without '..'"
        )
        if rel == ROOT_ID:
            return self.root
        parts = rel.replace("\\", "/").split("/")
        if (
            "\x00" in rel
            or rel.startswith(("/", "\\"))
            or Path(rel).is_absolute()
            or any(p in ("", ".", "..") or p.startswith(".") for p in parts)
            or ":" in parts[0]
        ):
            raise refuse
        target = self.root.joinpath(*parts)
        if not self._inside(target) or not target.exists():
            raise refuse
        return target

    def _scan_under(self, top: Path, replace: bool = False) -> dict:
        started = time.monotonic()
        found = discovery.scan(top, prefer=self.prefer, root=self.root, max_dirs=SCAN_MAX_DIRS)
        problems, truncated = found.problems, found.truncated
        entries = []
        for run in found.runs:
            rid = self._rel_id(run)
            if rid is None:
                continue  # leaves the root through a symlink: never listed
            with self._lock:
                old = self._entries.get(rid)
                stale = (
                    old is not None
                    and replace
                    and old.profile is None
                    and (old.started is None or old.finished is not None)
                )
                if old is None or stale:
                    self._entries[rid] = Entry(rid, run)
            entries.append(self._run_entry(rid, run))
        out_problems = []
        for exc in problems:
            f = Path(exc.file) if exc.file else None
            if f is None or not self._inside(f):
                continue
            rel = f.resolve().relative_to(self.root).as_posix()
            out_problems.append(
                {
                    "path": ROOT_ID if rel == "." else rel,
                    "error": exc.args[0] if exc.args else str(exc),
                    "fix": exc.fix,
                    "kind": type(exc).__name__,
                }
            )
        return {
            "runs": entries,
            "problems": out_problems,
            "truncated": truncated,
            "scanned_at": time.time(),
            "elapsed_s": round(time.monotonic() - started, 3),
        }

    def _refresh_status(self, item: dict) -> dict:
        """A kept listing entry with its load state and doctor status brought up to date."""
        e = self._entries.get(item["id"])
        return self._run_entry(item["id"], e.run) if e is not None else item

    def _run_entry(self, pid: str, run: Run) -> dict:
        """One listing entry: what discovery saw plus a doctor status from the discovery notes,
        the cached ranks' diagnostics (when the cache is warm) or the loaded profile's."""
        from ..store import cache

        size, files, mtime = 0, 0, 0.0
        for s in run.sources:
            for f in s.files:
                try:
                    st = f.stat()
                except OSError:
                    continue
                size, files, mtime = size + st.st_size, files + 1, max(mtime, st.st_mtime)
        e = self._entries.get(pid)
        diags = list(run.notes)
        cached = 0
        state = "idle"
        if e is not None and e.profile is not None:
            diags = list(e.profile.diagnostics)
            cached, state = len(run.sources), "loaded"
        elif e is not None and e.error is not None:
            diags.append(dg.error("load-failed", e.error.args[0] if e.error.args else str(e.error), fix=e.error.fix))
            state = "error"
        else:
            if e is not None and e.started is not None:
                state = "loading"
            for s in run.sources:
                try:
                    hit = cache.lookup(s)
                except Exception:  # noqa: BLE001 - a broken cache entry is only "not cached"
                    hit = None
                if hit is not None:
                    cached += 1
                    diags.extend(hit.diagnostics)
        counts = {sev: sum(1 for d in diags if d.severity == sev) for sev in dg.SEVERITIES}
        worst = dg.worst(diags)
        checked = state == "loaded" or cached == len(run.sources)
        status = worst if worst in ("error", "warning") else ("ok" if checked else "unchecked")
        ranks = [r for r in run.ranks if r is not None]
        return {
            "id": pid,
            "name": Path(run.root).name if pid != ROOT_ID else (self.root.name if self.root else pid),
            "format": run.format,
            "level": run.level,
            "ranks": ranks,
            "rank_count": len(run.sources),
            "size_bytes": size,
            "files": files,
            "mtime": mtime,
            "cached": cached == len(run.sources),
            "cached_ranks": cached,
            "state": state,
            "status": status,
            "counts": counts,
            "diagnostics": [d.to_dict() for d in diags[:50]],
        }


def _run_bytes(run: Run) -> int:
    total = 0
    for s in run.sources:
        for f in s.files:
            try:
                total += f.stat().st_size
            except OSError:
                pass
    return total


__all__ = ["ROOT_ID", "SCAN_MAX_DIRS", "SCAN_SKIP", "Entry", "ProfileStore", "localized_listing"]


def localized_listing(listing: dict, lang: str) -> dict:
    """A copy of a :meth:`ProfileStore.runs` answer with the runs' diagnostics and the problems'
    error and fix in ``lang`` where the catalogue has their shape (the kept listing is not changed)."""
    from ..i18n.diagnostics import localize, localize_error

    if lang == "en":
        return listing
    runs = []
    for run in listing.get("runs", []):
        diags = []
        for d in run.get("diagnostics", []):
            message, fix = localize(d.get("code", ""), d.get("message", ""), d.get("fix"), lang)
            diags.append({**d, "message": message, "fix": fix})
        runs.append({**run, "diagnostics": diags})
    problems = []
    for p in listing.get("problems", []):
        error, fix = localize_error(p.get("error", ""), p.get("fix"), lang)
        problems.append({**p, "error": error, "fix": fix})
    return {**listing, "runs": runs, "problems": problems}


def _localized(d: dg.Diagnostic, lang: str) -> dict:
    from ..i18n.diagnostics import localize

    out = d.to_dict()
    out["message"], out["fix"] = localize(d.code, d.message, d.fix, lang)
    return out
