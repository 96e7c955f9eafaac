"""What damage costs the import: a scaled rank (``benchmarks/generate.py``; an Ascend text rank
folder or a plain Kineto trace) with N events broken, spread evenly over its trace
(``trace_view.json``, or the Kineto file), imported cold in a child process.

Each damaged place removes the closing quote of one ``"name"`` key, so exactly one event is not
valid JSON there; every other file of an Ascend rank is a hard link to the original.  The table
gives, per N, the import's wall and CPU seconds (best of ``--repeat``), what it costs beyond the
undamaged copy per damaged place, and the host ops, device tasks and trace slices read (the same
for every run of one N: a run that reads fewer lost more than the damage).

    python benchmarks/generate.py --target-mb 100 --out benchmarks/data/100mb
    python benchmarks/damaged.py [--rank benchmarks/data/100mb/ascend/rank0_ascend_pt] [--places 0,5,40]
    python benchmarks/damaged.py --rank benchmarks/data/100mb/kineto/bench_rank0.pt.trace.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRACE = Path("ASCEND_PROFILER_OUTPUT") / "trace_view.json"

_CHILD = """
import json, os, resource, sys, tempfile, time
os.environ["PROFINSIGHT_CACHE"] = tempfile.mkdtemp(prefix="dmg-cache-")
import profinsight
t = time.perf_counter()
p = profinsight.load(sys.argv[1])
counts = p.row_counts()
wall = time.perf_counter() - t
r = resource.getrusage(resource.RUSAGE_SELF)
skipped = [d.message for d in p.diagnostics if d.code == "malformed-events"]
print(json.dumps({"wall": wall, "cpu": r.ru_utime + r.ru_stime, "host_ops": counts.get("host_ops"),
                  "tasks": counts.get("device_tasks"), "slices": counts.get("trace_slices"), "skipped": skipped}))
"""


def trace_of(rank: Path) -> Path:
    """The trace file of ``rank``: the file itself (Kineto) or the rank folder's trace_view.json."""
    return rank if rank.is_file() else rank / TRACE


def damaged_copy(rank: Path, places: int, out: Path) -> Path:
    """``rank`` with ``places`` events of its trace broken, under ``out`` (a folder of hard links
    and the damaged trace for an Ascend rank, the damaged file for a Kineto trace)."""
    dest = out / f"{places}_places" / rank.name
    if rank.is_file():
        dest.parent.mkdir(parents=True)
        target = dest
    else:
        shutil.copytree(rank, dest, copy_function=os.link)
        target = dest / TRACE
        os.unlink(target)
    data = bytearray(trace_of(rank).read_bytes())
    for k in range(places):
        at = data.find(b'"name":', int(len(data) * (k + 0.5) / places))
        data[at + 5] = ord("x")  # "name" -> "namex: the key's closing quote is gone
    target.write_bytes(bytes(data))
    return dest


def measure(path: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rank", type=Path, default=ROOT / "benchmarks/data/100mb/ascend/rank0_ascend_pt")
    ap.add_argument("--places", default="0,5,40", help="comma list: damaged events per run")
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args(argv)
    if not trace_of(a.rank).is_file() or trace_of(a.rank).name.endswith(".gz"):
        print(f"{trace_of(a.rank)}: no plain trace there; generate the rank first (see --help)", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="dmg-", dir=a.rank.parent.parent))
    rows, base = [], None
    try:
        for n in (int(x) for x in a.places.split(",")):
            path = a.rank if n == 0 else damaged_copy(a.rank, n, work)
            runs = [measure(path) for _ in range(a.repeat)]
            best = min(runs, key=lambda r: r["wall"])
            if n == 0:
                base = best
            extra = (best["wall"] - base["wall"]) / n if n and base else None
            rows.append((n, best, extra))
            print(
                f"{n:4d} places  {best['wall']:6.2f} s wall  {best['cpu']:6.2f} s CPU  "
                f"{'' if extra is None else f'+{extra * 1000:.0f} ms a place  '}"
                f"host_ops {best['host_ops']}  tasks {best['tasks']}  slices {best['slices']}",
                flush=True,
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load = os.getloadavg()[0]
    print(
        "\n| damaged events | import wall / CPU | beyond undamaged, a place | host ops | device tasks | slices |"
        "\n|---|---|---|---|---|---|"
    )
    for n, best, extra in rows:
        print(
            f"| {n} | {best['wall']:.2f} s / {best['cpu']:.2f} s | "
            f"{'-' if extra is None else f'{extra * 1000:.0f} ms'} | {best['host_ops']:,} | {best['tasks']:,} | {best['slices']:,} |"
        )
    print(f"\nbest of {a.repeat} cold imports each (the Parquet cache written); load {load:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
