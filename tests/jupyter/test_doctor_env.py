"""``profinsight doctor --env``: the JupyterLab extension (installed, enabled, same version as
the package), torch / torch_npu / CANN, and the environment variables that distort profiles."""

from __future__ import annotations

import json

import pytest
from _support import require

from profinsight import __version__
from profinsight.cli import main
from profinsight.cli.env_checks import environment_extra_checks, framework_checks, jupyter_checks

require("jupyter_server")
pytestmark = pytest.mark.jupyter


def codes(diags):
    return {d.code: d for d in diags}


@pytest.fixture
def jupyter_dirs(tmp_path, monkeypatch):
    """An isolated Jupyter config dir and an extra data path searched first."""
    cfg, data = tmp_path / "cfg", tmp_path / "data"
    cfg.mkdir()
    data.mkdir()
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(cfg))
    monkeypatch.setenv("JUPYTER_PATH", str(data))
    return cfg, data


def _fake_labextension(data, version):
    ext = data / "labextensions" / "profinsight"
    ext.mkdir(parents=True)
    (ext / "package.json").write_text(json.dumps({"name": "profinsight", "version": version}))
    return ext


def test_labextension_version_mismatch_is_a_warning(jupyter_dirs):
    cfg, data = jupyter_dirs
    ext = _fake_labextension(data, "0.0.1")
    found = codes(jupyter_checks())
    assert found["labextension"].file == str(ext)
    assert found["labextension-version"].severity == "warning" and __version__ in found["labextension-version"].message


def test_matching_labextension_is_fine(jupyter_dirs):
    cfg, data = jupyter_dirs
    _fake_labextension(data, __version__)
    found = codes(jupyter_checks())
    assert "labextension" in found and "labextension-version" not in found and "labextension-missing" not in found


def test_disabled_labextension_and_server_extension(jupyter_dirs):
    cfg, data = jupyter_dirs
    _fake_labextension(data, __version__)
    (cfg / "labconfig").mkdir()
    (cfg / "labconfig" / "page_config.json").write_text(json.dumps({"disabledExtensions": {"profinsight": True}}))
    (cfg / "jupyter_server_config.json").write_text(
        json.dumps({"ServerApp": {"jpserver_extensions": {"profinsight.jupyter": False}}})
    )
    found = codes(jupyter_checks())
    assert found["labextension-disabled"].severity == "warning"
    assert found["server-extension-disabled"].severity == "warning"
    assert "jupyter server extension enable profinsight.jupyter" in found["server-extension-disabled"].fix


def test_cann_and_profiling_env_vars(tmp_path, monkeypatch):
    home = tmp_path / "ascend-toolkit" / "latest"
    (home / "x86_64-linux").mkdir(parents=True)
    (home / "x86_64-linux" / "ascend_toolkit_install.info").write_text(
        "package_name=Ascend-cann-toolkit\nversion=8.0.RC3\n"
    )
    monkeypatch.setenv("ASCEND_HOME_PATH", str(home))
    monkeypatch.setenv("ASCEND_LAUNCH_BLOCKING", "1")
    monkeypatch.setenv("ASCEND_GLOBAL_LOG_LEVEL", "0")
    monkeypatch.setenv("ASCEND_RT_VISIBLE_DEVICES", "0,1")
    found = codes(environment_extra_checks())
    assert found["cann"].message.startswith("CANN 8.0.RC3")
    assert (
        found["launch-blocking"].severity == "warning"
        and "unset ASCEND_LAUNCH_BLOCKING" in found["launch-blocking"].fix
    )
    assert found["verbose-logging"].severity == "warning"
    assert "ASCEND_RT_VISIBLE_DEVICES=0,1" in found["env"].message or any(
        "ASCEND_RT_VISIBLE_DEVICES" in d.message for d in environment_extra_checks()
    )
    assert "torch" in codes(framework_checks())


def test_doctor_env_reports_them_and_stays_zero_without_errors(jupyter_dirs, capsys):
    cfg, data = jupyter_dirs
    _fake_labextension(data, __version__)
    assert main(["doctor", "--env", "--format", "json"]) == 0
    out = {d["code"] for d in json.loads(capsys.readouterr().out)}
    assert {"jupyter", "labextension", "torch"} <= out
