"""``benchmarks/pairs.py``: what the table says of runs of two codes taken in turn (pure functions:
no process is started, no worktree made)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import pairs  # noqa: E402


def _run(wall, cpu=1.0, rss=100.0, load=1.0, rc=0) -> dict:
    return {"wall_s": wall, "cpu_s": cpu, "peak_rss_mb": rss, "load": load, "rc": rc, "tail": ""}


def test_each_pair_is_compared_with_itself_and_each_side_has_its_medians():
    base = [_run(2.0, cpu=3.0, rss=500.0, load=1.2), _run(1.5, cpu=2.0, rss=480.0), _run(3.0, load=0.7)]
    new = [_run(1.8, cpu=2.5, rss=450.0), _run(1.6, cpu=2.2, rss=470.0, load=2.0), _run(2.5)]
    s = pairs.pair_summary(base, new)
    assert s["base"] == {"runs": 3, "failed": 0, "wall_s": 2.0, "cpu_s": 2.0, "peak_rss_mb": 480.0}
    assert s["new"] == {"runs": 3, "failed": 0, "wall_s": 1.8, "cpu_s": 2.2, "peak_rss_mb": 450.0}
    # the slow third minute (3.0 against 2.5) is one pair among three, not a shift of a median
    assert s["pair_diffs_s"] == [-0.2, 0.1, -0.5]
    assert (s["median_diff_s"], s["new_faster_or_equal"], s["load"]) == (-0.2, 2, [0.7, 2.0])


def test_a_failed_run_leaves_its_pair_out_and_is_counted():
    base = [_run(2.0), _run(2.0, rc=1), _run(2.0)]
    new = [_run(2.0), _run(1.0), _run(2.5, rc=137)]
    s = pairs.pair_summary(base, new)
    assert (s["base"]["failed"], s["new"]["failed"]) == (1, 1)
    assert s["pair_diffs_s"] == [0.0]  # only the first pair succeeded on both sides
    assert s["new_faster_or_equal"] == 1
    assert s["new"]["wall_s"] == 1.5  # the median of the runs that succeeded


def test_the_report_says_the_pairs_sorted_with_their_signs():
    s = pairs.pair_summary([_run(2.0), _run(2.0)], [_run(1.9), _run(2.25)])
    text = pairs.report(s, "abc1234", ["analyze", "x.json"])
    assert text.splitlines()[0] == "profinsight analyze x.json: abc1234 (base) against this tree, 2 pairs in turn"
    assert "pairs (this tree - base): -0.10, +0.25 s; median +0.075 s; faster or equal in 1 of 2" in text
    assert "load average 1.00-1.00" in text
