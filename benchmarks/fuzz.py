"""The long mutation campaign: ``--cases`` damaged copies of the real fixtures (text, DB, msprof
DB and Kineto), each loaded and judged as ``tests/importers/test_fuzz.py`` judges its CI-sized
run (the generator and the judge are ``tests/_mutations.py``).  Prints, per mutation class, the
cases, how many of them damage data, crashes, hangs, whole-rank losses, silent cases (a damaging
case without a new diagnostic naming the damaged file), tables changed that the damage does not
feed, and the seconds per case; then the figures the damage issue's "done when" asks for, with
the wall time and the load average.  Every failing case goes to ``--out`` (JSON) with what
reproduces it.  Exit status 1 when any case failed.

    python benchmarks/fuzz.py --cases 2000 --seed 1 --out benchmarks/results/fuzz.json
    python benchmarks/fuzz.py --cases 300 --seed 7 --start 300      # the next 300 cases of seed 7
    python benchmarks/fuzz.py --cases 100 --classes db.swap,kineto.event

One case costs 0.4-1.6 s on a 2-core machine (the Ascend text rank is the slow one): 2,000 cases
take about 45-55 minutes.  Cases of one run are split with ``--start`` / ``--cases`` and the same
``--seed``; case ``i`` of seed ``s`` is always the same damage.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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
    ap.add_argument("--classes", default=None, help="comma-separated mutation classes to run (default: all, in turn)")
    args = ap.parse_args(argv)
    only = [c.strip() for c in args.classes.split(",")] if args.classes else None
    unknown = sorted(set(only or ()) - set(M.CLASSES))
    if unknown:
        ap.error(f"unknown classes {', '.join(unknown)}; known: {', '.join(sorted(M.CLASSES))}")
    fixtures = args.fixtures or Path(os.environ.get("PROFINSIGHT_FIXTURES") or ROOT.parent / "shared" / "fixtures")
    own_cache = None if os.environ.get("PROFINSIGHT_CACHE") else tempfile.mkdtemp(prefix="fuzz-cache-")
    if own_cache:
        os.environ["PROFINSIGHT_CACHE"] = own_cache
    try:
        return _run(args, only, fixtures)
    finally:
        if own_cache:
            shutil.rmtree(own_cache, ignore_errors=True)


def _run(args, only, fixtures: Path) -> int:
    bases: dict = {}
    tally: dict[str, Counter] = defaultdict(Counter)
    failures = []
    load0 = _loadavg()
    t0 = time.perf_counter()
    indices = _indices(args.seed, args.start, args.cases, only)
    for i in indices:
        with tempfile.TemporaryDirectory(prefix="fuzz-case-") as work:
            v = M.run_case(fixtures, args.seed, i, Path(work), bases, args.timeout)
        t = tally[v.mutation.cls]
        t["cases"] += 1
        t["damaging"] += v.mutation.damaging
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
    keys = ("cases", "damaging", "crash", "hang", "lost_rank", "silent", "changed")
    print(f"{'class':22}" + "".join(f"{k:>10}" for k in keys) + f"{'s/case':>9}")
    total = Counter()
    for cls in sorted(tally):
        t = tally[cls]
        total.update(t)
        print(f"{cls:22}" + "".join(f"{t[k]:>10}" for k in keys) + f"{t['seconds'] / t['cases']:>9.2f}")
    print(
        f"{'all':22}" + "".join(f"{total[k]:>10}" for k in keys) + f"{total['seconds'] / max(total['cases'], 1):>9.2f}"
    )
    kinds = Counter()
    for cls, t in tally.items():
        kinds[M.CLASSES[cls][0]] += t["cases"]
    print(
        f"\n{total['cases']} cases ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}), seed {args.seed}, "
        f"from case {args.start}: {wall:.0f} s wall, {wall / max(total['cases'], 1):.2f} s per case; "
        f"load average {load0} -> {_loadavg()}"
    )
    print(
        f"crashes {total['crash']} · hangs {total['hang']} · whole-rank losses {total['lost_rank']} · "
        f"silent cases of damaging classes {total['silent']} · tables changed that the damage does not feed "
        f"{total['changed']} -> {'PASS' if not failures else f'{len(failures)} failing'}"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    summary = {cls: dict(t) for cls, t in sorted(tally.items())}
    args.out.write_text(
        json.dumps(
            {
                "seed": args.seed,
                "start": args.start,
                "cases": total["cases"],
                "wall_s": wall,
                "loadavg": [load0, _loadavg()],
                "totals": {k: total[k] for k in keys},
                "classes": summary,
                "failures": failures,
            },
            indent=1,
        )
    )
    return 1 if failures else 0


def _indices(seed: int, start: int, cases: int, only: list[str] | None) -> list[int]:
    """Case numbers from ``start``: every one, or (``only``) the next ``cases`` of those classes."""
    if not only:
        return list(range(start, start + cases))
    out, i = [], start
    while len(out) < cases:
        if M.case(seed, i)[1] in only:
            out.append(i)
        i += 1
    return out


def _loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


if __name__ == "__main__":
    raise SystemExit(main())
