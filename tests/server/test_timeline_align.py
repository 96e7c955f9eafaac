"""Multi-rank timeline alignment (timeline/align.py) and the per-rank ``shift`` of the window
queries, checked against the canonical tables of the real two-rank fixtures."""

from __future__ import annotations

import shutil

import pytest

import profinsight
from profinsight import timeline as tl
from profinsight.errors import ProfileError, UnknownTable


@pytest.fixture(scope="module")
def ascend(fixtures, tmp_path_factory):
    import os

    os.environ["PROFINSIGHT_CACHE"] = str(tmp_path_factory.mktemp("aligncache"))
    return profinsight.load(fixtures / "ascend_pt" / "text_level1")


@pytest.fixture(scope="module")
def kineto(fixtures, tmp_path_factory, ascend):
    run = tmp_path_factory.mktemp("gpu_2rank")
    for r in (0, 1):
        shutil.copy(fixtures / "kineto" / f"gpu_2rank_rank{r}.json.gz", run)
    return profinsight.load(run)


def _step_starts(p, step):
    df = p.sql(f"select rank, coalesce(host_start_ns, device_start_ns) t from steps where step = {step} order by rank")
    return dict(zip(df["rank"].tolist(), [int(x) for x in df["t"]]))


def _offsets(answer):
    return {r["rank"]: r["offset_ns"] for r in answer["ranks"]}


def test_step_alignment_is_the_step_starts(ascend, kineto):
    a = tl.alignment(ascend, "step")
    t = _step_starts(ascend, 50)
    assert a["step"] == 50 and a["steps"] == [50] and a["reference"] == 0 and a["missing"] == []
    assert _offsets(a) == {0: 0, 1: t[0] - t[1]} == {0: 0, 1: -2_127_370}
    assert [r["anchor_ns"] for r in a["ranks"]] == [t[0], t[1]]
    k = tl.alignment(kineto, "step", step=552, reference=1)
    t = _step_starts(kineto, 552)
    assert k["steps"] == [551, 552] and _offsets(k) == {0: t[1] - t[0], 1: 0} == {0: 785_000, 1: 0}


def test_collective_alignment_matches_the_same_call_on_every_rank(ascend):
    c = ascend.sql("select rank, name, start_ns, dur_ns from comm_ops order by rank, start_ns")
    rows = {(int(r), n): (int(s), int(d)) for r, n, s, d in zip(c["rank"], c["name"], c["start_ns"], c["dur_ns"])}
    table = tl.index_of(ascend).slice_table()
    for name in ("hcom_allReduce__586_0_1", "hcom_allReduce__586_3_1"):
        (cid,) = (
            ascend.connection()
            .execute(f"select id from {table} where source = 'comm_op' and rank = 1 and name = ?", [name])
            .fetchall()[0]
        )
        a = tl.alignment(ascend, "collective", kind="comm_op", rank=1, id_=cid)
        (s0, d0), (s1, d1) = rows[(0, name)], rows[(1, name)]
        assert a["reference"] == 1 and a["name"] == name
        assert _offsets(a) == {0: s1 - s0, 1: 0}
        assert [r["slice"]["name"] for r in a["ranks"]] == [name, name]
        assert [(r["slice"]["start_ns"], r["slice"]["dur_ns"]) for r in a["ranks"]] == [(s0, d0), (s1, d1)]
        assert all(r["slice"]["track"].startswith(f"r{r['rank']}/comm/") for r in a["ranks"])
        end = tl.alignment(ascend, "collective", kind="comm_op", rank=1, id_=cid, edge="end")
        assert _offsets(end) == {0: (s1 + d1) - (s0 + d0), 1: 0}
    # the last all-reduce ends within 9.2 us on both ranks: the clocks agree that closely
    assert _offsets(end)[0] == -9_175


def test_collective_alignment_on_stream_kernels(kineto):
    """Kineto's NCCL kernels are drawn once, on their stream: chosen there, matched by place."""
    c = kineto.sql(
        "select rank, start_ns, dur_ns, row_number() over (partition by rank order by start_ns) - 1 k from comm_ops"
    )
    starts = {(int(r), int(k)): int(s) for r, s, k in zip(c["rank"], c["start_ns"], c["k"])}
    uid = kineto.sql(
        "select task_uid from device_tasks where rank = 0 and kind = 'communication' order by start_ns limit 1 offset 2"
    )["task_uid"][0]
    a = tl.alignment(kineto, "collective", kind="device_task", rank=0, id_=int(uid))
    assert _offsets(a) == {0: 0, 1: starts[(0, 2)] - starts[(1, 2)]} == {0: 0, 1: -3_302_000}
    assert [r["slice"]["kind"] for r in a["ranks"]] == ["device_task", "device_task"]
    assert [r["slice"]["track"] for r in a["ranks"]] == ["r0/stream/84", "r1/stream/84"]
    # drawn once: no Communication track repeats the stream's kernels
    units = {u["name"] for r in tl.tracks(kineto)["ranks"] for u in r["units"]}
    assert "Communication" not in units
    table = tl.index_of(kineto).slice_table()
    n = kineto.connection().execute(f"select count(*) from {table} where name like 'ncclKernel%'").fetchall()[0][0]
    assert n == len(c) == 20


def test_bad_alignment_requests(ascend):
    with pytest.raises(ProfileError, match="step or collective"):
        tl.alignment(ascend, "clock")
    with pytest.raises(ProfileError, match="no step 7"):
        tl.alignment(ascend, "step", step=7)
    with pytest.raises(ProfileError, match="edge"):
        tl.alignment(ascend, "step", edge="middle")
    with pytest.raises(ProfileError, match="not a collective"):
        tl.alignment(ascend, "collective", kind="host_op", rank=0, id_=1)
    with pytest.raises(UnknownTable):
        tl.alignment(ascend, "collective", kind="comm_op", rank=0, id_=99)


def test_shift_moves_each_rank(ascend):
    """With ``shift`` the window is read in the shifted frame and each rank's times move by its
    offset: rank 1's collective lines up with rank 0's, stats and gaps follow."""
    a = tl.alignment(ascend, "collective", kind="comm_op", rank=0, id_=0)
    shift = {1: _offsets(a)[1]}
    r0, r1 = (r["slice"] for r in a["ranks"])
    lo, hi = r0["start_ns"] - 1000, r0["start_ns"] + r0["dur_ns"]
    ids = [r0["track"], r1["track"]]
    plain = tl.slice_columns(ascend, lo, hi, ids, 2000)
    moved = tl.slice_columns(ascend, lo, hi, ids, 2000, shift=shift)
    assert moved[r1["track"]]["start_ns"][0] == r0["start_ns"] == r1["start_ns"] + shift[1]
    assert list(moved[r0["track"]]["start_ns"]) == list(plain[r0["track"]]["start_ns"])
    # stats over the shifted range: rank 1 read over the range moved back by its offset
    both = tl.range_stats(ascend, lo, hi, ids, shift=shift)
    own = tl.range_stats(ascend, lo - shift[1], hi - shift[1], [r1["track"]])
    mine = tl.range_stats(ascend, lo, hi, [r0["track"]])
    assert both["count"] == own["count"] + mine["count"] and both["total_ns"] == own["total_ns"] + mine["total_ns"]
    # gaps of rank 1 move by its offset
    t0, t1 = tl.tracks(ascend)["start_ns"], tl.tracks(ascend)["end_ns"]
    g = tl.gaps(ascend, t0, t1, 2000)
    gs = tl.gaps(ascend, t0 - 10**9, t1 + 10**9, 2000, shift=shift)
    assert gs["ranks"]["1"]["start_ns"] == [x + shift[1] for x in g["ranks"]["1"]["start_ns"]]
    assert gs["ranks"]["0"] == g["ranks"]["0"]
    # counters too
    ctr = next(t["id"] for t in tl.index_of(ascend).tracks if t["kind"] == "counter" and t["rank"] == 1)
    c = tl.counter_columns(ascend, t0, t1, [ctr], 500)[ctr]
    cs = tl.counter_columns(ascend, t0 + shift[1], t1 + shift[1], [ctr], 500, shift=shift)[ctr]
    assert list(cs["start_ns"]) == [x + shift[1] for x in c["start_ns"]] and list(cs["max"]) == list(c["max"])
