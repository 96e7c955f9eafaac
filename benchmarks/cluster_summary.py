"""The cluster view of an N-rank job from the ranks' own summaries (``profinsight ranks --tier
summary``) against ``msprof-analyze cluster -m all`` on the same data, in the same script.

The data: ``generate.py --ranks N --group-size G`` (copies of the real Level1 rank, data-parallel
groups of G with one rank per group slowed by ``--slow-us``).  Each tool runs as its own process,
cold (a fresh cache for ours; msprof-analyze keeps none) and, for ours, warm (the same cache
again).  msprof-analyze runs from its own virtual environment (``--msprof-analyze PATH`` to its
executable: ``python -m venv /tmp/msa && /tmp/msa/bin/pip install msprof-analyze``); it writes
``cluster_analysis_output`` into a copy of the data.  Prints wall times, peak RSS of each process
and the load average before and after (the machine is shared: figures under load are slower).

    python benchmarks/cluster_summary.py --ranks 64 --group-size 8 --msprof-analyze /tmp/msa/bin/msprof-analyze
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def timed(cmd: list[str], env: dict | None = None) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB) of the child and its output tail."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    return wall, max(peak, before) / 1024, (p.stdout + p.stderr)[-400:]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--group-size", type=int, default=8)
    ap.add_argument("--slow-us", type=int, default=10_000)
    ap.add_argument("--msprof-analyze", default=None, help="the msprof-analyze executable of its own venv")
    ap.add_argument("--keep", type=Path, default=None, help="keep the data here")
    a = ap.parse_args()
    from generate import generate_ascend

    tmp = Path(a.keep or tempfile.mkdtemp(prefix="pi_cluster_"))
    res = {"ranks": a.ranks, "load_before": os.getloadavg()}
    t = time.perf_counter()
    info = generate_ascend(0, tmp, ranks=a.ranks, copies=1, check=False, group_size=a.group_size, slow_us=a.slow_us)
    res["generate_s"] = round(time.perf_counter() - t, 2)
    run = tmp / "ascend"
    out = tmp / "ranks.json"
    env = dict(os.environ, PROFINSIGHT_CACHE=str(tmp / "cache"))
    cmd = [sys.executable, "-m", "profinsight.cli", "ranks", str(run), "--tier", "summary", "--format", "json"]
    cmd += ["-o", str(out)]
    res["profinsight_summary_cold_s"], res["profinsight_cold_peak_rss_mb"], _ = timed(cmd, env)
    res["profinsight_summary_warm_s"], _, _ = timed(cmd, env)
    d = json.loads(out.read_text())
    named = sorted({g["slow_rank"] for g in d["groups"] if g["slow_rank"] is not None})
    res["slow_ranks_named"] = named
    res["slow_ranks_expected"] = sorted(info["groups"]["slow_ranks"].values())
    if a.msprof_analyze:
        peer = tmp / "peer"
        shutil.copytree(run, peer)
        res["msprof_analyze_all_s"], res["msprof_analyze_peak_rss_mb"], res["msprof_analyze_tail"] = timed(
            [a.msprof_analyze, "cluster", "-d", str(peer), "-m", "all"]
        )
        if res["msprof_analyze_all_s"]:
            res["speedup_cold"] = round(res["msprof_analyze_all_s"] / res["profinsight_summary_cold_s"], 2)
    res["load_after"] = os.getloadavg()
    print(json.dumps(res, indent=2, default=str))
    if not a.keep:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
