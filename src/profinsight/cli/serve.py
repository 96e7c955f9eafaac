"""Serve profiles over HTTP for the browser: the API (analyses, tables, timeline) on 127.0.0.1
with a random token, printed as a ready URL (like Jupyter).  Each PATH is served as its own
profile(s); only these are readable."""

from __future__ import annotations

import sys

from ..errors import ProfileError

HELP = "serve profiles to the browser (HTTP API, 127.0.0.1, token)"


def add_arguments(p) -> None:
    p.add_argument("paths", nargs="*", metavar="PATH", help="profile folder(s) or trace file(s) to serve")
    p.add_argument("--sample", action="store_true", help="serve the bundled real sample profile")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=0, help="port (default 0: a free one)")
    p.add_argument(
        "--no-token", action="store_true", help="serve without a token (anyone who reaches the port reads the profiles)"
    )
    p.add_argument("--prefer", choices=["db", "text"], help="export to read when a folder has both")


def run(args) -> int:
    import asyncio

    from tornado.httpserver import HTTPServer
    from tornado.netutil import bind_sockets

    from ..server import make_app
    from ..server.handlers import warm
    from .common import paths

    app = make_app(paths(args), token=None if args.no_token else "", host=args.host, prefer=args.prefer)
    try:
        sockets = bind_sockets(args.port, address=args.host)
    except OSError as exc:
        raise ProfileError(
            f"cannot listen on {args.host}:{args.port}: {exc.strerror}", fix="pick another --port (0 picks a free one)"
        ) from None
    port = sockets[0].getsockname()[1]
    shown = f"[{args.host}]" if ":" in args.host else args.host
    token = app.settings["token"]
    url = f"http://{shown}:{port}/" + (f"?token={token}" if token else "")
    ids = app.settings["store"].ids()
    print(f"profinsight: serving {len(ids)} profile(s): {', '.join(ids)}", file=sys.stderr)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"profinsight: listening on {args.host}: reachable from other machines", file=sys.stderr)
    print(f"Open: {url}", flush=True)

    async def main():
        HTTPServer(app).add_sockets(sockets)
        warm(app.settings["store"])  # the engine's imports and the runs' first paint, in the background
        await asyncio.Event().wait()

    asyncio.run(main())
    return 0
