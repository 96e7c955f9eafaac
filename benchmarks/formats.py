"""Import speed per input format, in MB/s, next to the JSON parse floor.

For every format profinsight reads, the real fixture of that format (and, for the msprof
``mindstudio_profiler_output/`` layout, which has no fixture, the real collection re-laid out as
the tests build it) is imported cold -- an empty cache, so the import and the Parquet cache
write are measured -- ``--repeat`` times; the best time is kept.  MB are the bytes of every file
the run's rank sources read (as stored: a ``.json.gz`` counts compressed).  The floor is
``orjson.loads`` of the JSON inputs (decompressed where gzip): the least any JSON importer pays;
CSV and SQLite inputs have none (``-``).

The fixtures are small (0.1-40 MB), so fixed costs (DuckDB start, schema conformance, cache
write) weigh more than they would on a large capture: read these as lower bounds of the
streaming rate; ``benchmarks/run.py`` measures scaled captures of the two main formats.

    python benchmarks/formats.py [--repeat 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import profinsight  # noqa: E402

#: format -> fixture path (relative to the fixtures folder) measured for it
CASES = {
    "ascend_text": "ascend_pt/text_level1",
    "ascend_text (Qwen3 Level2, 4 ranks)": "ascend_llm/qwen3_level2_4rank",
    "ascend_db": "ascend_pt/db_level1",
    "kineto": "kineto/gpu_2rank_rank0.json.gz",
    "kineto (legacy 1.8)": "kineto/legacy/resnet50_tb_plugin_2021.json.gz",
    "kineto (bare array)": "kineto/legacy/resnet50_json_array.json.gz",
    "ascend_file (lone trace_view.json)": "lone:ascend_pt/text_level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
    "ascend_file (lone kernel_details.csv)": "lone:ascend_pt/text_level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
    "ascend_file (lone torch_npu DB)": "lone:ascend_pt/db_level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db",
    "msprof (device_<n>/timeline)": "msprof/prof_timeline_2023",
    "msprof (mindstudio_profiler_output, sliced)": None,
    "msprof (mindstudio_profiler_output, x10 iterations)": "scaled:10",
    "msprof_db": "msprof/msprof_db/msprof_0.db",
    "cluster (cluster_analysis_output)": "cluster_analysis/cluster_analysis_output",
    "cluster (cluster_analysis.db)": "cluster_analysis/cluster_analysis.db",
}


def fixtures_root() -> Path:
    env = os.environ.get("PROFINSIGHT_FIXTURES")
    return Path(env) if env else (ROOT.parent / "shared" / "fixtures").resolve()


def output_layout(fixtures: Path, tmp: Path, copies: int = 1) -> Path:
    """The real msprof collection re-laid out as current CANN's output folder, the timeline in
    two slices (as tests/importers/test_msprof_output.py builds it); with ``copies`` > 1 its ten
    iterations repeat back to back (copy k shifted by k times the capture's span, iteration ids
    by 10 k), as if the model had run ``copies`` times longer."""
    (src,) = (fixtures / "msprof" / "prof_timeline_2023").iterdir()
    dst = tmp / f"x{copies}" / src.name
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("timeline"))
    out = dst / "mindstudio_profiler_output"
    out.mkdir()
    tl = src / "device_0" / "timeline"
    seed = [e for i in range(1, 11) for e in orjson.loads((tl / f"msprof_0_2_{i}.json").read_bytes())]
    stamps = [e["ts"] for e in seed if "ts" in e]
    span = max(stamps) - min(stamps) + 1000.0
    events = [e for e in seed if e.get("ph") == "M"]
    for k in range(copies):
        events += [_shifted(e, k, span) for e in seed if e.get("ph") != "M"]
    meta = [e for e in events if e.get("ph") == "M"]
    rest = [e for e in events if e.get("ph") != "M"]
    half = len(rest) // 2
    (out / "msprof_slice_0_20230818142704.json").write_bytes(orjson.dumps(meta + rest[:half]))
    (out / "msprof_slice_1_20230818142704.json").write_bytes(orjson.dumps(rest[half:]))
    steps = orjson.loads((tl / "step_trace_0_2_1.json").read_bytes())
    steps = [e for e in steps if e.get("ph") == "M"] + [
        _shifted(e, k, span) for k in range(copies) for e in steps if e.get("ph") != "M"
    ]
    (out / "step_trace_20230818142704.json").write_bytes(orjson.dumps(steps))
    return dst


def _shifted(e: dict, k: int, span: float) -> dict:
    if not k:
        return e
    e = dict(e, ts=e["ts"] + k * span) if "ts" in e else dict(e)
    a = e.get("args")
    if isinstance(a, dict):
        a = dict(a)
        for key in ("Iteration ID",):
            if key in a:
                a[key] += 10 * k
        for key in ("FP Start", "BP End", "Iteration End"):
            if key in a:
                a[key] += k * span
        e["args"] = a
    return e


def place(fixtures: Path, tmp: Path, rel: str | None) -> Path:
    """The path to import: the fixture itself, a lone file copied out of its folder (``lone:``),
    or the re-laid-out msprof collection (None)."""
    if rel is None:
        return output_layout(fixtures, tmp)
    if rel.startswith("scaled:"):
        return output_layout(fixtures, tmp, int(rel.split(":")[1]))
    if rel.startswith("lone:"):
        dst = tmp / "lone" / Path(rel).name
        dst.parent.mkdir(exist_ok=True)
        shutil.copy(fixtures / rel[len("lone:") :], dst)
        return dst
    return fixtures / rel


def inputs(path: Path) -> list[Path]:
    files = set()
    for run in profinsight.discover(path):
        for s in run.sources:
            files.update(Path(f) for f in s.files if Path(f).is_file())
    return sorted(files)


def floor_s(files: list[Path]) -> float | None:
    js = [f for f in files if f.name.endswith((".json", ".json.gz"))]
    if not js:
        return None
    t = time.perf_counter()
    for f in js:
        raw = f.read_bytes()
        orjson.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    return time.perf_counter() - t


def cold_s(path: Path) -> tuple[float, float]:
    """(wall s, CPU s of this process) of a cold import."""
    with tempfile.TemporaryDirectory(prefix="pi-bench-cache-") as cache:
        os.environ["PROFINSIGHT_CACHE"] = cache
        t, c = time.perf_counter(), time.process_time()
        p = profinsight.load(path)
        p.row_counts()
        return time.perf_counter() - t, time.process_time() - c


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", help="write the figures to this file")
    a = ap.parse_args()
    fixtures = fixtures_root()
    rows = []
    with tempfile.TemporaryDirectory(prefix="pi-bench-data-") as tmp:
        cold_s(fixtures / "kineto" / "cpu_only.json.gz")  # imports and DuckDB warmed once
        for name, rel in CASES.items():
            path = place(fixtures, Path(tmp), rel)
            files = inputs(path)
            mb = sum(f.stat().st_size for f in files) / 1e6
            best, cpu = min(cold_s(path) for _ in range(a.repeat))  # the best by wall time
            fl = min(floor_s(files) or 0 for _ in range(a.repeat)) or None
            load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").is_file() else "?"
            rows.append(
                {
                    "format": name,
                    "mb": mb,
                    "cold_s": best,
                    "cold_cpu_s": cpu,
                    "mb_per_s": mb / best,
                    "floor_s": fl,
                    "floor_mb_per_s": (mb / fl) if fl else None,
                    "loadavg": load,
                }
            )
    print(f"{'format':52} {'MB':>7} {'cold s':>7} {'CPU s':>7} {'MB/s':>7} {'floor MB/s':>10} {'load':>6}")
    for r in rows:
        fl = f"{r['floor_mb_per_s']:10.1f}" if r["floor_mb_per_s"] else f"{'-':>10}"
        print(
            f"{r['format']:52} {r['mb']:7.2f} {r['cold_s']:7.2f} {r['cold_cpu_s']:7.2f} {r['mb_per_s']:7.1f} {fl} "
            f"{r['loadavg']:>6}"
        )
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
