"""Events written in another order damage nothing: the tables hold the same rows (ids numbered in
reading order aside).  Slices that start together and last as long are bound by what they are
(``ascend_text/_links.py``: the deeper CANN level, then the name), never by the reading-order id
alone: on text_level1 rank 0 ``hcom_allReduce_`` and its ``Node@launch`` start at the same ns."""

from __future__ import annotations

import random

import pytest
from _mutations import SEEDS, _same_rows, copy_seed, kineto_reorder, load, text_reorder


@pytest.mark.slow
def test_a_reordered_kineto_trace_gives_the_same_rows(fixtures, tmp_path):
    before = load(fixtures.joinpath(*SEEDS["kineto"]))
    root = copy_seed(fixtures, "kineto", tmp_path)
    kineto_reorder(random.Random("reorder:kineto"), root)
    after = load(root)
    assert [n for n, t in before.tables.items() if not _same_rows(t, after.tables.get(n))] == []


@pytest.mark.slow
def test_a_reordered_trace_view_gives_the_same_rows(fixtures, tmp_path):
    before = load(fixtures.joinpath(*SEEDS["text"]))
    root = copy_seed(fixtures, "text", tmp_path)
    text_reorder(random.Random("3:18:text.reorder"), root)
    after = load(root)
    assert [n for n, t in before.tables.items() if not _same_rows(t, after.tables.get(n))] == []
