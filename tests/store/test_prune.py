"""The cache keeps to a size (store/prune.py, ``profinsight cache``): the entries used least
recently go first, an entry used in the last hour stays, a lookup renews an entry's use, the
folder of another schema version and the leftovers of an interrupted removal go, the automatic
prune runs at most hourly, and a pruned profile imports again to the same tables.  Real entries:
real Kineto fixtures imported into the test's own cache."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

import profinsight
from profinsight.cli import main
from profinsight.schema import SCHEMA_VERSION, TABLES
from profinsight.store import prune
from profinsight.store.root import cache_root

DAY = 86400.0
FILES = ("kineto/compare_base.json.gz", "kineto/compare_test.json.gz", "kineto/cpu_only.json.gz")


def _age(path: Path, t: float) -> None:
    """Sets ``path`` and everything under it to mtime ``t`` (as if last used then)."""
    for p in [path, *path.rglob("*")]:
        os.utime(p, (t, t))


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


@pytest.fixture
def three(fixtures):
    """Three real rank entries, used 3, 2 and 1 days ago (in that order of FILES)."""
    now = time.time()
    for f in FILES:
        profinsight.load(fixtures / f)
    found = {e.path: e for e in prune.entries()}
    assert [e.kind for e in found.values()] == ["rank"] * 3
    by_file = {}
    for path in found:
        meta = json.loads((path / "meta.json").read_text())
        by_file[Path(meta["source"]["path"]).name] = path
    folders = [by_file[Path(f).name] for f in FILES]
    for days, folder in zip((3, 2, 1), folders):
        _age(folder, now - days * DAY)
    _age(cache_root() / ".last-prune", now - 2 * 3600)  # the imports' own automatic prune was 2 h ago
    return folders, now


def test_parse_size():
    assert prune.parse_size("20G") == 20 * 2**30
    assert prune.parse_size("500M") == 500 * 2**20
    assert prune.parse_size("1.5GB") == 1536 * 2**20
    assert prune.parse_size("64KiB") == 64 * 2**10
    assert prune.parse_size("1048576") == 2**20
    assert prune.parse_size("off") is None
    with pytest.raises(ValueError, match="'1Q' is not a size"):
        prune.parse_size("1Q")


def test_entries_are_listed_oldest_use_first_with_their_size(three):
    folders, now = three
    found = prune.entries()
    assert [e.path for e in found] == folders
    assert [e.bytes for e in found] == [_size(f) for f in folders]
    assert [round((now - e.used) / DAY) for e in found] == [3, 2, 1]


def test_the_size_rule_removes_the_least_recently_used_first(three):
    folders, now = three
    sizes = [_size(f) for f in folders]
    result = prune.prune(max_bytes=sizes[2], now=now)
    assert [e.path for e in result.removed] == folders[:2]
    assert result.freed == sizes[0] + sizes[1] and result.left == sizes[2]
    assert [f.exists() for f in folders] == [False, False, True]
    assert not list(folders[0].parent.glob(".tmp-prune-*"))  # the renamed entries are deleted too


def test_a_dry_run_removes_nothing(three):
    folders, now = three
    result = prune.prune(max_bytes=0, now=now, dry_run=True)
    assert [e.path for e in result.removed] == folders
    assert all(f.exists() for f in folders)


def test_an_entry_used_in_the_last_hour_stays_over_the_limit(three, fixtures):
    folders, now = three
    profinsight.load(fixtures / FILES[0])  # a lookup: the oldest entry is used now
    assert prune.entries()[-1].path == folders[0]
    result = prune.prune(max_bytes=0)
    assert [e.path for e in result.removed] == folders[1:]
    assert [e.path for e in result.kept] == folders[:1]


def test_older_than_removes_entries_unused_that_long(three):
    folders, now = three
    result = prune.prune(max_bytes=None, older_than_s=1.5 * DAY, now=now)
    assert [e.path for e in result.removed] == folders[:2]


def test_other_schema_versions_reports_and_leftovers(three, fixtures):
    folders, now = three
    root = cache_root()
    old = root / f"v{SCHEMA_VERSION - 1}"
    shutil.copytree(folders[2], old / "some-entry")
    _age(old, now - 10 * DAY)
    leftover = root / f"v{SCHEMA_VERSION}" / ".tmp-prune-x-1-abcd"
    leftover.mkdir()
    _age(leftover, now - 2 * 3600)
    (root / "reports").mkdir(exist_ok=True)
    report = root / "reports" / "ranks-0123.json"
    report.write_text("{}")
    _age(report, now - 5 * DAY)
    kinds = {e.path: e.kind for e in prune.entries()}
    assert kinds[old] == "old-version" and kinds[leftover] == "leftover" and kinds[report] == "report"
    result = prune.prune(max_bytes=None, now=now)  # no size rule: only the leftover goes
    assert [e.path for e in result.removed] == [leftover]
    result = prune.prune(max_bytes=_size(folders[2]) + _size(folders[1]), now=now)
    assert [e.path for e in result.removed] == [old, report, folders[0]]


def test_a_pruned_profile_imports_again_to_the_same_tables(fixtures):
    first = profinsight.load(fixtures / FILES[0])
    counts = first.row_counts()
    tables = {n: first.arrow(n) for n in TABLES}
    assert len(prune.clear().removed) == 1 and prune.entries() == []
    again = profinsight.load(fixtures / FILES[0])
    assert again.row_counts() == counts
    assert all(again.arrow(n).equals(tables[n]) for n in TABLES)
    assert len(prune.entries()) == 1


def test_the_automatic_prune_runs_at_most_hourly(three, fixtures, monkeypatch):
    folders, now = three
    monkeypatch.setenv(prune.ENV_MAX, str(_size(folders[2]) + _size(folders[1])))
    result = prune.maybe_prune(now=now)
    assert [e.path for e in result.removed] == folders[:1]
    monkeypatch.setenv(prune.ENV_MAX, "0")  # within the hour: not again, whatever the limit
    assert prune.maybe_prune(now=now + 600) is None
    assert [f.exists() for f in folders] == [False, True, True]
    result = prune.maybe_prune(now=now + 3700)  # an hour later; "0" is no limit ("off")
    assert result is None
    monkeypatch.setenv(prune.ENV_MAX, "1")
    assert [e.path for e in prune.maybe_prune(now=now + 7400).removed] == folders[1:]


def test_an_import_prunes_the_cache_to_its_limit(three, fixtures, monkeypatch):
    """The hook: writing a new entry runs the automatic prune, to PROFINSIGHT_CACHE_MAX."""
    folders, _now = three
    monkeypatch.setenv(prune.ENV_MAX, "1")
    profinsight.load(fixtures / "kineto/gpu_alexnet.json.gz")
    assert [f.exists() for f in folders] == [False, False, False]
    assert [e.kind for e in prune.entries()] == ["rank"]  # the new one: used now


def test_cli_cache_shows_prunes_and_clears(three, capsys):
    folders, now = three
    sizes = [_size(f) for f in folders]
    assert main(["cache", "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["entries"] == 3 and shown["bytes"] == sum(sizes) and shown["removed"] is None
    assert shown["by_kind"]["rank"]["entries"] == 3
    assert main(["cache", "--prune", "--max-size", str(sizes[2]), "--dry-run", "--format", "json"]) == 0
    dry = json.loads(capsys.readouterr().out)
    assert [r["path"] for r in dry["removed"]] == [str(f) for f in folders[:2]] and all(f.exists() for f in folders)
    assert main(["cache", "--prune", "--older-than", "2.5"]) == 0
    out = capsys.readouterr().out
    assert "removed 1 entries" in out and "2 entries; limit 20.0 GiB (PROFINSIGHT_CACHE_MAX)" in out
    assert main(["cache", "--clear"]) == 0
    assert "0 B in 0 entries" in capsys.readouterr().out
    assert [f.exists() for f in folders] == [False, False, False]


def test_cli_cache_bad_input_says_what_to_do(capsys, monkeypatch):
    assert main(["cache", "--prune", "--max-size", "1Q"]) == 2
    err = capsys.readouterr().err
    assert "'1Q' is not a size" in err and "Traceback" not in err
    assert main(["cache", "--max-size", "5G"]) == 2
    assert "--max-size and --older-than go with --prune" in capsys.readouterr().err
    monkeypatch.setenv("PROFINSIGHT_CACHE", "off")
    assert main(["cache"]) == 2
    assert "the cache is switched off" in capsys.readouterr().err
