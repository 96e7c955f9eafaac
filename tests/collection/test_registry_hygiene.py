"""Registry hygiene (issue 17): an experiment's top finding is a finding that fired, never a
rule that does not apply; a collection that recorded no step is not registered, and the error
names the schedule that would have captured one."""

from __future__ import annotations

import json

import pytest

import profinsight
from profinsight.cli import main
from profinsight.collection.registry import top_finding
from profinsight.collection.session import _register, schedule_spec, step_problem
from profinsight.errors import ProfileError


def test_top_finding_is_only_a_fired_finding(fixtures, tmp_path, capsys):
    p = profinsight.load(fixtures / "kineto/rank_non_gpu.json.gz")
    adv = p.advise(lang="en")
    assert adv["severity"].iloc[0] == "not_applicable"  # no rule fires on this CPU trace
    assert top_finding(p) is None
    profinsight.register("cpu", fixtures / "kineto/rank_non_gpu.json.gz", folder=tmp_path)
    assert main(["experiments", str(tmp_path), "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["top_finding"] is None
    gpu = profinsight.load(fixtures / "kineto/gpu_alexnet.json.gz")
    assert top_finding(gpu) == gpu.advise(lang="en")["title"].iloc[0] != ""


def test_a_collection_without_steps_is_refused_with_the_schedule_that_fits(fixtures, tmp_path, capsys):
    stepless = profinsight.load(fixtures / "kineto/gpu_alexnet.json.gz")  # no ProfilerStep at all
    schedule = schedule_spec(3)  # wait 1, warmup 1, active 3: needs 5 steps
    err = step_problem(stepless, "out/trace.json", schedule, 2)
    assert isinstance(err, ProfileError) and "records no step" in str(err)
    assert "needs 5" in err.fix and "steps={'wait': 0, 'warmup': 1, 'active': 1}" in err.fix
    assert "run.step()" in step_problem(stepless, "x", schedule, 0).fix
    assert step_problem(profinsight.load(fixtures / "kineto/cpu_only.json.gz"), "x", schedule, 5) is None
    with pytest.raises(ProfileError, match="records no step"):
        _register("nostep", fixtures / "kineto/gpu_alexnet.json.gz", folder=tmp_path, strict=False, steps=(schedule, 2))
    assert main(["experiments", str(tmp_path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == []  # nothing registered
