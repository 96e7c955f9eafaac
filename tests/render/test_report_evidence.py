"""The guided report page shows the analyses' numbers and the advisor's evidence, never numbers
of its own: every table equals the registered analysis it comes from, the findings equal
``advise()``, and the timeline excerpt is the top finding's evidence window as the timeline
engine answers it.  Drawing runs no SQL (the profile's SQL entry points raise while it draws)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pandas as pd
import pytest

import profinsight
from profinsight import timeline
from profinsight.advisor import guided_report
from profinsight.render import report as R
from profinsight.render.styles import PAGE_CSS


class _Tables(HTMLParser):
    """The page's <table>s as lists of rows of cell texts (header row first)."""

    def __init__(self):
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._row is not None:
            self._row.append("".join(self._cell or []))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[-1].append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _table(page: str, first_headers: list[str]) -> pd.DataFrame:
    p = _Tables()
    p.feed(page)
    for t in p.tables:
        if t and t[0][: len(first_headers)] == first_headers:
            return pd.DataFrame(t[1:], columns=t[0])
    raise AssertionError(f"no table with headers {first_headers}")


def _us(v) -> str:
    return f"{float(v):,.1f}"


@pytest.fixture(scope="module")
def made(fixtures):
    p = profinsight.load(fixtures / "ascend_pt/text_level1")
    rep = guided_report(p, "en")
    return p, rep, R.render_html(rep, p)


def test_section_tables_equal_the_analyses(made):
    p, _, page = made
    ops = _table(page, ["type", "core", "count", "total_us"])
    want = p.op_summary(by="type").head(10)
    assert list(ops["type"]) == [str(t) for t in want["type"]]
    assert list(ops["total_us"]) == [_us(v) for v in want["total_us"]]
    assert list(ops["share_of_step_ratio"]) == [f"{float(v):.1%}" for v in want["share_of_step_ratio"]]

    steps = _table(page, ["rank", "step", "step_us"])
    sb = p.step_breakdown()
    for c in ("step_us", "computing_us", "comm_not_overlapped_us", "free_us"):
        assert list(steps[c]) == [_us(v) for v in sb[c]], c

    # a gap is placed in ms from its step's device start, not by epoch nanoseconds
    gaps = _table(page, ["rank", "step", "at_ms", "dur_us"])
    ig = p.idle_gaps(min_us=50.0).head(5)
    assert list(gaps["dur_us"]) == [_us(v) for v in ig["dur_us"]]
    st = p.table("steps").set_index(["rank", "step"])["device_start_ns"]
    at = [(int(g) - int(st[(int(r), int(s))])) / 1e6 for r, s, g in zip(ig["rank"], ig["step"], ig["start_ns"])]
    assert list(gaps["at_ms"]) == [f"{round(v, 3):,.1f}" for v in at]
    assert "start_ns" not in gaps.columns and "host_api" in gaps.columns

    comm = _table(page, ["rank", "type", "count", "elapse_us"])
    cs = p.comm_summary()
    assert list(comm["elapse_us"]) == [_us(v) for v in cs["elapse_us"]]
    assert list(comm["wait_us"]) == [_us(v) for v in cs["wait_us"]]


def test_findings_and_actions_equal_advise(made):
    p, _, page = made
    adv = p.advise(lang="en")
    fired = adv[adv["severity"] != "not_applicable"]
    assert len(fired) >= 2
    titles = re.findall(r"<div class='f [a-z]+'><b>([^<]+)</b>", page)
    assert titles == list(fired["title"])
    for _, f in fired.iterrows():
        if pd.notna(f["recoverable_us"]):
            assert f"{f['recoverable_us'] / 1e3:,.2f} ms ({f['share_of_step_ratio']:.1%}" in page
    for rule in adv[adv["severity"] == "not_applicable"]["rule"]:
        assert f"<code>{rule}</code>" in page


def test_timeline_excerpt_is_the_top_findings_evidence_window(made):
    p, rep, page = made
    top = p.advise(lang="en").iloc[0]
    w = top["evidence"]["window"]
    got = R.excerpt_window(rep)
    assert {k: got[k] for k in ("rank", "step", "start_ns", "end_ns")} == w and got["rule"] == top["rule"]
    ex = R.timeline_excerpt(p, got)
    pad = min(max((w["end_ns"] - w["start_ns"]) // 2, 200_000), 5_000_000)
    assert (ex["start_ns"], ex["end_ns"]) == (w["start_ns"] - pad, w["end_ns"] + pad)
    ids = [
        t["id"]
        for r in timeline.tracks(p)["ranks"]
        if r["rank"] == w["rank"]
        for u in r["units"]
        if u["kind"] in ("device", "communication")
        for t in u["tracks"]
    ]
    cols = timeline.slice_columns(p, ex["start_ns"], ex["end_ns"], ids, R.WIDTH - R.LABEL_W - 10)
    assert sum(len(x["slices"]) for x in ex["lanes"]) == sum(len(c["start_ns"]) for c in cols.values()) > 0
    # the top finding (by recoverable time) is the idle gaps: its window is the longest gap, where
    # the device lanes show the tasks on both sides (no collective runs there)
    assert top["rule"] == "idle_gaps" and {x["kind"] for x in ex["lanes"]} == {"device"}
    svg = page[page.index("id='timeline'") :].split("</svg>")[0]
    assert svg.count("<rect") == sum(len(x["slices"]) for x in ex["lanes"])
    assert top["title"] in page[page.index("id='timeline'") :][:400]


def test_without_findings_the_excerpt_shows_the_longest_gap():
    gap = {"rank": 1, "step": 3, "start_ns": 1_000, "end_ns": 5_000, "dur_us": 4.0}
    rep = {"findings": [], "sections": {"gaps": [gap]}}
    assert R.excerpt_window(rep) == {"rank": 1, "step": 3, "start_ns": 1_000, "end_ns": 5_000, "rule": None}
    assert R.excerpt_window({"findings": [], "sections": {"gaps": []}}) is None


def test_drawing_runs_no_sql(made, monkeypatch):
    """The page is drawn from the report's data and the timeline engine only: the profile's
    SQL and table readers raise while it draws, and the page is the same."""
    p, rep, page = made
    timeline.tracks(p)  # the engine's own index, built once per profile (the viewer's too)

    def refuse(*a, **k):
        raise AssertionError("the report ran a query of its own")

    for name in ("sql", "table", "arrow"):
        monkeypatch.setattr(p, name, refuse)
    assert R.render_html(rep, p) == page


def test_page_is_offline_and_in_the_shared_style(made):
    _, _, page = made
    assert f"<style>{PAGE_CSS}</style>" in page
    assert "<script" not in page and not re.search(r"(src|href)\s*=|url\(|@import", page)
