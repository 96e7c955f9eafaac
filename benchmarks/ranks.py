"""Ranks at scale: load an N-rank Ascend run (copies of the real rank-0 fixture made by
``generate.py``) in local processes and on a ``dask.distributed.LocalCluster`` through the same
``load_parallel``; then name the slow rank of an N-rank profile in which one rank is made slow
the realistic way (longer compute, shorter collective wait, peers wait longer).

    python benchmarks/ranks.py --ranks 64            # 64 ranks
    python benchmarks/ranks.py --ranks 64,256 --workers 2

Each load starts from an empty cache (a fresh PROFINSIGHT_CACHE), so every rank is imported.
Prints wall times; not a test, not in CI.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "comparison"))


def _fresh_cache(root: Path, tag: str) -> None:
    d = root / f"cache_{tag}"
    d.mkdir(parents=True, exist_ok=True)
    os.environ["PROFINSIGHT_CACHE"] = str(d)


def bench(n: int, workers: int, root: Path, fixtures: Path) -> dict:
    import _build as B
    import pyarrow as pa
    from generate import generate_ascend
    from test_ranks_scale import D, synchronous_copy

    import profinsight
    from profinsight.api import load_parallel, ranks_report

    out = root / f"r{n}"
    t = time.perf_counter()
    info = generate_ascend(0, out, ranks=n, copies=1, check=False)
    res = {"ranks": n, "generate_s": time.perf_counter() - t, "rank_folder_mb": info["rank_folder_bytes"] / 1e6}
    run = out / "ascend"

    _fresh_cache(root, f"local{n}")
    t = time.perf_counter()
    local = load_parallel(run, workers=workers)
    res["load_local_processes_s"] = time.perf_counter() - t
    assert local.ranks == list(range(n)), local.ranks

    from distributed import Client, LocalCluster

    _fresh_cache(root, f"dask{n}")
    t = time.perf_counter()
    with (
        LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
        ) as cluster,
        Client(cluster) as client,
    ):
        res["dask_cluster_start_s"] = time.perf_counter() - t
        t1 = time.perf_counter()
        on_dask = load_parallel(run, client=client)
        res["load_dask_s"] = time.perf_counter() - t1
    res["load_dask_with_start_s"] = time.perf_counter() - t
    assert on_dask.ranks == local.ranks

    t = time.perf_counter()
    rep = ranks_report(local)
    res["verdict_identical_ranks"] = rep.verdict()[:80]
    res["analyse_loaded_s"] = time.perf_counter() - t

    # the slow rank, at N ranks (in memory, from the real rank 0)
    p = profinsight.load(fixtures / "ascend_pt/text_level1/rank0_ascend_pt")
    tables = B.tables_of(p)
    peer, _ = synchronous_copy(tables, slow=False)
    slow, _ = synchronous_copy(tables, slow=True)
    slow_rank = n // 2 + 1
    per_rank = [slow if r == slow_rank else peer for r in range(n)]
    t = time.perf_counter()
    merged = {
        name: pa.concat_tables(
            [B.with_rank(tb[name], r) for r, tb in enumerate(per_rank)]
            if "rank" in tables[name].column_names
            else [tables[name]]
        )
        for name in B.TABLES
    }
    prof = B.profile(merged)
    res["build_synthetic_s"] = time.perf_counter() - t
    t = time.perf_counter()
    sr = ranks_report(prof).slow_ranks()
    res["slow_ranks_s"] = time.perf_counter() - t
    assert list(sr["rank"].unique()) == [slow_rank], sr
    res["slow_rank_evidence"] = sr.iloc[0]["evidence"]
    res["extra_compute_ns"] = D
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="64", help="comma-separated rank counts (64,256)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument(
        "--fixtures", default=os.environ.get("PROFINSIGHT_FIXTURES", str(HERE.parent.parent / "shared" / "fixtures"))
    )
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="pi_ranks_") as tmp:
        for n in (int(x) for x in a.ranks.split(",")):
            r = bench(n, a.workers, Path(tmp), Path(a.fixtures))
            print(f"{n} ranks ({r['rank_folder_mb']:.1f} MB per rank, {a.workers} workers):")
            for k, v in r.items():
                if k != "ranks":
                    print(f"  {k:28s} {v:.2f}" if isinstance(v, float) else f"  {k:28s} {v}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
