"""JSON vs Arrow IPC for the timeline slices answer (the figures in docs/server.md).

    python benchmarks/timeline_wire.py PATH [PATH...]

For each profile: the index build time, then for every slice track at 1600 px over the whole
profile and over a 1/20 window: rows, query ms, encode ms and bytes for JSON (columnar per
track, as the server sends it) and Arrow IPC (gzip size too, as a proxy for compressed
transport).  Median of 5 runs.
"""

from __future__ import annotations

import gzip
import statistics
import sys
import time

import profinsight
from profinsight import timeline as tl
from profinsight.server.wire import arrow_stream, by_track, dumps


def _ms(fn, n=5):
    out, times = None, []
    for _ in range(n):
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1000)
    return out, statistics.median(times)


def main(paths):
    print(
        "| profile | events | window | rows | query ms | JSON bytes (gzip) | JSON encode ms | Arrow bytes (gzip) | Arrow encode ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for path in paths:
        p = profinsight.load(path)
        t0 = time.perf_counter()
        tree = tl.tracks(p)
        build = time.perf_counter() - t0
        ids = [t["id"] for r in tree["ranks"] for u in r["units"] for t in u["tracks"] if t["kind"] == "slice"]
        events = sum(t["rows"] for r in tree["ranks"] for u in r["units"] for t in u["tracks"] if t["kind"] == "slice")
        span = tree["end_ns"] - tree["start_ns"]
        origin = tree["origin_ns"]
        for label, (s, e) in {
            "whole": (tree["start_ns"], tree["end_ns"] + 1),
            "1/20": (tree["start_ns"] + span // 2, tree["start_ns"] + span // 2 + span // 20),
        }.items():
            table, q = _ms(lambda: tl.slices(p, s, e, ids, 1600))  # noqa: B023 - called at once
            js, jms = _ms(lambda: dumps({"origin_ns": str(origin), "tracks": by_track(table, origin)}))  # noqa: B023
            ar, ams = _ms(lambda: arrow_stream(table, origin_ns=origin))  # noqa: B023
            print(
                f"| {path} (index {build:.1f} s) | {events:,} | {label} | {table.num_rows:,} | {q:.1f} | "
                f"{len(js):,} ({len(gzip.compress(js)):,}) | {jms:.1f} | {len(ar):,} ({len(gzip.compress(ar)):,}) | {ams:.1f} |"
            )


if __name__ == "__main__":
    main(sys.argv[1:] or ["../shared/fixtures/ascend_pt/text_level1/rank0_ascend_pt"])
