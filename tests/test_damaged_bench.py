"""``benchmarks/damaged.py``: each damaged place breaks exactly one event of the trace, and the
rest of the rank is the original (hard links), so its figures are the cost of that damage alone.
Checked on a copy of the real text fixture's rank (no import is timed here)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import damaged  # noqa: E402


def test_each_place_breaks_one_event_and_links_the_rest(fixtures, tmp_path):
    rank = tmp_path / "rank0_ascend_pt"
    shutil.copytree(fixtures / "ascend_pt/text_level1/rank0_ascend_pt", rank)
    original = (rank / damaged.TRACE).read_bytes()
    events = json.loads(original)
    copy = damaged.damaged_copy(rank, 7, tmp_path / "out")
    data = (copy / damaged.TRACE).read_bytes()
    # seven bytes changed, each the closing quote of a "name" key: seven events are not JSON
    assert len(data) == len(original)
    assert sum(a != b for a, b in zip(data, original)) == 7
    assert data.count(b'"namex:') == 7 and original.count(b'"namex:') == 0
    assert len(events) > 7
    linked = [p for p in copy.rglob("*") if p.is_file() and p != copy / damaged.TRACE]
    assert linked and all(os.path.samefile(p, rank / p.relative_to(copy)) for p in linked)
    assert (rank / damaged.TRACE).read_bytes() == original  # the source rank is untouched


def test_a_kineto_trace_is_copied_with_its_places_broken(fixtures, tmp_path):
    """A Kineto trace is one file: the damaged copy is that file, each place one event broken."""
    import gzip

    src = tmp_path / "rank0.pt.trace.json"
    src.write_bytes(gzip.open(fixtures / "kineto/gpu_2rank_rank0.json.gz").read())
    copy = damaged.damaged_copy(src, 5, tmp_path / "out")
    assert damaged.trace_of(copy) == copy and copy.name == src.name and copy.parent.name == "5_places"
    data, original = copy.read_bytes(), src.read_bytes()
    assert len(data) == len(original) and sum(a != b for a, b in zip(data, original)) == 5
    assert data.count(b'"namex:') == 5
