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


def _written_beside_dbs(root: Path) -> set[Path]:
    return set(root.rglob("*.db-shm")) | set(root.rglob("*.db-wal")) if root.is_dir() else set()


@pytest.fixture(scope="session", autouse=True)
def _fixtures_stay_untouched():
    """The fixtures are the user's data: no test and no importer may write into them.  SQLite is
    the way it happens unseen (``mode=ro`` creates ``-shm``/``-wal`` beside a WAL-mode DB, even in
    a read-only folder for root), so the session fails if such a file appeared."""
    root = fixtures_root()
    before = _written_beside_dbs(root)
    yield
    new = sorted(_written_beside_dbs(root) - before)
    if new:
        pytest.fail("files were written into the fixtures: " + ", ".join(str(p) for p in new), pytrace=False)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Every test gets its own cache folder, so no test sees another's cached tables."""
    monkeypatch.setenv("PROFINSIGHT_CACHE", str(tmp_path_factory.mktemp("cache")))
