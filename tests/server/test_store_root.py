"""``ProfileStore(root=...)``, the store of the Jupyter extension: profiles named by their path
relative to the root, nothing outside it opened.  (No jupyter_server needed.)"""

from __future__ import annotations

import shutil

import pytest

from profinsight.errors import UnknownTable
from profinsight.server.store import ROOT_ID, ProfileStore


@pytest.fixture
def root(fixtures, tmp_path):
    r = tmp_path / "root"
    shutil.copytree(fixtures / "ascend_pt" / "text_level1", r / "runs" / "text_level1")
    shutil.copy(fixtures / "kineto" / "cpu_only.json.gz", r / "a_trace.json.gz")
    shutil.copytree(fixtures / "kineto", tmp_path / "outside")
    (r / "link").symlink_to(tmp_path / "outside", target_is_directory=True)
    (r / "link_trace.json.gz").symlink_to(tmp_path / "outside" / "cpu_only.json.gz")
    return r


def test_refresh_lists_runs_inside_only(root):
    ids = ProfileStore(root=root).refresh()
    assert "runs/text_level1" in ids and "a_trace.json.gz" in ids
    assert not any(i.startswith("link") for i in ids), ids


def test_open_by_relative_path(root):
    s = ProfileStore(root=root)
    assert s.ids() == []
    assert s.entry("runs/text_level1").id == "runs/text_level1"
    assert s.get("a_trace.json.gz").ranks


@pytest.mark.parametrize(
    "bad",
    [
        "..",
        "../outside",
        "runs/../../outside",
        "/etc/passwd",
        "/",
        "link",
        "link/cpu_only.json.gz",
        "link_trace.json.gz",
        ".hidden",
        "runs/./text_level1",
        "runs//text_level1",
        "",
        "runs",
        "nothing_here",
        "C:/x",
        "a\x00b",
        ROOT_ID,
    ],
)
def test_refused(root, bad):
    with pytest.raises(UnknownTable):
        ProfileStore(root=root).entry(bad)


def test_root_that_is_one_run(fixtures, tmp_path):
    r = tmp_path / "only"
    shutil.copytree(fixtures / "ascend_pt" / "text_level1" / "rank0_ascend_pt", r)
    s = ProfileStore(root=r)
    assert s.refresh() == [ROOT_ID]
    assert ProfileStore(root=r).entry(ROOT_ID).id == ROOT_ID


def test_without_root_ids_are_not_paths(fixtures):
    s = ProfileStore([fixtures / "kineto" / "cpu_only.json.gz"])
    assert s.refresh() == s.ids() == ["cpu_only.json.gz"]
    with pytest.raises(UnknownTable):
        s.entry("kineto/cpu_only.json.gz")
