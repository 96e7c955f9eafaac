"""The contract's "Text vs DB exports" rules, on the fixtures: the text and DB exports of the same
training step (two separate collections of one program) must give the same schema, the same
multiset of (name, type) of compute kernels, communication ops equal by count, type and order,
and compute time within 2%."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from profinsight.importers import ascend_db, ascend_text, load_rank
from profinsight.schema import TABLES

CASES = [(lv, r) for lv in (0, 1) for r in (0, 1)]
_CACHE: dict = {}


def both(fixtures: Path, level: int, rank: int):
    key = (level, rank)
    if key not in _CACHE:
        text = fixtures / "ascend_pt" / f"text_level{level}" / f"rank{rank}_ascend_pt"
        db = fixtures / "ascend_pt" / f"db_level{level}" / f"rank{rank}_ascend_pt"
        _CACHE[key] = (load_rank(ascend_text.sniff(text)), load_rank(ascend_db.sniff(db)))
    return _CACHE[key]


@pytest.mark.parametrize("level,rank", CASES)
def test_same_schema(fixtures, level, rank):
    text, db = both(fixtures, level, rank)
    for name, decl in TABLES.items():
        declared = set(decl.names)
        t = [(f.name, f.type) for f in text.tables[name].schema if f.name in declared]
        d = [(f.name, f.type) for f in db.tables[name].schema if f.name in declared]
        assert t == d, name


@pytest.mark.parametrize("level,rank", CASES)
def test_same_compute_kernels(fixtures, level, rank):
    text, db = both(fixtures, level, rank)

    def kernels(data):
        t = data.tables["device_tasks"].to_pandas()
        k = t[t.kind == "kernel"]
        return collections.Counter(zip(k.name, k.type.where(k.type.notna(), None)))

    assert kernels(text) == kernels(db)


@pytest.mark.parametrize("level,rank", CASES)
def test_communication_ops_by_count_type_and_order(fixtures, level, rank):
    text, db = both(fixtures, level, rank)

    def comm(data):
        t = data.tables["device_tasks"].to_pandas()
        c = t[t.kind == "communication"].sort_values("start_ns", kind="stable")
        return [None if x != x else x for x in c.type]  # NaN -> None (Level0 writes N/A)

    assert comm(text) == comm(db) and len(comm(db)) == 4
    assert text.tables["comm_ops"].num_rows == db.tables["comm_ops"].num_rows


@pytest.mark.parametrize("level,rank", CASES)
def test_compute_time_within_2pct(fixtures, level, rank):
    text, db = both(fixtures, level, rank)

    def compute_ns(data):
        t = data.tables["device_tasks"].to_pandas()
        return t[t.kind == "kernel"].dur_ns.sum()

    assert compute_ns(text) == pytest.approx(compute_ns(db), rel=0.02)


@pytest.mark.parametrize("level,rank", CASES)
def test_same_steps_and_groups(fixtures, level, rank):
    """Not in the contract's list, but what the shared rules (steps by launch, groups named by
    analysis.db's hash where both exports have it) promise."""
    text, db = both(fixtures, level, rank)
    assert text.tables["steps"].column("step").to_pylist() == db.tables["steps"].column("step").to_pylist()
    if level == 1:
        t_groups = set(text.tables["comm_ops"].column("group").to_pylist())
        d_groups = set(db.tables["comm_ops"].column("group").to_pylist())
        assert len(t_groups) == len(d_groups) == 1
