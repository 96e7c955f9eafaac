"""Links that open the viewer at a profile, a view and a time window.

The viewer keeps its state in the page address as ``#<profile id>/<view>?<state>`` (the link
format of ts/app/link.ts, documented in docs/viewer.md): ``rank``, and ``start`` / ``end`` as
ABSOLUTE profile ns (decimal strings in the page: Ascend epoch ns exceed 2^53).  So a finding's evidence window — absolute ns, as the
advisor writes it — goes into the link unchanged:

- standalone (``profinsight serve``, its URL given with ``--viewer-url``):
  ``http://127.0.0.1:8765/?token=T#rank0_ascend_pt/timeline?start=...&end=...&rank=0``
- JupyterLab (``--jupyter-url``): ``http://localhost:8888/lab?token=T&profinsight=<the same
  state, URL-encoded>``; the extension's router opens the viewer tab at that state.

The profile's id is the one that server gives it: ``serve`` names a run by its folder (the
store's own naming), the Jupyter extension by its path under Jupyter's root (``--jupyter-root``,
default the first ``--root``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

from ..errors import ProfileError, UnknownTable
from ..server.store import ProfileStore

VIEWS = (
    "overview",
    "operators",
    "aicore",
    "timeline",
    "modules",
    "memory",
    "communication",
    "ranks",
    "compare",
    "analyses",
)


@dataclass(frozen=True)
class ViewerTargets:
    """Where viewers run, as given at start (either may be None)."""

    standalone_url: str | None = None
    jupyter_url: str | None = None
    jupyter_root: Path | None = None

    def any(self) -> bool:
        return bool(self.standalone_url or self.jupyter_url)


def state(pid: str, view: str, window: dict | None) -> str:
    """``<id>/<view>[?start=..&end=..&rank=..]``: the address state the viewer reads."""
    if view not in VIEWS:
        raise ProfileError(f"no view named {view!r}", fix=f"views: {', '.join(VIEWS)}")
    out = f"{quote(pid, safe='')}/{view}"
    if window:
        keys = {"start_ns": "start", "end_ns": "end", "rank": "rank"}  # link.ts's names
        q = {name: str(int(window[k])) for k, name in keys.items() if window.get(k) is not None}
        if "start" in q and "end" not in q or "end" in q and "start" not in q:
            q.pop("start", None), q.pop("end", None)  # a window needs both ends
        if q:
            out += "?" + urlencode(q)
    return out


def link(targets: ViewerTargets, pid: str, profile, *, window: dict | None = None, view: str = "timeline") -> dict:
    """``{standalone?, jupyterlab?, view, window}``: the URLs for the viewers given at start."""
    if window is not None:
        window = {k: window.get(k) for k in ("rank", "step", "start_ns", "end_ns")}
    out: dict = {"view": view, "window": window}
    if targets.standalone_url:
        served = ProfileStore().add(profile.run)  # the id `profinsight serve PATH` gives this run
        base = urlunsplit(urlsplit(targets.standalone_url)._replace(fragment=""))
        out["standalone"] = f"{base}#{state(served, view, window)}"
    if targets.jupyter_url:
        root = targets.jupyter_root
        try:
            served = ProfileStore(root=root).relative_id(Path(profile.path)) if root else None
        except UnknownTable:
            served = None
        if served is None:
            out["jupyterlab_error"] = f"{profile.path} is not under the Jupyter root {root}"
        else:
            parts = urlsplit(targets.jupyter_url)
            path = parts.path if parts.path.rstrip("/").endswith("/lab") else parts.path.rstrip("/") + "/lab"
            query = (parts.query + "&" if parts.query else "") + urlencode({"profinsight": state(served, view, window)})
            out["jupyterlab"] = urlunsplit(parts._replace(path=path, query=query, fragment=""))
    return out
