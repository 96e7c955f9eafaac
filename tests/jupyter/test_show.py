"""``Profile.show()``: the output it displays (a small payload for the JupyterLab extension next
to the HTML summary for everything else) and what it does outside a notebook."""

from __future__ import annotations

import json

import pytest

import profinsight
from profinsight.jupyter.show import SHOW_MIME, show_bundle

pytestmark = pytest.mark.jupyter


def test_bundle_carries_the_path_and_an_inline_fallback(fixtures):
    p = profinsight.load(fixtures / "kineto" / "cpu_only.json.gz")
    b = show_bundle(p, "timeline")
    data = b[SHOW_MIME]
    assert data["path"] == str((fixtures / "kineto" / "cpu_only.json.gz").resolve())
    assert data["view"] == "timeline" and data["ranks"] == p.ranks and len(data["nonce"]) == 32
    assert data["created_ms"] > 1_600_000_000_000
    json.dumps(data)  # JSON-able as a display payload must be
    assert "profinsight profile" in b["text/html"] and b["text/plain"].startswith("<Profile")
    # two calls are two outputs: a re-rendered old output must not open a tab again
    assert show_bundle(p)[SHOW_MIME]["nonce"] != data["nonce"]


def test_show_outside_a_notebook_prints(fixtures, capsys):
    p = profinsight.load(fixtures / "kineto" / "cpu_only.json.gz")
    assert p.show() is None
    out = capsys.readouterr().out
    assert "<Profile kineto" in out and "profinsight serve" in out
