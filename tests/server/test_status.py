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


def _get(base, path):
    with urllib.request.urlopen(base + path, timeout=60) as r:
        return json.loads(r.read())


def test_bytes_first_paint_and_the_first_ready_rank_before_the_last(fixtures, monkeypatch, tmp_path):
    """A two-rank run imported cold, rank 1 held back: the status counts the bytes of the run's
    files and names rank 0 ready; the summary route answers from the vendor's step_trace_time.csv
    (no trace parsed) and the ready route paints rank 0 from its own tasks, while rank 1 imports."""
    import csv
    import shutil

    from profinsight.discovery import discover
    from profinsight.store import loader

    monkeypatch.setenv("PROFINSIGHT_CACHE", str(tmp_path / "cache"))
    run_dir = tmp_path / "text_level1"
    shutil.copytree(fixtures / "ascend_pt" / "text_level1", run_dir)
    real_import = loader.import_rank
    release = threading.Event()

    def held(source):
        if source.rank_hint == 1 and source.format != "cluster":  # the import, not the summary tier
            release.wait(60)
        return real_import(source)

    monkeypatch.setattr(loader, "import_rank", held)
    run = discover(run_dir)[0]
    total = sum(f.stat().st_size for s in run.sources for f in s.files)
    rank0_files = sum(f.stat().st_size for f in run.sources[0].files)
    with serve_in_thread(make_app([run_dir], token=None)) as base:
        pid = "text_level1"
        summary = _get(base, f"/api/profiles/{pid}/summary")
        vendor = {r["rank"]: r for r in summary["vendor"]["steps"]["rows"]}
        for rank in (0, 1):
            path = run_dir / f"rank{rank}_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv"
            rows = list(csv.DictReader(open(path, encoding="utf-8-sig")))
            assert vendor[rank]["step_us"] == float(rows[0]["Stage"]) and vendor[rank]["source"] == "vendor_summary"
        assert summary["size_bytes"] == total and summary["rank_count"] == 2
        assert set(summary["vendor"]["files"]) == {
            "step_trace_time.csv",
            "communication.json",
            "communication_matrix.json",
        }
        loader_thread = threading.Thread(target=_get, args=(base, f"/api/profiles/{pid}"))
        loader_thread.start()
        try:
            deadline = time.monotonic() + 60
            while True:
                st = _get(base, f"/api/profiles/{pid}/status")
                if st["ranks_ready"] == [0] or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            assert st["state"] == "loading" and st["bytes_total"] == total
            assert st["bytes_done"] >= rank0_files  # rank 0's files whole; rank 1 waits
            ready = _get(base, f"/api/profiles/{pid}/ready")
            assert ready["ranks"] == [0]
            want = profinsight.load(run_dir / "rank0_ascend_pt").step_breakdown()
            got = ready["steps"]["rows"]
            assert [r["step_us"] for r in got] == list(want["step_us"]) and got[0]["source"] == "tasks"
            assert _get(base, f"/api/profiles/{pid}/status")["state"] == "loading"  # rank 1 still importing
        finally:
            release.set()
            loader_thread.join(120)
        st = _get(base, f"/api/profiles/{pid}/status")
        assert st["state"] == "loaded" and st["bytes_done"] == total and st["ranks_ready"] == [0, 1]
