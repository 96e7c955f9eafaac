"""Time every registered analysis on a (scaled) profile, warm: the tables come from the cache,
as they do when a user re-opens a profile.  Not a test.

    python benchmarks/generate.py --target-mb 1000 --out benchmarks/data/1000mb --format ascend
    python benchmarks/analyses.py benchmarks/data/1000mb/ascend/rank0_ascend_pt

The first load imports into the cache (PROFINSIGHT_CACHE, default benchmarks/data/cache/analyses);
then a fresh process loads from the cache and runs each analysis once, printing seconds each and
the total (the issue's budget: under 5 s for all analyses on the ~1 GB profile).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import profinsight
from profinsight.registry import all_analyses

import profinsight.api  # noqa: F401 - fills the analysis table
p = profinsight.load(sys.argv[1])
t_load = time.perf_counter() - t0
# module imports (pandas, DuckDB, the analysis modules) are process start-up, not analysis
# work: paid once here and reported on their own
t1 = time.perf_counter()
import pandas, duckdb  # noqa: E401,F401
all_analyses()
p.connection()
t_imports = time.perf_counter() - t1
out = {"load_s": t_load, "imports_s": t_imports, "analyses": {}}
skip = set(sys.argv[2].split(",")) if len(sys.argv) > 2 and sys.argv[2] else set()
for name in sorted(all_analyses()):
    if name in skip:
        continue
    t = time.perf_counter()
    try:
        df = p.view(name)
        out["analyses"][name] = {"s": time.perf_counter() - t, "rows": int(len(df))}
    except Exception as exc:  # report, do not hide
        out["analyses"][name] = {"s": time.perf_counter() - t, "error": f"{type(exc).__name__}: {exc}"}
print(json.dumps(out))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path")
    ap.add_argument("--skip", default="", help="comma-separated analyses to leave out")
    args = ap.parse_args()
    env = dict(os.environ)
    env.setdefault("PROFINSIGHT_CACHE", str(HERE / "data" / "cache" / "analyses"))
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "import profinsight, sys; profinsight.load(sys.argv[1]).row_counts()", args.path],
        check=True,
        env=env,
    )
    print(f"import (cold or cached): {time.perf_counter() - t:.1f} s")
    r = subprocess.run(
        [sys.executable, "-c", CHILD, args.path, args.skip], check=True, env=env, capture_output=True, text=True
    )
    res = json.loads(r.stdout.strip().splitlines()[-1])
    total = 0.0
    print(f"warm load: {res['load_s']:.3f} s; module imports and SQL views: {res['imports_s']:.3f} s")
    for name, a in sorted(res["analyses"].items(), key=lambda kv: -kv[1]["s"]):
        total += a["s"]
        extra = a.get("error") or f"{a['rows']} rows"
        print(f"  {name:20} {a['s']:7.3f} s  {extra}")
    print(f"all analyses: {total:.2f} s (budget 5 s on the ~1 GB profile)")
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "analyses_latest.json").write_text(json.dumps({"path": args.path, **res, "total_s": total}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
