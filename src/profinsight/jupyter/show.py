"""``Profile.show()``: open the profile in the JupyterLab viewer tab, from a notebook cell.

The kernel cannot call JupyterLab directly, so ``show`` displays one output carrying a small
``application/vnd.profinsight.show+json`` payload (the profile's absolute path, the view, a
nonce and when it was made) next to the usual HTML summary.  In JupyterLab with the profinsight
extension, the extension's renderer for that MIME type asks the server for the path's id under
the Jupyter root and opens the viewer tab; the output then shows a line with an "open again"
button.  Anywhere else (classic Notebook without the extension, VS Code, nbviewer, a saved
notebook opened elsewhere) the HTML summary renders inline instead.

A saved notebook must not open tabs when it is reopened, so the renderer opens the tab by
itself only for an output made in the last minute (``created_ms``) that it has not seen yet
(``nonce``); older outputs show the button only.
"""

from __future__ import annotations

import time
import uuid

SHOW_MIME = "application/vnd.profinsight.show+json"


def show_bundle(profile, view: str | None = None) -> dict:
    """The MIME bundle ``Profile.show`` displays."""
    s = profile.summary()
    payload = {
        "path": str(profile.path.resolve()),
        "view": view,
        "nonce": uuid.uuid4().hex,
        "created_ms": int(time.time() * 1000),
        "format": s["format"],
        "level": s["level"],
        "ranks": s["ranks"],
        "steps": s["steps"],
        "diagnostics": s["diagnostics"],
    }
    return {SHOW_MIME: payload, "text/html": profile._repr_html_(), "text/plain": repr(profile)}


def show(profile, view: str | None = None) -> None:
    """Display ``profile``'s show output in the running notebook, or print it outside IPython."""
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # plain Python: nothing can render it
        get_ipython = None
    if get_ipython is None or get_ipython() is None:
        print(repr(profile))
        print(f"To browse it: profinsight serve {profile.path}")
        return
    display(show_bundle(profile, view), raw=True)


def install() -> None:
    """Lend ``Profile.show`` this opener (see :mod:`profinsight.hooks`)."""
    from .. import hooks

    hooks.provide("show", show)
