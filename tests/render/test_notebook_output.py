"""Notebook output as good as the viewer (static form: plain HTML and inline SVG, no script):
``advise()`` as finding cards with their evidence as readable lists, ``compare(...)`` and
``waterfall()`` as charts with people's words and units -- checked against the analyses' own
values, and rendered in Chromium with JavaScript off for the screenshots."""

from __future__ import annotations

import re

import pytest
from _support import CHROMIUM, FLAGS, artifacts_dir, playwright_or_skip

import profinsight

pytestmark = pytest.mark.slow  # loads and compares three real profiles (~15 s cold)

RANK0 = "ascend_pt/text_level1/rank0_ascend_pt"
BASE = "kineto/legacy/resnet50_tb_plugin_2021.json.gz"
OTHER = "kineto/legacy/resnet50_json_array.json.gz"
_LOADED: dict = {}


def _load(fixtures, rel):
    if rel not in _LOADED:
        _LOADED[rel] = profinsight.load(fixtures / rel)
    return _LOADED[rel]


def _cards(text: str) -> list[str]:
    return re.findall(r"class='profinsight-finding' data-rule='([^']*)'", text)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_advise_renders_as_finding_cards(fixtures, lang):
    adv = _load(fixtures, RANK0).advise(lang=lang)
    text = adv._repr_html_()
    fired = adv[adv["severity"] != "not_applicable"]
    assert _cards(text) == list(fired["rule"])  # one card per finding, in the advisor's order
    for r in fired.itertuples():
        assert r.title in text and r.message.split(" (")[0][:40] in text.replace("&#x27;", "'")
    # the evidence is folded under each card as lists, never a Python dict cut at 240 characters
    assert text.count("<details") == len(fired) and "{'" not in text and " …" not in text
    first = fired.iloc[0]
    assert f"{first['recoverable_us'] / 1e3:,.2f} ms" in text
    assert "<script" not in text and "<style" not in text
    assert "term.recoverable" not in text  # the glossary's definition, in the language asked for
    want = "可节省" if lang == "zh" else "recoverable"
    assert want in text


def _recoverable(text: str) -> dict[str, str]:
    """Each card's recoverable time, as shown (rule -> words)."""
    found = re.findall(
        r"data-rule='([^']*)'.*?text-decoration:underline dotted'>[^<]*</span>: <b>([^<]*)</b>", text, flags=re.S
    )
    return dict(found)


@pytest.mark.parametrize(
    "rel, lang, want",
    [
        # gpu_alexnet records no ProfilerStep: the one "step" is the whole capture (12,840.2 ms)
        (
            "kineto/gpu_alexnet.json.gz",
            "en",
            {
                "idle_gaps": "11,952.42 ms in the capture (93.1% of the capture)",
                "memory_churn": "8,510.53 ms in the capture (66.3% of the capture)",
                "stream_sync": "901.51 ms in the capture (7.0% of the capture)",
                "profile_quality": "not estimated",
            },
        ),
        (
            "kineto/gpu_alexnet.json.gz",
            "zh",
            {
                "idle_gaps": "整个采集 11,952.42 ms（占采集时长的 93.1%）",
                "memory_churn": "整个采集 8,510.53 ms（占采集时长的 66.3%）",
                "stream_sync": "整个采集 901.51 ms（占采集时长的 7.0%）",
                "profile_quality": "未估算",
            },
        ),
        # gpu_cupti_counters records no step and no device span to take a share of: the time alone
        ("kineto/gpu_cupti_counters.json.gz", "en", {"memory_churn": "1,670.35 ms in the capture"}),
        ("kineto/gpu_cupti_counters.json.gz", "zh", {"memory_churn": "整个采集 1,670.35 ms"}),
        # a stepped profile keeps its per-step words
        (
            RANK0,
            "en",
            {
                "idle_gaps": "21.27 ms per step (15.6% of the step)",
                "communication_overlap": "4.85 ms per step (3.5% of the step)",
                "compile_dispatch": "3.59 ms per step (2.6% of the step)",
                "format_conversion": "1.54 ms per step (1.1% of the step)",
            },
        ),
        (
            RANK0,
            "zh",
            {"idle_gaps": "每步 21.27 ms（占迭代的 15.6%）", "format_conversion": "每步 1.54 ms（占迭代的 1.1%）"},
        ),
    ],
)
def test_finding_cards_name_what_the_recoverable_time_is_of(fixtures, rel, lang, want):
    """The cards said "x ms (y% of step) per step" on captures that record no step, where the share
    is of the whole capture; ``advise()`` carries its ``basis`` on every row and the cards word it."""
    adv = _load(fixtures, rel).advise(lang=lang)
    basis = "step" if rel == RANK0 else "capture"
    assert set(adv["basis"]) == {basis}
    got = _recoverable(adv._repr_html_())
    assert {r: got[r] for r in want} == want
    if basis == "capture":
        assert "step" not in " ".join(got.values()) and "每步" not in " ".join(got.values())


def test_waterfall_and_compare_are_charts_with_human_labels(fixtures):
    cmp = profinsight.compare(_load(fixtures, BASE), _load(fixtures, OTHER))
    wf = cmp.waterfall()
    wf_html = wf._repr_html_()
    assert wf_html.count("<svg") == 1 and "device idle" in wf_html and "host-side preparing" in wf_html
    idle = wf[wf["component"] == "free"].iloc[0]
    assert f"+{idle['delta_us'] / 1e3:,.2f} ms" in wf_html  # units, not bare microseconds
    assert "delta_us" not in re.sub(r"title='[^']*'", "", wf_html)  # column names only as hover titles
    page = cmp._repr_html_()
    steps = cmp.steps()
    assert page.count("<svg") == 2 and "step per run" in page
    for r in steps.itertuples():
        assert f"{r.step_us / 1e3:,.2f} ms" in page
    assert "communication not overlapped" in page and "speed-up vs base" in page and "<script" not in page


@pytest.mark.browser
def test_static_notebook_output_reads_without_javascript(fixtures):
    """The HTML a saved notebook keeps, opened with JavaScript off: cards, charts, tables."""
    sync_playwright = playwright_or_skip()
    adv = _load(fixtures, RANK0)
    cmp = profinsight.compare(_load(fixtures, BASE), _load(fixtures, OTHER))
    out = artifacts_dir()
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        for lang in ("en", "zh"):
            body = adv.advise(lang=lang)._repr_html_() + cmp._repr_html_() + cmp.waterfall()._repr_html_()
            path = out / f"notebook_static_{lang}.html"
            path.write_text(f"<!DOCTYPE html><html><meta charset='utf-8'><body>{body}</body></html>", encoding="utf-8")
            ctx = b.new_context(viewport={"width": 1100, "height": 900}, java_script_enabled=False)
            pg = ctx.new_page()
            pg.goto(path.as_uri())
            assert pg.locator(".profinsight-finding").count() == len(_cards(body))
            assert pg.locator("svg").count() == 3
            # the cards are laid out (visible, not collapsed into one line) with JavaScript off
            assert pg.locator(".profinsight-finding").first.bounding_box()["height"] > 60
            pg.screenshot(path=str(out / f"notebook_static_{lang}.png"), full_page=True)
            ctx.close()
        b.close()
