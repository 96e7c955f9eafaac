"""The long mutation campaign: ``--cases`` damaged copies of the real fixtures (text, DB, msprof
DB and Kineto), each loaded and judged as ``tests/importers/test_fuzz.py`` judges its CI-sized
run (the generator and the judge are ``tests/_mutations.py``).  Prints, per mutation class, the
cases, crashes, hangs, whole-rank losses, silent cases and tables changed that the damage does
not feed, and writes every failing case to ``--out`` (JSON) with what reproduces it.

    python benchmarks/fuzz.py --cases 2000 --seed 1 --out benchmarks/results/fuzz.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import _mutations as M  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=0, help="first case index (to resume or split a run)")
    ap.add_argument("--timeout", type=int, default=120, help="seconds a load may take before it counts as a hang")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "fuzz.json")
    ap.add_argument("--fixtures", type=Path, default=None)
    args = ap.parse_args(argv)
    fixtures = args.fixtures or Path(os.environ.get("PROFINSIGHT_FIXTURES") or ROOT.parent / "shared" / "fixtures")
    os.environ.setdefault("PROFINSIGHT_CACHE", tempfile.mkdtemp(prefix="fuzz-cache-"))
    bases: dict = {}
    tally: dict[str, Counter] = defaultdict(Counter)
    failures = []
    t0 = time.perf_counter()
    for i in range(args.start, args.start + args.cases):
        with tempfile.TemporaryDirectory(prefix="fuzz-case-") as work:
            v = M.run_case(fixtures, args.seed, i, Path(work), bases, args.timeout)
        t = tally[v.mutation.cls]
        t["cases"] += 1
        t["crash"] += bool(v.crash)
        t["hang"] += v.hang
        t["silent"] += v.silent
        t["changed"] += bool(v.changed)
        t["lost_rank"] += v.lost_rank
        t["seconds"] += v.seconds
        if not v.ok:
            failures.append(
                {
                    "case": v.case,
                    "class": v.mutation.cls,
                    "detail": v.mutation.detail,
                    "crash": v.crash,
                    "hang": v.hang,
                    "silent": v.silent,
                    "changed": v.changed,
                    "lost_rank": v.lost_rank,
                    "reproduce": f"pytest-free: _mutations.run_case(fixtures, {args.seed}, {i}, work, {{}})",
                }
            )
    wall = time.perf_counter() - t0
    keys = ("cases", "crash", "hang", "lost_rank", "silent", "changed")
    print(f"{'class':22}" + "".join(f"{k:>10}" for k in keys) + f"{'s/case':>9}")
    total = Counter()
    for cls in sorted(tally):
        t = tally[cls]
        total.update(t)
        print(f"{cls:22}" + "".join(f"{t[k]:>10}" for k in keys) + f"{t['seconds'] / t['cases']:>9.2f}")
    print(
        f"{'all':22}" + "".join(f"{total[k]:>10}" for k in keys) + f"{total['seconds'] / max(total['cases'], 1):>9.2f}"
    )
    print(f"{args.cases} cases in {wall:.0f} s; {len(failures)} failing")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    summary = {cls: dict(t) for cls, t in sorted(tally.items())}
    args.out.write_text(
        json.dumps({"seed": args.seed, "wall_s": wall, "classes": summary, "failures": failures}, indent=1)
    )
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
