"""Tests of the JupyterLab side.  Keeps each test's outcome on its item so a UI test's
fixture can take a screenshot when the test failed."""

from __future__ import annotations

from pathlib import Path

import pytest

#: the repository root (other test modules do `from conftest import REPO`, which finds whichever
#: conftest pytest imported last, so every conftest here defines it)
REPO = Path(__file__).resolve().parents[2]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)
