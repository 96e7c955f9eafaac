"""The standalone server of ``profinsight serve``: the API handlers plus a token check and an
index page.

Security: binds 127.0.0.1 by default; every request needs the token (``?token=``, header
``Authorization: token T``, or the cookie set when the page was opened with ``?token=``):
401 without one, 403 with a wrong one.  On a loopback bind the Host header must be a
loopback name (DNS rebinding).  Only the profiles given at start are readable.
"""
from __future__ import annotations

import hmac
import html
import secrets

import tornado.web

from .handlers import ROUTES, ApiHandler, api_url, make_handlers
from .store import ProfileStore

COOKIE = "profinsight_token"
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


class AuthError(tornado.web.HTTPError):
    def __init__(self, status: int, message: str, fix: str):
        super().__init__(status, message)
        self.fix = fix


def token_check(token: str | None, host: str = "127.0.0.1"):
    """A ``prepare`` hook refusing requests without ``token`` (None: no token needed)."""
    loopback = host in LOOPBACK

    def check(handler: tornado.web.RequestHandler) -> None:
        if loopback and handler.request.host_name not in LOOPBACK:
            raise AuthError(403, f"host {handler.request.host_name!r} refused",
                            "open the URL that profinsight serve printed (127.0.0.1)")
        if token is None:
            return
        given = handler.get_query_argument("token", None)
        auth = handler.request.headers.get("Authorization", "")
        if given is None and auth.lower().startswith("token "):
            given = auth[6:].strip()
        from_query = given is not None
        if given is None:
            given = handler.get_cookie(COOKIE)
        if not given:
            raise AuthError(401, "token required", "open the URL with ?token=... that profinsight serve printed")
        if not hmac.compare_digest(given.encode(), token.encode()):
            raise AuthError(403, "wrong token", "use the token that profinsight serve printed")
        if from_query and handler.get_cookie(COOKIE) != token:
            handler.set_cookie(COOKIE, token, httponly=True, samesite="Strict")
    return check


class IndexHandler(ApiHandler):
    """``GET /``: until the browser app lands, a page listing the API routes and the profiles."""

    def initialize(self, store: ProfileStore, base_url: str = "/"):
        self.store, self.base_url = store, base_url

    async def get(self):
        e = html.escape
        rows = []
        for pid in self.store.ids():
            d = await self.engine(self.store.describe, pid)
            status = e(d["error"]["error"]) if d["error"] else (
                f"ranks {e(', '.join(map(str, d['ranks'])))} · steps {e(', '.join(map(str, d['steps'])) or 'none')}"
                f" · {sum(d.get('tables', {}).values()):,} rows · {len(d['diagnostics'])} diagnostics")
            links = " ".join(f"<a href='{e(api_url(self.base_url, pid, r))}'>{e(r.strip('/') or 'summary')}</a>"
                             for r in ("", "/analyses", "/timeline/tracks", "/tables/device_tasks?limit=20"))
            rows.append(f"<tr><td><code>{e(pid)}</code></td><td>{e(d['format'])} {e(d['level'] or '')}</td>"
                        f"<td><code>{e(d['path'])}</code></td><td>{status}</td><td>{links}</td></tr>")
        routes = "".join(f"<li><code>GET {e(self.base_url.rstrip('/'))}/{e(p.replace('([^/]+)', '{id}', 1).replace('([^/]+)', '{name}'))}</code></li>"
                         for p, _ in ROUTES)
        self.set_header("Content-Type", "text/html; charset=UTF-8")
        self.set_header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
        self.finish(
            "<!doctype html><html><head><meta charset='utf-8'><title>profinsight</title>"
            "<style>body{font:14px sans-serif;margin:2em}td{padding:2px 10px;border-bottom:1px solid #ddd}</style>"
            "</head><body><h1>profinsight</h1><p>The browser app is not built yet; the API is served.</p>"
            f"<h2>Profiles</h2><table><tr><th>id</th><th>format</th><th>path</th><th>loaded</th><th>API</th></tr>"
            f"{''.join(rows)}</table><h2>API routes</h2><ul>{routes}</ul>"
            "<p>Details: docs/server.md</p></body></html>")


def make_app(paths=(), *, token: str | None = "", host: str = "127.0.0.1", base_url: str = "/",
             store: ProfileStore | None = None, prefer: str | None = None) -> tornado.web.Application:
    """The standalone application serving ``paths``.  ``token=""`` makes a random token (read
    it back from ``app.settings["token"]``); ``token=None`` serves without one."""
    if token == "":
        token = secrets.token_hex(24)
    store = store if store is not None else ProfileStore(paths, prefer=prefer)
    base = "/" + base_url.strip("/") + "/" if base_url.strip("/") else "/"
    handlers = [(base, IndexHandler, {"store": store, "base_url": base})] + make_handlers(store, base)
    return tornado.web.Application(handlers, token=token, store=store, profinsight_auth=token_check(token, host),
                                   default_handler_class=NotFound, default_handler_args={"store": store})


class NotFound(ApiHandler):
    async def prepare(self):
        await super().prepare()
        raise AuthError(404, f"no route {self.request.path}", "routes: GET / lists them")
