"""Range statistics of the timeline (timeline/ranges.py) over a million slices.

    python benchmarks/range_stats.py [--slices 1000000] [--tracks 8]

Builds per-track level-of-detail tables of nested slices (a parent of 9 us holding four 1.5 us
children, 300 names) and times ``range_stats`` over the whole extent and over a third of it:
wall time and the process's CPU time (on a loaded machine the CPU figure is the one to read).
Checks the answer: every slice counted once, self times adding up to the parents' time.
"""

from __future__ import annotations

import argparse
import statistics
import time
from types import SimpleNamespace

import numpy as np
import pyarrow as pa

from profinsight.timeline import ranges
from profinsight.timeline.index import nesting_depth
from profinsight.timeline.lod import SliceTrack


def build(slices: int, tracks: int) -> tuple[SimpleNamespace, int]:
    rng = np.random.default_rng(0)
    names = np.array([f"op{i}" for i in range(300)], dtype=object)
    idx = SimpleNamespace(slice_tracks={}, names_of={})
    parents = slices // tracks // 5
    for t in range(tracks):
        ps = np.arange(parents, dtype=np.int64) * 10_000
        cs = (ps[:, None] + np.arange(4)[None, :] * 2_000 + 100).ravel()
        start = np.concatenate([ps, cs])
        dur = np.concatenate([np.full(parents, 9_000, np.int64), np.full(len(cs), 1_500, np.int64)])
        o = np.lexsort((-dur, start))
        start, dur = start[o], dur[o]
        depth = nesting_depth(pa.table({"track": pa.array(["t"] * len(start)), "start_ns": start, "dur_ns": dur}))
        codes = rng.integers(0, len(names), len(start)).astype(np.int32)
        idx.slice_tracks[f"t{t}"] = SliceTrack(start, dur, depth, np.arange(len(start)), codes, 0)
        idx.names_of[f"t{t}"] = names
    return idx, parents * 10_000


def timed(fn, n=5):
    wall, cpu, out = [], [], None
    for _ in range(n):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        wall.append((time.perf_counter() - w) * 1e3)
        cpu.append((time.process_time() - c) * 1e3)
    return out, statistics.median(wall), statistics.median(cpu)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--slices", type=int, default=1_000_000)
    ap.add_argument("--tracks", type=int, default=8)
    a = ap.parse_args()
    idx, end = build(a.slices, a.tracks)
    ranges.index_of = lambda profile: idx  # the benchmark's index stands in for a profile's
    n = sum(len(t.m_start) + len(t.l_start) for t in idx.slice_tracks.values())
    whole, w, c = timed(lambda: ranges.range_stats(None, 0, end))
    assert whole["count"] == n
    assert sum(r["self_ns"] for r in whole["names"]) == a.tracks * (a.slices // a.tracks // 5) * 9_000
    print(f"{n:,} slices, whole range: median {w:.0f} ms wall, {c:.0f} ms CPU")
    third, w, c = timed(lambda: ranges.range_stats(None, end // 3, 2 * end // 3))
    print(f"a third ({third['count']:,} slices): median {w:.0f} ms wall, {c:.0f} ms CPU")


if __name__ == "__main__":
    main()
