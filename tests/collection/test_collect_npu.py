"""The torch_npu path without an NPU: a fake ``torch_npu`` in ``sys.modules`` records what
profinsight asks of it.  This checks argument mapping, output discovery and the offline-parse
call; it is NOT a test on Ascend hardware (that path is untested on hardware)."""

from __future__ import annotations

import enum
import sys
import types

import pytest

import profinsight
from profinsight.collection import session


class _Level(enum.Enum):
    Level0 = 0
    Level1 = 1
    Level2 = 2


class _AiC(enum.Enum):
    PipeUtilization = 0
    ArithmeticUtilization = 1


class _Export(enum.Enum):
    Text = "text"
    Db = "db"


@pytest.fixture
def fake_npu(monkeypatch):
    calls = {"profile": [], "schedule": [], "handler": [], "analyse": [], "steps": 0, "config": []}
    prof_mod = types.ModuleType("torch_npu.profiler")
    inner = types.ModuleType("torch_npu.profiler.profiler")

    class Activity:
        CPU, NPU = "CPU", "NPU"

    class ExperimentalConfig:
        def __init__(self, **kw):
            calls["config"].append(kw)
            self.kw = kw

    class Profile:
        def __init__(self, **kw):
            calls["profile"].append(kw)
            self.kw = kw

        def __enter__(self):
            return self

        def step(self):
            calls["steps"] += 1

        def __exit__(self, *exc):  # the trace handler writes the rank folder, unparsed
            self.kw["on_trace_ready"](self)

    def schedule(**kw):
        calls["schedule"].append(kw)
        return ("schedule", kw)

    def tensorboard_trace_handler(dir_name, worker_name=None, analyse_flag=True):
        calls["handler"].append({"dir_name": dir_name, "analyse_flag": analyse_flag})

        def ready(_prof):
            import pathlib

            (pathlib.Path(dir_name) / "host_123_20260101000000_ascend_pt" / "FRAMEWORK").mkdir(parents=True)

        return ready

    def analyse(profiler_path, max_process_number=None):
        calls["analyse"].append(profiler_path)

    prof_mod.ProfilerActivity = Activity
    prof_mod.ProfilerLevel, prof_mod.AiCMetrics, prof_mod.ExportType = _Level, _AiC, _Export
    prof_mod._ExperimentalConfig = ExperimentalConfig
    prof_mod.profile, prof_mod.schedule = Profile, schedule
    prof_mod.tensorboard_trace_handler = tensorboard_trace_handler
    inner.analyse = analyse
    prof_mod.profiler = inner
    top = types.ModuleType("torch_npu")
    top.__version__ = "2.13.0.post1"
    top.profiler = prof_mod
    monkeypatch.setitem(sys.modules, "torch_npu", top)
    monkeypatch.setitem(sys.modules, "torch_npu.profiler", prof_mod)
    monkeypatch.setitem(sys.modules, "torch_npu.profiler.profiler", inner)
    return calls


def test_npu_defaults_and_offline_parse(fake_npu, tmp_path):
    with pytest.warns(UserWarning):  # the unparsed fake folder does not load: metrics are skipped
        with profinsight.collect("npu-run", steps=2, folder=tmp_path, show=False) as run:
            for _ in range(4):
                run.step()
    assert run.backend == "torch_npu" and fake_npu["steps"] == 4
    kw = fake_npu["profile"][0]
    assert kw["activities"] == ["CPU", "NPU"]
    assert kw["record_shapes"] and kw["profile_memory"] and kw["with_stack"]
    assert fake_npu["schedule"] == [{"wait": 1, "warmup": 1, "active": 2, "repeat": 1, "skip_first": 0}]
    assert fake_npu["config"] == [{"profiler_level": _Level.Level1}]
    assert fake_npu["handler"] == [{"dir_name": str(run.dir), "analyse_flag": False}]
    assert fake_npu["analyse"] == [str(run.dir)]  # offline parse of the whole output folder
    assert run.path.name == "host_123_20260101000000_ascend_pt" and run.path.parent == run.dir
    row = profinsight.experiments(tmp_path).iloc[0]
    assert row["name"] == "npu-run" and row["backend"] == "torch_npu"
    assert row["versions"]["torch_npu"] == "2.13.0.post1"
    assert row["metrics_error"].startswith("load:")


def test_npu_options_map_one_to_one(fake_npu, tmp_path):
    kw = session.npu_arguments(
        sys.modules["torch_npu.profiler"],
        tmp_path,
        session.schedule_spec(3),
        {
            "profiler_level": "Level2",
            "aic_metrics": "PipeUtilization",
            "export_type": "Db",
            "l2_cache": True,
            "with_stack": False,
            "with_modules": True,
        },
    )
    assert fake_npu["config"][-1] == {
        "profiler_level": _Level.Level2,
        "aic_metrics": _AiC.PipeUtilization,
        "export_type": [_Export.Db],
        "l2_cache": True,
    }
    assert kw["with_stack"] is False and kw["with_modules"] is True
    with pytest.raises(profinsight.ProfileError, match="ProfilerLevel"):
        session.npu_arguments(
            sys.modules["torch_npu.profiler"], tmp_path, session.schedule_spec(3), {"profiler_level": "Level9"}
        )
    own = object()
    kw = session.npu_arguments(
        sys.modules["torch_npu.profiler"], tmp_path, session.schedule_spec(3), {"experimental_config": own}
    )
    assert kw["experimental_config"] is own


def test_schedule_and_option_validation(tmp_path):
    assert session.schedule_spec((0, 2, 4))["active"] == 4
    assert session.total_steps(session.schedule_spec(dict(wait=1, warmup=1, active=2, repeat=2))) == 8
    for bad in ({"waits": 1}, 0, "3", True):
        with pytest.raises(profinsight.ProfileError):
            session.schedule_spec(bad)
    with pytest.raises(profinsight.ProfileError, match="unknown profiler option"):
        profinsight.collect("x", folder=tmp_path, record_shape=True)


def test_find_output(tmp_path):
    assert session.find_output(tmp_path / "missing") is None
    assert session.find_output(tmp_path) is None
    (tmp_path / "w.1.pt.trace.json").write_text("{}")
    assert session.find_output(tmp_path) == tmp_path / "w.1.pt.trace.json"
    (tmp_path / "a_ascend_pt").mkdir()
    assert session.find_output(tmp_path) == tmp_path / "a_ascend_pt"
    (tmp_path / "b_ascend_pt").mkdir()
    assert session.find_output(tmp_path) == tmp_path  # several ranks: the run folder


def test_import_does_not_import_torch():
    import subprocess

    code = (
        "import sys, profinsight, profinsight.collection, profinsight.cli; profinsight.collect; "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
