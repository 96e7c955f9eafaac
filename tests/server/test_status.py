"""Load progress: the status route answers while a profile is still loading (the viewer polls it)."""

from __future__ import annotations

import json
import threading
import time
import urllib.request

import profinsight.api
from profinsight.server.app import make_app
from profinsight.server.threaded import serve_in_thread


def test_status_reports_progress_during_a_slow_load(fixtures, monkeypatch):
    real_load = profinsight.api.load
    release = threading.Event()

    def slow_load(run, progress=None, **kw):
        progress(0, 2, "cached")
        progress(1, 2, "/some/rank1")
        release.wait(10)
        return real_load(run, **kw)

    monkeypatch.setattr(profinsight.api, "load", slow_load)
    app = make_app([fixtures / "kineto" / "cpu_only.json.gz"], token=None)

    def get(base, path):
        with urllib.request.urlopen(base + path, timeout=10) as r:
            return json.loads(r.read())

    with serve_in_thread(app) as base:
        assert get(base, "/api/profiles/cpu_only.json.gz/status")["state"] == "idle"
        loader = threading.Thread(target=get, args=(base, "/api/profiles/cpu_only.json.gz"))
        loader.start()
        deadline = time.monotonic() + 5
        while True:
            st = get(base, "/api/profiles/cpu_only.json.gz/status")
            if st["done"] == 1 or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        # answered at once although the load holds the engine thread
        assert st["state"] == "loading" and st["stage"] == "importing" and (st["done"], st["total"]) == (1, 2)
        release.set()
        loader.join(10)
        st = get(base, "/api/profiles/cpu_only.json.gz/status")
        assert st["state"] == "loaded" and st["stage"] is None and st["elapsed_s"] > 0
