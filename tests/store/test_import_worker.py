"""The worker processes that import ranks side by side hold pandas back (pyarrow would import it
for nothing, 0.25 s CPU taken from the other rank's import): every importer gives the same
tables and diagnostics without it, and a rank whose importer does ask for pandas is imported
again by the parent, never lost."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import subprocess
import sys

import pandas as pd
import pyarrow as pa
import pytest

import profinsight
from profinsight.api import resolve_run
from profinsight.importers import load_rank
from profinsight.store import loader

#: one rank of every cached format among the fixtures
RUNS = (
    "ascend_pt/text_level1",
    "ascend_pt/db_level1",
    "ascend_llm/qwen3_level2_4rank",
    "msprof/prof_timeline_2023",
    "msprof/msprof_db",
    "kineto/gpu_2rank_rank0.json.gz",
    "kineto/amd_mi250.json.gz",
    "kineto/legacy/resnet50_tb_plugin_2021.json.gz",
)

# a fresh interpreter (no pandas yet, as a spawned worker): import each first rank the way a
# worker does, write its tables as Arrow IPC and its diagnostics as JSON
_WORKER = """
import json, sys
from pathlib import Path
import pyarrow as pa
from profinsight.api import resolve_run
from profinsight.store import loader
out = Path(sys.argv[1])
seen = {}
for i, path in enumerate(sys.argv[2:]):
    source = resolve_run(path).sources[0]
    how, folder, data, where = loader._import_in_worker(source)
    if how == "cached":
        entry = loader.cache._open(folder)
        tables = {n: entry.read(n) for n in entry.row_counts}
        diags = entry.diagnostics
    else:
        tables, diags = (data.tables, data.diagnostics) if data is not None else ({}, [])
    for name, table in tables.items():
        with pa.OSFile(str(out / f"{i}_{name}.arrow"), "wb") as f, pa.ipc.new_file(f, table.schema) as w:
            w.write_table(table)
    seen[i] = {"how": how, "tables": sorted(tables), "diagnostics": [[d.code, d.message] for d in diags]}
seen["pandas"] = "pandas" in sys.modules
print(json.dumps(seen))
"""


def _run_worker(paths, tmp_path, env_extra=None, code=_WORKER):
    env = dict(os.environ, PROFINSIGHT_CACHE=str(tmp_path / "cache"), **(env_extra or {}))
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path), *map(str, paths)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_every_importer_gives_the_same_tables_without_pandas(fixtures, tmp_path):
    paths = [fixtures / r for r in RUNS]
    seen = _run_worker(paths, tmp_path)
    assert seen.pop("pandas") is False  # held back for the whole worker
    for i, path in enumerate(paths):
        got = seen[str(i)]
        assert got["how"] == "cached", (path, got)
        plain = load_rank(resolve_run(path).sources[0])
        assert got["diagnostics"] == [[d.code, d.message] for d in plain.diagnostics], path
        assert got["tables"] == sorted(plain.tables), path
        for name, table in plain.tables.items():
            with pa.memory_map(str(tmp_path / f"{i}_{name}.arrow")) as f:
                held = pa.ipc.open_file(f).read_all()
            # the worker's tables went through the Parquet cache: compared as the loader reads them
            assert held.to_pylist() == table.cast(held.schema).to_pylist(), (path, name)


def test_an_importer_that_asks_for_pandas_is_sent_back(fixtures, tmp_path):
    code = (
        "import profinsight.importers.kineto as k\n"
        "real = k.load_rank\n"
        "def asks(source):\n"
        "    import pandas\n"
        "    return real(source)\n"
        "k.load_rank = asks\n" + _WORKER
    )
    seen = _run_worker([fixtures / RUNS[5]], tmp_path, code=code)
    assert seen["0"]["how"] == "retry" and seen["0"]["tables"] == []


def _send_back(source, threads=None):
    return ("retry", None, None, {})


def test_a_rank_sent_back_is_imported_by_the_parent(fixtures, monkeypatch):
    """A forked worker that answers "retry": this process imports that rank itself, with the
    tables of a plain load."""
    paths = [fixtures / p for p in ("kineto/gpu_2rank_rank0.json.gz", "kineto/gpu_2rank_rank1.json.gz")]
    monkeypatch.setattr(loader, "_worker_context", lambda: mp.get_context("fork"))
    monkeypatch.setattr(loader, "_import_in_worker", _send_back)
    cmp = profinsight.compare(*paths, workers=2)
    assert [p._ranks[0].loaded_by["pid"] for p in cmp.profiles] == [os.getpid()] * 2
    monkeypatch.setenv("PROFINSIGHT_CACHE", os.environ["PROFINSIGHT_CACHE"] + "_plain")
    for prof, path in zip(cmp.profiles, paths):
        pd.testing.assert_frame_equal(prof.table("device_tasks"), profinsight.load(path).table("device_tasks"))


@pytest.mark.parametrize("present", [True, False])
def test_the_finder_is_set_only_where_pandas_is_not_imported(monkeypatch, present):
    """A forked worker of a process that has pandas keeps it (nothing to save, nothing to break)."""
    calls = []
    monkeypatch.setattr(
        loader, "_import_and_store", lambda s, t=None, **kw: calls.append(s) or ("memory", None, None, {})
    )
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    if not present:
        monkeypatch.delitem(sys.modules, "pandas")
    loader._import_in_worker("source")
    assert calls == ["source"]
    held = [f for f in sys.meta_path if isinstance(f, loader._PandasHeldBack)]
    assert len(held) == (0 if present else 1)
    if not present:
        with pytest.raises(ModuleNotFoundError, match=loader.PANDAS_HELD_BACK):
            import pandas  # noqa: F401
        loader._import_in_worker("again")  # a second rank in the same worker: still one finder
        assert len([f for f in sys.meta_path if isinstance(f, loader._PandasHeldBack)]) == 1
