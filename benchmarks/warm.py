"""Warm figures: what a user waits for the second time, and how fast the command line starts.

Every figure is one ``profinsight`` command in a fresh process (the way a user runs it), on data
scaled from the real fixtures by ``generate.py``, each labelled with the state of the cache:

* ``cold``          empty cache: import, write the Parquet cache, compute every analysis
* ``tables warm``   the Parquet cache is there, the analysis results are not (what a second run
                    cost before results were cached; it is still the cost after a code change)
* ``warm``          tables and results cached: the second run of the same command
* ``-``             no profile involved (start-up of ``--help``, ``view list``, ``doctor --env``)

Wall time is the best of ``--repeat`` runs (the median is kept in the JSON), CPU time is the
child's user + system time, and the load average is read before each run and printed beside the
figure, because this machine is shared.  Child processes run with Python's bytecode cache on
(``PYTHONDONTWRITEBYTECODE`` removed, one untimed run first), as an installed wheel has it.

    python benchmarks/warm.py                                 # 100 MB Ascend text + Kineto
    python benchmarks/warm.py --sizes 1000 --formats ascend   # 1 GB (generates ~1.3 GB; deleted after)
    python benchmarks/warm.py --profile                       # + cProfile of the warm analyze
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MB = 2**20

#: issue targets for this machine (seconds, warm)
TARGETS = {
    ("analyze", 100): 0.7,
    ("analyze", 1000): 1.5,
    ("view", None): 1.0,
    ("--help", None): 0.3,
    ("view list", None): 0.3,
    ("doctor --env", None): 0.3,
}


def loadavg() -> float:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")


def child_env(cache: Path | None) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["COLUMNS"] = "160"
    if cache is not None:
        env["PROFINSIGHT_CACHE"] = str(cache)
    return env


def timed(argv: list[str], env: dict, timeout: float) -> dict:
    """Run ``profinsight ARGV`` once: wall and CPU seconds, exit code, load before."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = loadavg()
    t0 = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-m", "profinsight", *argv],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=timeout,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out = {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "load": load, "rc": r.returncode}
    if r.returncode not in (0, 1):
        out["error"] = r.stderr.strip()[-400:]
    return out


def best(runs: list[dict]) -> dict:
    ok = [r for r in runs if "error" not in r] or runs
    b = min(ok, key=lambda r: r["wall_s"])
    walls = sorted(r["wall_s"] for r in ok)
    return {**b, "median_s": walls[len(walls) // 2], "runs": len(runs), "loads": [r["load"] for r in runs]}


def drop_results(cache: Path) -> None:
    """Remove every cached analysis result, keep the tables."""
    for d in cache.rglob("results-*"):
        if d.is_dir():
            shutil.rmtree(d, ignore_errors=True)


def ensure_data(size: int, fmt: str, data: Path, ranks: int) -> dict:
    folder = data / f"{size}mb-warm"
    summary_path = folder / "generated.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    s = summary.get(fmt)
    if s is None or not Path(s["trace"]).exists() or s.get("ranks", 1) < ranks:
        print(f"  generating {fmt} {size} MB x {ranks} rank(s) in {folder} ...", flush=True)
        cmd = [sys.executable, str(HERE / "generate.py"), "--target-mb", str(size), "--out", str(folder)]
        cmd += ["--format", fmt, "--ranks", str(ranks), "--json"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"generate.py failed:\n{r.stdout}\n{r.stderr}")
        s = json.loads(r.stdout)[fmt]
        summary[fmt] = s
        summary_path.write_text(json.dumps(summary, indent=2))
    return s


def bench(size: int, fmt: str, a) -> list[dict]:
    ranks = 1 if size >= 500 else 2  # the second rank is the other side of `compare`
    gen = ensure_data(size, fmt, a.data, ranks)
    sides = gen["rank_dirs"] if fmt == "ascend" else gen["traces"]
    target, other = sides[0], (sides[1] if len(sides) > 1 else None)
    cache = a.data / "cache" / f"warm_{fmt}_{size}mb"
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True)
    env, to = child_env(cache), a.timeout
    rows = []

    def row(command: str, state: str, runs: list[dict], target_s: float | None = None, ref: str | None = None):
        r = {"data": f"{fmt} {size} MB", "command": command, "state": state, **best(runs)}
        r["target_s"] = target_s
        r["ref"] = ref
        rows.append(r)
        print(fmt_row(r, rows), flush=True)

    # cold: empty cache (one run: the import is the cold benchmark's subject, run.py)
    row("analyze", "cold", [timed(["analyze", target], env, to)])
    tables_warm = []
    for _ in range(1 if size >= 500 else a.repeat):
        drop_results(cache)
        tables_warm.append(timed(["analyze", target], env, to))
    row("analyze", "tables warm", tables_warm)
    if a.profile:  # where a second run's time goes when the results are not cached yet
        drop_results(cache)
        cprofile(["analyze", target], env, to, a.results / f"tables_warm_analyze_{fmt}_{size}mb.txt")
    timed(["analyze", target], env, to)  # results cached by the run above; this one also fills the bytecode
    row(
        "analyze",
        "warm",
        [timed(["analyze", target], env, to) for _ in range(a.repeat)],
        TARGETS.get(("analyze", size)),
        "analyze|tables warm",
    )
    if a.profile:  # and where it goes once they are
        cprofile(["analyze", target], env, to, a.results / f"warm_analyze_{fmt}_{size}mb.txt")
    row(
        "analyze --format json",
        "warm",
        [timed(["analyze", target, "--format", "json"], env, to) for _ in range(a.repeat)],
    )
    row("analyze --lang zh", "warm", [timed(["analyze", target, "--lang", "zh"], env, to) for _ in range(a.repeat)])
    report = a.data / "cache" / "report.html"
    timed(["report", target, "-o", str(report)], env, to)
    row("report -o FILE", "warm", [timed(["report", target, "-o", str(report)], env, to) for _ in range(a.repeat)])
    for view in ("op_summary", "idle_gaps", "step_breakdown"):
        row(
            f"view {view}",
            "warm",
            [timed(["view", view, target], env, to) for _ in range(a.repeat)],
            TARGETS[("view", None)],
        )
    if other is not None:
        timed(["analyze", other], env, to)  # the other side's tables
        drop_results(cache)
        row("compare A B", "tables warm", [timed(["compare", target, other], env, to)])
        row(
            "compare A B",
            "warm",
            [timed(["compare", target, other], env, to) for _ in range(a.repeat)],
            None,
            "compare A B|tables warm",
        )
    if not a.keep_data:
        shutil.rmtree(cache, ignore_errors=True)
        if size >= 500:
            shutil.rmtree(a.data / f"{size}mb-warm", ignore_errors=True)
    return rows


def cprofile(argv: list[str], env: dict, timeout: float, out: Path) -> None:
    """cProfile of ``profinsight ARGV`` in a fresh process, the 30 costliest calls (cumulative)."""
    code = (
        "import cProfile, pstats, io, contextlib\n"
        "from profinsight.cli import main\n"
        "pr = cProfile.Profile(); pr.enable()\n"
        f"with contextlib.redirect_stdout(io.StringIO()): main({argv!r})\n"
        "pr.disable(); s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats('cumulative').print_stats(30)\n"
        "print(s.getvalue())\n"
    )
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(r.stdout + r.stderr)
    print(f"  cProfile of {' '.join(argv[:1])}: {out}", flush=True)


def startup(a) -> list[dict]:
    env, rows = child_env(None), []
    for argv in (["--help"], ["view", "list"], ["view", "--help"], ["doctor", "--env"], ["doctor", "--env", "--deep"]):
        timed(argv, env, a.timeout)  # bytecode
        runs = [timed(argv, env, a.timeout) for _ in range(max(a.repeat, 5))]
        name = " ".join(argv)
        r = {"data": "-", "command": name, "state": "-", **best(runs), "target_s": TARGETS.get((name, None))}
        r["ref"] = None
        rows.append(r)
        print(fmt_row(r, rows), flush=True)
    return rows


HEAD = (
    f"{'data':16} {'command':24} {'state':12} {'wall s':>7} {'median':>7} {'cpu s':>6} {'load':>5} {'target':>7}  ratio"
)


def fmt_row(r: dict, rows: list[dict]) -> str:
    target = f"<{r['target_s']}" if r.get("target_s") else ""
    ok = "" if not r.get("target_s") else (" ok" if r["wall_s"] < r["target_s"] else " MISS")
    ratio = ""
    if r.get("ref"):
        cmd, state = r["ref"].split("|")
        ref = next((x for x in rows if x["command"] == cmd and x["state"] == state and x["data"] == r["data"]), None)
        if ref:
            ratio = f"{ref['wall_s'] / r['wall_s']:.1f}x faster than {state}"
    err = f"  ERROR {r['error']}" if "error" in r else ""
    return (
        f"{r['data']:16} {r['command']:24} {r['state']:12} {r['wall_s']:7.2f} {r['median_s']:7.2f} "
        f"{r['cpu_s']:6.2f} {r['load']:5.2f} {target:>7}{ok}  {ratio}{err}"
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100", help="comma-separated sizes in MB (default 100)")
    ap.add_argument("--formats", default="ascend,kineto", help="ascend,kineto")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--results", type=Path, default=HERE / "results")
    ap.add_argument("--keep-data", action="store_true", help="keep generated data and caches")
    ap.add_argument("--profile", action="store_true", help="cProfile the warm analyze")
    ap.add_argument("--no-startup", action="store_true", help="skip the start-up figures")
    a = ap.parse_args(argv)
    a.data = a.data.resolve()
    print(f"load average before: {Path('/proc/loadavg').read_text().strip()}  ({os.cpu_count()} cores)")
    print(HEAD)
    rows = [] if a.no_startup else startup(a)
    for size in [int(s) for s in a.sizes.split(",") if s]:
        for fmt in [f for f in a.formats.split(",") if f]:
            rows += bench(size, fmt, a)
    a.results.mkdir(parents=True, exist_ok=True)
    out = a.results / f"warm_{time.strftime('%Y%m%d_%H%M%S')}.json"
    out.write_text(json.dumps(rows, indent=2))
    print(f"\nload average after: {Path('/proc/loadavg').read_text().strip()}\nJSON: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
