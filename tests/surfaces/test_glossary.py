"""One vocabulary (issue 17): docs/glossary.md is generated from the glossary's declaration, every
term has its words in both languages, the surfaces label the quantities with the glossary's
words, and the synonyms they used before do not come back."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from profinsight.advisor import verdict
from profinsight.comparison.core import LABELS
from profinsight.i18n import MESSAGES, t, ui_messages
from profinsight.i18n.glossary import RETIRED, TERMS, markdown
from profinsight.render.report import glossary_html
from profinsight.testing import profile_from_tables

ROOT = Path(__file__).resolve().parents[2]
US = 1000


def test_glossary_doc_is_generated_from_the_declaration():
    assert (ROOT / "docs/glossary.md").read_text(encoding="utf-8") == markdown()
    assert "glossary.md" in (ROOT / "docs/index.md").read_text(encoding="utf-8")


def test_every_term_has_label_and_definition_in_both_languages():
    for tid, (en, zh, en_def, zh_def) in TERMS.items():
        assert t(f"term.{tid}", "en") == en and t(f"term.{tid}", "zh") == zh
        assert t(f"term.{tid}.def", "zh") == zh_def and en_def.strip()
        # the viewer receives them for its labels and tooltips
        assert ui_messages("zh")[f"term.{tid}.def"] == zh_def


def test_compare_and_viewer_labels_are_the_glossary_words():
    assert LABELS["comm_not_overlapped"] == t("term.not_overlapped", "en")
    assert LABELS["free"] == t("term.device_idle", "en")
    assert LABELS["preparing"].startswith(t("term.host_preparing", "en"))
    for lang in ("en", "zh"):
        ui = ui_messages(lang)
        assert ui["ui.compare.component.free"] == t("term.device_idle", lang)
        assert ui["ui.compare.component.preparing"] == t("term.host_preparing", lang)


def _one_step():
    tasks = pd.DataFrame(
        [
            dict(
                rank=0,
                device=0,
                stream=1,
                kind="kernel",
                name="K",
                type="Add",
                core="AI_CORE",
                start_ns=0,
                dur_ns=600 * US,
                step=1,
            ),
            dict(
                rank=0,
                device=0,
                stream=2,
                kind="communication",
                name="hcom_allReduce_1",
                type="hcom_allReduce_",
                core="HCCL",
                start_ns=700 * US,
                dur_ns=200 * US,
                step=1,
            ),
            dict(
                rank=0,
                device=0,
                stream=1,
                kind="kernel",
                name="K2",
                type="Add",
                core="AI_CORE",
                start_ns=900 * US,
                dur_ns=100 * US,
                step=1,
            ),
        ]
    )
    steps = pd.DataFrame([dict(rank=0, step=1, host_start_ns=0, host_end_ns=1000 * US)])
    return profile_from_tables({"device_tasks": tasks, "steps": steps}, fmt="ascend_text")


def test_the_verdict_names_each_share_with_the_glossary_words():
    # 1,000 us step: compute 700 us, communication not overlapped 200 us, device idle 100 us
    for lang in ("en", "zh"):
        text = verdict(_one_step(), lang)["text"]
        for term, share in (("compute", "70.0%"), ("not_overlapped", "20.0%"), ("device_idle", "10.0%")):
            assert f"{t(f'term.{term}', lang)} {share}" in text
    assert verdict(_one_step(), "en")["text"].endswith("of the step.")


def test_the_report_lists_the_terms():
    page = glossary_html("en")
    assert page.count("<dt>") == len(TERMS) and "CPU run-ahead" in page


def test_retired_synonyms_are_gone():
    texts = [v for lang in ("en", "zh") for v in MESSAGES[lang].values()] + list(LABELS.values())
    docs = [p.read_text(encoding="utf-8") for p in (ROOT / "docs").rglob("*.md") if p.name != "glossary.md"]
    for word in RETIRED:
        assert not [x for x in texts if word in x], word
        assert not [d for d in docs if word in d], word
