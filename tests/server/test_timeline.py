"""Engine side of the timeline: values checked against the canonical tables directly."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import profinsight
from profinsight import timeline as tl
from profinsight.errors import ProfileError, UnknownTable


@pytest.fixture(scope="module")
def prof(fixtures, tmp_path_factory):
    import os

    os.environ["PROFINSIGHT_CACHE"] = str(tmp_path_factory.mktemp("tlcache"))
    return profinsight.load(fixtures / "ascend_pt" / "text_level1" / "rank0_ascend_pt")


def _tracks(p, kind=None, unit_kind=None):
    return [
        t
        for r in tl.tracks(p)["ranks"]
        for u in r["units"]
        for t in u["tracks"]
        if (kind is None or t["kind"] == kind) and (unit_kind is None or u["kind"] == unit_kind)
    ]


def test_track_tree_matches_tables(prof):
    tree = tl.tracks(prof)
    assert [r["rank"] for r in tree["ranks"]] == [0]
    # the 4 all-reduce rows of kernel_details (no stream) are drawn once, on their group's track,
    # and the 296 HCCL tasks on their 8 planes, not stacked on stream 4
    streams = prof.sql("select distinct cast(stream as varchar) s from device_tasks where stream is not null")["s"]
    device = _tracks(prof, unit_kind="device")
    assert sorted(t["id"] for t in device) == sorted(f"r0/stream/{s}" for s in streams)
    assert len(device) == 4
    assert sum(t["rows"] for t in device) == 539 - 4 - 296
    hccl = [t for r in tree["ranks"] for u in r["units"] if u["name"] == "HCCL" for t in u["tracks"]]
    assert [t["name"] for t in hccl] == [f"Plane {i}" for i in range(8)]
    planes = prof.sql("select plane_id, count(*) n from device_tasks where kind = 'comm_task' group by 1 order by 1")
    assert [t["rows"] for t in hccl] == planes["n"].tolist() == [16] + [40] * 7
    assert [t["id"] for t in hccl] == [f"r0/hccl/{i}" for i in range(8)]
    host = _tracks(prof, unit_kind="host")
    assert sum(t["rows"] for t in host) == 2460 and len(host) == 3
    assert sum(t["rows"] for t in _tracks(prof, unit_kind="api")) == 707
    assert sum(t["rows"] for t in _tracks(prof, unit_kind="slices")) == 382
    assert len(_tracks(prof, unit_kind="communication")) == 1 + 8
    assert sum(t["rows"] for t in _tracks(prof, unit_kind="counter")) == 4431
    units = [u["name"] for u in tree["ranks"][0]["units"]]
    assert units[:4] == ["Python", "CANN", "Ascend Hardware", "Communication"]


def test_slices_window_count_exact(prof):
    s2 = prof.sql("select min(start_ns) a, max(start_ns + dur_ns) b from device_tasks where stream = 2")
    a, b = int(s2["a"][0]), int(s2["b"][0])
    lo, hi = a + (b - a) // 4, a + (b - a) // 2
    expected = prof.sql(
        f"select count(*) n from device_tasks where stream = 2 and start_ns < {hi} and start_ns + dur_ns > {lo}"
    )["n"][0]
    t = tl.slices(prof, lo, hi, ["r0/stream/2"], width_px=10**4)  # 1 px < every task: nothing merged
    px = (hi - lo) / 10**4
    short = prof.sql(
        f"select count(*) n from device_tasks where stream = 2 and start_ns < {hi} "
        f"and start_ns + dur_ns > {lo} and dur_ns < {px}"
    )["n"][0]
    assert sum(t.column("count").to_pylist()) == expected
    assert t.num_rows == expected - short + len(
        set(int((s - lo) // px) for s, m in zip(t.column("start_ns").to_pylist(), t.column("merged").to_pylist()) if m)
    )


def test_merged_buckets_bounded_by_width(prof):
    ids = [t["id"] for t in _tracks(prof, kind="slice")]
    tree = tl.tracks(prof)
    for width in (10, 50):
        t = tl.slices(prof, tree["start_ns"], tree["end_ns"] + 1, ids, width)
        merged = t.filter(t.column("merged"))
        per = {}
        for track, depth in zip(merged.column("track").to_pylist(), merged.column("depth").to_pylist()):
            per[(track, depth)] = per.get((track, depth), 0) + 1
        assert max(per.values()) <= width
        # every slice is accounted for exactly once
        total = sum(t["rows"] for t in _tracks(prof, kind="slice"))
        assert sum(t.column("count").to_pylist()) == total


def test_host_depth_nesting(prof):
    t = tl.slices(
        prof, tl.tracks(prof)["start_ns"], tl.tracks(prof)["end_ns"] + 1, ["r0/thread/3096504.3096504"], 20000
    )
    rows = [r for r in t.to_pylist() if not r["merged"]]
    # a child is deeper than its enclosing parent
    by_id = {r["id"]: r for r in rows}
    deeper = 0
    for r in rows:
        for q in rows:
            if (
                q["depth"] == r["depth"] + 1
                and r["start_ns"] <= q["start_ns"]
                and q["start_ns"] + q["dur_ns"] <= r["start_ns"] + r["dur_ns"]
            ):
                deeper += 1
                break
    assert deeper > 10 and by_id


def test_nesting_depth_function():
    t = pa.table({"track": ["a"] * 5 + ["b"], "start_ns": [0, 1, 2, 5, 10, 0], "dur_ns": [10, 5, 1, 0, 3, 4]})
    assert tl.nesting_depth(t).tolist() == [0, 1, 2, 2, 0, 0]


def test_counters_keep_peaks(prof):
    tr = [t for t in _tracks(prof, kind="counter") if t["name"] == "QoS OTHERS"][0]
    b, before = tl.counters(prof, tr["start_ns"], tr["end_ns"] + 1, [tr["id"]], 7)
    assert b.num_rows <= 7 and sum(b.column("count").to_pylist()) == tr["rows"] == 1405
    top = prof.sql("select max(value) m, min(value) n from counters where name = 'QoS OTHERS'")
    assert max(b.column("max").to_pylist()) == top["m"][0]
    assert min(b.column("min").to_pylist()) == top["n"][0]
    assert before.num_rows == 0
    mid = tr["start_ns"] + (tr["end_ns"] - tr["start_ns"]) // 2
    _, before = tl.counters(prof, mid, tr["end_ns"] + 1, [tr["id"]], 7)
    assert before.num_rows == 1 and before.column("ts_ns")[0].as_py() < mid


def test_flows_both_directions(prof):
    link = prof.sql(
        "select host_op_id, count(*) n from launches where host_op_id is not null group by 1 order by n desc, 1 limit 1"
    )
    op, n = int(link["host_op_id"][0]), int(link["n"][0])
    f = tl.flows(prof, "host_op", 0, op)
    assert f["selection"]["id"] == op
    uids = prof.sql(
        f"""select distinct l.task_uid from launches l join device_tasks d using (rank, task_uid)
        where l.host_op_id = {op} and not (d.kind = 'communication' and d.stream is null)"""
    )["task_uid"]
    tasks = [x["to"] for x in f["flows"] if x["to"]["kind"] == "device_task"]
    assert n > 0 and sorted({t["id"] for t in tasks}) == sorted(int(u) for u in uids)
    # the launched all-reduce is drawn on its group's track: its arrow ends there, and back
    comm = [x["to"] for x in f["flows"] if x["to"]["kind"] == "comm_op"]
    launched = prof.sql(
        f"""select count(distinct l.task_uid) n from launches l join device_tasks d using (rank, task_uid)
        where l.host_op_id = {op} and d.kind = 'communication'"""
    )["n"][0]
    assert len(comm) == launched == 1 and comm[0]["track"].startswith("r0/comm/")
    assert comm[0]["name"].startswith("hcom_allReduce")
    up = tl.flows(prof, "comm_op", 0, comm[0]["id"])
    assert any(x["from"]["kind"] == "host_op" and x["from"]["id"] == op for x in up["flows"])
    task = tasks[0]
    assert task["track"].startswith(("r0/stream/", "r0/hccl/"))
    back = tl.flows(prof, "device_task", 0, task["id"])
    assert any(x["from"]["kind"] == "host_op" and x["from"]["id"] == op for x in back["flows"])
    with pytest.raises(UnknownTable):
        tl.flows(prof, "host_op", 0, 10**9)


def test_search_and_details(prof):
    hits = tl.search(prof, "MATMUL", limit=5)
    n = sum(
        int(prof.sql(f"select count(*) n from {t} where lower(name) like '%matmul%'")["n"][0])
        for t in ("device_tasks", "host_ops", "api_calls", "trace_slices", "comm_ops")
    )
    assert hits["total"] == n and len(hits["hits"]) == min(5, n)
    k = [h for h in tl.search(prof, "matmul", 1000)["hits"] if h["kind"] == "device_task"][0]
    d = tl.details(prof, "device_task", 0, k["id"])
    assert d["row"]["name"] == k["name"] and "input_shapes" in d["row"] and d["track"] == k["track"]
    c = tl.details(prof, "comm_op", 0, 0)
    assert c["row"]["name"].startswith("hcom_")
    with pytest.raises(ProfileError):
        tl.search(prof, "  ")
    with pytest.raises(ProfileError):
        tl.details(prof, "nothing", 0, 1)


def test_bad_windows_refused(prof):
    with pytest.raises(ProfileError):
        tl.slices(prof, 10, 5, ["r0/stream/2"], 100)
    with pytest.raises(ProfileError):
        tl.slices(prof, 0, 5, ["r0/stream/99"], 100)
    with pytest.raises(ProfileError):
        tl.slices(prof, 0, 5, ["r0/stream/2"], 0)


# --- level-of-detail tables: exact against a plain scan ---------------------------------------
def _scan(start, dur, s, e, px):
    """What a window answer must hold, computed row by row: (rows >= 1 px, merged rows' count)."""

    ov = (start < e) & (start + dur > s)
    return int((ov & (dur >= px)).sum()), int(ov.sum()), int(dur[ov].sum())


def _synthetic_track(n=30_000, seed=1):
    import numpy as np

    rng = np.random.default_rng(seed)
    start = np.sort(rng.integers(0, 10**9, n))
    dur = rng.integers(0, 10**5, n)
    dur[::997] = 5 * 10**7  # a few long slices that reach far into later windows
    dur[::13] = rng.integers(10**5, 10**7, len(dur[::13]))
    order = np.lexsort((-dur, start))
    start, dur = start[order], dur[order]
    depth = rng.integers(0, 3, n).astype(np.int32)
    return start, dur, depth, np.arange(n), rng.integers(0, 50, n).astype(np.int32)


@pytest.mark.parametrize(
    "window",
    [
        (0, 1_100_000_000, 1600),
        (300_000_000, 600_000_000, 1000),
        (123_456_789, 133_456_789, 800),
        (500_000_000, 500_100_000, 1000),
        (999_000_000, 1_000_500_000, 3),
        (-50, 10**8, 20),
    ],
)
def test_lod_slices_exact(window):
    """Every overlapping slice is counted once, slices >= 1 px come whole, merged rows span what
    they hold, and summary levels were actually used for the coarse windows."""
    import numpy as np

    from profinsight.timeline import lod

    start, dur, depth, ids, names = _synthetic_track()
    tr = lod.SliceTrack(start, dur, depth, ids, names, 0)
    assert tr.levels and len(tr.l_start)
    s, e, w = window
    px = (e - s) / w
    r = tr.query(s, e, px, w)
    whole, total, total_ns = _scan(start, dur, s, e, px)
    assert int(r["count"].sum()) == total and int(r["total_ns"].sum()) == total_ns
    assert int((~r["merged"]).sum()) == whole
    assert (r["dur_ns"][~r["merged"]] >= px).all()
    # a merged row spans exactly slices that overlap the window (no slice outside it)
    m = r["merged"]
    assert (r["start_ns"][m] < e).all() and (r["start_ns"][m] + r["dur_ns"][m] > s).all()
    # bounded: at most one merged row per (depth, pixel)
    pix = np.floor((r["start_ns"][m] - s) / px).astype(int)
    assert len(set(zip(r["depth"][m].tolist(), pix.tolist()))) == int(m.sum())
    # whole rows are the real rows (ids and names kept)
    k = ~r["merged"]
    assert (names[r["id"][k]] == r["name"][k]).all() and (start[r["id"][k]] == r["start_ns"][k]).all()


def test_lod_levels_are_used_and_small():
    from profinsight.timeline import lod

    start, dur, depth, ids, names = _synthetic_track(200_000, seed=3)
    tr = lod.SliceTrack(start, dur, depth, ids, names, 0)
    assert sum(lv.size for lv in tr.levels) <= len(start)
    picked = [lv.b for lv in tr.levels if lv.b <= 10**9 / 1000]
    assert picked  # a zoomed-out window at 1000 px is answered from a level, not a scan
    r = tr.query(0, 10**9, 10**6, 1000)
    assert int(r["count"].sum()) == 200_000 and len(r["start_ns"]) < 20_000


@pytest.mark.parametrize(
    "window", [(0, 10**9, 7), (0, 10**9, 1600), (250_000_123, 250_900_000, 300), (10**9 - 10, 2 * 10**9, 50)]
)
def test_lod_counters_keep_peaks(window):
    import numpy as np

    from profinsight.timeline import lod

    rng = np.random.default_rng(7)
    ts = np.sort(rng.integers(0, 10**9, 100_000))
    val = rng.normal(0, 1, len(ts))
    val[54_321] = 1e6  # a one-sample spike must survive every zoom level
    val[12_345] = -1e6
    tr = lod.CounterTrack(ts, val, 0)
    assert tr.levels
    s, e, w = window
    r = tr.query(s, e, (e - s) / w, w)
    sel = (ts >= s) & (ts < e)
    assert int(r["count"].sum()) == int(sel.sum())
    assert len(r["start_ns"]) <= w
    if sel.any():
        assert r["max"].max() == val[sel].max() and r["min"].min() == val[sel].min()
        assert r["last"][-1] == val[sel][-1] and r["end_ns"][-1] == ts[sel][-1] and r["start_ns"][0] == ts[sel][0]


def test_lod_on_fixture_matches_scan(prof, monkeypatch):
    """The real host thread with levels forced on (thresholds lowered) answers like a scan."""
    from profinsight.timeline import index as tlindex
    from profinsight.timeline import lod

    monkeypatch.setattr(lod, "SMALL_TRACK", 16)
    monkeypatch.setattr(lod, "RAW_ROWS", 8)
    monkeypatch.setattr(lod, "LEVEL0_NS", 256)
    idx = tlindex.TimelineIndex(prof, cache=False)  # levels built with the lowered thresholds
    tid = "r0/thread/3096504.3096504"
    tr = idx.slice_tracks[tid]
    assert tr.levels
    rows = prof.sql("select start_ns, dur_ns from host_ops where thread = 3096504 and start_ns is not null")
    start, dur = rows["start_ns"].astype("int64").to_numpy(), rows["dur_ns"].fillna(0).astype("int64").to_numpy()
    s0, e0 = int(start.min()), int((start + dur).max()) + 1
    span = e0 - s0
    for a, b, w in [(0, 1, 1600), (0.25, 0.5, 1600), (0.4, 0.41, 400), (0.1, 0.9, 37)]:
        s, e = s0 + int(span * a), s0 + int(span * b)
        r = tr.query(s, e, (e - s) / w, w)
        whole, total, total_ns = _scan(start, dur, s, e, (e - s) / w)
        assert int(r["count"].sum()) == total and int((~r["merged"]).sum()) == whole
        assert int(r["total_ns"].sum()) == total_ns


def test_flow_ends_are_separate_objects(prof):
    """The HTTP layer shifts each end to origin-relative time in place: a shared selection dict
    would be shifted once per arrow."""
    link = prof.sql(
        "select host_op_id from launches where host_op_id is not null group by 1 having count(*) > 1 limit 1"
    )
    f = tl.flows(prof, "host_op", 0, int(link["host_op_id"][0]))
    ends = [x["from"] for x in f["flows"]] + [f["selection"]]
    assert len({id(e) for e in ends}) == len(ends)


# --- the persisted index ----------------------------------------------------------------------
def _entry(p):
    (r,) = p._ranks
    return r.parquet_path


def _same_answers(a, b, tree):
    ids = [t["id"] for t in a.tracks if t["kind"] == "slice"]
    s0, e0 = tree["start_ns"], tree["end_ns"] + 1
    for lo, hi, w in [(0, 1, 1600), (0.3, 0.31, 400), (0.5, 0.9, 37)]:
        s, e = s0 + int((e0 - s0) * lo), s0 + int((e0 - s0) * hi)
        for t in ids:
            x, y = a.slice_tracks[t].query(s, e, (e - s) / w, w), b.slice_tracks[t].query(s, e, (e - s) / w, w)
            assert all((x[k] == y[k]).all() for k in x), t
            assert (a.names_of[t][x["name"]] == b.names_of[t][y["name"]]).all()
    for t in [t["id"] for t in a.tracks if t["kind"] == "counter"]:
        x, y = (
            a.counter_tracks[t].query(s0, e0, (e0 - s0) / 50, 50),
            b.counter_tracks[t].query(s0, e0, (e0 - s0) / 50, 50),
        )
        assert all((x[k] == y[k]).all() for k in x), t


def test_index_persisted_in_the_cache_entry_and_reused(prof, monkeypatch):
    """A second index of a cached profile (as in a new process) is read from the cache entry,
    not rebuilt, and answers exactly like one built in memory."""
    from profinsight.timeline import index as tlindex
    from profinsight.timeline import persist

    tl.tracks(prof)
    folder = _entry(prof) / persist.folder_name()
    assert {p.name for p in folder.iterdir()} == {"index.json", "arrays.bin", "slices.parquet"}
    assert not list(_entry(prof).glob(".tmp-*"))

    def no_build(*a):
        raise AssertionError("rebuilt although a current copy is in the cache")

    monkeypatch.setattr(tlindex, "build_rank", no_build)
    again = tlindex.TimelineIndex(prof)
    monkeypatch.undo()
    fresh = tlindex.TimelineIndex(prof, cache=False)
    assert again.tracks == fresh.tracks and again.origin_ns == fresh.origin_ns
    _same_answers(again, fresh, tl.tracks(prof))


def test_index_version_change_rebuilds(prof, monkeypatch):
    from profinsight.timeline import index as tlindex
    from profinsight.timeline import lod as tllod
    from profinsight.timeline import persist

    tl.tracks(prof)
    built = []
    real = tlindex.build_rank
    monkeypatch.setattr(tlindex, "build_rank", lambda *a: built.append(1) or real(*a))
    monkeypatch.setattr(tllod, "TIMELINE_VERSION", tllod.TIMELINE_VERSION + 100)
    idx = tlindex.TimelineIndex(prof)
    assert built == [1]
    names = sorted(p.name for p in _entry(prof).iterdir() if p.name.startswith(persist.PREFIX))
    assert names == [persist.folder_name()]  # the older version was removed
    tlindex.TimelineIndex(prof)
    assert built == [1]
    assert idx.tracks == tlindex.TimelineIndex(prof, cache=False).tracks


def test_interrupted_write_leaves_no_index(prof, monkeypatch):
    """A write that fails half-way leaves neither a partial index nor its temporary folder, and
    the index still works from memory."""
    import pyarrow.parquet as pq

    from profinsight.timeline import index as tlindex
    from profinsight.timeline import lod as tllod
    from profinsight.timeline import persist

    monkeypatch.setattr(tllod, "TIMELINE_VERSION", tllod.TIMELINE_VERSION + 200)

    def full_disk(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pq, "write_table", full_disk)
    idx = tlindex.TimelineIndex(prof)
    assert not (_entry(prof) / persist.folder_name()).exists()
    assert not list(_entry(prof).glob(".tmp-*"))
    assert idx.parts[0].rows is not None and idx.slice_table()
    assert tl.search(prof, "matmul", 3)["total"] > 0


def test_search_view_is_lazy_and_reads_the_parquet(prof):
    from profinsight.timeline import index as tlindex

    tl.tracks(prof)
    idx = tlindex.TimelineIndex(prof)
    assert idx._table is None  # opening the timeline makes no DuckDB copy
    name = idx.slice_table()
    sql = prof.connection().sql(f"select sql from duckdb_views() where view_name = '{name}'").fetchall()[0][0]
    assert "read_parquet" in sql and "slices.parquet" in sql
    n = prof.connection().sql(f"select count(*) from {name}").fetchall()[0][0]
    assert n == sum(t["rows"] for t in idx.tracks if t["kind"] == "slice")


# --- range statistics and idle gaps by window (timeline/ranges.py) ------------------------------
def _window_sql(prof, a, b, tracks=None):
    where = f"start_ns < {b} AND (start_ns + dur_ns > {a} OR start_ns >= {a})"
    if tracks:
        where += " AND track IN (" + ", ".join(f"'{t}'" for t in tracks) + ")"
    table = tl.index_of(prof).slice_table()
    return (
        prof.connection()
        .sql(
            f"SELECT name, count(*) n, sum(dur_ns) total, min(dur_ns) lo, max(dur_ns) hi FROM {table} WHERE {where} "
            "GROUP BY name"
        )
        .df()
    )


def test_range_stats_equal_sql_over_the_window(prof):
    tree = tl.tracks(prof)
    s, e = tree["start_ns"], tree["end_ns"]
    a, b = s + (e - s) // 3, s + 2 * (e - s) // 3
    st = tl.range_stats(prof, a, b)
    want = _window_sql(prof, a, b)
    assert st["count"] == int(want["n"].sum()) and st["total_ns"] == int(want["total"].sum())
    assert st["names_total"] == len(want)
    got = {r["name"]: r for r in st["names"]}
    for w in want.itertuples():
        r = got[w.name]
        assert (r["count"], r["total_ns"], r["min_ns"], r["max_ns"]) == (w.n, w.total, w.lo, w.hi)
        assert r["avg_ns"] == pytest.approx(w.total / w.n) and 0 <= r["self_ns"] <= r["total_ns"]
    totals = [r["total_ns"] for r in st["names"]]
    assert totals == sorted(totals, reverse=True)
    # one stream: the compute kernels have no children, so self equals total
    ids = ["r0/stream/2"]
    one = tl.range_stats(prof, a, b, ids)
    w = _window_sql(prof, a, b, ids)
    assert one["tracks"] == 1 and one["count"] == int(w["n"].sum()) > 0
    assert all(r["self_ns"] == r["total_ns"] for r in one["names"])
    with pytest.raises(ProfileError):
        tl.range_stats(prof, b, a)
    with pytest.raises(ProfileError):
        tl.range_stats(prof, a, b, ["r0/nope"])


def test_range_self_time_of_nested_slices():
    import numpy as np

    # a [0, 100) holding b [10, 40) (holding c [12, 20)) and d [50, 60); e [200, 210) alone
    start = np.array([0, 10, 12, 50, 200], np.int64)
    dur = np.array([100, 30, 8, 10, 10], np.int64)
    depth = np.array([0, 1, 2, 1, 0], np.int32)
    assert tl.self_times(start, dur, depth).tolist() == [100 - 30 - 10, 30 - 8, 8, 10, 10]


def test_range_stats_self_time_on_the_host_thread(prof):
    # on a properly nested thread the self times add up to its level-0 slices (8 levels here)
    tid = "r0/thread/3096504.3105075"
    tree = tl.tracks(prof)
    st = tl.range_stats(prof, tree["start_ns"], tree["end_ns"] + 1, [tid])
    table = tl.index_of(prof).slice_table()
    top = prof.connection().sql(f"SELECT sum(dur_ns) FROM {table} WHERE track = '{tid}' AND depth = 0").fetchall()[0][0]
    assert st["count"] == 650
    assert sum(r["self_ns"] for r in st["names"]) == int(top) == 7403750


def test_gaps_by_window(prof):
    gaps = prof.idle_gaps()
    tree = tl.tracks(prof)
    s, e = tree["start_ns"], tree["end_ns"]
    whole = tl.gaps(prof, s, e + 1, 2000)
    assert whole["total"] == whole["shown"] == len(gaps) == sum(len(g["start_ns"]) for g in whole["ranks"].values())
    a, b = s + (e - s) // 2, e
    part = tl.gaps(prof, a, b, 2000)
    inside = gaps[(gaps["start_ns"].astype("int64") < b) & (gaps["end_ns"].astype("int64") > a)]
    assert part["total"] == len(inside) < len(gaps)
    # at most 2 x width gaps travel, the longest ones
    few = tl.gaps(prof, s, e + 1, 10)
    assert few["total"] == len(gaps) and few["shown"] == 20
    lens = sorted((gaps["end_ns"] - gaps["start_ns"]).astype("int64").tolist(), reverse=True)
    got = sorted((np.subtract(g["end_ns"], g["start_ns"]).tolist() for g in few["ranks"].values()), key=len)[0]
    assert sorted(got, reverse=True) == lens[:20]


def test_capped_tracks_answer_their_first_levels(prof):
    """``lanes`` ({track: N}) answers only a capped host thread's first N levels, exactly the
    rows the full answer has there; other tracks are untouched."""
    host = max(_tracks(prof, unit_kind="host"), key=lambda t: t["depth"])
    assert host["depth"] > 8
    dev = _tracks(prof, unit_kind="device")[0]["id"]
    t0, t1 = tl.tracks(prof)["start_ns"], tl.tracks(prof)["end_ns"] + 1
    full = tl.slice_columns(prof, t0, t1, [host["id"], dev], 2000)
    capped = tl.slice_columns(prof, t0, t1, [host["id"], dev], 2000, lanes={host["id"]: 8})
    keep = full[host["id"]]["depth"] < 8
    assert 0 < keep.sum() < len(keep)
    for k in ("start_ns", "dur_ns", "depth", "id", "name", "merged", "count"):
        assert list(capped[host["id"]][k]) == list(full[host["id"]][k][keep])
        assert list(capped[dev][k]) == list(full[dev][k])
