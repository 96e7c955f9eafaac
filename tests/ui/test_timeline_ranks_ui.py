"""The multi-rank timeline in a real browser on the real two-rank fixtures: ranks picked, lined
up by a step start or by one collective (offsets equal the data's starts / ends), the same
collective outlined on every rank, a rank's offset adjusted by hand, and all of it in the link."""

from __future__ import annotations

import shutil

import pytest
from _support import fmt_duration

import profinsight
from profinsight import timeline as tl

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def runs(fixtures, tmp_path_factory):
    gpu = tmp_path_factory.mktemp("runs") / "gpu_2rank"
    gpu.mkdir()
    for r in (0, 1):
        shutil.copy(fixtures / "kineto" / f"gpu_2rank_rank{r}.json.gz", gpu)
    return {"text_level1": fixtures / "ascend_pt" / "text_level1", "gpu_2rank": gpu}


@pytest.fixture(scope="module")
def base(serve, runs):
    return serve(runs["text_level1"], runs["gpu_2rank"])


@pytest.fixture(scope="module")
def profs(runs, base):
    return {k: profinsight.load(v) for k, v in runs.items()}


def _open(page, base, link):
    page.goto(f"{base}/#{link}")
    page.wait_for_selector(".pi-tl[data-state='ready']", timeout=30_000)
    _settle(page)


def _settle(page):
    page.wait_for_function("() => window.profinsightTimeline && window.profinsightTimeline.idle()", timeout=20_000)
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def _hook(page, expr):
    return page.evaluate(f"() => window.profinsightTimeline.{expr}")


def _offsets(page):
    return {int(k): v for k, v in _hook(page, "alignment()")["offsets"].items()}


def _starts(p, where):
    df = p.sql(f"select rank, start_ns, dur_ns from comm_ops where {where} order by rank")
    return {int(r): (int(s), int(d)) for r, s, d in zip(df["rank"], df["start_ns"], df["dur_ns"])}


def test_ascend_ranks_aligned_by_step_then_by_collective(base, page, profs, shot):
    p = profs["text_level1"]
    _open(page, base, "text_level1/timeline")
    assert _hook(page, "shownRanks()") == [0, 1]
    # the panel: pick rank 1 alone, then both again (both expanded, side by side)
    page.click(".pi-tl-ranks-btn")
    page.uncheck(".pi-tl-rank-box[data-rank='0']")
    assert _hook(page, "shownRanks()") == [1]
    assert {r["rank"] for r in _hook(page, "tracks()")} == {1}
    page.check(".pi-tl-rank-box[data-rank='0']")
    rows = _hook(page, "tracks()")
    ranks = [r for r in rows if r["kind"] == "rank"]
    assert [r["key"] for r in ranks] == ["r0", "r1"] and not any(r["collapsed"] for r in ranks)
    # step 50's start, from the steps table
    page.select_option(".pi-tl-align", "step:50")
    page.wait_for_function("() => window.profinsightTimeline.alignment().answer !== null")
    st = p.sql("select rank, host_start_ns t from steps where step = 50 order by rank")["t"].tolist()
    assert _offsets(page) == {1: int(st[0]) - int(st[1])} == {1: -2_127_370}
    page.wait_for_function("() => location.hash.includes('align=step%3A50')")  # written after 250 ms
    assert page.url.split("#")[1].startswith("text_level1/timeline?") and "ranks=" not in page.url
    # one collective, chosen with a click on rank 0's Communication track: its end lines up
    name = "hcom_allReduce__586_3_1"
    ends = {r: s + d for r, (s, d) in _starts(p, f"name = '{name}'").items()}
    page.evaluate("() => window.profinsightTimeline.setFilter('Communication')")
    _settle(page)
    table = tl.index_of(p).slice_table()
    track, cid, s0, d0 = (
        p.connection()
        .execute(f"select track, id, start_ns, dur_ns from {table} where rank = 0 and name = ?", [name])
        .fetchall()[0]
    )
    origin = int(_hook(page, "origin()"))
    page.evaluate(f"() => window.profinsightTimeline.setWindow({s0 - origin - d0}, {s0 - origin + 2 * d0})")
    _settle(page)
    box = page.locator(".pi-tl-canvas").bounding_box()
    x = page.evaluate(f"() => window.profinsightTimeline.xOf({s0 - origin + d0 / 2})")
    y = page.evaluate(f"() => window.profinsightTimeline.yOf('{track}', 0)")
    page.mouse.click(box["x"] + x, box["y"] + y)
    page.wait_for_selector(".pi-tl-align-end")
    assert _hook(page, "selected()")["id"] == cid
    # the group is a name made of digits: shown as recorded, not rounded as a number
    terms = page.locator(".pi-tl-args dt").all_inner_texts()
    group = p.sql(f"select \"group\" g from comm_ops where rank = 0 and name = '{name}'")["g"][0]
    assert page.locator(".pi-tl-args dd").nth(terms.index("group")).inner_text() == group == "17522688603477080586"
    page.click(".pi-tl-align-end")
    page.wait_for_function("() => window.profinsightTimeline.alignment().answer?.edge === 'end'")
    _settle(page)
    assert _offsets(page) == {1: ends[0] - ends[1]} == {1: 9_175}
    # the same collective outlined on both ranks, ending at the same time in the aligned frame
    hl = _hook(page, "highlights()")
    assert [(h["rank"], h["name"]) for h in hl] == [(0, name), (1, name)]
    assert hl[0]["start_ns"] + hl[0]["dur_ns"] == hl[1]["start_ns"] + hl[1]["dur_ns"] == ends[0] - origin
    # and rank 1's slices drawn there moved by the offset
    r1 = next(t["key"] for t in _hook(page, "tracks()") if t["rank"] == 1 and t["key"].startswith("r1/comm/"))
    cols = _hook(page, f"slices('{r1}')")
    s1 = _starts(p, f"name = '{name}'")[1][0]
    assert s1 - origin + (ends[0] - ends[1]) in cols["start_ns"]
    # its tooltip says it is drawn off its recorded time, and by how much
    x = page.evaluate(f"() => window.profinsightTimeline.xOf({hl[1]['start_ns'] + hl[1]['dur_ns'] / 2})")
    y = page.evaluate(f"() => window.profinsightTimeline.yOf('{r1}', 0)")
    page.mouse.move(box["x"] + x, box["y"] + y)
    page.wait_for_selector(".pi-tl-tip:not([hidden])")
    tip = _hook(page, "tooltip()")
    assert tip["name"] == name and f"drawn +{fmt_duration(9_175)} from its recorded time" in tip["text"]
    shot(page, "timeline_ranks_aligned")
    # the user adjusts rank 1 by +0.5 us for clock skew
    page.fill(".pi-tl-offset[data-rank='1']", f"{(ends[0] - ends[1] + 500) / 1000:.3f}")
    page.press(".pi-tl-offset[data-rank='1']", "Enter")
    page.wait_for_function("() => window.profinsightTimeline.alignment().offsets[1] === 9675")
    page.wait_for_function("() => location.hash.includes('skew=1%3A500')")
    link = page.url.split("#", 1)[1]
    assert f"align=coll%3Acomm_op%3A0%3A{cid}%3Aend" in link
    # the link opens the same picture
    page.goto("about:blank")
    _open(page, base, link)
    page.wait_for_function("() => window.profinsightTimeline.alignment().answer !== null")
    assert _offsets(page) == {1: 9675}
    assert [h["rank"] for h in _hook(page, "highlights()")] == [0, 1]
    assert page.errors == []


def test_gpu_ranks_aligned_by_step_and_by_nccl_kernel(base, page, profs, shot):
    p = profs["gpu_2rank"]
    _open(page, base, "gpu_2rank/timeline?ranks=0,1&align=step:552")
    page.wait_for_function("() => window.profinsightTimeline.alignment().answer !== null")
    st = p.sql("select rank, host_start_ns t from steps where step = 552 order by rank")["t"].tolist()
    assert _offsets(page) == {1: int(st[0]) - int(st[1])} == {1: -785_000}
    assert not any(r["collapsed"] for r in _hook(page, "tracks()") if r["kind"] == "rank")
    # the third NCCL kernel of rank 0, drawn on its stream: matched on rank 1 by its place
    k = p.sql(
        "select rank, task_uid, start_ns from (select *, row_number() over (partition by rank order by start_ns) n "
        "from device_tasks where kind = 'communication') where n = 3 order by rank"
    )
    uid0, (a0, a1) = int(k["task_uid"][0]), [int(x) for x in k["start_ns"]]
    page.evaluate(
        "() => window.profinsightTimeline.setAlign("
        f"{{by: 'collective', kind: 'device_task', rank: 0, id: {uid0}, edge: 'start'}})"
    )
    _settle(page)
    assert _offsets(page) == {1: a0 - a1} == {1: -3_302_000}
    hl = _hook(page, "highlights()")
    assert [h["track"] for h in hl] == ["r0/stream/84", "r1/stream/84"]
    assert hl[0]["start_ns"] == hl[1]["start_ns"]
    origin = int(_hook(page, "origin()"))
    page.evaluate(f"() => window.profinsightTimeline.setWindow({a0 - origin - 20_000_000}, {a0 - origin + 40_000_000})")
    page.evaluate("() => window.profinsightTimeline.setFilter('Stream 84, Stream 7')")
    _settle(page)
    # a range over both ranks counts each rank's slices in its own time, moved by its offset
    s, e = a0 - origin - 5_000_000, a0 - origin + 5_000_000
    page.evaluate(f"() => window.profinsightTimeline.setRange({s}, {e})")
    page.wait_for_function("() => window.profinsightTimeline.stats() !== null")
    stats = _hook(page, "stats()")
    table = tl.index_of(p).slice_table()
    n = 0
    for rank, off in ((0, 0), (1, a0 - a1)):
        lo, hi = origin + s - off, origin + e - off
        n += (
            p.connection()
            .execute(
                f"select count(*) from {table} where rank = ? and track in (?, ?) and start_ns < ? "
                "and (start_ns + dur_ns > ? or start_ns >= ?)",
                [rank, f"r{rank}/stream/84", f"r{rank}/stream/7", hi, lo, lo],
            )
            .fetchall()[0][0]
        )
    assert stats["count"] == n > 0
    shot(page, "timeline_ranks_gpu_nccl")
    assert page.errors == []
