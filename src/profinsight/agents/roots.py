"""Which profiles an agent may open: only runs under the roots given at start.

Each root is a :class:`~profinsight.server.store.ProfileStore` in root mode — the store the
Jupyter extension serves — so a path from an agent goes through exactly the server's checks: no
``..``, no hidden component, the resolved path (symlinks followed) and every file of the run
inside the root.  Nothing here opens a path the store has not accepted.

A profile's id is its path relative to its root (``runs/job1``, ``:root`` for the root itself);
runs under the second and later roots carry the root's number (``2:runs/job1``), which no real
relative path can look like.  Loaded profiles are kept by the stores, so a second call on the
same id reads no file.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ProfileError, UnknownTable
from ..server.store import ROOT_ID, ProfileStore
from ..store.experiments import resolve_name


class Roots:
    """The stores of the roots, and the mapping from what an agent names to (store, id)."""

    def __init__(self, roots, *, prefer: str | None = None):
        folders = [Path(r).expanduser().resolve() for r in roots] or [Path.cwd().resolve()]
        for f in folders:
            if not f.is_dir():
                raise ProfileError(f"root {f} is not a folder", fix="pass an existing folder to --root")
        self.stores = [ProfileStore(root=f, prefer=prefer) for f in folders]

    @property
    def folders(self) -> list[Path]:
        return [s.root for s in self.stores]

    # --- ids ----------------------------------------------------------------------------
    def public_id(self, k: int, rid: str) -> str:
        return rid if k == 0 else f"{k + 1}:{rid}"

    # --- what an agent names -> a served run ---------------------------------------------
    def locate(self, path: str) -> tuple[int, str]:
        """``(root number, root-relative id)`` of ``path``: a path (absolute, or relative to the
        first root), a registered experiment's name, or an id from ``load``.  Raises a
        :class:`ProfileError` that says which roots are allowed."""
        path = str(path or "").strip()
        if not path:
            raise ProfileError("no path given", fix="pass a profile folder or trace file under " + self._listing())
        if path == ROOT_ID:
            return 0, ROOT_ID
        head, sep, rest = path.partition(":")
        if sep and head.isdigit() and 2 <= int(head) <= len(self.stores) and rest:
            return int(head) - 1, rest  # an id of a later root: the store checks it when opened
        target = Path(path).expanduser()
        if not target.is_absolute():
            first = self.stores[0].root / target
            if not first.exists() and "/" not in path and "\\" not in path:
                named = resolve_name(path)  # a registered experiment's name; a real path wins
                if named:
                    target = Path(named)
        candidates = [target] if target.is_absolute() else [s.root / target for s in self.stores]
        for cand in candidates:
            for k, store in enumerate(self.stores):
                try:
                    return k, store.relative_id(cand.absolute())
                except UnknownTable:
                    continue
        raise ProfileError(
            f"{path} is not a profile under the folders this server may read",
            fix=f"give a path under {self._listing()} (no '..', no hidden folders, no symlink that "
            "leaves them), or restart `profinsight mcp` with --root FOLDER",
        )

    def open(self, path: str) -> tuple[str, ProfileStore, str]:
        """``(public id, store, store id)`` of the one run ``path`` names (not loaded yet)."""
        k, rid = self.locate(path)
        store = self.stores[k]
        if rid in store.ids():  # served already: its run was checked when it was first opened
            return self.public_id(k, rid), store, rid
        try:
            rid = store.open_relative(rid)
        except UnknownTable as exc:
            message = str(exc).split("\nFix:")[0]
            raise ProfileError(
                message.replace("under the Jupyter root", "under the server's roots"),
                fix=(exc.fix or "").replace("GET /api/profiles", "discover(path)").replace("Jupyter root", "root"),
            ) from None
        return self.public_id(k, rid), store, rid

    def profile(self, path: str):
        """``(public id, loaded Profile)`` of ``path``."""
        pid, store, rid = self.open(path)
        return pid, store.get(rid)

    def discover(self, path: str | None) -> dict:
        """The runs under ``path`` (default: every root), as the JupyterLab sidebar lists them."""
        if not path:
            runs, problems, truncated = [], [], False
            for k, store in enumerate(self.stores):
                out = store.runs()
                runs += [{**r, "id": self.public_id(k, r["id"])} for r in out["runs"]]
                problems += [{**p, "path": self.public_id(k, p["path"])} for p in out["problems"]]
                truncated = truncated or out["truncated"]
            return {"roots": [str(f) for f in self.folders], "runs": runs, "problems": problems, "truncated": truncated}
        k, rid = self.locate(path)
        out = self.stores[k].runs(under=rid)
        return {
            "runs": [{**r, "id": self.public_id(k, r["id"])} for r in out["runs"]],
            "problems": [{**p, "path": self.public_id(k, p["path"])} for p in out["problems"]],
            "truncated": out["truncated"],
        }

    def _listing(self) -> str:
        return ", ".join(str(f) for f in self.folders)
