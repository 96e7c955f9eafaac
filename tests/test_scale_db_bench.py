"""``benchmarks/scale_db.py``: N time-shifted copies of the real DB fixture rank import as N
steps, every per-step table N times over, the links still valid (no import is timed here)."""

from __future__ import annotations

import sys
from pathlib import Path

import profinsight

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import scale_db  # noqa: E402


def test_three_copies_import_as_three_steps(fixtures, tmp_path, monkeypatch):
    monkeypatch.setenv("PROFINSIGHT_CACHE", "off")
    seed = fixtures / "ascend_pt/db_level1/rank0_ascend_pt"
    before = sorted(p.name for p in seed.rglob("*"))
    scale_db.scale(seed, 3, tmp_path)
    assert sorted(p.name for p in seed.rglob("*")) == before  # nothing written beside the seed
    one, three = profinsight.load(seed), profinsight.load(tmp_path / seed.name)
    assert list(three.table("steps")["step"]) == [50, 51, 52]
    for name in ("device_tasks", "host_ops", "api_calls", "launches"):
        assert three.row_counts()[name] == 3 * one.row_counts()[name], name
    # each copy's kernels are the seed's, shifted by whole periods: the same durations per copy
    dt = three.table("device_tasks").sort_values("start_ns")
    n = len(dt) // 3
    assert list(dt["dur_ns"][:n]) == list(dt["dur_ns"][n : 2 * n]) == list(dt["dur_ns"][2 * n :])
    # the seed's own notes, no damage found in the copies
    assert {d.code for d in three.diagnostics} == {d.code for d in one.diagnostics}
