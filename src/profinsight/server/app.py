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
from pathlib import Path

import tornado.web

from .handlers import ApiHandler, make_handlers
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
            raise AuthError(
                403,
                f"host {handler.request.host_name!r} refused",
                "open the URL that profinsight serve printed (127.0.0.1)",
            )
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


STATIC = Path(__file__).parent / "static"


def app_built() -> bool:
    """Whether the browser app was built (``pip install`` runs the TypeScript build)."""
    return (STATIC / "app.js").is_file() and (STATIC / "app.css").is_file()


class IndexHandler(ApiHandler):
    """``GET /``: the browser app (the viewer mounts on ``#profinsight-root``)."""

    def initialize(self, store: ProfileStore, base_url: str = "/"):
        self.store, self.base_url = store, base_url

    def get(self):
        e = html.escape
        base = e(self.base_url)
        self.set_header("Content-Type", "text/html; charset=UTF-8")
        self.set_header(
            "Content-Security-Policy",
            "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
            "script-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'",
        )
        if not app_built():
            self.set_status(503)
            self.finish(
                "<!doctype html><html><head><meta charset='utf-8'><title>profinsight</title></head><body>"
                "<h1>profinsight</h1><p>The browser app is not built in this installation "
                f"(<code>{e(str(STATIC))}</code> has no app.js). The API is served under "
                f"<code>{base}api/profiles</code>.</p><p>Fix: reinstall with <code>pip install .</code> from a "
                "checkout on a machine with Node.js 20 (the build runs jlpm), or install a released wheel.</p>"
                "</body></html>"
            )
            return
        self.finish(
            "<!doctype html><html><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'><title>profinsight</title>"
            "<link rel='icon' href='data:,'>"
            f"<link rel='stylesheet' href='{base}static/app.css'></head>"
            f"<body class='pi-standalone'><div id='profinsight-root' data-base-url='{base}'></div>"
            "<noscript>profinsight needs JavaScript.</noscript>"
            f"<script type='module' src='{base}static/app.js'></script></body></html>"
        )


class StaticFiles(tornado.web.StaticFileHandler):
    """The viewer's files; a name with a NUL byte (``app.js%00.png``) is a bad request, not an
    error of the file system."""

    def parse_url_path(self, url_path: str) -> str:
        if "\x00" in url_path:
            raise tornado.web.HTTPError(400, "bad file name")
        return super().parse_url_path(url_path)


def make_app(
    paths=(),
    *,
    token: str | None = "",
    host: str = "127.0.0.1",
    base_url: str = "/",
    store: ProfileStore | None = None,
    prefer: str | None = None,
) -> tornado.web.Application:
    """The standalone application serving ``paths``.  ``token=""`` makes a random token (read
    it back from ``app.settings["token"]``); ``token=None`` serves without one."""
    if token == "":
        token = secrets.token_hex(24)
    store = store if store is not None else ProfileStore(paths, prefer=prefer)
    base = "/" + base_url.strip("/") + "/" if base_url.strip("/") else "/"
    handlers = [
        (base, IndexHandler, {"store": store, "base_url": base}),
        (base + r"static/(.*)", StaticFiles, {"path": str(STATIC)}),
    ] + make_handlers(store, base)
    return tornado.web.Application(
        handlers,
        token=token,
        store=store,
        profinsight_auth=token_check(token, host),
        default_handler_class=NotFound,
        default_handler_args={"store": store},
    )


class NotFound(ApiHandler):
    async def prepare(self):
        await super().prepare()
        raise AuthError(404, f"no route {self.request.path}", "routes: GET / lists them")
