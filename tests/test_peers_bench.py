"""``benchmarks/peers.py --repeat``: medians of repeated runs and the ratios of runs taken in turn.

The figures of a whole command move by up to 1.5x between minutes on a shared machine; these
tests pin what the table says when each figure is measured several times (pure functions: no
process is started).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import peers  # noqa: E402


def _run(wall, cpu=1.0, rss=100.0, load=1.0, rc=0, tail="ok", child=None) -> dict:
    m = {"wall_s": wall, "cpu_s": cpu, "peak_rss_mb": rss, "load": load, "rc": rc, "tail": tail}
    if child is not None:
        m["child"] = child
    return m


def test_one_run_is_its_own_figure():
    one = _run(2.5)
    assert peers.summarise([one]) is one


def test_each_figure_is_its_own_median_and_every_run_is_kept():
    runs = [
        _run(3.0, cpu=1.0, rss=300.0, load=0.5, child={"seconds": 2.0, "cpu_s": 4.0}),
        _run(1.0, cpu=9.0, rss=100.0, load=4.0, child={"seconds": 1.0, "cpu_s": 9.0}),
        _run(8.0, cpu=3.0, rss=1000.0, load=1.0, child={"seconds": 9.0, "cpu_s": 5.0}),
    ]
    s = peers.summarise(runs)  # medians, not means: one slow minute does not move them
    assert (s["wall_s"], s["cpu_s"], s["peak_rss_mb"], s["load"], s["rc"]) == (3.0, 3.0, 300.0, 1.0, 0)
    assert s["child"] == {"seconds": 2.0, "cpu_s": 5.0}
    assert [r["wall_s"] for r in s["runs"]] == [3.0, 1.0, 8.0]
    assert all("tail" not in r for r in s["runs"])  # the output is kept once, not per run


def test_a_failed_run_fails_the_figure_with_its_own_output():
    s = peers.summarise([_run(1.0), _run(9.0, rc=137, tail="Killed"), _run(2.0)])
    assert (s["rc"], s["tail"]) == (137, "Killed")
    assert peers._row("x", {"trace_bytes": 1}, s, _run(0.5), _run(30.0), "peer").get("speedup_cold") is None


def test_ours_and_the_peer_in_turn_and_the_ratio_of_each_pair():
    order = []
    ours = iter([_run(2.0), _run(4.0), _run(3.0)])
    theirs = iter([_run(20.0), _run(30.0, rc=1), _run(33.0)])

    def mine():
        order.append("ours")
        return next(ours)

    def peer():
        order.append("peer")
        return next(theirs)

    o, p, ratios = peers.in_turn(3, mine, peer)
    assert order == ["ours", "peer"] * 3
    assert ratios == [10.0, 11.0]  # the pair whose peer failed gives no ratio
    assert o["wall_s"] == 3.0 and p["rc"] == 1
    o, p, ratios = peers.in_turn(2, lambda: _run(1.0))
    assert p is None and ratios == [] and o["wall_s"] == 1.0


def test_the_table_shows_the_median_ratio_and_the_range_of_the_pairs():
    ours = peers.summarise([_run(2.0), _run(4.0), _run(3.0)])
    peer = peers.summarise([_run(20.0), _run(36.0), _run(33.0)])
    row = peers._row("Kineto 1 MB: analyze", {"trace_bytes": 1}, ours, _run(0.4), peer, "HTA", ratios=[10.0, 9.0, 11.0])
    assert (row["speedup_cold"], row["speedup_pairs"]) == (11.0, [10.0, 9.0, 11.0])
    start = {"imports": _run(0.7), "help": _run(0.1)}
    text = peers.table([row], start)
    assert "| 11.00x (1.00x), pairs 9.00-11.00x |" in text
    assert "Cold figures are medians of 3 runs" in text
    single = peers._row("one", {"trace_bytes": 1}, _run(2.0), _run(0.4), _run(20.0), "HTA", ratios=[10.0])
    assert "speedup_pairs" not in single
    assert "medians" not in peers.table([single], start)


@pytest.mark.parametrize("bad", ["0", "-1"])
def test_repeat_must_be_at_least_one(bad, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["peers.py", "--repeat", bad])
    with pytest.raises(SystemExit) as exc:
        peers.main()
    assert exc.value.code == 2
    assert "--repeat must be at least 1" in capsys.readouterr().err


def test_a_db_row_has_the_import_alone_and_no_orjson_floor():
    """``--formats db``: no JSON to parse, so the row carries our import alone and no floor; the
    table shows the import and leaves the floor's cells empty."""
    imp = _run(1.5, cpu=2.0, child={"seconds": 1.2, "cpu_s": 1.9})
    row = peers._row(
        "torch_npu DB 54 MB: analyze", {"trace_bytes": 1}, _run(3.0), _run(0.5), _run(12.0), "msa", None, imp
    )
    assert "floor" not in row and "import_cpu_over_floor" not in row
    assert (row["import_s"], row["import_cpu_s"], row["speedup_cold"]) == (1.2, 1.9, 4.0)
    line = next(x for x in peers.table([row], {"imports": _run(0.7), "help": _run(0.1)}).splitlines() if "DB" in x)
    assert "| 1.20 s / 1.9 | - |" in line and "4.00x" in line
    assert set(peers.BENCHES) == {"ascend", "kineto", "db"}
