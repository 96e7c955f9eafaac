"""The skip helper of tests/_support.py: a missing test dependency skips on a developer's machine
and fails under CI, where .ci/run installs everything."""

from __future__ import annotations

import pytest
from _support import in_ci, require, require_chromium


@pytest.mark.parametrize("value", ["true", "1", "yes"])
def test_a_missing_dependency_fails_under_ci(monkeypatch, value):
    monkeypatch.setenv("CI", value)
    assert in_ci()
    with pytest.raises(pytest.fail.Exception, match="not installed"):
        require("profinsight_no_such_module")


@pytest.mark.parametrize("value", [None, "", "0", "false"])
def test_a_missing_dependency_skips_elsewhere(monkeypatch, value):
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    assert not in_ci()
    with pytest.raises(pytest.skip.Exception, match="not installed"):
        require("profinsight_no_such_module")


def test_an_installed_dependency_is_the_module(monkeypatch):
    monkeypatch.setenv("CI", "true")
    assert require("json").dumps([1]) == "[1]"


def test_no_chromium_fails_under_ci(monkeypatch, tmp_path):
    import _support

    monkeypatch.setattr(_support, "CHROMIUM", str(tmp_path / "no-chromium"))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="no headless Chromium"):
        require_chromium()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="no headless Chromium"):
        require_chromium()
