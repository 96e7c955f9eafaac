"""The importer registry: every format declares what it recognises, discovery asks them, and
detection goes by content (the file or folder name is only a hint)."""

from __future__ import annotations

import shutil
from pathlib import Path

import profinsight
from profinsight.discovery import scan
from profinsight.importers import REGISTERED, formats, importers

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_each_registered_importer_declares_itself_and_has_a_docs_section():
    imps = importers()
    assert [i.name for i in imps] == list(REGISTERED)
    text = (DOCS / "formats.md").read_text(encoding="utf-8")
    for imp in imps:
        assert imp.shape in ("file", "folder") and imp.doc
        assert f"## `{imp.name}`" in text, f"docs/formats.md has no section for {imp.name}"
    assert set(formats()) == {"ascend_db", "ascend_text", "kineto", "msprof", "ascend_file", "msprof_db", "cluster"}


def test_a_kineto_trace_is_found_without_its_file_name(fixtures, tmp_path):
    shutil.copy(fixtures / "kineto" / "cpu_only.json.gz", tmp_path / "blob")
    (run,) = profinsight.discover(tmp_path)
    assert run.format == "kineto" and run.root.name == "blob" and run.ranks == [34]
    (tmp_path / "notes.json").write_text('{"not": "a trace"}')
    (tmp_path / "data.bin").write_bytes(b"\x00" * 100)
    assert [r.root.name for r in profinsight.discover(tmp_path)] == ["blob"]


def test_a_rank_folder_is_found_without_its_folder_name(fixtures, tmp_path):
    shutil.copytree(fixtures / "ascend_pt" / "text_level1" / "rank0_ascend_pt", tmp_path / "job" / "x")
    shutil.copytree(fixtures / "ascend_pt" / "db_level1" / "rank1_ascend_pt", tmp_path / "other" / "y")
    got = sorted((r.root.name, r.format, r.level, tuple(r.ranks)) for r in profinsight.discover(tmp_path))
    assert got == [("x", "ascend_text", "Level1", (0,)), ("y", "ascend_db", "Level1", (1,))]


def test_an_msprof_collection_is_found_without_its_prof_name(fixtures, tmp_path):
    (src,) = (fixtures / "msprof" / "prof_timeline_2023").iterdir()
    shutil.copytree(src, tmp_path / "collection")
    (run,) = profinsight.discover(tmp_path / "collection")
    assert run.format == "msprof" and run.ranks == [0]


def test_scan_prunes_like_a_listing(fixtures, tmp_path):
    trace = fixtures / "kineto" / "cpu_only.json.gz"
    for sub in ("node_modules", ".hidden", "venv", "kept"):
        (tmp_path / sub).mkdir()
        shutil.copy(trace, tmp_path / sub / "t.json.gz")
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr\n")
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    shutil.copy(trace, outside / "t.json.gz")
    (tmp_path / "link").symlink_to(outside, target_is_directory=True)
    (tmp_path / "ms_ascend_ms").mkdir()
    found = scan(tmp_path)
    assert [r.root.parent.name for r in found.runs] == ["kept"] and not found.truncated
    assert [type(p).__name__ for p in found.problems] == ["UnsupportedFormat"]
    # with the links inside the root, the link is followed
    assert len(scan(tmp_path, root=tmp_path.parent).runs) == 2
    assert scan(tmp_path, max_dirs=1).truncated


def test_scan_never_raises(tmp_path):
    assert scan(tmp_path).runs == [] and scan(tmp_path / "missing").runs == []
