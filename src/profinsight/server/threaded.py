"""Run a tornado application on a background thread (tests, benchmarks, notebooks): the
caller's thread stays free to drive a browser or time requests against it."""

from __future__ import annotations

import threading
from contextlib import contextmanager


@contextmanager
def serve_in_thread(app, host: str = "127.0.0.1"):
    """``with serve_in_thread(app) as base:`` serves ``app`` on a free port of ``host`` and
    yields its base address (``http://127.0.0.1:PORT``); the loop stops on exit."""
    import asyncio

    from tornado.httpserver import HTTPServer
    from tornado.ioloop import IOLoop
    from tornado.netutil import bind_sockets

    sockets = bind_sockets(0, host)
    port = sockets[0].getsockname()[1]
    started, holder = threading.Event(), {}

    def run():
        asyncio.set_event_loop(asyncio.new_event_loop())
        server = HTTPServer(app)
        server.add_sockets(sockets)
        holder["loop"], holder["server"] = IOLoop.current(), server
        started.set()
        holder["loop"].start()

    thread = threading.Thread(target=run, daemon=True, name="profinsight-test-server")
    thread.start()
    if not started.wait(10):
        raise RuntimeError("the server thread did not start")
    try:
        yield f"http://{host}:{port}"
    finally:
        loop = holder["loop"]
        loop.add_callback(holder["server"].stop)
        loop.add_callback(loop.stop)
        thread.join(5)
