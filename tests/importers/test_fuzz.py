"""The CI-sized mutation campaign (``tests/_mutations.py``): real fixtures damaged one way per
case, loaded, and judged against the undamaged load -- no uncaught exception, no hang, a new
diagnostic naming the damaged file for every damaging mutation, and every table the damaged
file does not feed equal to the undamaged one.  ``benchmarks/fuzz.py`` runs the long campaign.

A failing case names its seed and index: ``pytest tests/importers/test_fuzz.py -k s0-17``
reproduces it exactly."""

from __future__ import annotations

import pytest
from _mutations import CLASSES, case, run_case

SEED = 0
#: three cases of every class (each case 0.2-10 s here: the text rank is the slow one)
CASES = 3 * len(CLASSES)
_BASES: dict = {}


@pytest.mark.slow
@pytest.mark.parametrize("i", range(CASES), ids=[case(SEED, i)[0] for i in range(CASES)])
def test_a_damaged_copy_costs_only_what_is_damaged(fixtures, tmp_path, i):
    v = run_case(fixtures, SEED, i, tmp_path, _BASES)
    m = v.mutation
    assert v.crash is None, f"{m.cls}: {m.detail}\n{v.crash}"
    assert not v.hang, f"{m.cls}: {m.detail}: no result within the alarm"
    assert not v.silent, f"{m.cls}: {m.detail}: no new diagnostic names {m.file}"
    assert not v.changed, f"{m.cls}: {m.detail}: tables {m.file} does not feed changed: {v.changed}"
    assert not v.lost_rank, f"{m.cls}: {m.detail}: the whole rank was lost"


def test_every_class_is_in_the_ci_run_and_cases_are_reproducible():
    assert {case(SEED, i)[1] for i in range(CASES)} == set(CLASSES)
    assert [case(SEED, i) for i in range(5)] == [case(SEED, i) for i in range(5)]
