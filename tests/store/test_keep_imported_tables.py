"""A rank imported in this process keeps its tables in memory beside its new cache entry, and
every analysis over them equals the same analysis over the Parquet files a later load reads."""

from __future__ import annotations

import pandas as pd
import pytest

import profinsight
from profinsight import registry
from profinsight.store import loader

RANKS = ["kineto/gpu_2rank_rank0.json.gz", "ascend_pt/text_level1/rank0_ascend_pt"]


def _outcomes(profile) -> dict:
    """Every registered analysis with its default parameters, computed here (not from the
    results cache): its frame, or the type of what it raised."""
    out = {}
    for name, a in sorted(registry.all_analyses().items()):
        try:
            out[name] = a.func(profile)
        except Exception as exc:  # noqa: BLE001 - both loads must raise the same
            out[name] = type(exc).__name__
    return out


@pytest.mark.parametrize("rel", RANKS)
def test_a_cold_load_reads_its_tables_where_they_are_and_finds_what_the_cache_gives(fixtures, rel):
    cold = profinsight.load(fixtures / rel)
    (rank,) = cold._ranks
    assert rank.cached is not None and rank.tables is not None  # in the cache, and kept
    cold.connection()
    assert "device_tasks" in cold._registered  # SQL scans the Arrow tables, not the files
    kept = _outcomes(cold)

    warm = profinsight.load(fixtures / rel)
    (again,) = warm._ranks
    assert again.tables is None and again.cached.folder == rank.cached.folder
    warm.connection()
    assert warm._registered == []  # every table a view of its Parquet file
    read = _outcomes(warm)

    assert kept.keys() == read.keys()
    frames = [n for n, v in kept.items() if isinstance(v, pd.DataFrame)]
    assert len(frames) >= 20  # the analyses ran, not only raised
    assert sum(len(kept[n]) for n in frames) > 100
    for name in kept:
        if isinstance(kept[name], pd.DataFrame):
            pd.testing.assert_frame_equal(kept[name], read[name], check_exact=True, obj=name)
        else:
            assert kept[name] == read[name], name


def test_tables_larger_than_the_bound_are_let_go(fixtures, monkeypatch):
    monkeypatch.setattr(loader, "KEEP_MAX_BYTES", 0)
    p = profinsight.load(fixtures / RANKS[0])
    (rank,) = p._ranks
    assert rank.tables is None and rank.cached is not None
    p.connection()
    assert p._registered == [] and p.parquet_files("device_tasks") == [rank.cached.folder / "device_tasks.parquet"]
    assert p.row_counts()["device_tasks"] == len(p.table("device_tasks")) > 0


def test_ranks_of_a_load_of_several_are_read_from_the_cache(fixtures):
    """Of several ranks some may come from the cache or another process: none is held, so a
    query reads the columns it asks for from every rank's Parquet file."""
    k = fixtures / "kineto"
    p = profinsight.load([k / "gpu_2rank_rank0.json.gz", k / "gpu_2rank_rank1.json.gz"])
    assert [(r.tables is None, r.cached is not None) for r in p._ranks] == [(True, True), (True, True)]
    p.connection()
    assert p._registered == []
    assert p.parquet_files("host_ops") == [r.cached.folder / "host_ops.parquet" for r in p._ranks]
