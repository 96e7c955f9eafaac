#!/usr/bin/env python
"""This tree's code against a git revision's, one ``profinsight`` command run in turn: the way
every "N alternating pairs" figure of benchmarks/README.md is taken.

Why in turn: on a shared 2-core machine a whole command moves by 10-50% between minutes, more
than most changes do.  Runs of the two codes one after the other see the same minute, so the
difference of each pair says more than two medians taken apart; the table gives both, each pair's
difference, and how many pairs the change made faster.

The revision is checked out into a temporary git worktree (removed at the end); its compiled
scanner is copied from this tree when its ``_scan.c`` is the same, else built there (a scanner of
another source would not load: that side would read with DuckDB alone).  Both trees are
byte-compiled first, and every run starts a fresh process with an empty ``PROFINSIGHT_CACHE``
(cold; ``--warm`` keeps one cache per side, filled by an untimed first run).  Each side imports its
own tree through ``PYTHONPATH``, ahead of whatever is installed.

    python benchmarks/pairs.py --base HEAD --pairs 10 -- analyze benchmarks/data/100mb/kineto/bench_rank0.pt.trace.json
    python benchmarks/pairs.py --base 6118d31 --warm -- compare RUN_A RUN_B
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SCANNER = Path("src/profinsight/importers/chrome_trace")
RESULTS = HERE / "results"

sys.path.insert(0, str(HERE))
from peers import measure  # noqa: E402


def pair_summary(base: list[dict], new: list[dict]) -> dict:
    """The figures of runs taken in turn (``base[i]`` just before ``new[i]``): each side's median
    wall, CPU and peak RSS, each pair's wall difference (new - base, s) where both succeeded, how
    many of those pairs ``new`` was faster or equal in, and the load range over all runs."""
    out = {}
    for name, runs in (("base", base), ("new", new)):
        ok = [r for r in runs if not r["rc"]]
        out[name] = {
            "runs": len(runs),
            "failed": len(runs) - len(ok),
            **{
                k: (round(statistics.median(r[k] for r in ok), 3) if ok else None)
                for k in ("wall_s", "cpu_s", "peak_rss_mb")
            },
        }
    diffs = [round(n["wall_s"] - b["wall_s"], 3) for b, n in zip(base, new) if not b["rc"] and not n["rc"]]
    out["pair_diffs_s"] = diffs
    out["median_diff_s"] = round(statistics.median(diffs), 3) if diffs else None
    out["new_faster_or_equal"] = sum(d <= 0 for d in diffs)
    loads = [r["load"] for r in base + new]
    out["load"] = [min(loads), max(loads)] if loads else None
    return out


def report(s: dict, base_rev: str, args: list[str]) -> str:
    """The summary as the lines the README quotes."""
    b, n = s["base"], s["new"]
    lines = [f"profinsight {' '.join(args)}: {base_rev} (base) against this tree, {b['runs']} pairs in turn"]
    for name, side in (("base", b), ("this tree", n)):
        failed = f", {side['failed']} failed" if side["failed"] else ""
        lines.append(
            f"  {name:9s} wall {side['wall_s']} s, CPU {side['cpu_s']} s, peak {side['peak_rss_mb']} MB (medians{failed})"
        )
    if s["pair_diffs_s"]:
        lines.append(
            f"  pairs (this tree - base): {', '.join(f'{d:+.2f}' for d in sorted(s['pair_diffs_s']))} s; "
            f"median {s['median_diff_s']:+.3f} s; faster or equal in {s['new_faster_or_equal']} of {len(s['pair_diffs_s'])}"
        )
    if s["load"]:
        lines.append(f"  load average {s['load'][0]:.2f}-{s['load'][1]:.2f}")
    return "\n".join(lines)


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()


def checkout(rev: str, where: Path) -> Path:
    """A worktree of ``rev`` at ``where`` with a scanner that loads (copied or built)."""
    _git("worktree", "add", "--detach", str(where), rev)
    ours, theirs = ROOT / SCANNER, where / SCANNER
    if (ours / "_scan.c").read_bytes() == (theirs / "_scan.c").read_bytes():
        for so in ours.glob("_scan_native*"):
            shutil.copy2(so, theirs / so.name)
    else:
        build = "from profinsight.importers.chrome_trace import _native_build as b; print(b.build())"
        subprocess.run([sys.executable, "-c", build], env={**os.environ, "PYTHONPATH": str(where / "src")}, check=False)
    return where


def run(base_rev: str, args: list[str], pairs: int, warm: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="pi_pairs_") as tmp:
        tmp = Path(tmp)
        base_tree = checkout(base_rev, tmp / "base")
        try:
            trees = {"base": base_tree / "src", "new": ROOT / "src"}
            for src in trees.values():
                subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True)
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

            def one(side: str) -> dict:
                cache = tmp / f"cache_{side}"
                if not warm:
                    shutil.rmtree(cache, ignore_errors=True)
                cache.mkdir(exist_ok=True)
                side_env = {**env, "PYTHONPATH": str(trees[side]), "PROFINSIGHT_CACHE": str(cache)}
                return measure([sys.executable, "-m", "profinsight", *args], env=side_env)

            if warm:  # fill each side's cache, untimed
                for side in ("base", "new"):
                    one(side)
            runs = {"base": [], "new": []}
            for _ in range(pairs):
                for side in ("base", "new"):
                    runs[side].append(one(side))
        finally:
            _git("worktree", "remove", "--force", str(base_tree))
    return {"base": runs["base"], "new": runs["new"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="HEAD", help="the git revision to compare against (default HEAD)")
    ap.add_argument("--pairs", type=int, default=10, help="pairs of runs (default 10)")
    ap.add_argument("--warm", action="store_true", help="keep each side's cache (filled by an untimed run)")
    ap.add_argument("--results", type=Path, default=RESULTS, help="where the JSON goes")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- then the profinsight command and its arguments")
    a = ap.parse_args()
    args = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not args:
        ap.error("give the profinsight command after --, e.g. -- analyze PATH")
    base_rev = _git("rev-parse", "--short", a.base)
    runs = run(base_rev, args, max(1, a.pairs), a.warm)
    s = pair_summary(runs["base"], runs["new"])
    print(report(s, base_rev, args))
    a.results.mkdir(parents=True, exist_ok=True)
    out = a.results / f"pairs_{time.strftime('%Y%m%d-%H%M%S')}.json"
    strip = [{k: v for k, v in r.items() if k != "tail"} for r in runs["base"] + runs["new"]]
    out.write_text(json.dumps({"base": base_rev, "args": args, "summary": s, "runs": strip}, indent=1))
    print(f"results: {out}")
    failed = [r for r in runs["base"] + runs["new"] if r["rc"]]
    if failed:
        print(f"a run failed (exit {failed[0]['rc']}):\n{failed[0]['tail'][-2000:]}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
