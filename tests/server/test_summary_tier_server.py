"""A served multi-rank run above the summary bar opens in the summary tier (the real Qwen3 run,
bar moved to 2 ranks): the profile says ``tier: summary``; the most suspicious rank -- the one
its pipeline group waits for longest, rank 3 -- is imported in full in the background into the
cache; ``api/profiles/ID/ranks/R`` serves a rank on its own, in full (rank 2: its device tasks); an
unknown rank is a clear 4xx."""

from __future__ import annotations

import json
import time

import pytest
from tornado.httpclient import HTTPClient, HTTPClientError

from profinsight.api import rank_run, resolve_run, suspicious_ranks
from profinsight.server import make_app
from profinsight.server.threaded import serve_in_thread
from profinsight.store import cache

RUN = "ascend_llm/qwen3_level2_4rank"


def get(base: str, path: str) -> dict:
    return json.loads(HTTPClient().fetch(f"{base}/{path}").body)


@pytest.mark.slow
def test_summary_tier_served_with_background_import_and_open_rank(fixtures, monkeypatch):
    monkeypatch.setenv("PROFINSIGHT_SUMMARY_RANKS", "2")
    monkeypatch.setenv("PROFINSIGHT_BACKGROUND_RANKS", "1")
    app = make_app([fixtures / RUN], token=None)
    store = app.settings["store"]
    pid = store.ids()[0]
    with serve_in_thread(app) as base:
        info = get(base, f"api/profiles/{pid}")
        assert info["tier"] == "summary" and info["ranks"] == [0, 1, 2, 3]
        assert info["tables"]["device_tasks"] == 0  # no trace parsed
        assert suspicious_ranks(store.get(pid))[0] == 3  # group [1, 3] waits 163,646.84 us per step for it
        t0 = time.monotonic()
        while time.monotonic() - t0 < 120:
            st = get(base, f"api/profiles/{pid}/status")
            if st["background"]["done"]:
                break
            time.sleep(0.5)
        assert st["background"] == {"ranks": [3], "done": [3]}
        full3 = rank_run(resolve_run(fixtures / RUN), 3)
        assert all(cache.lookup(s) is not None for s in full3.sources)  # opening it is a warm read
        rid = get(base, f"api/profiles/{pid}/ranks/2")["id"]
        assert get(base, f"api/profiles/{pid}/ranks/2")["id"] == rid  # one entry per rank
        one = get(base, f"api/profiles/{rid}")
        assert one["tier"] == "full" and one["format"] == info["format"] and one["ranks"] == [2]
        assert one["tables"]["device_tasks"] > 0  # its traces, which the summary tier never read
        with pytest.raises(HTTPClientError) as err:
            HTTPClient().fetch(f"{base}/api/profiles/{pid}/ranks/9")
        assert err.value.code in (400, 404) and "rank 9 is not a rank" in err.value.response.body.decode()
    store.close()


@pytest.mark.slow
def test_closing_the_store_ends_the_background_import(fixtures, monkeypatch):
    import multiprocessing as mp

    from profinsight.server.store import ProfileStore

    monkeypatch.setenv("PROFINSIGHT_SUMMARY_RANKS", "2")
    monkeypatch.setenv("PROFINSIGHT_BACKGROUND_RANKS", "4")
    store = ProfileStore([fixtures / RUN])
    pid = store.ids()[0]
    store.get(pid)
    time.sleep(1.0)  # the worker is starting or importing the first rank
    t0 = time.monotonic()
    store.close()
    assert time.monotonic() - t0 < 5
    assert not any(t.is_alive() for t in store._threads)
    assert mp.active_children() == []  # the worker was ended, not left behind
    assert len(store.status(pid)["background"]["done"]) < 4
