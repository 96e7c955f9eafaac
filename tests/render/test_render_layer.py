"""One render layer: the pages share one stylesheet and shell, and the comparison objects (which
sit below the render layer) draw through the display slots of :mod:`profinsight.hooks`."""

from __future__ import annotations

import subprocess
import sys

import pytest

import profinsight
from profinsight import hooks, render
from profinsight.render import compare as C
from profinsight.render import ranks as K
from profinsight.render import record as D
from profinsight.render.styles import PAGE_CSS, page

RUN = "ascend_pt/text_level1"


@pytest.fixture(scope="module")
def prof(fixtures):
    return profinsight.load(fixtures / RUN)


def _round(**over) -> dict:
    r = {
        "round": 1,
        "name": "baseline",
        "id": 1,
        "created": "2025-01-01T00:00:00",
        "notes": None,
        "tags": [],
        "params": {},
        "git_commit": None,
        "path": "/nowhere",
        "headline": {"step_us": 1234.5},
        "steps": [],
        "ops": [],
        "findings": [],
        "load_error": "does not load",
    }
    return {**r, **over}


def test_every_page_uses_the_shared_shell(prof):
    cmp = profinsight.compare(prof, prof, names=["a", "b"])
    rec = D.render_html({"lang": "en", "folder": "/x", "rounds": [_round()]})
    pages = {
        "compare": C.comparison_page(cmp),
        "ranks": K.ranks_page(profinsight.ranks_report(prof)),
        "record": rec,
    }
    for name, text in pages.items():
        assert text.startswith("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"), name
        assert f"<style>{PAGE_CSS}</style>" in text and text.endswith("</body></html>"), name
    assert "1,234.5" in rec and "does not load" in rec
    assert page("t", "<p>x</p>").count("<style>") == 1
    assert "url(" not in PAGE_CSS and "@import" not in PAGE_CSS  # pages open offline


def test_comparisons_draw_through_the_display_slots(prof, monkeypatch):
    for name in ("comparison_html", "framework_html", "ranks_html"):
        assert name in hooks.NAMES
    cmp = profinsight.compare(prof, prof, names=["a", "b"])
    rep = profinsight.ranks_report(prof)
    render.install()
    assert cmp._repr_html_() == C.comparison_html(cmp) and "<svg" in cmp._repr_html_()
    assert rep._repr_html_() == K.ranks_html(rep)
    monkeypatch.setattr(hooks, "_SLOTS", {})  # no surface installed: plain text, no error
    assert cmp._repr_html_().startswith("<pre>&lt;Comparison of 2 runs")
    assert rep._repr_html_().startswith("<pre>&lt;RanksReport")


def test_unknown_slot_is_refused():
    with pytest.raises(KeyError, match="no display slot"):
        hooks.provide("report_html", lambda r: "")


def test_collection_summary_html():
    out = D.collection_html({"name": "run", "step_us": 1234.5678, "busy_ratio": 0.5, "top": None})
    assert "<th style='text-align:left'>name</th><td>run</td>" in out
    assert "1,234.6" in out and "0.5000" in out and "top" not in out


def test_a_profile_built_below_the_root_names_still_draws_richly():
    """``profinsight.testing.profile_from_tables`` touches no public name of the package root,
    which is where the surfaces were installed: its results drew as bare DataFrames in a fresh
    process.  The first empty display slot now installs them."""
    code = (
        "import pandas as pd\n"
        "from profinsight.testing import profile_from_tables\n"
        "t = pd.DataFrame({'rank': [0], 'device': [0], 'stream': [1], 'name': ['K'], 'type': ['Add'],"
        " 'start_ns': [0], 'dur_ns': [1000]})\n"
        "print(profile_from_tables({'device_tasks': t}).advise(lang='en')._repr_html_())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.startswith("<div class='profinsight-result'>") and "<div class='profinsight-findings'" in out, out[:300]
