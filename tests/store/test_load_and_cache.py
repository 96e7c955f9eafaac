"""Discovery, loading and the on-disk cache, on the real fixtures."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import profinsight
from profinsight import MixedRuns, NotAProfile, UnsupportedFormat
from profinsight.store import cache


def test_discover_lists_each_run_of_a_mixed_folder(fixtures):
    runs = profinsight.discover(fixtures / "ascend_pt")
    got = sorted((r.root.name, r.format, r.level, tuple(r.ranks)) for r in runs)
    assert got == [
        ("db_level0", "ascend_db", "Level0", (0, 1)),
        ("db_level1", "ascend_db", "Level1", (0, 1)),
        ("text_level0", "ascend_text", "Level0", (0, 1)),
        ("text_level1", "ascend_text", "Level1", (0, 1)),
    ]


def test_load_refuses_a_mixed_folder_and_lists_runs(fixtures):
    with pytest.raises(MixedRuns) as exc:
        profinsight.load(fixtures / "ascend_pt")
    assert len(exc.value.runs) == 4
    assert "text_level1" in str(exc.value) and "db_level0" in str(exc.value)


def test_load_a_run_object_from_discover(fixtures):
    run = [r for r in profinsight.discover(fixtures / "ascend_pt") if r.root.name == "text_level1"][0]
    p = profinsight.load(run)
    assert p.ranks == [0, 1]


def test_kineto_rank_files_of_one_job_form_one_run(fixtures):
    k = fixtures / "kineto"
    runs = profinsight.discover(k)
    two = [r for r in runs if len(r.sources) == 2]
    assert len(two) == 1 and sorted(s.path.name for s in two[0].sources) == [
        "gpu_2rank_rank0.json.gz",
        "gpu_2rank_rank1.json.gz",
    ]
    p = profinsight.load([k / "gpu_2rank_rank0.json.gz", k / "gpu_2rank_rank1.json.gz"])
    assert p.ranks == [0, 1]
    assert any(d.code == "partial-ranks" for d in p.diagnostics)  # 2 of the job's ranks


def test_empty_folder_is_one_clear_error(tmp_path):
    with pytest.raises(NotAProfile) as exc:
        profinsight.load(tmp_path)
    assert "no profile found" in str(exc.value) and "Fix:" in str(exc.value)


def test_missing_path(tmp_path):
    with pytest.raises(NotAProfile, match="no such file"):
        profinsight.load(tmp_path / "nope")


def test_unsupported_formats_are_named(tmp_path):
    prof = tmp_path / "PROF_000001_20230628101435646_FKFLNPEPPRRCFCBA"
    (prof / "host").mkdir(parents=True)
    with pytest.raises(UnsupportedFormat, match="msprof"):
        profinsight.load(prof)
    ms = tmp_path / "x" / "worker_1_ascend_ms"
    ms.mkdir(parents=True)
    with pytest.raises(UnsupportedFormat, match="MindSpore"):
        profinsight.load(ms)


def test_raw_data_never_parsed(tmp_path):
    rank = tmp_path / "w_1_ascend_pt"
    (rank / "FRAMEWORK").mkdir(parents=True)
    with pytest.raises(NotAProfile, match="never parsed") as exc:
        profinsight.load(rank)
    assert "analyse" in str(exc.value)


def test_both_exports_default_to_db_and_can_choose_text(fixtures, tmp_path):
    rank = tmp_path / "rank0_ascend_pt"
    shutil.copytree(fixtures / "ascend_pt/text_level1/rank0_ascend_pt", rank)
    db = fixtures / "ascend_pt/db_level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
    shutil.copy(db, rank / "ASCEND_PROFILER_OUTPUT")
    p = profinsight.load(rank)
    assert p.format == "ascend_db"
    note = [d for d in p.diagnostics if d.code == "both-exports"]
    assert note and "prefer='text'" in note[0].fix
    assert profinsight.load(rank, prefer="text").format == "ascend_text"


def test_tables_keep_exact_ns_and_nulls(fixtures):
    p = profinsight.load(fixtures / "ascend_pt/text_level1/rank0_ascend_pt")
    dt = p.table("device_tasks")
    assert isinstance(dt, pd.DataFrame)
    assert str(dt["start_ns"].dtype) == "Int64"
    assert 1736408883704643212 in set(dt["start_ns"].dropna().astype("int64"))
    got = p.sql("select count(*) as n from device_tasks where kind in ('kernel', 'communication')")
    assert int(got["n"][0]) == 191
    html = p._repr_html_()
    assert "device_tasks" in html and "ascend_text" in html
    assert "ranks=[0]" in repr(p)


def test_warm_open_comes_from_cache_and_changes_invalidate(fixtures, tmp_path, monkeypatch):
    rank = tmp_path / "rank0_ascend_pt"
    shutil.copytree(fixtures / "ascend_pt/text_level1/rank0_ascend_pt", rank)
    first = profinsight.load(rank)
    n = first.row_counts()["device_tasks"]
    import profinsight.store.loader as loader

    def boom(_source):
        raise AssertionError("imported again although the cache is fresh")

    monkeypatch.setattr(loader, "load_rank", boom)
    warm = profinsight.load(rank)
    assert warm.row_counts()["device_tasks"] == n
    assert len(warm.table("device_tasks")) == n
    monkeypatch.undo()
    os.environ["PROFINSIGHT_CACHE"] = str(cache.cache_root())  # undo() dropped the per-test cache env
    # touching a source file changes the key: imported again
    kd = rank / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    st = kd.stat()
    os.utime(kd, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000_000))
    calls = []
    real = loader.load_rank
    monkeypatch.setattr(loader, "load_rank", lambda s: calls.append(s) or real(s))
    profinsight.load(rank)
    assert len(calls) == 1


#: the child of the interrupted-write test: loads one rank (import + cache write) and stops for
#: good after the third Parquet file of the entry is on disk, so the parent can kill it mid-write
_WRITER = """
import sys, time
from pathlib import Path
import pyarrow.parquet as pq
import profinsight

rank, ready = Path(sys.argv[1]), Path(sys.argv[2])
real_write, written = pq.write_table, []

def write_then_hang(table, where, **kw):
    real_write(table, where, **kw)
    written.append(where)
    if len(written) == 3:
        # written aside and renamed, so the test never sees the file before its content
        part = ready.with_name(ready.name + ".part")
        part.write_text(str(where))
        part.replace(ready)
        time.sleep(600)

pq.write_table = write_then_hang
profinsight.load(rank)
"""


def test_cache_write_killed_mid_way_is_ignored_then_repaired(fixtures, tmp_path, monkeypatch):
    rank = tmp_path / "rank0_ascend_pt"
    shutil.copytree(fixtures / "ascend_pt/text_level0/rank0_ascend_pt", rank)
    root, ready = cache.cache_root(), tmp_path / "ready"
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(rank), str(ready)], stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():
            if writer.poll() is not None:
                pytest.fail("the writer ended before it was killed:\n" + writer.stderr.read().decode()[-3000:])
            assert time.monotonic() < deadline, "the writer wrote no Parquet file in 120 s"
            time.sleep(0.02)
        os.kill(writer.pid, signal.SIGKILL)
        assert writer.wait(30) == -signal.SIGKILL
    finally:
        if writer.poll() is None:
            writer.kill()
        writer.stderr.close()
    # what the kill left: a temporary folder holding part of the entry (the tables are written
    # two at a time, so the other writer may have gone on past the third), no entry
    (tmp,) = root.rglob(".tmp-*")
    assert Path(ready.read_text()).parent == tmp
    assert len(list(tmp.glob("*.parquet"))) >= 3 and not (tmp / "meta.json").exists()
    src = profinsight.discover(rank)[0].sources[0]
    assert not (tmp.parent / cache.cache_key(src)).exists()
    assert cache.lookup(src) is None
    # the next load ignores the partial write and imports again; the next cache write sweeps the
    # killed writer's folder (a temporary folder is swept once an hour old: a younger one may
    # belong to a writer still at work in another process), so age it as the clock would
    hour_ago = time.time() - 3601
    os.utime(tmp, (hour_ago, hour_ago))
    import profinsight.store.loader as loader

    calls, real = [], loader.load_rank
    monkeypatch.setattr(loader, "load_rank", lambda s: calls.append(s) or real(s))
    p = profinsight.load(rank)
    assert len(calls) == 1
    n = p.row_counts()["device_tasks"]
    assert n > 0 and len(p.table("device_tasks")) == n
    assert cache.lookup(src) is not None  # repaired: a complete entry
    assert list(root.rglob(".tmp-*")) == []
    # and a later load comes from that entry
    calls.clear()
    again = profinsight.load(rank)
    assert calls == [] and again.row_counts() == p.row_counts()


def test_cache_off_keeps_tables_in_memory(fixtures, monkeypatch):
    monkeypatch.setenv("PROFINSIGHT_CACHE", "off")
    p = profinsight.load(fixtures / "ascend_pt/text_level0/rank0_ascend_pt")
    assert cache.cache_root() is None
    assert p.sql("select count(*) as n from steps")["n"][0] == 1


def test_cache_is_outside_the_data_folder(fixtures):
    rank = fixtures / "ascend_pt/text_level0/rank1_ascend_pt"
    before = sorted(x.name for x in rank.rglob("*"))
    t0 = time.time()
    profinsight.load(rank)
    assert sorted(x.name for x in rank.rglob("*")) == before
    assert time.time() - t0 < 30


def test_cache_files_dictionary_encode_text_only_and_read_back_the_same(tmp_path):
    """Times and ids are written plain (a dictionary of nearly unique values is dropped after it
    is built), text columns dictionary-encoded; the table read back is the table written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 50_000
    table = pa.table(
        {
            "start_ns": pa.array(range(0, 1000 * n, 1000), pa.int64()),
            "stream": pa.array([i % 3 for i in range(n)], pa.int64()),
            "name": pa.array([f"op{i % 7}" if i % 11 else None for i in range(n)], pa.string()),
            "kind": pa.array(["kernel", "memcpy"] * (n // 2)).dictionary_encode(),
            "dur_ns": pa.array([float(i % 5) for i in range(n)], pa.float64()),
        }
    )
    path = tmp_path / "t.parquet"
    cache.write_parquet(table, path)
    meta = pq.ParquetFile(path).metadata
    encodings = {meta.schema.column(c).name: meta.row_group(0).column(c).encodings for c in range(meta.num_columns)}
    dictionary = {"PLAIN_DICTIONARY", "RLE_DICTIONARY"}
    assert {name for name, enc in encodings.items() if dictionary & set(enc)} == {"name", "kind"}
    assert meta.row_group(0).column(0).compression == "ZSTD"
    back = pq.ParquetFile(path).read()
    assert back.equals(table) and back.schema == table.schema
