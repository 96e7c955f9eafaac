"""Tools come from the one analysis registry: a newly registered analysis is a tool, with its
parameters as the JSON schema, answering through the SDK — with no MCP code of its own."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from profinsight import registry
from profinsight.agents.tools import catalogue
from profinsight.registry import Param, all_analyses, analysis

pytest.importorskip("mcp")

SAMPLE = "rank0_ascend_pt"
REPO = Path(__file__).resolve().parents[2]


def test_one_tool_per_registered_analysis():
    tools = {t.name: t for t in catalogue()}
    for name, a in all_analyses().items():
        t = tools[name]
        assert t.analysis == name
        args = {x.name: x for x in t.args}
        assert list(args) == ["path", *[p.name for p in a.params], "max_rows"]
        for p in a.params:
            assert (args[p.name].type, args[p.name].default, args[p.name].choices) == (p.type, p.default, p.choices)


@pytest.fixture
def new_analysis():
    """An analysis registered by a test, as a contributor would add one (CONTRIBUTING recipe 1)."""

    @analysis(
        "kernels_longer_than",
        title="Kernels longer than a threshold",
        params=(Param("min_us", float, 100.0, help="shortest kernel kept"),),
        columns={"name": "kernel", "dur_us": "its duration"},
    )
    def kernels_longer_than(profile, min_us=100.0):
        """Compute kernels at least ``min_us`` long, longest first."""
        df = profile.sql(
            f"SELECT name, dur_ns / 1e3 AS dur_us FROM device_tasks WHERE kind = 'kernel' AND dur_ns >= {min_us * 1e3} "
            "ORDER BY dur_ns DESC, name"
        )
        return pd.DataFrame(df)

    yield "kernels_longer_than"
    registry.ANALYSES.pop("kernels_longer_than")


def test_new_analysis_appears_as_a_tool(new_analysis, session):
    import anyio
    from mcp import Client

    from profinsight.agents.server import build

    async def run():
        async with Client(build(session)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            res = await client.call_tool(new_analysis, {"path": SAMPLE, "min_us": 500.0})
            return tools, res

    tools, res = anyio.run(run)
    schema = tools[new_analysis].input_schema
    assert tools[new_analysis].title == "Kernels longer than a threshold"
    assert schema["properties"]["min_us"]["type"] == "number" and schema["properties"]["min_us"]["default"] == 100.0
    assert schema["properties"]["min_us"]["description"] == "shortest kernel kept"
    assert not res.is_error, res.content[0].text
    got = json.loads(res.content[0].text)
    want = session.roots.profile(SAMPLE)[1].kernels_longer_than(min_us=500.0)
    assert got["columns"] == ["name", "dur_us"] and got["params"] == {"min_us": 500.0}
    assert got["rows"] == [[n, d] for n, d in want.itertuples(index=False)]
    assert got["rows"][0] == ["aclnnForeachAddListV2_ForeachAddListV2_ForeachAddList", 706.614]


def test_engine_errors_are_tool_errors(session):
    import anyio
    from mcp import Client

    from profinsight.agents.server import build

    async def run():
        async with Client(build(session)) as client:
            return [
                await client.call_tool("timeline_window", {"path": SAMPLE, "rank": 7}),
                await client.call_tool("load", {"path": ".hidden/" + SAMPLE}),
            ]

    bad_rank, hidden = anyio.run(run)
    assert bad_rank.is_error and "no rank 7 in this profile\nFix: ranks: 0" in bad_rank.content[0].text
    assert hidden.is_error and "is not a profile under the folders" in hidden.content[0].text
    for r in (bad_rank, hidden):
        assert "Traceback" not in r.content[0].text


def test_resources_read(session):
    import anyio
    from mcp import Client

    from profinsight.agents.server import build

    async def run():
        async with Client(build(session)) as client:
            return [
                (await client.read_resource(u)).contents[0].text
                for u in (
                    "profinsight://glossary",
                    "profinsight://analyses/op_summary",
                    "profinsight://docs/views/op_summary",
                )
            ]

    glossary, op, page = anyio.run(run)
    assert "share_of_step_ratio" in glossary and "## `device_tasks`" in glossary
    assert op.startswith("# op_summary: ") and "| `by` | str | 'name' | name, type, name_shape, core |" in op
    assert page == (REPO / "docs" / "views" / "op_summary.md").read_text(encoding="utf-8")


def test_lang_at_start_words_the_findings(root):
    from profinsight.agents import make_session

    zh = make_session([root], lang="zh").analysis("advise", SAMPLE, {}, 1)
    en = make_session([root], lang="en").analysis("advise", SAMPLE, {}, 1)
    assert zh["findings"][0]["rule"] == en["findings"][0]["rule"]
    assert zh["findings"][0]["title"] != en["findings"][0]["title"]
