"""The base class mixed under every profinsight handler inside jupyter-server.

``JupyterHandler.prepare`` resolves the user from Jupyter's token or cookie and checks XSRF for
non-GET requests; jupyter-server >= 2.13 also refuses unauthenticated requests by default.  This
base refuses them (403) whatever ``allow_unauthenticated_access`` says, and asks Jupyter's
authorizer for ``read`` on the ``profinsight`` resource, so JupyterHub-style authorizers apply.
"""
from __future__ import annotations

import inspect

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
