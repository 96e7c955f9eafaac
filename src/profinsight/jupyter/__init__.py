"""The jupyter-server extension: the profinsight HTTP API under ``{base_url}profinsight/``,
behind Jupyter's own authentication and XSRF, serving the profiles under Jupyter's root_dir.

Enabled by ``etc/jupyter/jupyter_server_config.d/profinsight.json`` (installed with the wheel),
or by hand: ``jupyter server --ServerApp.jpserver_extensions="{'profinsight.jupyter': True}"``.
Needs ``pip install profinsight[jupyter]`` (jupyter_server >= 2).
"""

from __future__ import annotations

URL_PREFIX = "profinsight"


def _jupyter_server_extension_points():
    return [{"module": "profinsight.jupyter"}]


def _load_jupyter_server_extension(serverapp):
    from jupyter_server.utils import url_path_join

    from ..server.handlers import make_handlers
    from ..server.store import ProfileStore
    from .handlers import ProfinsightJupyterHandler, jupyter_only_handlers

    store = ProfileStore(root=serverapp.root_dir)
    base_url = url_path_join(serverapp.base_url, URL_PREFIX)
    serverapp.web_app.settings["profinsight_store"] = store
    serverapp.web_app.add_handlers(
        ".*$",
        make_handlers(store, base_url=base_url, base_class=ProfinsightJupyterHandler)
        + jupyter_only_handlers(store, base_url),
    )
    serverapp.log.info("profinsight: API at %s/api/profiles, profiles under %s", base_url, store.root)
    from ..server.handlers import warm

    warm(store, first_paint=False)  # the engine's imports in the background: the first open paints sooner


# jupyter-server < 2 / notebook names
load_jupyter_server_extension = _load_jupyter_server_extension
