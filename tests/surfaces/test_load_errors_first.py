"""Load errors first, on every surface that shows results (``analyze`` has its own tests in
test_cli.py): ``view`` and ``report`` say a failed import before any result and exit 1, their JSON
always carries the diagnostics; the notebook's display and the profile's repr lead with it; an
analysis that cannot run says why and which data it reads instead of the engine's exception."""

from __future__ import annotations

import json

import duckdb
import pytest

import profinsight
from profinsight.cli import main
from profinsight.errors import ProfileError
from profinsight.registry import Analysis

TEXT1 = "ascend_pt/text_level1/rank0_ascend_pt"


def _failed_import(tmp_path):
    """A Kineto trace whose event list is unreadable: the rank fails to import."""
    bad = tmp_path / "broken.pt.trace.json"
    bad.write_text('{"schemaVersion": 1, "traceEvents": [{"ph": "X", "ts": ', encoding="utf-8")
    return bad


def test_view_says_the_failed_import_first_and_exits_1(tmp_path, capsys):
    assert main(["view", "op_summary", str(_failed_import(tmp_path))]) == 1
    cap = capsys.readouterr()
    assert cap.err.startswith("Import failed\nERROR trace-invalid")
    assert "broken.pt.trace.json" in cap.err and "Nothing loaded" in cap.err
    assert cap.out == ""  # no empty table that would read as "nothing here"


def test_view_json_always_carries_the_diagnostics(tmp_path, fixtures, capsys):
    assert main(["view", "op_summary", str(_failed_import(tmp_path)), "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["import_failed"] is True and data["rows"] == []
    assert data["diagnostics"][0]["severity"] == "error" and data["diagnostics"][0]["code"] == "trace-invalid"
    level0 = fixtures / "ascend_pt/text_level0/rank0_ascend_pt"
    assert main(["view", "op_summary", str(level0), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["import_failed"] is False and len(data["rows"]) > 0
    assert {d["code"] for d in data["diagnostics"]} == {
        "level0-no-comm-analysis",
        "pmu-not-collected",
        "type-from-name",
    }


def test_report_page_leads_with_the_failure_and_exits_1(tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["report", str(_failed_import(tmp_path)), "-o", str(out)]) == 1
    page = out.read_text(encoding="utf-8")
    assert "id='import-failed'" in page and "trace-invalid" in page
    assert "Nothing loaded, so there is no report" in page
    assert "No rule fired" not in page and "id='verdict'" not in page
    assert capsys.readouterr().err.startswith("Import failed")


@pytest.mark.slow
def test_report_of_a_good_profile_has_no_error_block(fixtures, tmp_path):
    out = tmp_path / "r.html"
    assert main(["report", str(fixtures / TEXT1), "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "id='import-failed'" not in page and "id='verdict'" in page


def test_the_notebook_and_repr_lead_with_the_failure(tmp_path):
    p = profinsight.load(_failed_import(tmp_path))
    html = p._repr_html_()
    assert html.index("Import failed") < html.index("profinsight profile")
    assert "trace-invalid" in html.split("profinsight profile")[0]
    text = repr(p)
    assert text.splitlines()[1].startswith("  IMPORT FAILED") and "trace-invalid" in text.splitlines()[1]


def _boom(profile):
    """An analysis whose query the engine refuses (as a damaged value once made op_summary do)."""
    raise duckdb.ConversionException("Conversion Error: Type INT64 with value 9223372036854775807 can't be cast")


def test_an_analysis_that_cannot_run_says_why_and_what_it_reads(fixtures, monkeypatch):
    from profinsight import registry

    a = Analysis("boom_test", _boom, "Boom", "")
    monkeypatch.setitem(registry.ANALYSES, "boom_test", a)
    p = profinsight.load(fixtures / "kineto" / "cpu_only.json.gz")
    with pytest.raises(ProfileError) as err:
        a.run(p)
    msg = str(err.value)
    assert msg.startswith("boom_test cannot run on this profile: ConversionException: Conversion Error")
    assert "profinsight doctor PATH" in err.value.fix
    assert isinstance(err.value.__cause__, duckdb.ConversionException)  # --debug still shows it


def test_the_cli_never_shows_the_engine_exception(fixtures, monkeypatch, capsys):
    from profinsight import registry

    monkeypatch.setitem(registry.ANALYSES, "boom_test", Analysis("boom_test", _boom, "Boom", ""))
    assert main(["view", "boom_test", str(fixtures / "kineto" / "cpu_only.json.gz")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("profinsight: boom_test cannot run on this profile") and "internal error" not in err
    assert "Traceback" not in err


@pytest.mark.slow
def test_ranks_and_compare_json_carry_the_diagnostics(fixtures, capsys):
    assert main(["ranks", str(fixtures / "ascend_pt/text_level0"), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {d["code"] for d in data["diagnostics"]} == {"summary-tier"}
    k = fixtures / "kineto"
    assert main(["compare", str(k / "compare_base.json.gz"), str(k / "cpu_only.json.gz"), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["diagnostics"]["compare_base.json.gz"] == []
    assert {d["code"] for d in data["diagnostics"]["cpu_only.json.gz"]} == {"no-device-activity", "partial-ranks"}
