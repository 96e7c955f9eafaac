"""Engine side of the timeline: values checked against the canonical tables directly."""
from __future__ import annotations

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
    return [t for r in tl.tracks(p)["ranks"] for u in r["units"] for t in u["tracks"]
            if (kind is None or t["kind"] == kind) and (unit_kind is None or u["kind"] == unit_kind)]


def test_track_tree_matches_tables(prof):
    tree = tl.tracks(prof)
    assert [r["rank"] for r in tree["ranks"]] == [0]
    streams = prof.sql("select distinct coalesce(cast(stream as varchar), 'none') s from device_tasks")["s"]
    device = _tracks(prof, unit_kind="device")
    assert sorted(t["id"] for t in device) == sorted(f"r0/stream/{s}" for s in streams)
    assert len(device) == 5
    assert sum(t["rows"] for t in device) == 539
    host = _tracks(prof, unit_kind="host")
    assert sum(t["rows"] for t in host) == 2460 and len(host) == 3
    assert sum(t["rows"] for t in _tracks(prof, unit_kind="api")) == 707
    assert sum(t["rows"] for t in _tracks(prof, unit_kind="slices")) == 382
    assert len(_tracks(prof, unit_kind="communication")) == 1
    assert sum(t["rows"] for t in _tracks(prof, unit_kind="counter")) == 4431
    units = [u["name"] for u in tree["ranks"][0]["units"]]
    assert units[:4] == ["Python", "CANN", "Ascend Hardware", "Communication"]


def test_slices_window_count_exact(prof):
    s2 = prof.sql("select min(start_ns) a, max(start_ns + dur_ns) b from device_tasks where stream = 2")
    a, b = int(s2["a"][0]), int(s2["b"][0])
    lo, hi = a + (b - a) // 4, a + (b - a) // 2
    expected = prof.sql(f"select count(*) n from device_tasks where stream = 2 and start_ns < {hi} "
                        f"and start_ns + dur_ns > {lo}")["n"][0]
    t = tl.slices(prof, lo, hi, ["r0/stream/2"], width_px=10 ** 4)  # 1 px < every task: nothing merged
    px = (hi - lo) / 10 ** 4
    short = prof.sql(f"select count(*) n from device_tasks where stream = 2 and start_ns < {hi} "
                     f"and start_ns + dur_ns > {lo} and dur_ns < {px}")["n"][0]
    assert sum(t.column("count").to_pylist()) == expected
    assert t.num_rows == expected - short + len(set(
        int((s - lo) // px) for s, m in zip(t.column("start_ns").to_pylist(), t.column("merged").to_pylist()) if m))


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
    t = tl.slices(prof, tl.tracks(prof)["start_ns"], tl.tracks(prof)["end_ns"] + 1,
                  ["r0/thread/3096504.3096504"], 20000)
    rows = [r for r in t.to_pylist() if not r["merged"]]
    # a child is deeper than its enclosing parent
    by_id = {r["id"]: r for r in rows}
    deeper = 0
    for r in rows:
        for q in rows:
            if q["depth"] == r["depth"] + 1 and r["start_ns"] <= q["start_ns"] and \
                    q["start_ns"] + q["dur_ns"] <= r["start_ns"] + r["dur_ns"]:
                deeper += 1
                break
    assert deeper > 10 and by_id


def test_nesting_depth_function():
    t = pa.table({"track": ["a"] * 5 + ["b"],
                  "start_ns": [0, 1, 2, 5, 10, 0], "dur_ns": [10, 5, 1, 0, 3, 4]})
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
    link = prof.sql("select host_op_id, count(*) n from launches where host_op_id is not null "
                    "group by 1 order by n desc, 1 limit 1")
    op, n = int(link["host_op_id"][0]), int(link["n"][0])
    f = tl.flows(prof, "host_op", 0, op)
    assert f["selection"]["id"] == op
    uids = prof.sql(f"select distinct task_uid from launches where host_op_id = {op}")["task_uid"]
    assert n > 0 and sorted({x["to"]["id"] for x in f["flows"]}) == sorted(int(u) for u in uids)
    task = f["flows"][0]["to"]
    assert task["track"].startswith("r0/stream/")
    back = tl.flows(prof, "device_task", 0, task["id"])
    assert any(x["from"]["kind"] == "host_op" and x["from"]["id"] == op for x in back["flows"])
    with pytest.raises(UnknownTable):
        tl.flows(prof, "host_op", 0, 10 ** 9)


def test_search_and_details(prof):
    hits = tl.search(prof, "MATMUL", limit=5)
    n = sum(int(prof.sql(f"select count(*) n from {t} where lower(name) like '%matmul%'")["n"][0])
            for t in ("device_tasks", "host_ops", "api_calls", "trace_slices", "comm_ops"))
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
