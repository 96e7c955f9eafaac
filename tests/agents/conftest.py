from __future__ import annotations

import shutil

import pytest

from profinsight.samples import sample_path

SAMPLE = "rank0_ascend_pt"


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """A root holding a copy of the bundled sample, a hidden folder and a symlink leaving it
    (one per test module: the tests only read it)."""
    tmp_path = tmp_path_factory.mktemp("agents")
    r = tmp_path / "root"
    shutil.copytree(sample_path(), r / SAMPLE)
    shutil.copytree(sample_path(), tmp_path / "outside" / SAMPLE)
    (r / "link").symlink_to(tmp_path / "outside" / SAMPLE, target_is_directory=True)
    shutil.copytree(sample_path(), r / ".hidden" / SAMPLE)
    return r


@pytest.fixture(scope="module")
def session(root):
    from profinsight.agents import make_session

    return make_session(
        [root], viewer_url="http://127.0.0.1:8765/?token=T", jupyter_url="http://localhost:8888/lab?token=J"
    )
