"""The cluster view of an N-rank job from the ranks' own summaries (``profinsight ranks --tier
summary``) against ``msprof-analyze cluster -m all`` on the same data, in the same script; and the
full import of every rank in local processes against a Dask ``LocalCluster``.

The data: ``generate.py`` with ``--ranks N --group-size G --link`` (copies of the real Level1 rank,
data-parallel groups of G with one rank per group slowed by ``--slow-us``; ranks > 0 hard-link
rank 0's unchanged files, so 1,024 ranks take ~0.13 GB), under ``benchmarks/data/`` (git-ignored)
and deleted at the end unless ``--keep``.  Each measurement is its own process, so every figure
is cold where it says cold: a fresh ``PROFINSIGHT_CACHE`` for ours (msprof-analyze keeps none);
"warm" is the same command again with that cache.  msprof-analyze runs from its own virtual
environment (``--msprof-analyze PATH``; ``python -m venv /tmp/msa && /tmp/msa/bin/pip install
msprof-analyze``) on a copy of the data (it writes ``cluster_analysis_output`` into it).  Every
figure is printed with the load average (1 min) read just before it: the machine may be shared,
and a ratio is only meaningful between figures of the same run.

    python benchmarks/cluster_summary.py --ranks 64 --msprof-analyze ../peers/msa/bin/msprof-analyze
    python benchmarks/cluster_summary.py --ranks 1024            # cold, warm, peak RSS; no peer
    python benchmarks/cluster_summary.py --ranks 64 --full-import --workers 2   # + local vs Dask(2)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def load1() -> float:
    return os.getloadavg()[0]


def timed(cmd: list[str], env: dict | None = None) -> dict:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MB) of the child (``wait4``'s
    usage: the child and the processes it waited for), the load average before, and the output
    tail.  On a loaded machine the CPU seconds move far less than the wall seconds."""
    import tempfile

    load = load1()
    with tempfile.TemporaryFile() as out:
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}):\n{text[-2000:]}")
    return {
        "s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "load1": load,
        "tail": text[-300:],
    }


def _child_full(run: str, how: str, workers: int) -> None:
    """One full import of every rank (``how``: local | dask), printed as JSON."""
    os.environ.setdefault("PROFINSIGHT_CACHE", "off")
    from profinsight.api import load_parallel

    out: dict = {"load1": load1()}
    t = time.perf_counter()
    if how == "local":
        p = load_parallel(run, workers=workers)
    else:
        from distributed import Client, LocalCluster

        with (
            LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
            ) as cluster,
            Client(cluster) as client,
        ):
            out["cluster_start_s"] = round(time.perf_counter() - t, 2)
            t1 = time.perf_counter()
            p = load_parallel(run, client=client)
            out["load_s"] = round(time.perf_counter() - t1, 2)
            out["ran_on_workers"] = sum(1 for r in p._ranks if r.loaded_by and r.loaded_by["worker"])
    out["wall_s"] = round(time.perf_counter() - t, 2)
    out["ranks"] = len(p.ranks)
    out["source_mb"] = round(sum(f.stat().st_size for r in p._ranks for f in r.source.files) / 1e6, 1)
    out["errors"] = sum(1 for d in p.diagnostics if d.severity == "error")
    print(json.dumps(out))


def full_import(run: Path, workers: int, root: Path) -> dict:
    """Every rank imported (traces and all) into a fresh cache: local processes, then a Dask
    LocalCluster of as many worker processes, each in its own child process."""
    res = {}
    for how in ("local", "dask"):
        cache = root / f"cache_full_{how}"
        shutil.rmtree(cache, ignore_errors=True)
        env = dict(os.environ, PROFINSIGHT_CACHE=str(cache))
        m = timed([sys.executable, __file__, "--child-full", str(run), how, str(workers)], env)
        d = json.loads(m["tail"].strip().splitlines()[-1])
        d["process_s"] = m["s"]
        load_s = d.get("load_s", d["wall_s"])
        d["mb_per_s"] = round(d["source_mb"] / load_s, 1)
        d["per_rank_mb"] = round(d["source_mb"] / d["ranks"], 2)
        d["per_rank_s"] = round(load_s * workers / d["ranks"], 3)  # one worker's time per rank
        d["per_rank_mb_per_s"] = round(d["per_rank_mb"] / d["per_rank_s"], 1)
        res[how] = d
        shutil.rmtree(cache, ignore_errors=True)
    res["dask_vs_local_load"] = round(res["dask"]["load_s"] / res["local"]["wall_s"], 2)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--group-size", type=int, default=8)
    ap.add_argument("--slow-us", type=int, default=10_000)
    ap.add_argument("--msprof-analyze", default=None, help="the msprof-analyze executable of its own venv")
    ap.add_argument("--warm", type=int, default=3, help="warm runs (the best and every one are printed)")
    ap.add_argument("--full-import", action="store_true", help="also import every rank in full: local vs Dask")
    ap.add_argument("--workers", type=int, default=2, help="processes / Dask workers of the full import")
    ap.add_argument("--keep", action="store_true", help="keep the generated data (benchmarks/data/cluster_N)")
    ap.add_argument("--child-full", nargs=3, metavar=("RUN", "HOW", "WORKERS"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child_full:
        return _child_full(a.child_full[0], a.child_full[1], int(a.child_full[2]))
    import compileall

    from generate import generate_ascend

    import profinsight

    # as installed from a wheel: the package's bytecode compiled (an editable checkout with
    # PYTHONDONTWRITEBYTECODE=1 would compile ~120 modules from source in every run)
    compileall.compile_dir(str(Path(profinsight.__file__).parent), quiet=1)
    root = HERE / "data" / f"cluster_{a.ranks}"
    shutil.rmtree(root, ignore_errors=True)
    res: dict = {"ranks": a.ranks, "cpus": os.cpu_count(), "load_before": os.getloadavg()}
    t = time.perf_counter()
    info = generate_ascend(
        0, root, ranks=a.ranks, copies=1, check=False, group_size=a.group_size, slow_us=a.slow_us, link=True
    )
    res["generate_s"] = round(time.perf_counter() - t, 2)
    res["data_mb_on_disk"] = round(
        int(subprocess.run(["du", "-sb", str(root)], capture_output=True, text=True).stdout.split()[0]) / 1e6, 1
    )
    run = root / "ascend"
    out = root / "ranks.json"
    env = dict(os.environ, PROFINSIGHT_CACHE=str(root / "cache"))
    cmd = [sys.executable, "-m", "profinsight.cli", "ranks", str(run), "--tier", "summary", "--format", "json"]
    cmd += ["-o", str(out)]
    res["profinsight_summary_cold"] = cold = timed(cmd, env)
    res["profinsight_summary_warm"] = [timed(cmd, env) for _ in range(a.warm)]
    res["profinsight_summary_warm_best_s"] = min(w["s"] for w in res["profinsight_summary_warm"])
    d = json.loads(out.read_text())
    named = sorted({g["slow_rank"] for g in d["groups"] if g["slow_rank"] is not None})
    res["slow_ranks_named_equal_expected"] = named == sorted(info["groups"]["slow_ranks"].values())
    res["slow_ranks_named"] = len(named)
    if a.msprof_analyze:
        peer = root / "peer"
        shutil.copytree(run, peer, copy_function=os.link)  # msprof-analyze only adds its output folder
        res["msprof_analyze_all"] = m = timed([a.msprof_analyze, "cluster", "-d", str(peer), "-m", "all"])
        res["speedup_cold"] = round(m["s"] / cold["s"], 2)
        res["speedup_cold_cpu"] = round(m["cpu_s"] / cold["cpu_s"], 2)
        res["speedup_warm"] = round(m["s"] / res["profinsight_summary_warm_best_s"], 2)
    if a.full_import:
        res["full_import"] = full_import(run, a.workers, root)
    res["load_after"] = os.getloadavg()
    for v in [res.get("profinsight_summary_cold"), res.get("msprof_analyze_all"), *res["profinsight_summary_warm"]]:
        if isinstance(v, dict):
            v.pop("tail", None)
    print(json.dumps(res, indent=2, default=str))
    if not a.keep:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
