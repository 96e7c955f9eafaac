#!/usr/bin/env python
"""Load benchmark of profinsight: how long importing a profile takes and how much memory it
needs, against the cost of merely parsing its JSON.

For each size (MB of trace_view.json, and of the Kineto trace) and each format it measures,
every time in a fresh Python process (so nothing is shared or pre-imported):

* floor  - ``orjson.loads(open(trace).read())``: the least any JSON importer must pay.
* cold   - ``profinsight.load(folder)`` with an empty ``PROFINSIGHT_CACHE`` (import + Parquet
           cache write), then ``p.row_counts()``.
* warm   - ``profinsight.load(folder)`` + ``p.row_counts()`` with the filled cache.
* warm+read - warm open + ``p.table("device_tasks")`` (every column, as pandas).

Wall time is measured inside the child around the call (``import profinsight`` is measured
separately and not included).  Peak RSS is the larger of the child's ``ru_maxrss`` (self and
waited-for children) and the parent's 20 ms polling of the child's process tree (psutil), so
importer worker processes are counted.  Files are read once before timing (page cache warm),
so floor and cold compare parse work, not disk speed.

Targets (from the issue): warm re-open of the 1 GB profile < 1 s; cold import <= 3x the floor
on the same file; peak RSS < 1.5x the file size.

    python benchmarks/run.py --sizes 10,100            # generates missing data first
    python benchmarks/run.py --sizes 1000 --formats ascend --profile
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
RESULTS = HERE / "results"
MB = 1_000_000
TARGET_WARM_S = 1.0
TARGET_COLD_RATIO = 3.0
TARGET_RSS_RATIO = 1.5


# =============================================================================================
# child side: runs in a fresh interpreter, prints one JSON line
# =============================================================================================
def _rss_now() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def _cpu() -> float:
    import resource

    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def _maxrss() -> dict:
    import resource

    return {
        "self": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "children": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024,
    }


class _Sampler:
    """Sampling profiler for the profile mode: every ``interval`` s it records the RSS and the
    innermost profinsight frame of the main thread, attributing wall time (samples) and RSS
    growth to importer functions.  Arrow / DuckDB memory is invisible to tracemalloc; RSS is not."""

    def __init__(self, interval=0.02):
        self.interval = interval
        self.samples: dict[str, int] = {}
        self.growth: dict[str, int] = {}  # net RSS change while there (can be negative)
        self.high: dict[str, int] = {}  # highest RSS seen while there
        self.peak = (0, "")
        self.stop = threading.Event()
        self.main = threading.main_thread().ident
        self.t = threading.Thread(target=self.run, daemon=True)

    def where(self):
        frame = sys._current_frames().get(self.main)
        inner = outer_lib = None
        while frame is not None:
            fn = frame.f_code.co_filename
            if fn.endswith("run.py") and frame.f_code.co_name in ("timed", "timed_rel"):
                if inner is None and outer_lib is None:
                    outer_lib = "duckdb"
            elif "profinsight" in fn and "benchmarks" not in fn:
                if inner is None:
                    inner = f"{fn.split('src/profinsight/')[-1]}:{frame.f_code.co_name}:{frame.f_lineno}"
            elif inner is None and outer_lib is None:
                outer_lib = f"{Path(fn).name}:{frame.f_code.co_name}"
            frame = frame.f_back
        if inner is None:
            return "(outside profinsight)"
        return inner + (f" -> {outer_lib}" if outer_lib else "")

    def run(self):
        prev = _rss_now()
        while not self.stop.wait(self.interval):
            rss = _rss_now()
            key = self.where()
            self.samples[key] = self.samples.get(key, 0) + 1
            self.growth[key] = self.growth.get(key, 0) + (rss - prev)
            self.high[key] = max(self.high.get(key, 0), rss)
            if rss > self.peak[0]:
                self.peak = (rss, key)
            prev = rss

    def __enter__(self):
        self.t.start()
        return self

    def __exit__(self, *a):
        self.stop.set()
        self.t.join()

    def report(self, top=25):
        n = sum(self.samples.values()) or 1
        by_time = sorted(self.samples.items(), key=lambda kv: -kv[1])[:top]
        by_mem = sorted(self.growth.items(), key=lambda kv: -kv[1])[:top]
        by_high = sorted(self.high.items(), key=lambda kv: -kv[1])[:top]
        return {
            "interval_s": self.interval,
            "samples": n,
            "time": [{"where": k, "share": round(v / n, 4), "s": round(v * self.interval, 2)} for k, v in by_time],
            "rss_growth": [{"where": k, "MB": round(v / MB, 1)} for k, v in by_mem],
            "rss_high_water": [{"where": k, "MB": round(v / MB, 1)} for k, v in by_high],
            "peak_rss_MB": round(self.peak[0] / MB, 1),
            "peak_at": self.peak[1],
        }


def _duckdb_timer():
    """Wrap duckdb connections so every statement's time is recorded (profile mode only)."""
    try:
        import duckdb
    except ImportError:
        return None
    stats: dict[str, list] = {}
    real_connect = duckdb.connect

    fetchers = (
        "to_arrow_table",
        "arrow",
        "fetch_arrow_table",
        "fetchall",
        "fetchone",
        "fetchmany",
        "df",
        "fetchdf",
        "to_df",
        "pl",
        "fetchnumpy",
        "record_batch",
        "fetch_record_batch",
    )

    def record(q, dt, dcpu=0.0):
        key = " ".join(str(q).split())[:160]
        s = stats.setdefault(key, [0, 0.0, 0.0])
        s[0] += 1
        s[1] += dt
        s[2] += dcpu

    class Rel:
        """A lazy relation: its time is spent when it is fetched."""

        def __init__(self, rel, q):
            object.__setattr__(self, "_rel", rel)
            object.__setattr__(self, "_q", q)

        def __getattr__(self, name):
            attr = getattr(self._rel, name)
            if name in fetchers and callable(attr):

                def timed_rel(*a, **kw):
                    t, c = time.perf_counter(), time.process_time()
                    try:
                        return attr(*a, **kw)
                    finally:
                        record(self._q, time.perf_counter() - t, time.process_time() - c)

                return timed_rel
            return attr

        def __iter__(self):
            return iter(self._rel)

    class Conn:
        def __init__(self, con):
            object.__setattr__(self, "_con", con)

        def __getattr__(self, name):
            attr = getattr(self._con, name)
            if name in ("execute", "sql", "query", "executemany") and callable(attr):

                def timed(q, *a, **kw):
                    t, c = time.perf_counter(), time.process_time()
                    out = attr(q, *a, **kw)
                    dt = time.perf_counter() - t
                    if name in ("sql", "query") and isinstance(out, duckdb.DuckDBPyRelation):
                        return Rel(out, q)  # lazy: timed when fetched
                    record(q, dt, time.process_time() - c)
                    return out

                return timed
            return attr

        def __enter__(self):
            return self

        def __exit__(self, *a):
            self._con.close()

    def connect(*a, **kw):
        return Conn(real_connect(*a, **kw))

    duckdb.connect = connect
    return stats


def child(mode: str, target: str, out_dir: str | None) -> dict:
    res: dict = {"mode": mode}
    if mode == "floor":
        import orjson

        res["baseline_rss"] = _rss_now()
        c0, t0 = _cpu(), time.perf_counter()
        with open(target, "rb") as f:
            raw = f.read()
        obj = orjson.loads(raw)
        res["seconds"] = time.perf_counter() - t0
        res["cpu_s"] = _cpu() - c0
        res["n"] = len(obj) if isinstance(obj, list) else len(obj.get("traceEvents", []))
        res["maxrss"] = _maxrss()
        return res

    t0 = time.perf_counter()
    import importlib

    import profinsight

    # import what load() would import lazily, so that the timed call measures loading, not
    # module imports (the end-to-end figure incl. imports is the process wall time)
    for mod in _PRELOAD:
        try:
            importlib.import_module(mod)
        except ImportError:
            pass
    try:
        from profinsight.importers import FORMATS

        for mod in FORMATS.values():
            importlib.import_module(mod)
    except ImportError:
        pass
    res["import_s"] = time.perf_counter() - t0
    res["baseline_rss"] = _rss_now()
    prof = sampler = dstats = None
    if mode in ("profile", "cprofile"):
        dstats = _duckdb_timer()
        if mode == "cprofile":
            import cProfile

            prof = cProfile.Profile()
        sampler = _Sampler().__enter__()
        if prof is not None:
            prof.enable()
    c0, t0 = _cpu(), time.perf_counter()
    p = profinsight.load(target)
    counts = p.row_counts()
    res["seconds"] = time.perf_counter() - t0
    res["cpu_s"] = _cpu() - c0
    if prof is not None:
        prof.disable()
    if sampler is not None:
        sampler.__exit__()
    if mode == "warm_read":
        t1 = time.perf_counter()
        at = p.arrow("device_tasks")
        res["arrow_s"] = time.perf_counter() - t1
        t2 = time.perf_counter()
        df = p.table("device_tasks")
        res["pandas_s"] = time.perf_counter() - t2
        res["read_rows"] = len(df)
        res["read_columns"] = at.num_columns
        res["seconds_total"] = time.perf_counter() - t0
    res["row_counts"] = counts
    res["diagnostics"] = sorted({f"{d.severity}:{d.code}" for d in p.diagnostics})
    res["cached"] = [r.parquet_path is not None for r in p._ranks] if hasattr(p, "_ranks") else None
    res["maxrss"] = _maxrss()
    if sampler is not None:
        res["sampler"] = sampler.report()
        if dstats is not None:
            res["duckdb"] = sorted(
                ({"sql": k, "calls": v[0], "s": round(v[1], 3), "cpu_s": round(v[2], 3)} for k, v in dstats.items()),
                key=lambda d: -d["cpu_s"],
            )[:60]
    if prof is not None:
        import io
        import pstats

        Path(out_dir).mkdir(parents=True, exist_ok=True)
        prof.dump_stats(str(Path(out_dir) / "cold.pstats"))
        buf = io.StringIO()
        st = pstats.Stats(prof, stream=buf)
        st.sort_stats("cumulative").print_stats(40)
        buf.write("\n\n===== by own time (tottime) =====\n")
        st.sort_stats("tottime").print_stats(30)
        (Path(out_dir) / "cold_cprofile.txt").write_text(buf.getvalue())
    return res


# =============================================================================================
# parent side
# =============================================================================================
def run_child(
    mode: str, target: Path, env_extra: dict, timeout: float, rss_limit: int, out_dir: Path | None = None
) -> dict:
    """Run one measurement in a fresh interpreter; poll its process tree's RSS."""
    import psutil
    from proctree import tree_rss

    env = dict(os.environ)
    env.update(env_extra)
    env.setdefault("PYTHONHASHSEED", "0")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", mode, str(target)]
    if out_dir is not None:
        cmd.append(str(out_dir))
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        ps = psutil.Process(proc.pid)
        peak, killed = 0, None
        while proc.poll() is None:
            rss = tree_rss(proc.pid, ps)
            peak = max(peak, rss)
            if rss > rss_limit:
                killed = f"killed: process tree RSS {rss / MB:.0f} MB > limit {rss_limit / MB:.0f} MB"
            elif time.perf_counter() - t0 > timeout:
                killed = f"killed: ran past the {timeout:.0f} s timeout"
            if killed:
                for c in ps.children(recursive=True):
                    try:
                        c.kill()
                    except Exception:
                        pass
                proc.kill()
                proc.wait()
                break
            time.sleep(0.02)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    res = None
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            try:
                res = json.loads(line)
                break
            except ValueError:
                pass
    if res is None:
        res = {"mode": mode, "error": killed or f"exit {proc.returncode}: {stderr.strip()[-2000:]}"}
    res["process_wall_s"] = wall
    res["loadavg_before"] = load_before
    res["polled_peak_rss"] = peak
    mr = res.get("maxrss") or {}
    res["peak_rss"] = max(peak, mr.get("self", 0), mr.get("children", 0))
    return res


def warm_page_cache(paths):
    for p in paths:
        for f in [p] if p.is_file() else [x for x in p.rglob("*") if x.is_file()]:
            with open(f, "rb") as fh:
                while fh.read(1 << 24):
                    pass


def ensure_data(size: int, fmt: str, data_root: Path) -> dict:
    """Generate the data for (size, fmt) if missing; returns the generator's summary."""
    folder = data_root / f"{size}mb"
    summary_path = folder / "generated.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    s = summary.get(fmt)
    ok = s is not None and Path(s["trace"]).exists() and Path(s["trace"]).stat().st_size == s["trace_bytes"]
    if not ok:
        print(f"  generating {fmt} {size} MB in {folder} ...", flush=True)
        cmd = [
            sys.executable,
            str(HERE / "generate.py"),
            "--target-mb",
            str(size),
            "--out",
            str(folder),
            "--format",
            fmt,
            "--json",
        ]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"generate.py failed:\n{r.stdout}\n{r.stderr}")
        s = json.loads(r.stdout)[fmt]
        summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
        summary[fmt] = s
        summary_path.write_text(json.dumps(summary, indent=2))
    return s


def _min(xs):
    xs = [x for x in xs if x is not None]
    return min(xs) if xs else None


def _med(xs):
    xs = sorted(x for x in xs if x is not None)
    return xs[len(xs) // 2] if xs else None


def bench_one(size: int, fmt: str, a) -> dict:
    gen = ensure_data(size, fmt, a.data)
    trace = Path(gen["trace"])
    target = Path(gen["rank_dirs"][0]) if fmt == "ascend" else trace
    trace_bytes = trace.stat().st_size
    input_bytes = sum(f.stat().st_size for f in target.rglob("*") if f.is_file()) if target.is_dir() else trace_bytes
    rec = {
        "format": fmt,
        "size_mb": size,
        "target": str(target),
        "trace": str(trace),
        "trace_bytes": trace_bytes,
        "input_bytes": input_bytes,
        "copies": gen["copies"],
        "events": gen["events"],
        "steps": gen["n_steps"],
    }
    big = size >= a.big_mb
    reps = a.big_repeat if big else a.repeat
    warm_page_cache([target])
    lim, to = int(a.rss_limit_gb * 1e9), a.timeout

    # (a) floor
    fl = [run_child("floor", trace, {}, to, lim) for _ in range(reps)]
    rec["floor"] = fl
    rec["floor_s"] = _min([r.get("seconds") for r in fl])
    rec["floor_s_median"] = _med([r.get("seconds") for r in fl])
    rec["floor_cpu_s"] = _min([r.get("cpu_s") for r in fl])
    rec["floor_peak_rss"] = _med([r.get("peak_rss") for r in fl])

    # (b) cold: every repetition with a fresh, empty cache folder
    cache_base = a.data / "cache" / f"{fmt}_{size}mb"
    cold = []
    for _ in range(reps):
        if cache_base.exists():
            shutil.rmtree(cache_base)
        cache_base.mkdir(parents=True)
        cold.append(run_child("cold", target, {"PROFINSIGHT_CACHE": str(cache_base)}, to, lim))
    rec["cold"] = cold
    ok_cold = [r for r in cold if "error" not in r]
    rec["cold_s"] = _min([r.get("seconds") for r in ok_cold])
    rec["cold_s_median"] = _med([r.get("seconds") for r in ok_cold])
    rec["cold_cpu_s"] = _min([r.get("cpu_s") for r in ok_cold])
    rec["cold_peak_rss"] = _med([r.get("peak_rss") for r in ok_cold]) if ok_cold else None
    rec["cold_error"] = next((r["error"] for r in cold if "error" in r), None)
    if not ok_cold and rec["cold_error"] and rec["cold_error"].startswith("killed"):
        # a lower bound is still a measurement: the import needed at least this much
        rec["cold_peak_rss"] = max(r.get("polled_peak_rss", 0) for r in cold)
        rec["cold_s_lower_bound"] = max(r.get("process_wall_s", 0) for r in cold)
    rec["import_s"] = _min([r.get("import_s") for r in ok_cold])
    rec["loadavg"] = [round(r.get("loadavg_before", 0), 2) for r in fl + cold]
    rec["cold_baseline_rss"] = _med([r.get("baseline_rss") for r in ok_cold])
    rec["row_counts"] = ok_cold[0].get("row_counts") if ok_cold else None
    rec["diagnostics"] = ok_cold[0].get("diagnostics") if ok_cold else None
    rec["cache_bytes"] = sum(f.stat().st_size for f in cache_base.rglob("*") if f.is_file())

    # (c) warm, from the cache the (last) cold run filled
    if ok_cold:
        warm = [run_child("warm", target, {"PROFINSIGHT_CACHE": str(cache_base)}, to, lim) for _ in range(a.repeat)]
        wr = [run_child("warm_read", target, {"PROFINSIGHT_CACHE": str(cache_base)}, to, lim) for _ in range(a.repeat)]
        rec["warm"], rec["warm_read"] = warm, wr
        rec["warm_s"] = _min([r.get("seconds") for r in warm])
        rec["warm_s_median"] = _med([r.get("seconds") for r in warm])
        rec["warm_process_s"] = _min([r.get("process_wall_s") for r in warm if "error" not in r])
        rec["warm_peak_rss"] = _med([r.get("peak_rss") for r in warm])
        rec["warm_read_s"] = _min([r.get("seconds_total") for r in wr])
        rec["warm_read_rows"] = wr[0].get("read_rows")
        rec["warm_read_peak_rss"] = _med([r.get("peak_rss") for r in wr])
        rec["warm_error"] = next((r["error"] for r in warm + wr if "error" in r), None)

    # targets
    if rec["cold_s"] and rec["floor_s"]:
        rec["cold_ratio"] = rec["cold_s"] / rec["floor_s"]
    if rec["cold_peak_rss"]:
        rec["rss_ratio"] = rec["cold_peak_rss"] / trace_bytes
        if rec.get("cold_baseline_rss"):
            rec["rss_ratio_over_baseline"] = (rec["cold_peak_rss"] - rec["cold_baseline_rss"]) / trace_bytes
    rec["targets"] = {
        "cold<=3x_floor": None if "cold_ratio" not in rec else rec["cold_ratio"] <= TARGET_COLD_RATIO,
        "rss<1.5x_file": None if "rss_ratio" not in rec else rec["rss_ratio"] < TARGET_RSS_RATIO,
        "warm<1s": None if rec.get("warm_s") is None else rec["warm_s"] < TARGET_WARM_S,
    }

    # profile of the cold import
    if a.profile and (a.profile_sizes is None or size in a.profile_sizes):
        if cache_base.exists():
            shutil.rmtree(cache_base)
        cache_base.mkdir(parents=True)
        pdir = a.results / f"profile_{fmt}_{size}mb"
        mode = "cprofile" if a.cprofile else "profile"
        pr = run_child(mode, target, {"PROFINSIGHT_CACHE": str(cache_base)}, to * 2, lim, pdir)
        rec["profile"] = {k: pr.get(k) for k in ("mode", "seconds", "cpu_s", "peak_rss", "sampler", "duckdb", "error")}
        pdir.mkdir(parents=True, exist_ok=True)
        if a.cprofile:
            rec["profile"]["files"] = [str(pdir / "cold_cprofile.txt"), str(pdir / "cold.pstats")]
        (pdir / "summary.json").write_text(json.dumps(rec["profile"], indent=2))

    if not a.keep_data:
        data_bytes = rec["input_bytes"]
        if data_bytes > 200 * MB or rec["cache_bytes"] > 200 * MB:
            shutil.rmtree(cache_base, ignore_errors=True)
        if data_bytes > 200 * MB:
            _drop_data(size, fmt, a.data)
    return rec


def _drop_data(size, fmt, data_root):
    folder = data_root / f"{size}mb"
    shutil.rmtree(folder / ("ascend" if fmt == "ascend" else "kineto"), ignore_errors=True)
    sp = folder / "generated.json"
    if sp.exists():
        s = json.loads(sp.read_text())
        s.pop(fmt, None)
        sp.write_text(json.dumps(s, indent=2))
        if not s:
            shutil.rmtree(folder, ignore_errors=True)


_PRELOAD = (
    "pandas",
    "pyarrow",
    "pyarrow.parquet",
    "duckdb",
    "profinsight.api",
    "profinsight.profile",
    "profinsight.discover",
    "profinsight.store.loader",
    "profinsight.store.cache",
)


def importtime() -> dict:
    """``python -X importtime`` of profinsight and of everything ``load()`` imports (the
    package imports lazily, so this is what the first ``load`` of a session pays on top)."""
    code = (
        "import importlib, profinsight\n"
        f"for m in {_PRELOAD!r}:\n"
        "    try: importlib.import_module(m)\n"
        "    except ImportError: pass\n"
        "try:\n"
        "    from profinsight.importers import FORMATS\n"
        "    for m in FORMATS.values(): importlib.import_module(m)\n"
        "except ImportError: pass\n"
    )
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    rows = []
    for line in r.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        parts = line[len("import time:") :].split("|")
        try:
            name = parts[2][1:].rstrip()
            rows.append((int(parts[1]), (len(name) - len(name.lstrip())) // 2, name.strip()))
        except (ValueError, IndexError):
            pass
    top = [(c, n) for c, d, n in rows if d == 0]
    total = sum(c for c, d, n in rows if d == 0)
    return {
        "total_s": total / 1e6,
        "process_wall_s": round(wall, 3),
        "heaviest": [{"module": n, "cumulative_s": c / 1e6} for c, n in sorted(top, reverse=True)[:12]],
    }


def fmt_row(r) -> list[str]:
    def f(x, spec):
        return "-" if x is None else format(x, spec)

    rss = r.get("cold_peak_rss")
    flag = lambda k: {True: "ok", False: "MISS", None: "?"}[r["targets"].get(k)]  # noqa: E731
    cold = (
        f(r.get("cold_s"), ".2f")
        if r.get("cold_s") is not None
        else (f">{r['cold_s_lower_bound']:.0f}" if r.get("cold_s_lower_bound") else "-")
    )
    return [
        r["format"],
        f(r["trace_bytes"] / MB, ".0f"),
        f"{r['events']:,}",
        f(r["floor_s"], ".2f"),
        cold,
        f(r.get("cold_ratio"), ".1f") + f" {flag('cold<=3x_floor')}",
        f(None if rss is None else rss / MB, ".0f"),
        f(r.get("rss_ratio"), ".2f") + f" {flag('rss<1.5x_file')}",
        f(r.get("warm_s"), ".3f") + f" {flag('warm<1s')}",
        f(r.get("warm_read_s"), ".2f"),
        f(r.get("warm_process_s"), ".2f"),
    ]


HEAD = [
    "format",
    "trace MB",
    "events",
    "floor s",
    "cold s",
    "cold/floor",
    "cold peak RSS MB",
    "RSS/file",
    "warm s",
    "warm+read s",
    "warm proc s",
]


def print_table(rows) -> str:
    table = [HEAD] + [fmt_row(r) for r in rows]
    w = [max(len(x[i]) for x in table) for i in range(len(HEAD))]
    lines = ["| " + " | ".join(x[i].ljust(w[i]) for i in range(len(HEAD))) + " |" for x in table]
    lines.insert(1, "|" + "|".join("-" * (w[i] + 2) for i in range(len(HEAD))) + "|")
    return "\n".join(lines)


def markdown(rows) -> str:
    """The README table: wall seconds with CPU seconds in parentheses (CPU time suffers less from
    other load on the machine), RSS ratio with the over-baseline ratio in parentheses."""

    def f(x, spec, div=1):
        return "-" if x is None else format(x / div, spec)

    out = [
        "| format | trace MB | events | floor s (cpu) | cold s (cpu) | cold/floor wall (cpu) | cold peak RSS MB "
        "| RSS/file (over baseline) | warm s | warm+read s | warm proc s | floor RSS MB | load avg |",
        "|" + "---|" * 13,
    ]
    for r in rows:
        cpu_ratio = (r["cold_cpu_s"] / r["floor_cpu_s"]) if r.get("cold_cpu_s") and r.get("floor_cpu_s") else None
        out.append(
            f"| {r['format']} | {r['trace_bytes'] / MB:.0f} | {r['events']:,} "
            f"| {f(r.get('floor_s'), '.2f')} ({f(r.get('floor_cpu_s'), '.1f')}) "
            f"| {f(r.get('cold_s'), '.2f')} ({f(r.get('cold_cpu_s'), '.1f')}) "
            f"| {f(r.get('cold_ratio'), '.1f')} ({f(cpu_ratio, '.1f')}) | {f(r.get('cold_peak_rss'), ',.0f', MB)} "
            f"| {f(r.get('rss_ratio'), '.2f')} ({f(r.get('rss_ratio_over_baseline'), '.2f')}) "
            f"| {f(r.get('warm_s'), '.3f')} | {f(r.get('warm_read_s'), '.2f')} | {f(r.get('warm_process_s'), '.2f')} "
            f"| {f(r.get('floor_peak_rss'), ',.0f', MB)} | {max(r.get('loadavg') or [0]):.1f} |"
        )
    return "\n".join(out)


def main(argv=None) -> int:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--child":
        out = child(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
        sys.stdout.write("\n" + json.dumps(out, default=str) + "\n")
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10,100,1000", help="comma list of trace sizes in MB")
    ap.add_argument("--formats", default="ascend,kineto", help="ascend,kineto")
    ap.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="repetitions of each measurement (best-of reported, median kept in the JSON)",
    )
    ap.add_argument(
        "--big-mb", type=int, default=500, help="sizes >= this run floor and cold --big-repeat times (default once)"
    )
    ap.add_argument("--big-repeat", type=int, default=1)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per measurement")
    ap.add_argument("--rss-limit-gb", type=float, default=16, help="kill a measurement above this RSS")
    ap.add_argument(
        "--profile",
        action="store_true",
        help="also profile a cold import: sampled time and RSS growth per importer line, time per DuckDB statement",
    )
    ap.add_argument(
        "--cprofile",
        action="store_true",
        help="with --profile: run the profile under cProfile too (slower; writes cold_cprofile.txt / cold.pstats)",
    )
    ap.add_argument("--profile-sizes", default=None, help="sizes to profile (default: all measured)")
    ap.add_argument(
        "--keep-data",
        action="store_true",
        help="keep generated data and caches over 200 MB (deleted after measuring by default)",
    )
    ap.add_argument(
        "--table", action="store_true", help="only print results/latest.json as the README's markdown table"
    )
    a = ap.parse_args(argv)
    if a.table:
        print(markdown(json.loads((a.results / "latest.json").read_text())["results"]))
        return 0
    a.sizes = [int(s) for s in a.sizes.split(",") if s]
    a.profile_sizes = None if a.profile_sizes is None else [int(s) for s in a.profile_sizes.split(",")]
    a.formats = [f.strip() for f in a.formats.split(",") if f.strip()]
    a.results.mkdir(parents=True, exist_ok=True)
    a.data.mkdir(parents=True, exist_ok=True)

    import duckdb
    import orjson
    import pyarrow

    try:
        commit = subprocess.run(
            ["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        commit = None
    import hashlib

    src = HERE.parent / "src" / "profinsight"
    h = hashlib.sha256()
    for f in sorted(src.rglob("*.py")):
        h.update(str(f.relative_to(src)).encode() + b"\0" + f.read_bytes())
    meta = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "src_sha256": h.hexdigest()[:16],
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "commit": commit,
        "versions": {"pyarrow": pyarrow.__version__, "duckdb": duckdb.__version__, "orjson": orjson.__version__},
        "targets": {"warm_s": TARGET_WARM_S, "cold_over_floor": TARGET_COLD_RATIO, "rss_over_file": TARGET_RSS_RATIO},
        "importtime": importtime(),
    }
    it = meta["importtime"]
    print(
        f"imports of profinsight + what load() needs: {it['total_s']:.2f} s "
        f"(python start + imports {it['process_wall_s']:.2f} s; not included in cold/warm s, "
        f"included in 'warm proc s'); heaviest: "
        + ", ".join(f"{m['module']} {m['cumulative_s']:.2f}" for m in it["heaviest"][:4])
    )
    rows = []
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out_path = a.results / f"load_{stamp}.json"
    for size in a.sizes:
        for fmt in a.formats:
            print(f"== {fmt} {size} MB", flush=True)
            r = bench_one(size, fmt, a)
            rows.append(r)
            print(print_table([r]).splitlines()[-1], flush=True)
            for k in ("cold_error", "warm_error"):
                if r.get(k):
                    print(f"   {k}: {r[k][-1500:]}")
            if r.get("diagnostics"):
                errs = [d for d in r["diagnostics"] if d.startswith("error")]
                if errs:
                    print(f"   importer errors: {errs}")
            doc = {"meta": meta, "results": rows}
            out_path.write_text(json.dumps(doc, indent=2, default=str))
    # latest.json: the newest figure of every (format, size) measured so far
    latest_path = a.results / "latest.json"
    merged = {}
    if latest_path.exists():
        try:
            for r in json.loads(latest_path.read_text()).get("results", []):
                merged[(r["format"], r["size_mb"])] = r
        except (ValueError, KeyError):
            pass
    for r in rows:
        r["measured"] = meta["started"]
        merged[(r["format"], r["size_mb"])] = r
    allrows = sorted(merged.values(), key=lambda r: (r["size_mb"], r["format"]))
    latest_path.write_text(json.dumps({"meta": meta, "results": allrows}, indent=2, default=str))
    print()
    print(print_table(rows))
    if len(allrows) > len(rows):
        print("\nall sizes measured so far (benchmarks/results/latest.json):")
        print(print_table(allrows))
    print(f"\nresults: {out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
