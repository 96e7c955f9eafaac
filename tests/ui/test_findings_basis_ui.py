"""The Overview's finding cards name what a recoverable time is of, in a real browser against a
live `profinsight serve`: "per step" and a share of the step on a stepped profile, "in the
capture" and a share of the capture where no step was recorded (gpu_alexnet) -- the server's
advise route carries the ``basis`` the cards word, in en and zh."""

from __future__ import annotations

import json
import urllib.request

import pytest
from _support import fmt_duration

import profinsight

pytestmark = pytest.mark.browser

ALEXNET = "gpu_alexnet.json.gz"
RANK0 = "rank0_ascend_pt"


@pytest.fixture(scope="module")
def paths(fixtures):
    return {
        ALEXNET: fixtures / "kineto" / "gpu_alexnet.json.gz",
        RANK0: fixtures / "ascend_pt" / "text_level1" / "rank0_ascend_pt",
    }


@pytest.fixture(scope="module")
def base(serve, paths):
    return serve(*paths.values())


def _cards(page, base, pid, lang) -> list[tuple[str, str]]:
    """(rule, recoverable words) of each card of the Overview that shows a recoverable time."""
    page.add_init_script(f"localStorage.setItem('profinsight.lang', '{lang}')")
    page.goto(f"{base}/#{pid}/overview")
    page.wait_for_selector(".pi-pane-overview .pi-finding-rec", timeout=120_000)
    return [
        tuple(c)
        for c in page.eval_on_selector_all(
            ".pi-pane-overview .pi-finding",
            "cs => cs.filter(c => c.querySelector('.pi-finding-rec'))"
            ".map(c => [c.dataset.rule, c.querySelector('.pi-finding-rec').textContent])",
        )
    ]


def test_the_advise_route_carries_the_basis(base, paths):
    """Every row of the advise answer says what its recoverable time is of."""
    for pid, want in ((ALEXNET, "capture"), (RANK0, "step")):
        with urllib.request.urlopen(f"{base}/api/profiles/{pid}/analyses/advise?lang=en") as r:
            d = json.loads(r.read())
        assert "basis" in d["columns"]
        assert {row["basis"] for row in d["rows"]} == {want}, pid
    top = next(row for row in d["rows"] if row["rule"] == "idle_gaps")
    assert (top["recoverable_us"], top["share_of_step_ratio"]) == (21269.815, 0.15573)


@pytest.mark.parametrize(
    "lang, alexnet, rank0",
    [
        (
            "en",
            "Recoverable: up to 11.95 s in the capture (93.1% of the capture; no step recorded)",
            "Recoverable: up to 21.27 ms per step (15.6% of the step)",
        ),
        (
            "zh",
            "可节省：整个采集最多 11.95 s（占采集时长的 93.1%；未记录迭代）",
            "可节省：每个 step 最多 21.27 ms（占 step 的 15.6%）",
        ),
    ],
)
def test_finding_cards_name_the_capture_or_the_step(base, page, paths, lang, alexnet, rank0, shot):
    cards = _cards(page, base, ALEXNET, lang)
    assert cards[0] == ("idle_gaps", alexnet)
    # every card with a recoverable time is of the capture: none says "per step" or "of the step"
    adv = profinsight.load(paths[ALEXNET]).advise(lang=lang)
    fired = adv[adv["recoverable_us"].notna()]
    assert [c[0] for c in cards] == list(fired["rule"])
    for (_, text), r in zip(cards, fired.itertuples()):
        assert fmt_duration(r.recoverable_us * 1e3) in text
        assert not any(w in text for w in ("per step", "of the step", "每个 step", "占 step"))
    shot(page, f"findings_capture_{lang}")
    cards = _cards(page, base, RANK0, lang)
    assert cards[0] == ("idle_gaps", rank0)
    assert all(("per step" if lang == "en" else "每个 step") in text for _, text in cards)
    assert page.errors == []
