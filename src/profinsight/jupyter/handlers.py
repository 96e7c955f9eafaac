"""The base class mixed under every profinsight handler inside jupyter-server.

``JupyterHandler.prepare`` resolves the user from Jupyter's token or cookie and checks XSRF for
non-GET requests; jupyter-server >= 2.13 also refuses unauthenticated requests by default.  This
base refuses them (403) whatever ``allow_unauthenticated_access`` says, and asks Jupyter's
authorizer for ``read`` on the ``profinsight`` resource, so JupyterHub-style authorizers apply.
"""

from __future__ import annotations

import inspect
import json
import os
import tempfile
from pathlib import Path

from jupyter_server.base.handlers import APIHandler
from tornado import web

AUTH_RESOURCE = "profinsight"


class ProfinsightJupyterHandler(APIHandler):
    auth_resource = AUTH_RESOURCE

    async def prepare(self):
        parent = super().prepare()
        if inspect.isawaitable(parent):
            await parent
        if self._finished:
            return
        if self.current_user is None:
            raise web.HTTPError(403, "Jupyter authentication required (token or login cookie)")
        authorizer = self.settings.get("authorizer")
        if authorizer is not None:
            ok = authorizer.is_authorized(self, self.current_user, "read", AUTH_RESOURCE)
            if inspect.isawaitable(ok):
                ok = await ok
            if not ok:
                raise web.HTTPError(403, "not authorized to read profinsight profiles")


def jupyter_only_handlers(store, base_url: str) -> list[tuple]:
    """Routes that only make sense inside Jupyter: ``api/resolve`` (an absolute path a notebook
    kernel loaded -> its id under the root, so ``Profile.show()`` can open the viewer tab) and
    ``api/config`` (the cache folder set in JupyterLab's settings; POST goes through Jupyter's
    XSRF check and asks the authorizer for ``write``)."""
    from ..server.handlers import ApiHandler

    class ResolveHandler(ApiHandler, ProfinsightJupyterHandler):
        def get(self):
            path = self.get_query_argument("path", "")
            self.send_json({"id": self.store.relative_id(path)})

    class ConfigHandler(ApiHandler, ProfinsightJupyterHandler):
        def get(self):
            self.send_json(current_config())

        async def post(self):
            ok = (
                self.authorizer.is_authorized(self, self.current_user, "write", AUTH_RESOURCE)
                if self.settings.get("authorizer") is not None
                else True
            )
            if inspect.isawaitable(ok):
                ok = await ok
            if not ok:
                raise web.HTTPError(403, "not authorized to change profinsight settings")
            try:
                body = json.loads(self.request.body or b"{}")
            except ValueError:
                body = None
            if not isinstance(body, dict):
                from ..errors import ProfileError

                raise ProfileError('the body must be a JSON object such as {"cache_dir": "..."}')
            if "cache_dir" in body:
                set_cache_dir(body.get("cache_dir"), Path(self.store.root))
            self.send_json(current_config())

    base = "/" + base_url.strip("/") + "/"
    return [
        (base + "api/resolve/?", ResolveHandler, {"store": store}),
        (base + "api/config/?", ConfigHandler, {"store": store}),
    ]


#: PROFINSIGHT_CACHE as the server was started with it (what an empty setting goes back to)
_STARTUP_CACHE = os.environ.get("PROFINSIGHT_CACHE")


def current_config() -> dict:
    from ..store.cache import cache_root

    root = cache_root()
    return {
        "cache_dir": None if root is None else str(root),
        "cache_enabled": root is not None,
        "cache_from": "setting"
        if os.environ.get("PROFINSIGHT_CACHE") != _STARTUP_CACHE
        else ("environment" if _STARTUP_CACHE else "default"),
    }


def set_cache_dir(value, jupyter_root: Path) -> None:
    """Point this server's table cache at ``value`` (``PROFINSIGHT_CACHE`` for this process and
    the import workers it starts).  Empty or None: back to what the server started with; a
    relative folder is taken under the Jupyter root; ``off`` disables the cache.  The folder is
    created and checked for writing first, else 400 with a fix."""
    from ..errors import ProfileError

    if value is None or not str(value).strip():
        if _STARTUP_CACHE is None:
            os.environ.pop("PROFINSIGHT_CACHE", None)
        else:
            os.environ["PROFINSIGHT_CACHE"] = _STARTUP_CACHE
        return
    value = str(value).strip()
    if value.lower() in ("off", "0", "none", "false", "no"):
        os.environ["PROFINSIGHT_CACHE"] = "off"
        return
    folder = Path(value).expanduser()
    if not folder.is_absolute():
        folder = jupyter_root / folder
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise ProfileError(
            f"cannot use {folder} as the cache folder: {exc.strerror or exc}",
            fix="choose a folder the Jupyter server can write, or leave the setting empty",
        ) from None
    os.environ["PROFINSIGHT_CACHE"] = str(folder)
