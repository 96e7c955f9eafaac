"""Terminal tables that a person can read (issue 17): units per column, epoch timestamps and
chart labels left to csv/json, long names cut with an ellipsis, key columns kept, few-row views
transposed, ``view advise`` as numbered findings — on the real fixtures."""

from __future__ import annotations

import pandas as pd
import pytest

import profinsight
from profinsight.cli import main
from profinsight.render.terminal import cell, layout, unit_of


@pytest.fixture(scope="module")
def level1(fixtures):
    return profinsight.load(fixtures / "ascend_pt/text_level1")


def test_units_follow_the_column():
    assert unit_of("dur_us", pd.Series([1318.826]))[:2] == ("dur us", 1.0)
    assert unit_of("step_us", pd.Series([136581.009]))[:2] == ("step ms", 1e3)
    assert unit_of("peak_bytes", pd.Series([3 * 2**30]))[:2] == ("peak GiB", 2.0**30)
    assert unit_of("busy_ratio", pd.Series([0.812]))[:2] == ("busy %", 0.01)
    assert cell(136581.009, "time", 1e3) == "136.6" and cell(0.8117, "ratio", 0.01) == "81.17"
    assert cell({"a": 1, "b": [1, 2]}, "text", 1.0) == '{"a":1,"b":[1,2]}'
    assert cell("x" * 50, "text", 1.0) == "x" * 39 + "…"


def test_a_per_step_view_is_transposed_when_its_columns_do_not_fit(level1):
    u = pd.DataFrame(level1.utilization())
    lay = layout(u, 100)
    assert lay["transposed"] and lay["headers"] == ["metric", "rank 0 step 50", "rank 1 step 50"]
    rows = {r[0]: r[1:] for r in lay["rows"]}
    assert rows["step ms"] == ["136.6", "131.9"]  # step_breakdown's step_us, in ms
    assert rows["busy %"] == [f"{100 * v:.2f}" for v in u["busy_ratio"]] == ["81.15", "79.78"]
    assert "label" in lay["hidden"]
    assert all(len(r) == 3 for r in lay["rows"]) and len(lay["rows"]) > 20  # every figure, one line each


def test_idle_gaps_fit_without_epoch_timestamps(level1):
    g = pd.DataFrame(level1.idle_gaps())
    lay = layout(g, 120)
    assert not lay["transposed"] and lay["headers"][:4] == ["rank", "step", "position", "dur us"]
    assert {"start_ns", "end_ns", "label"} <= set(lay["hidden"])
    assert lay["rows"][1][:4] == ["0", "50", "in_step", "1,318.8"]
    width = sum(max(len(h), *(len(r[i]) for r in lay["rows"])) + 2 for i, h in enumerate(lay["headers"]))
    assert width <= 120
    lay = layout(g, 120, ["rank", "dur_us", "host_api", "host_api_overlap_us"])
    assert lay["rows"][1] == ["0", "1,318.8", "aclopCompileAndExecute", "1,126.1"]


def test_long_kernel_names_give_way_to_the_figures(fixtures):
    ops = pd.DataFrame(profinsight.load(fixtures / "kineto/gpu_alexnet.json.gz").op_summary())
    lay = layout(ops, 100)
    assert "total us" in lay["headers"]
    assert max(len(r[lay["headers"].index("name")]) for r in lay["rows"]) <= 16
    assert any(r[lay["headers"].index("name")].endswith("…") for r in lay["rows"])


def test_cli_view_columns_and_numbered_findings(fixtures, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    path = str(fixtures / "ascend_pt/text_level1")
    assert main(["view", "idle_gaps", path, "--columns", "rank,dur_us,host_api"]) == 0
    out = capsys.readouterr().out
    assert "aclopCompileAndExecute" in out and "start_ns" not in out
    assert main(["view", "idle_gaps", path, "--columns", "rank,nope"]) == 2
    assert "no column(s) nope" in capsys.readouterr().err
    assert main(["view", "advise", path, "--lang", "en"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1. Device idle in long gaps") and "\n2. Communication not hidden by compute" in out
    assert "{'" not in out and "recoverable 21.66 ms per step (16.1% of the step)" in out


def test_view_help_lists_the_registry(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["view", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "idle_gaps" in out and "--min-us float (default 50.0)" in out and "--columns" in out
