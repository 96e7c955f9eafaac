"""Analysis results are computed once per profile and parameters and kept beside the Parquet
cache (profinsight.store.results): a second process reads them back identical, a changed
profile or changed code never gets an old result, and a warm ``analyze`` reads one file and
imports neither pandas nor DuckDB."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pandas as pd
import pytest

import profinsight
from profinsight.registry import all_analyses
from profinsight.store import results


def _files(p) -> list[str]:
    folder = p._results.folder
    return sorted(f.name for f in folder.iterdir()) if folder is not None and folder.is_dir() else []


@pytest.mark.slow
@pytest.mark.parametrize("fixture", ["ascend_pt/text_level1", "kineto/gpu_alexnet.json.gz"])
def test_every_analysis_reads_back_exactly_what_was_computed(fixtures, fixture):
    first = profinsight.load(fixtures / fixture)
    computed = {name: a.run(first) for name, a in sorted(all_analyses().items()) if a.cache}
    assert first._results.stats["computed"] == len(computed) and first._results.stats["disk"] == 0
    again = profinsight.load(fixtures / fixture)  # a new process would see the same: nothing in memory
    for name, df in computed.items():
        pd.testing.assert_frame_equal(pd.DataFrame(all_analyses()[name].run(again)), pd.DataFrame(df), obj=name)
    assert again._results.stats == {"memory": 0, "disk": len(computed), "computed": 0, "written": 0}


def test_parameters_are_part_of_the_key(fixtures):
    p = profinsight.load(fixtures / "kineto" / "gpu_alexnet.json.gz")
    by_type = p.op_summary(by="type")
    by_name = p.op_summary(by="name")
    assert p._results.stats["computed"] == 2
    q = profinsight.load(fixtures / "kineto" / "gpu_alexnet.json.gz")
    pd.testing.assert_frame_equal(pd.DataFrame(q.op_summary(by="name")), pd.DataFrame(by_name))
    pd.testing.assert_frame_equal(pd.DataFrame(q.op_summary(by="type")), pd.DataFrame(by_type))
    pd.testing.assert_frame_equal(pd.DataFrame(q.op_summary()), pd.DataFrame(by_name))  # the default is by=name
    assert q._results.stats == {"memory": 1, "disk": 2, "computed": 0, "written": 0}


def test_a_changed_profile_never_gets_the_old_result(fixtures, tmp_path):
    """The same path, another capture written over it: the result is the new capture's, exactly
    what a fresh load of that capture computes."""
    trace = tmp_path / "run.pt.trace.json.gz"
    shutil.copy(fixtures / "kineto" / "compare_base.json.gz", trace)
    base = profinsight.load(trace).step_breakdown()
    shutil.copy(fixtures / "kineto" / "compare_test.json.gz", trace)
    p = profinsight.load(trace)
    changed = p.step_breakdown()
    assert p._results.stats["computed"] == 1 and p._results.stats["disk"] == 0
    expected = profinsight.load(fixtures / "kineto" / "compare_test.json.gz").step_breakdown()
    assert list(changed["step_us"]) == list(expected["step_us"]) != list(base["step_us"])


def test_changed_code_recomputes_and_drops_the_old_results(fixtures, monkeypatch):
    path = fixtures / "kineto" / "gpu_alexnet.json.gz"
    p = profinsight.load(path)
    p.idle_gaps()
    old = p._results.folder
    assert old.is_dir()
    monkeypatch.setattr(results, "_fingerprint", "0123456789abcdef")  # as if an analysis had been edited
    q = profinsight.load(path)
    q.idle_gaps()
    assert q._results.stats["computed"] == 1 and q._results.folder.parent.name == "results-0123456789abcdef"
    assert not old.parent.exists()  # results of other code are removed with their folder


def test_a_replaced_function_never_reads_the_original_result(fixtures, monkeypatch):
    from profinsight import registry

    path = fixtures / "kineto" / "gpu_alexnet.json.gz"
    real = registry.get("step_breakdown")
    assert len(profinsight.load(path).step_breakdown()) == 1
    monkeypatch.setitem(registry.ANALYSES, "step_breakdown", registry.Analysis(**{**real.__dict__, "func": _no_steps}))
    assert len(profinsight.load(path).step_breakdown()) == 0


def test_a_users_own_analysis_is_kept_in_memory_only(fixtures, monkeypatch):
    """Code outside profinsight is not covered by the code fingerprint (its helpers may change
    unseen): its results are never written to disk."""
    from profinsight import registry

    real = registry.get("step_breakdown")
    user = registry.Analysis(**{**real.__dict__, "func": _users_steps})
    monkeypatch.setitem(registry.ANALYSES, "step_breakdown", user)
    p = profinsight.load(fixtures / "kineto" / "gpu_alexnet.json.gz")
    p.step_breakdown()
    p.step_breakdown()
    assert p._results.stats == {"memory": 1, "disk": 0, "computed": 1, "written": 0}


def _users_steps(profile):
    return pd.DataFrame({"rank": pd.Series([0], dtype="Int64")})


_users_steps.__module__ = "my_notebook"


def _no_steps(profile):
    return pd.DataFrame({"rank": pd.Series([], dtype="Int64")})


def test_a_damaged_result_file_is_recomputed(fixtures):
    path = fixtures / "kineto" / "gpu_alexnet.json.gz"
    p = profinsight.load(path)
    gaps = p.idle_gaps()
    (f,) = [f for f in p._results.folder.iterdir() if f.name.startswith("idle_gaps-")]
    f.write_bytes(f.read_bytes()[:100])  # cut short, as by a full disk
    q = profinsight.load(path)
    pd.testing.assert_frame_equal(pd.DataFrame(q.idle_gaps()), pd.DataFrame(gaps))
    assert q._results.stats["computed"] == 1


def test_cache_off_keeps_results_in_memory_only(fixtures, monkeypatch):
    monkeypatch.setenv("PROFINSIGHT_CACHE", "off")
    p = profinsight.load(fixtures / "kineto" / "gpu_alexnet.json.gz")
    assert p._results.folder is None
    p.op_summary()
    p.op_summary()
    assert p._results.stats == {"memory": 1, "disk": 0, "computed": 1, "written": 0}


def test_findings_are_kept_without_words(fixtures):
    """The advisor's findings are cached as rule ids and values; each language is worded from
    them, so a cached result never answers in the language of the run that wrote it."""
    path = fixtures / "ascend_pt" / "text_level1"
    en = profinsight.load(path).advise(lang="en")
    zh = profinsight.load(path).advise(lang="zh")
    assert list(en["rule"]) == list(zh["rule"]) and list(en["recoverable_us"]) == list(zh["recoverable_us"])
    assert en["title"].iloc[0] != zh["title"].iloc[0]
    p = profinsight.load(path)
    (hits,) = [f for f in p._results.folder.iterdir() if f.name.startswith("advisor_hits-")]
    text = hits.read_text(encoding="utf-8")
    assert en["title"].iloc[0] not in text and zh["title"].iloc[0] not in text


_WARM = """
import contextlib, io, json, sys
from profinsight.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main({argv!r})
print(json.dumps({{"code": code, "out": out.getvalue(),
                   "modules": sorted({{m.split('.')[0] for m in sys.modules}})}}))
"""


def _cli(argv: list[str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _WARM.format(argv=argv)], capture_output=True, text=True, check=True, timeout=300
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("fixture", ["ascend_pt/text_level1", "kineto/gpu_2rank_rank0.json.gz"])
def test_warm_analyze_reads_the_cached_report_and_imports_no_engine(fixtures, fixture):
    """Cold and warm ``analyze`` print the same bytes (JSON, table, Chinese); the warm run imports
    neither pandas nor DuckDB — it computed nothing, whatever the machine's load."""
    path = str(fixtures / fixture)
    cold = _cli(["analyze", path, "--format", "json"])
    assert {"pandas", "duckdb"} <= set(cold["modules"])
    warm = _cli(["analyze", path, "--format", "json"])
    assert warm["out"] == cold["out"] and warm["code"] == cold["code"]
    assert not {"pandas", "duckdb"} & set(warm["modules"])
    zh = _cli(["analyze", path, "--lang", "zh"])  # another language: worded again from the same findings
    assert not {"pandas", "duckdb"} & set(zh["modules"])
    assert json.loads(cold["out"])["findings"][0]["title"] not in zh["out"]


def test_a_result_is_written_only_when_it_reads_back_exactly():
    import numpy as np

    a = pd.DataFrame(
        {
            "n": pd.array([1, None], dtype="Int64"),
            "x": [1.0, np.nan],
            "s": pd.array(["a", None], dtype="string"),
            "o": pd.Series(["a", None], dtype=object),
        }
    )
    assert results._same_frame(a, a.copy())
    for col, other in {
        "n": pd.array([1, 0], dtype="Int64"),
        "x": [1.0, 0.0],
        "s": pd.array(["a", "b"], dtype="string"),
        "o": pd.Series(["a", np.nan], dtype=object),  # NaN is not the None that was computed
    }.items():
        b = a.copy()
        b[col] = other
        assert not results._same_frame(a, b), col
    assert not results._same_frame(a, a.astype({"n": "float64"}))
    assert not results._same_frame(a, a.set_axis([1, 2]))
    # a kind of column the column-by-column comparison does not know is compared by pandas
    c = pd.DataFrame({"k": pd.Categorical(["x", "y"])})
    assert results._same_frame(c, c.copy()) and not results._same_frame(c, c.iloc[::-1].reset_index(drop=True))
