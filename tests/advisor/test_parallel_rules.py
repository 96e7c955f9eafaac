"""The rules run on several threads (each with its own DuckDB cursor): the findings must be exactly
those of one rule after the other, every analysis computed once, also for a profile whose tables
are held in memory (registered Arrow, which a cursor must register again)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import profinsight
from profinsight.advisor import core
from profinsight.store.results import KeyLocks, Results


def _hits(path, monkeypatch, threads: int) -> tuple[dict, dict]:
    monkeypatch.setattr(core, "RULE_THREADS", threads)
    p = profinsight.load(path)
    found = core.hits(p)
    return found, dict(p._results.stats)


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("cache", ["on", "off"])
def test_threads_find_what_one_finds(fixtures, monkeypatch, tmp_path, cache, threads):
    path = fixtures / "ascend_pt" / "text_level1"
    if cache == "off":
        monkeypatch.setenv("PROFINSIGHT_CACHE", "off")
    serial, serial_stats = _hits(path, monkeypatch, 1)
    if cache == "on":  # a fresh cache: the results of the serial run must not be read back
        monkeypatch.setenv("PROFINSIGHT_CACHE", str(tmp_path / "again"))
    parallel, parallel_stats = _hits(path, monkeypatch, threads)
    assert parallel == serial
    assert [h["rule"] for h in parallel["hits"]] == [h["rule"] for h in serial["hits"]]
    assert len(parallel["hits"]) >= 3
    # each analysis computed once, whichever rule asked first; none read from disk
    assert parallel_stats["computed"] == serial_stats["computed"] > 5
    assert parallel_stats["disk"] == serial_stats["disk"] == 0


def test_a_profile_in_memory_gives_each_thread_its_tables(fixtures, monkeypatch):
    monkeypatch.setenv("PROFINSIGHT_CACHE", "off")
    p = profinsight.load(fixtures / "kineto" / "gpu_alexnet.json.gz")
    assert p.parquet_files("device_tasks") is None
    want = int(p.sql("SELECT count(*) AS n FROM device_tasks")["n"][0])
    with p.parallel(2) as pool:
        cons = list(pool.map(lambda _: id(p.connection()), range(8)))
        counts = list(pool.map(lambda _: int(p.sql("SELECT count(*) AS n FROM device_tasks")["n"][0]), range(4)))
    assert counts == [want] * 4
    assert id(p.connection()) not in cons  # the pool's threads used cursors, not the main connection


def test_one_key_is_computed_once_while_others_wait():
    results = Results(None)
    calls = []
    started = threading.Event()

    def slow():
        calls.append(threading.get_ident())
        started.set()
        time.sleep(0.2)
        return {"n": len(calls)}

    out = []
    threads = [threading.Thread(target=lambda: out.append(results.data("x", {}, slow))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and out == [{"n": 1}] * 3
    assert results.stats["computed"] == 1 and results.stats["memory"] == 2


def test_key_locks_are_one_per_key():
    locks = KeyLocks()
    assert locks("a") is locks("a")
    assert locks("a") is not locks("b")


def test_memo_computes_once_and_keeps_only_the_latest_of_a_kind():
    results = Results(None)
    calls = []

    def make(v):
        def compute():
            calls.append(v)
            return v

        return compute

    assert results.memo(("attribution", 1), make(1), keep=2) == 1
    assert results.memo(("attribution", 1), make(99), keep=2) == 1  # computed once
    results.memo(("attribution", 2), make(2), keep=2)
    results.memo(("other", 1), make(10), keep=2)
    results.memo(("attribution", 3), make(3), keep=2)  # the oldest attribution goes
    assert calls == [1, 2, 10, 3]
    assert results.memo(("attribution", 1), make(11), keep=2) == 11  # computed again
    assert results.memo(("other", 1), make(12), keep=2) == 10  # another kind is not touched


def test_derived_step_figures_are_computed_once_per_context(fixtures, monkeypatch):
    """The steps and their means that every rule asks for are computed once per context, on
    whichever thread asks first, and are the step breakdown's own figures."""
    import pandas as pd

    from profinsight.advisor.rules.base import Context

    p = profinsight.load(fixtures / "ascend_pt" / "text_level1")
    ctx = Context(p)
    calls = []
    real = ctx.view

    def view(name, **params):
        calls.append(name)
        return real(name, **params)

    monkeypatch.setattr(ctx, "view", view)
    with ThreadPoolExecutor(3) as pool:
        got = list(pool.map(lambda _: (ctx.steps, ctx.task_steps, ctx.step_us, ctx.task_step_us), range(6)))
    assert all(g[0] is got[0][0] and g[1] is got[0][1] for g in got)
    assert {g[2:] for g in got} == {got[0][2:]}
    assert calls == ["step_breakdown"]
    sb = pd.DataFrame(p.step_breakdown())
    expect = sb[pd.to_numeric(sb["step_us"], errors="coerce").fillna(0) > 0]
    assert got[0][0].reset_index(drop=True).equals(expect.reset_index(drop=True))
    assert len(expect) > 0 and got[0][2] == pytest.approx(expect["step_us"].astype(float).mean(), rel=1e-12)


def test_the_report_reads_its_own_analyses_computed_beside_the_rules(fixtures, monkeypatch, tmp_path):
    """The analyses only the report's sections read (``report_data.WARM``) are computed on the
    rules' threads, once, and the report is the same as when the sections compute them after
    the rules."""
    from profinsight.advisor import guided_report, report_data

    monkeypatch.setenv("PROFINSIGHT_CACHE", str(tmp_path / "warm"))
    p = profinsight.load(fixtures / "ascend_pt" / "text_level1")
    seen = []
    real = type(p).view

    def view(self, name, **params):
        seen.append((name, tuple(sorted(params.items())), threading.current_thread() is threading.main_thread()))
        return real(self, name, **params)

    monkeypatch.setattr(type(p), "view", view)
    warm = guided_report(p, "en")
    first = [s for s in seen if (s[0], s[1]) in set(report_data.WARM)]
    assert first and not first[0][2]  # computed on a rule thread first
    assert p._results.stats["disk"] == 0
    computed = p._results.stats["computed"]
    wanted = report_data.WARM

    monkeypatch.setattr(report_data, "WARM", ())
    monkeypatch.setenv("PROFINSIGHT_CACHE", str(tmp_path / "cold"))
    seen.clear()
    q = profinsight.load(fixtures / "ascend_pt" / "text_level1")
    plain = guided_report(q, "en")
    assert plain == warm
    assert q._results.stats["computed"] == computed  # nothing computed twice, nothing extra
    assert [s for s in seen if (s[0], s[1]) in set(wanted)][0][2]  # after the rules, on the main thread


def test_warm_names_what_the_sections_read(fixtures, monkeypatch):
    """``WARM`` is what ``sections`` reads with the same parameters (else the warm-up computes a
    table nobody reads, and the report computes its own after the rules)."""
    from profinsight.advisor import report_data
    from profinsight.advisor.rules.base import Context

    p = profinsight.load(fixtures / "kineto" / "gpu_alexnet.json.gz")
    ctx = Context(p)
    asked = []
    real = ctx.view

    def view(name, **params):
        asked.append((name, tuple(sorted(params.items()))))
        return real(name, **params)

    monkeypatch.setattr(ctx, "view", view)
    report_data.sections(ctx)
    assert set(report_data.WARM) <= set(asked)
