"""Tool calls of ``profinsight mcp`` on a cached profile, over a real stdio session (the figure in
docs/agents.md; target: median < 300 ms).

    python benchmarks/mcp_tools.py [PATH] [--repeat N]

PATH defaults to the bundled sample.  The server is started with PATH's folder as its root and a
fresh cache; ``load`` runs once (cold import, then the cache is warm), then each tool is called
``--repeat`` times (default 20) with the same arguments, as an agent asking again would.  The
first call of an analysis computes it; later ones read the result kept per profile and
parameters.  Prints a Markdown table: tool, first call ms, median ms, p95 ms; and the median over
every call after the first.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from profinsight.samples import sample_path


def calls(name: str) -> list[tuple[str, dict]]:
    return [
        ("op_summary", {"path": name, "by": "type"}),
        ("step_breakdown", {"path": name}),
        ("idle_gaps", {"path": name}),
        ("utilization", {"path": name}),
        ("advise", {"path": name}),
        ("sql", {"path": name, "query": "SELECT kind, count(*), sum(dur_ns) FROM device_tasks GROUP BY kind"}),
        ("search_slices", {"path": name, "name": "matmul"}),
        ("timeline_window", {"path": name, "resolution": 1000}),
    ]


async def session(path: Path, repeat: int) -> tuple[float, dict[str, list[float]]]:
    env = {**os.environ, "PROFINSIGHT_CACHE": tempfile.mkdtemp(prefix="pi-mcp-bench-")}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "profinsight", "mcp", "--root", str(path.parent)], env=env
    )
    times: dict[str, list[float]] = {}
    async with Client(params, read_timeout_seconds=600) as client:
        t0 = time.perf_counter()
        res = await client.call_tool("load", {"path": path.name})
        load_ms = (time.perf_counter() - t0) * 1000
        if res.is_error:
            raise SystemExit(res.content[0].text)
        for tool, args in calls(path.name):
            for _ in range(repeat):
                t0 = time.perf_counter()
                res = await client.call_tool(tool, args)
                times.setdefault(tool, []).append((time.perf_counter() - t0) * 1000)
                if res.is_error:
                    raise SystemExit(f"{tool}: {res.content[0].text}")
    return load_ms, times


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", nargs="?", default=str(sample_path()))
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    load_ms, times = anyio.run(session, Path(args.path).resolve(), args.repeat)
    print(f"load (cold import): {load_ms:.0f} ms\n")
    print("| tool | first call ms | median ms | p95 ms |")
    print("|---|---|---|---|")
    warm = []
    for tool, ts in times.items():
        rest = ts[1:] or ts
        warm += rest
        p95 = sorted(rest)[max(0, int(len(rest) * 0.95) - 1)]
        print(f"| {tool} | {ts[0]:.1f} | {statistics.median(rest):.1f} | {p95:.1f} |")
    print(f"\nmedian of every repeated call: {statistics.median(warm):.1f} ms (target < 300 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
