"""Shared test helpers.  Fixtures are found through one place: ``PROFINSIGHT_FIXTURES`` if set,
else ``../shared/fixtures`` relative to the repository root.  They are read-only: copy them to
``tmp_path`` before changing anything."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def fixtures_root() -> Path:
    env = os.environ.get("PROFINSIGHT_FIXTURES")
    return Path(env) if env else (REPO.parent / "shared" / "fixtures").resolve()


@pytest.fixture(scope="session")
def fixtures() -> Path:
    root = fixtures_root()
    if not root.is_dir():
        pytest.fail(f"fixtures not found at {root}; set PROFINSIGHT_FIXTURES")
    return root


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Every test gets its own cache folder, so no test sees another's cached tables."""
    monkeypatch.setenv("PROFINSIGHT_CACHE", str(tmp_path_factory.mktemp("cache")))
