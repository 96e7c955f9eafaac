"""``profinsight mcp``: the engine as an MCP server for coding agents (stdio, deterministic, no
model inside).

Every registered analysis is a tool, generated from its registration (:mod:`.tools`); the fixed
tools — discover, load, doctor, compare, ranks, timeline_window, search_slices, sql,
viewer_link — are thin calls into the facade, the timeline queries and a locked read-only SQL
connection (:mod:`.session`, :mod:`.sql`).  Only runs under the roots given at start are read,
through the server's own path checks (:mod:`.roots`).  The SDK is imported only when the server
is built (:mod:`.server`).  This unit sits between the HTTP server and the CLI.
"""

from __future__ import annotations

from .roots import Roots
from .session import Session
from .viewer import ViewerTargets

__all__ = ["Roots", "Session", "ViewerTargets", "make_session"]


def make_session(roots=(), *, prefer=None, viewer_url=None, jupyter_url=None, jupyter_root=None, lang=None) -> Session:
    """A session over ``roots`` (default: the working directory) with the viewers given."""
    from pathlib import Path

    r = Roots(roots, prefer=prefer)
    jroot = Path(jupyter_root).expanduser().resolve() if jupyter_root else r.folders[0]
    return Session(r, ViewerTargets(viewer_url, jupyter_url, jroot if jupyter_url else None), lang)
