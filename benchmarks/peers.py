#!/usr/bin/env python
"""profinsight against its peers on one rank, on the same scaled data, in one run: the table of
the speed issue, with every ratio measured in this run.

For each size (MB of trace) it generates (``generate.py``, two ranks so that ``compare`` has two)
an Ascend text rank and a Kineto trace, then times, each as its own process:

* ``profinsight analyze RANK`` cold (an empty ``PROFINSIGHT_CACHE``: import + analyses + report)
  and warm (the same cache again); ``profinsight compare RANK0 RANK1`` cold and warm;
* msprof-analyze (its own venv, ``--msa``): ``advisor all -d RANK`` and
  ``compare -d RANK1 -bp RANK0``, each on a hard-linked copy of the data (it writes beside it);
* HTA (its own venv, ``--hta-python``): ``TraceAnalysis`` of the one trace + the four
  breakdowns (temporal, kernel, communication/computation overlap, idle time), and
  ``TraceDiff.compare_traces`` of the two;
* the orjson floor: ``orjson.loads`` of the decompressed bytes (reading included, gunzip not),
  and profinsight's cold import alone (``load`` + cache write, ``run.py --child cold``), so that
  the import's CPU time is compared with the floor's.

``--formats db`` (not in the default set) times the torch_npu DB export the same way: the real
``db_level1`` rank repeated to about SIZE MB (``scale_db.py``: 100 copies are 53.5 MB),
``profinsight analyze`` against ``msprof-analyze advisor all -d`` on a hard-linked copy, and our
import alone (no JSON, so no orjson floor); ``analyze`` only.

CPU time is user + system of the process and every child it waited for (``wait4``); peak RSS the
larger of the process tree's polled RSS (20 ms, read from ``/proc`` so that the poll takes no
measurable time from the command: :mod:`proctree`) and ``ru_maxrss``.  Python start-up plus the
imports an ``analyze`` pays are measured on their own (``--startup``) and reported apart: they are
included in the cold and warm walls, as a user pays them.  The load average is printed beside each
figure (the machine is shared).  Peers that are not installed are left out of the table.

``--repeat N`` measures every cold figure N times, ours and the peer's in turn (ours, peer, ours,
peer, ...), so that a slow minute of a shared machine lands on both sides: the table shows the
median of each figure, and beside each ratio (median over median) the range of the N ratios of
the pairs.  One run of a whole command moves by up to 1.5x on this machine; the median of pairs is
the figure to compare between runs of this script.

    python benchmarks/peers.py --sizes 100                 # about 5 min with both peers
    python benchmarks/peers.py --sizes 100 --repeat 3      # each pair 3 times: medians and ranges
    python benchmarks/peers.py --sizes 1000 --no-compare   # ~10 min of peers alone; data deleted after
    python benchmarks/peers.py --sizes 54 --formats db --repeat 3   # the DB export, 100 copies of a rank
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
MB = 1_000_000
#: the peers' own virtual environments, beside the repository (see README: "Against the peers")
PEERS = HERE.parent.parent / "peers"
MSA = str(PEERS / "msa/bin/msprof-analyze")
HTA = str(PEERS / "hta/bin/python")

#: the issue's targets: peer / ours (cold wall) at least this, import CPU / floor CPU at most this
TARGET_SPEEDUP = 10.0
TARGET_IMPORT_OVER_FLOOR = 1.0

_HTA_ANALYZE = """
import sys
from hta.trace_analysis import TraceAnalysis
a = TraceAnalysis(trace_dir=sys.argv[1])
a.get_temporal_breakdown(visualize=False)
a.get_gpu_kernel_breakdown(visualize=False)
a.get_comm_comp_overlap(visualize=False)
a.get_idle_time_breakdown(visualize=False)
"""

_HTA_DIFF = """
import sys
from hta.trace_diff import LabeledTrace, TraceDiff
d = TraceDiff.compare_traces(LabeledTrace("control", trace_dir=sys.argv[1]), LabeledTrace("test", trace_dir=sys.argv[2]))
print(len(d))
"""


def measure(cmd: list[str], env: dict | None = None, cwd: str | None = None, timeout: float = 3600) -> dict:
    """Run ``cmd`` as its own process: wall, CPU (self + waited-for children), peak RSS, load."""
    from proctree import tree_rss

    load = os.getloadavg()[0]
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        peak, status, usage = 0, None, None
        while True:
            pid, st, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                status, usage = st, ru
                break
            peak = max(peak, tree_rss(proc.pid))
            if time.perf_counter() - t0 > timeout:
                proc.kill()
            time.sleep(0.02)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        cpu = usage.ru_utime + usage.ru_stime
        rss = max(peak, usage.ru_maxrss * 1024) / MB
        print(
            f"   {wall:8.2f} s wall {cpu:7.2f} s CPU {rss:7.0f} MB  load {load:4.1f}  rc {proc.returncode}  "
            f"{' '.join(os.path.basename(c) if i < 2 else c for i, c in enumerate(cmd)).replace(chr(10), ' ')[:150]}",
            flush=True,
        )
        out.seek(0)
        tail = out.read().decode(errors="replace")[-20000:]
    return {
        "wall_s": round(wall, 3),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "peak_rss_mb": round(max(peak, usage.ru_maxrss * 1024) / MB, 1),
        "load": round(load, 2),
        "rc": proc.returncode,
        "tail": tail,
    }


def child_json(mode: str, target: Path, env: dict) -> dict:
    """``run.py --child MODE TARGET`` (floor or cold import), its JSON line plus the process figures."""
    m = measure([sys.executable, str(HERE / "run.py"), "--child", mode, str(target)], env=env)
    for line in reversed(m["tail"].splitlines()):
        if line.startswith("{"):
            try:
                m["child"] = json.loads(line)
            except ValueError:
                pass
            break
    return m


def summarise(runs: list[dict]) -> dict:
    """One figure from the repeated runs of one command: the median of each of wall, CPU, peak RSS
    and load (each its own median), the median of a child's own JSON figures, and ``runs``, every
    run's figures.  A run that failed makes the figure fail (its exit code and output)."""
    if len(runs) == 1:
        return runs[0]
    failed = [r for r in runs if r["rc"]]
    out = {k: round(statistics.median(r[k] for r in runs), 3) for k in ("wall_s", "cpu_s", "peak_rss_mb", "load")}
    out["rc"] = failed[0]["rc"] if failed else 0
    out["tail"] = (failed or runs)[-1]["tail"]
    children = [r["child"] for r in runs if isinstance(r.get("child"), dict)]
    if children:
        out["child"] = {
            k: round(statistics.median(c[k] for c in children), 3)
            for k in ("seconds", "cpu_s")
            if all(isinstance(c.get(k), (int, float)) for c in children)
        }
    out["runs"] = [{k: v for k, v in r.items() if k != "tail"} for r in runs]
    return out


def in_turn(n: int, ours, peer=None) -> tuple[dict, dict | None, list[float]]:
    """``ours()`` and ``peer()`` (None: no peer) measured in turn, ``n`` times -> (our figure,
    the peer's, the ratio peer wall ÷ our wall of each pair where both succeeded).  In turn, so
    that a busy minute of the shared machine weighs on both sides alike."""
    mine, theirs, ratios = [], [], []
    for _ in range(n):
        m = ours()
        mine.append(m)
        if peer is not None:
            p = peer()
            theirs.append(p)
            if not m["rc"] and not p["rc"]:
                ratios.append(round(p["wall_s"] / m["wall_s"], 2))
    return summarise(mine), (summarise(theirs) if theirs else None), ratios


def generate(size: int, fmt: str, ranks: int, data: Path) -> dict:
    """The scaled data: one rank may be the one ``run.py`` made (``data/{size}mb``), else it is
    generated into ``data/peers_{size}mb_{fmt}``."""
    shared = data / f"{size}mb" / "generated.json"
    if ranks == 1 and shared.exists():
        s = json.loads(shared.read_text()).get(fmt)
        if s and Path(s["trace"]).exists() and Path(s["trace"]).stat().st_size == s["trace_bytes"]:
            return s
    folder = data / f"peers_{size}mb_{fmt}"
    summary = folder / "generated.json"
    if summary.exists():
        s = json.loads(summary.read_text())
        s = s.get(fmt, s)  # as generate.py --json prints it ({format: summary}) or as saved here
        made = s.get("rank_dirs") or s.get("traces") or []
        if made and all(Path(p).exists() for p in made):
            return s
    cmd = [sys.executable, str(HERE / "generate.py"), "--target-mb", str(size), "--out", str(folder)]
    cmd += ["--format", fmt, "--ranks", str(ranks), "--json", "--no-check"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"generate.py failed:\n{r.stdout}\n{r.stderr}")
    s = json.loads(r.stdout)[fmt]
    summary.write_text(json.dumps(s, indent=2))
    return s


def profinsight(args: list[str], cache: Path) -> dict:
    env = dict(os.environ, PROFINSIGHT_CACHE=str(cache), PYTHONHASHSEED="0")
    return measure([sys.executable, "-m", "profinsight", *args], env=env)


def cold(args: list[str], cache: Path):
    """A function that runs ``profinsight ARGS`` with ``cache`` emptied first (a cold run)."""

    def run() -> dict:
        shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir(parents=True)
        return profinsight(args, cache)

    return run


def cold_import(target: Path, tmp: Path):
    """A function that runs the cold import alone (``run.py --child cold``) into an empty cache."""

    def run() -> dict:
        imp_cache = tmp / "cache_import"
        shutil.rmtree(imp_cache, ignore_errors=True)
        imp_cache.mkdir()
        try:
            return child_json("cold", target, dict(os.environ, PROFINSIGHT_CACHE=str(imp_cache)))
        finally:
            shutil.rmtree(imp_cache, ignore_errors=True)

    return run


def linked_copy(src: Path, dst: Path) -> Path:
    """A copy of ``src`` whose files are hard links (no data copied): a peer that writes its
    results beside the data writes them into the copy."""
    shutil.copytree(src, dst, copy_function=os.link)
    return dst


def one_trace_dir(trace: Path, dst: Path) -> Path:
    """A folder holding only ``trace`` (HTA reads every trace of a folder)."""
    dst.mkdir(parents=True)
    os.link(trace, dst / trace.name)
    return dst


def msa_advisor(msa: str | None, rank: Path, tmp: Path):
    """A function that runs ``msprof-analyze advisor all -d`` on a hard-linked copy of the folder
    holding ``rank`` (it writes its reports there and into its working folder, the copy), or None
    where msprof-analyze is not installed."""
    if not msa:
        return None

    def run() -> dict:
        copy = linked_copy(rank.parent, tmp / "msa_analyze")
        try:
            return measure([msa, "advisor", "all", "-d", str(copy / rank.name)], cwd=str(copy))
        finally:
            shutil.rmtree(copy, ignore_errors=True)

    return run


def startup() -> dict:
    """Python start-up + what ``analyze`` imports before it reads anything, and the bare CLI."""
    code = "import profinsight.cli, profinsight.api, profinsight.advisor, pandas, pyarrow.parquet, duckdb"
    return {
        "imports": measure([sys.executable, "-c", code]),
        "help": measure([sys.executable, "-m", "profinsight", "--help"]),
    }


def bench_ascend(size: int, a, tmp: Path) -> list[dict]:
    ranks = 1 if a.no_compare else 2
    g = generate(size, "ascend", ranks, a.data)
    rank0 = Path(g["rank_dirs"][0])
    trace = Path(g["trace"])
    rows = []
    cache = tmp / "cache_ascend"
    n = a.repeat
    floor, imp, _ = in_turn(n, lambda: child_json("floor", trace, dict(os.environ)), cold_import(rank0, tmp))
    msa = a.msa if a.msa and Path(a.msa).exists() else None
    args = ["analyze", str(rank0)]
    ours, peer, ratios = in_turn(n, cold(args, cache), msa_advisor(msa, rank0, tmp))
    warm = profinsight(args, cache)
    rows.append(
        _row(f"Ascend text {size} MB: analyze", g, ours, warm, peer, "msprof-analyze advisor all", floor, imp, ratios)
    )
    if ranks > 1:
        rank1 = Path(g["rank_dirs"][1])

        def msa_compare() -> dict:
            copy = linked_copy(rank0.parent, tmp / "msa_compare")
            out = tmp / "msa_compare_out"
            out.mkdir()
            try:
                return measure(
                    [msa, "compare", "-d", str(copy / rank1.name), "-bp", str(copy / rank0.name), "-o", str(out)],
                    cwd=str(copy),
                )
            finally:
                shutil.rmtree(copy, ignore_errors=True)
                shutil.rmtree(out, ignore_errors=True)

        args = ["compare", str(rank0), str(rank1)]
        ours, peer, ratios = in_turn(n, cold(args, cache), msa_compare if msa else None)
        warm = profinsight(args, cache)
        rows.append(
            _row(
                f"Ascend text {size} MB: compare 2 ranks", g, ours, warm, peer, "msprof-analyze compare", ratios=ratios
            )
        )
    shutil.rmtree(cache, ignore_errors=True)
    return rows


def bench_kineto(size: int, a, tmp: Path) -> list[dict]:
    ranks = 1 if a.no_compare else 2
    g = generate(size, "kineto", ranks, a.data)
    traces = [Path(p) for p in g["traces"]]
    rows = []
    cache = tmp / "cache_kineto"
    n = a.repeat
    floor, imp, _ = in_turn(n, lambda: child_json("floor", traces[0], dict(os.environ)), cold_import(traces[0], tmp))
    hta = a.hta_python if a.hta_python and Path(a.hta_python).exists() else None
    d0 = one_trace_dir(traces[0], tmp / "hta0") if hta else None
    args = ["analyze", str(traces[0])]
    hta_analyze = (lambda: measure([hta, "-c", _HTA_ANALYZE, str(d0)])) if hta else None
    ours, peer, ratios = in_turn(n, cold(args, cache), hta_analyze)
    warm = profinsight(args, cache)
    rows.append(_row(f"Kineto {size} MB: analyze", g, ours, warm, peer, "HTA load + 4 breakdowns", floor, imp, ratios))
    if ranks > 1:
        d1 = one_trace_dir(traces[1], tmp / "hta1") if hta else None
        args = ["compare", str(traces[0]), str(traces[1])]
        hta_diff = (lambda: measure([hta, "-c", _HTA_DIFF, str(d0), str(d1)])) if hta else None
        ours, peer, ratios = in_turn(n, cold(args, cache), hta_diff)
        warm = profinsight(args, cache)
        rows.append(_row(f"Kineto {size} MB: compare", g, ours, warm, peer, "HTA TraceDiff", ratios=ratios))
    shutil.rmtree(cache, ignore_errors=True)
    return rows


#: megabytes of DB per copy of the seed rank (``scale_db.py --copies 100`` writes 53.5 MB)
DB_MB_PER_COPY = 0.535


def bench_db(size: int, a, tmp: Path) -> list[dict]:
    """The torch_npu DB export: the real ``db_level1`` rank repeated to about ``size`` MB, cold
    ``analyze`` against msprof-analyze's advisor, and the import alone."""
    sys.path.insert(0, str(HERE))
    import scale_db

    folder = a.data / f"peers_{size}mb_db"
    rank = folder / scale_db.SEED.name
    found = list(rank.glob("ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_*.db"))
    db = found[0] if found else scale_db.scale(scale_db.SEED, max(1, round(size / DB_MB_PER_COPY)), folder)
    g = {"trace_bytes": db.stat().st_size}
    cache = tmp / "cache_db"
    n = a.repeat
    imp, _, _ = in_turn(n, cold_import(rank, tmp))
    msa = a.msa if a.msa and Path(a.msa).exists() else None
    args = ["analyze", str(rank)]
    ours, peer, ratios = in_turn(n, cold(args, cache), msa_advisor(msa, rank, tmp))
    warm = profinsight(args, cache)
    shutil.rmtree(cache, ignore_errors=True)
    return [
        _row(f"torch_npu DB {size} MB: analyze", g, ours, warm, peer, "msprof-analyze advisor all", None, imp, ratios)
    ]


BENCHES = {"ascend": bench_ascend, "kineto": bench_kineto, "db": bench_db}


def _row(name, gen, cold, warm, peer, peer_name, floor=None, imp=None, ratios=()) -> dict:
    for m in (cold, warm, peer, floor, imp):
        if m:
            m["tail"] = m["tail"][-1500:] if m["rc"] else m["tail"][-300:]
    row = {"workload": name, "trace_bytes": gen["trace_bytes"], "cold": cold, "warm": warm}
    row["peer_name"], row["peer"] = peer_name, peer
    if floor is not None:
        row["floor"] = floor
        fc = floor.get("child") or {}
        row["floor_s"], row["floor_cpu_s"] = fc.get("seconds"), fc.get("cpu_s")
    if imp is not None:
        ic = imp.get("child") or {}
        row["import"] = imp
        row["import_s"], row["import_cpu_s"] = ic.get("seconds"), ic.get("cpu_s")
        if row.get("floor_cpu_s") and row["import_cpu_s"]:
            row["import_cpu_over_floor"] = round(row["import_cpu_s"] / row["floor_cpu_s"], 2)
    if peer and not peer["rc"] and not cold["rc"]:
        row["speedup_cold"] = round(peer["wall_s"] / cold["wall_s"], 2)
        row["speedup_cold_cpu"] = round(peer["cpu_s"] / cold["cpu_s"], 2)
        if len(ratios) > 1:
            row["speedup_pairs"] = list(ratios)
    return row


def table(rows: list[dict], start: dict) -> str:
    def f(x, spec=".2f"):
        return "-" if x is None else format(x, spec)

    def fig(m):
        if not m:
            return "-"
        if m["rc"]:
            return f"failed ({m['rc']})"
        return f"{m['wall_s']:.2f} s / {m['cpu_s']:.1f} cpu / {m['peak_rss_mb']:,.0f} MB (load {m['load']:.1f})"

    head = (
        "| workload | profinsight cold: wall / CPU / peak RSS | warm | peer | peer: wall / CPU / peak RSS "
        "| peer ÷ ours, cold wall (CPU) | orjson floor: wall / CPU | our import alone: wall / CPU "
        "| import CPU ÷ floor CPU |"
    )
    out = [head, "|" + "---|" * 9]
    for r in rows:
        w = r["warm"]
        warm = "-" if w["rc"] else f"{w['wall_s']:.2f} s (load {w['load']:.1f})"
        speed = f"{f(r.get('speedup_cold'))}x ({f(r.get('speedup_cold_cpu'))}x)" if r.get("speedup_cold") else "-"
        if r.get("speedup_pairs"):
            speed += f", pairs {min(r['speedup_pairs']):.2f}-{max(r['speedup_pairs']):.2f}x"
        floor = f"{f(r.get('floor_s'))} s / {f(r.get('floor_cpu_s'), '.1f')}" if "floor" in r else ""
        imp = f"{f(r.get('import_s'))} s / {f(r.get('import_cpu_s'), '.1f')}" if "import" in r else ""
        ratio = f(r.get("import_cpu_over_floor")) if "import" in r else ""
        out.append(
            f"| {r['workload']} | {fig(r['cold'])} | {warm} | {r['peer_name'] if r['peer'] else '(not installed)'} "
            f"| {fig(r['peer'])} | {speed} | {floor} | {imp} | {ratio} |"
        )
    s = start
    out.append("")
    out.append(
        f"Python start-up + the imports of `analyze` (included in the walls above): "
        f"{s['imports']['wall_s']:.2f} s wall / {s['imports']['cpu_s']:.2f} s CPU (load {s['imports']['load']:.1f}); "
        f"`profinsight --help`: {s['help']['wall_s']:.2f} s."
    )
    if any("runs" in (r.get("cold") or {}) for r in rows):
        n = max(len(r["cold"].get("runs", [])) for r in rows)
        out.append(
            f"Cold figures are medians of {n} runs, ours and the peer's in turn; the ratio is median ÷ median, "
            "`pairs` the range of the ratios of each pair."
        )
    out.append(
        f"Targets: peer ÷ ours >= {TARGET_SPEEDUP:.0f}x on cold wall; import CPU ÷ orjson floor CPU <= "
        f"{TARGET_IMPORT_OVER_FLOOR:.1f}."
    )
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100", help="comma list of trace sizes in MB")
    ap.add_argument("--formats", default="ascend,kineto", help="comma list of ascend, kineto, db")
    ap.add_argument("--msa", default=MSA, help="msprof-analyze executable of its own venv ('' to skip)")
    ap.add_argument("--hta-python", default=HTA, help="python of HTA's own venv ('' to skip)")
    ap.add_argument("--no-compare", action="store_true", help="analyze only (one rank generated)")
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--results", type=Path, default=HERE / "results")
    ap.add_argument(
        "--repeat", type=int, default=1, help="measure each cold figure N times, ours and the peer's in turn (medians)"
    )
    ap.add_argument("--keep-data", action="store_true", help="keep the generated data (deleted after by default)")
    a = ap.parse_args()
    # the peers run with the copy of the data as their working folder: a relative path would miss
    a.msa = os.path.abspath(a.msa) if a.msa else a.msa
    a.hta_python = os.path.abspath(a.hta_python) if a.hta_python else a.hta_python
    a.data, a.results = a.data.resolve(), a.results.resolve()
    if a.repeat < 1:
        ap.error("--repeat must be at least 1")
    unknown = sorted({f.strip() for f in a.formats.split(",") if f.strip()} - set(BENCHES))
    if unknown:
        ap.error(f"unknown format(s) {', '.join(unknown)}: {', '.join(BENCHES)}")
    a.data.mkdir(parents=True, exist_ok=True)
    a.results.mkdir(parents=True, exist_ok=True)
    rows = []
    start = startup()
    for size in [int(s) for s in a.sizes.split(",") if s]:
        for fmt in [f.strip() for f in a.formats.split(",") if f.strip()]:
            tmp = Path(tempfile.mkdtemp(prefix="pi_peers_", dir=a.data))
            try:
                print(f"== {fmt} {size} MB (load {os.getloadavg()[0]:.1f})", flush=True)
                made = BENCHES[fmt](size, a, tmp)
                rows += made
                print(table(rows[-len(made) :], start).split("\n\nPython")[0], flush=True)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
                if not a.keep_data:
                    shutil.rmtree(a.data / f"peers_{size}mb_{fmt}", ignore_errors=True)
    text = table(rows, start)
    print("\n" + text)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    doc = {"started": stamp, "cpus": os.cpu_count(), "repeat": a.repeat, "startup": start, "rows": rows, "table": text}
    path = a.results / f"peers_{stamp}.json"
    path.write_text(json.dumps(doc, indent=2, default=str))
    print(f"\nresults: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
