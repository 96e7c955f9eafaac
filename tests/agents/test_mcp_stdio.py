"""A real MCP client session (the SDK's stdio client) against ``python -m profinsight mcp`` on the
bundled sample: the tools list holds every registered analysis, and op_summary / advise / sql
answer exactly what the notebook API holds; paths outside the root and write statements are
refused as tool errors with a fix, never a traceback.

The server is started once for the module (one session, every call in it); the tests read the
answers it gave."""

from __future__ import annotations

import json
import math
import os
import shutil
import sys

import pytest

mcp = pytest.importorskip("mcp")

import anyio  # noqa: E402  (the SDK brings it)
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

import profinsight  # noqa: E402
from profinsight.registry import all_analyses  # noqa: E402
from profinsight.samples import sample_path  # noqa: E402

SAMPLE = "rank0_ascend_pt"

CALLS = {
    "load": ("load", {"path": SAMPLE}),
    "op_summary": ("op_summary", {"path": SAMPLE, "by": "type", "max_rows": 5}),
    "op_summary_all": ("op_summary", {"path": SAMPLE, "max_rows": 1000}),
    "advise": ("advise", {"path": SAMPLE, "lang": "en"}),
    "sql": (
        "sql",
        {
            "path": SAMPLE,
            "query": "SELECT kind, count(*) AS n, sum(dur_ns) AS ns FROM device_tasks GROUP BY kind ORDER BY kind",
        },
    ),
    "copy": ("sql", {"path": SAMPLE, "query": "COPY (SELECT * FROM device_tasks) TO 'stolen.csv'"}),
    "read_file": ("sql", {"path": SAMPLE, "query": "SELECT * FROM read_text('/etc/passwd')"}),
    "outside": ("load", {"path": "/etc"}),
    "dotdot": ("load", {"path": "../outside"}),
    "symlink": ("op_summary", {"path": "link"}),
    "bad_choice": ("op_summary", {"path": SAMPLE, "by": "colour"}),
    "search": ("search_slices", {"path": SAMPLE, "name": "matmul", "limit": 3}),
}


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    """Start the server over stdio, make every call of CALLS in one session, stop it."""
    tmp = tmp_path_factory.mktemp("mcp")
    root = tmp / "root"
    shutil.copytree(sample_path(), root / SAMPLE)
    shutil.copytree(sample_path(), tmp / "outside" / SAMPLE)
    (root / "link").symlink_to(tmp / "outside" / SAMPLE, target_is_directory=True)
    env = {**os.environ, "PROFINSIGHT_CACHE": str(tmp / "cache")}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "profinsight", "mcp", "--root", str(root)], env=env
    )
    out: dict = {}

    async def run():
        async with Client(params, read_timeout_seconds=120) as client:
            out["tools"] = (await client.list_tools()).tools
            out["resources"] = [str(r.uri) for r in (await client.list_resources()).resources]
            out["prompts"] = [p.name for p in (await client.list_prompts()).prompts]
            out["triage"] = (await client.get_prompt("triage", {"path": SAMPLE})).messages[0].content.text
            for key, (tool, args) in CALLS.items():
                res = await client.call_tool(tool, args)
                out[key] = (res.is_error, res.content[0].text)

    anyio.run(run)
    assert not (root / "stolen.csv").exists() and not list(tmp.rglob("stolen.csv"))
    return {"out": out, "root": root, "cache": tmp / "cache"}


def answer(session, key) -> dict:
    is_error, text = session["out"][key]
    assert not is_error, text
    return json.loads(text)


def refusal(session, key) -> str:
    is_error, text = session["out"][key]
    assert is_error, text
    assert "Traceback" not in text
    return text


@pytest.fixture(scope="module")
def notebook(session):
    """The notebook's view of the same profile, read from the cache the server wrote."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PROFINSIGHT_CACHE", str(session["cache"]))
        return profinsight.load(session["root"] / SAMPLE)


def test_every_registered_analysis_is_a_tool(session):
    names = {t.name for t in session["out"]["tools"]}
    assert set(all_analyses()) <= names
    fixed = {"discover", "load", "doctor", "advise", "compare", "ranks", "timeline_window", "search_slices", "sql"}
    assert fixed | {"viewer_link"} <= names
    op = next(t for t in session["out"]["tools"] if t.name == "op_summary")
    props = op.input_schema["properties"]
    assert op.input_schema["required"] == ["path"]
    assert props["by"]["enum"] == ["name", "type", "name_shape", "core"] and props["by"]["default"] == "name"
    assert props["kinds"]["default"] == "compute"
    assert all(t.annotations.read_only_hint for t in session["out"]["tools"])


def test_resources_and_triage_prompt(session):
    res = session["out"]["resources"]
    assert "profinsight://glossary" in res
    assert {f"profinsight://analyses/{n}" for n in all_analyses()} <= set(res)
    assert "profinsight://docs/views/op_summary" in res
    assert session["out"]["prompts"] == ["triage"]
    text = session["out"]["triage"]
    order = [
        text.index(w) for w in ("`load`", "`op_summary`", "`idle_gaps`", "`utilization`", "`memory_peaks`", "`advise`")
    ]
    assert order == sorted(order)


def test_load_returns_id_ranks_steps(session):
    got = answer(session, "load")
    assert got["profile_id"] == SAMPLE
    assert got["ranks"] == [0] and got["steps"] == [50]
    assert got["format"] == "ascend_text" and got["level"] == "Level1"
    assert got["tables"]["device_tasks"] == 539
    assert got["diagnostics"]["counts"] == {"info": 0, "warning": 0, "error": 0}


def _same(a, b) -> bool:
    if b is None or (isinstance(b, float) and math.isnan(b)) or b is profinsight_na():
        return a is None
    return a == b


def profinsight_na():
    import pandas as pd

    return pd.NA


def test_op_summary_equals_notebook(session, notebook):
    got = answer(session, "op_summary")
    df = notebook.op_summary(by="type")
    assert got["columns"] == list(df.columns)
    assert got["total_rows"] == len(df) and got["truncated"].startswith(f"truncated, {len(df) - 5} more rows")
    for row, (_, want) in zip(got["rows"], df.head(5).iterrows()):
        assert all(_same(a, b) for a, b in zip(row, want.tolist())), (row, want.tolist())
    # the vendor's op_statistic.csv sums to the compute time: ForeachAddList is the top type
    assert got["rows"][0][:2] == ["ForeachAddList", "AI_VECTOR_CORE"] and got["rows"][0][3] == 1959.079
    full = answer(session, "op_summary_all")
    assert "truncated" not in full and len(full["rows"]) == len(notebook.op_summary())


def test_advise_equals_notebook(session, notebook):
    got = answer(session, "advise")
    df = notebook.advise(lang="en")
    fired = df[df["severity"] != "not_applicable"]
    assert got["total_findings"] == len(fired)
    assert [f["rule"] for f in got["findings"]] == list(
        fired.sort_values("recoverable_us", ascending=False, kind="stable")["rule"]
    )
    by_rule = {f["rule"]: f for f in got["findings"]}
    for _, want in fired.iterrows():
        f = by_rule[want["rule"]]
        assert f["recoverable_us"] == float(want["recoverable_us"])
        assert f["share_of_step_ratio"] == float(want["share_of_step_ratio"])
        assert f["change"] == want["change"] and f["message"] == want["message"]
        assert f["evidence"]["window"] == want["evidence"]["window"]
    assert by_rule["idle_gaps"]["recoverable_us"] == 21269.815
    assert {n["rule"] for n in got["not_applicable"]} == set(df.loc[df["severity"] == "not_applicable", "rule"])


def test_sql_equals_notebook(session, notebook):
    got = answer(session, "sql")
    want = notebook.sql("SELECT kind, count(*) AS n, sum(dur_ns) AS ns FROM device_tasks GROUP BY kind ORDER BY kind")
    assert got["columns"] == ["kind", "n", "ns"]
    assert got["rows"] == [[k, int(n), int(s)] for k, n, s in want.itertuples(index=False)]
    assert dict((k, n) for k, n, _ in got["rows"]) == {
        "comm_task": 296,
        "communication": 4,
        "kernel": 187,
        "memcpy": 24,
        "other": 2,
        "sync": 26,
    }


def test_search_hits_relative_to_origin(session, notebook):
    got = answer(session, "search")
    first = notebook.sql("SELECT min(start_ns) AS s FROM device_tasks WHERE contains(lower(name), 'matmul')")["s"].iloc[
        0
    ]
    assert got["hits"][0]["start_ns"] == int(first) - got["origin_ns"]
    assert len(got["hits"]) == 3 and got["total"] >= 3


def test_write_statements_refused(session):
    assert "only SELECT statements run here; this is a COPY statement" in refusal(session, "copy")
    text = refusal(session, "read_file")
    assert "Permission Error" in text and "/etc/passwd" in text


@pytest.mark.parametrize("key", ["outside", "dotdot", "symlink"])
def test_paths_outside_the_root_refused(session, key):
    text = refusal(session, key)
    assert "is not a profile under the folders this server may read" in text
    assert "Fix: give a path under" in text and "--root FOLDER" in text


def test_bad_argument_is_a_tool_error(session):
    text = refusal(session, "bad_choice")
    assert "colour" in text and "'name', 'type', 'name_shape' or 'core'" in text
