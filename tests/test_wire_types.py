"""The wire shapes are declared once (src/profinsight/schema/wire.py): the viewer's generated
TypeScript types must equal what the declarations generate, and what Python actually sends must
have the declared keys."""

from __future__ import annotations

import ast
import dataclasses
import typing
from pathlib import Path

import pandas as pd

from profinsight.schema import wire

REPO = Path(__file__).resolve().parents[1]


def test_generated_typescript_is_committed_and_current():
    committed = (REPO / wire.TS_PATH).read_text(encoding="utf-8")
    assert committed == wire.typescript(), (
        f"{wire.TS_PATH} drifted from src/profinsight/schema/wire.py: run `python -m profinsight.schema.wire`"
    )


def test_generator_writes_the_file(tmp_path):
    out = tmp_path / "wire.ts"
    assert wire.main(["-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == wire.typescript()


def test_wire_module_sits_on_the_bottom_floor():
    tree = ast.parse(Path(wire.__file__).read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            imported.add("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Import):
            imported.update(a.name for a in node.names)
    ours = {m for m in imported if m.startswith(".") or m.startswith("profinsight")}
    assert ours <= {".errors", "profinsight.schema.errors"}, ours


def test_every_wire_type_has_a_typescript_form():
    text = wire.typescript()
    for td in wire.WIRE_TYPES:
        assert f"export interface {td.__name__} {{" in text
        for key in typing.get_type_hints(td):
            assert f"  {key}" in text


def test_unknown_annotation_is_refused():
    class Odd(typing.TypedDict):
        when: complex

    try:
        wire._interface(Odd)
    except TypeError as e:
        assert "complex" in str(e)
    else:
        raise AssertionError("a type without a TypeScript form was accepted")


def test_chart_registration_is_the_wire_chart():
    """Analyses register with the very Chart that defines the wire spec: one definition."""
    from profinsight.registry import Chart

    assert Chart is wire.Chart
    fields = {f.name for f in dataclasses.fields(Chart)}
    assert fields == set(typing.get_type_hints(wire.ChartSpec))


def _keys(td) -> tuple[set[str], set[str]]:
    return set(td.__required_keys__), set(td.__optional_keys__)


def test_analysis_payload_has_the_declared_keys():
    import profinsight.api  # noqa: F401 - fills the analysis table
    from profinsight.registry import all_analyses
    from profinsight.render.notebook import payload

    a = next(a for a in all_analyses().values() if a.chart is not None)
    df = pd.DataFrame({a.chart.x: ["x"], **{y: [1.0] for y in a.chart.y}})
    p = payload(df, a, {"top": 3})
    required, optional = _keys(wire.AnalysisPayload)
    assert required <= set(p) <= required | optional
    c_required, c_optional = _keys(wire.ChartSpec)
    assert c_required <= set(p["chart"]) <= c_required | c_optional
    assert p["chart"] == a.chart.spec()


def test_analysis_description_has_the_declared_keys():
    import profinsight.api  # noqa: F401 - fills the analysis table
    from profinsight.registry import all_analyses
    from profinsight.server.handlers import describe_analysis

    for a in all_analyses().values():
        d = describe_analysis(a)
        required, optional = _keys(wire.AnalysisInfo)
        assert required <= set(d) <= required | optional
        p_required, _ = _keys(wire.ParamInfo)
        assert all(set(p) == p_required for p in d["params"])
        if d["chart"] is not None:
            assert set(d["chart"]) == set(typing.get_type_hints(wire.ChartSpec))
            assert d["chart"] == wire.Chart(**dataclasses.asdict(a.chart)).spec()


def test_compare_answer_has_the_declared_keys(fixtures):
    """``GET api/compare`` sends ``Comparison.to_dict()``: its keys and its runs' keys are the
    declared ones, so the Compare view reads a typed answer (not untyped JSON)."""
    import json

    import profinsight

    k = fixtures / "kineto"
    d = json.loads(
        json.dumps(
            profinsight.compare(
                k / "compare_base.json.gz", k / "compare_test.json.gz", names=["base", "test"]
            ).to_dict()
        )
    )
    required, optional = _keys(wire.CompareAnswer)
    assert required <= set(d) <= required | optional
    run_keys, _ = _keys(wire.CompareRun)
    assert [set(r) for r in d["runs"]] == [run_keys, run_keys]
    assert [r["name"] for r in d["runs"]] == ["base", "test"]
    assert list(d["waterfalls"]) == ["base → test"] and set(d["op_changes"]) == {"type", "name"}
    assert all(isinstance(v, dict) for v in d["verdicts"]) and all(isinstance(r, dict) for r in d["summary"])


def test_every_view_reads_typed_answers():
    """Views reach the server only through ts/app/api.ts, whose every call returns a generated
    wire type: no view fetches by itself, and no answer is declared outside the generated file."""
    ts = REPO / "ts" / "app"
    api = (ts / "api.ts").read_text(encoding="utf-8")
    assert "Promise<unknown>" not in api.split("export class Api {")[1]
    calls = [line for line in api.split("export class Api {")[1].splitlines() if "Promise<" in line]
    generated = set(wire.typescript().split("export interface ")[1:])
    names = {g.split(" ", 1)[0] for g in generated}
    for line in calls:
        inner = line.split("Promise<", 1)[1].split(">", 1)[0]
        assert inner in names or inner.startswith("TimelineAnswers[") or inner == "T", line
    for view in (ts / "views").glob("*.ts"):
        text = view.read_text(encoding="utf-8")
        assert "fetch(" not in text and "XMLHttpRequest" not in text, view.name
