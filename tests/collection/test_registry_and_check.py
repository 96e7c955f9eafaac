"""Registering existing profiles, name resolution (an existing path wins) and `check` budgets."""

from __future__ import annotations

import json
import shutil

import pytest

import profinsight
from profinsight.cli import main


@pytest.fixture(scope="module")
def _registered_once(fixtures, tmp_path_factory):
    """Registered once per module (loading is the slow part); its own cache folder."""
    folder = tmp_path_factory.mktemp("exp")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PROFINSIGHT_CACHE", str(tmp_path_factory.mktemp("cache")))
        base = profinsight.register("base", fixtures / "kineto/compare_base.json.gz", notes="before", folder=folder)
        test = profinsight.register("test", fixtures / "kineto/compare_test.json.gz", tags=["ci"], folder=folder)
    return folder, base, test


@pytest.fixture
def registered(_registered_once, monkeypatch):
    monkeypatch.setenv("PROFINSIGHT_EXPERIMENTS", str(_registered_once[0]))
    return _registered_once


def test_register_keeps_headline_metrics(registered):
    _, base, test = registered
    assert base["step_us"] == pytest.approx(137016.5) and base["step_source"] == "step_us"
    assert test["step_us"] == pytest.approx(78559.0)
    assert base["top_op_type"] == "vectorized_elementwise_kernel"
    assert 0 < base["busy_ratio"] < 1 and base["metrics_error"] is None
    assert base["backend"] == "registered" and base["notes"] == "before" and test["tags"] == ["ci"]
    df = profinsight.experiments()
    assert list(df["name"]) == ["base", "test"]


def test_register_rejects_what_does_not_load(tmp_path):
    with pytest.raises(profinsight.ProfileError):
        profinsight.register("nothing", tmp_path / "missing", folder=tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(profinsight.ProfileError):
        profinsight.register("empty", tmp_path / "empty", folder=tmp_path)
    assert profinsight.experiments(tmp_path).empty


def test_an_existing_path_wins_over_a_name(registered, tmp_path, monkeypatch, fixtures):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "base").mkdir()  # a folder named like the experiment
    shutil.copy(fixtures / "kineto/cpu_only.json.gz", tmp_path / "base")
    assert profinsight.load("base").format == "kineto" and profinsight.load("base").steps == [551]
    assert profinsight.load("test").steps == [1009, 1010]


def test_check_exits_1_on_a_crafted_regression(registered, capsys):
    assert main(["check", "base", "--baseline", "test", "--max-step-regression", "5%"]) == 1
    out = capsys.readouterr().out
    assert "FAIL step-regression" in out and "+74.4%" in out and "by 69.4% points" in out


def test_check_passes_within_budget(registered, capsys, fixtures):
    assert main(["check", "test", "--baseline", "base", "--max-step-regression", "5%"]) == 0
    assert (
        main(
            [
                "check",
                str(fixtures / "kineto/compare_base.json.gz"),
                "--baseline",
                "base",
                "--max-step-regression",
                "0.0",
            ]
        )
        == 0
    )
    assert "all budgets met" in capsys.readouterr().out


def test_check_op_share_budgets(registered, capsys):
    assert main(["check", "test", "--max-op-share", "vectorized_elementwise_kernel=50%", "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False and data["results"][0]["value"] == pytest.approx(1.0)
    assert main(["check", "test", "--max-op-share", "MatMul=0.2"]) == 0
    assert "type not found" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "test"],  # no budget
        ["check", "test", "--max-step-regression", "5%"],  # no baseline
        ["check", "test", "--baseline", "base", "--max-step-regression", "five"],
        ["check", "test", "--max-op-share", "MatMul"],
        ["check", "no-such-run", "--baseline", "base", "--max-step-regression", "5%"],
        ["check", "test", "--baseline", "no-such-run", "--max-step-regression", "5%"],
    ],
)
def test_check_bad_input_exits_2(registered, argv, capsys):
    assert main(argv) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_experiments_cli_empty_and_table(registered, tmp_path, capsys):
    folder, _, _ = registered
    assert main(["experiments", str(tmp_path / "none")]) == 0
    assert "no experiments" in capsys.readouterr().out
    assert main(["experiments", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "base" in out and "test" in out and "137,016.5" in out
