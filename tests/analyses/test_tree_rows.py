"""The attribution tree's rows on arrays (``_tree_rows``) against the pandas version they replace
(``attribution._tree_frames``): the same frame, column types included, on the real fixtures, on
their tasks cut to the attributed or the unattributed ones or reversed, and on hand-made ties."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import profinsight
from profinsight.analyses import attribution as A
from profinsight.analyses._attribute import Attribution, attribute
from profinsight.nesting import Nesting

WHICH = {"m": ("module_pos", "module_reason", "path"), "f": ("frame_pos", "frame_reason", "frame")}


def _both(att: Attribution, which: str, labels: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    pos_col, reason_col, key = WHICH[which]
    nest = att.modules if which == "m" else att.frames
    return A._tree(att, pos_col, reason_col, labels), A._tree_frames(att, pos_col, reason_col, labels, key, nest)


def _cut(att: Attribution, tasks: pd.DataFrame) -> Attribution:
    return Attribution(tasks.reset_index(drop=True), att.modules, att.module_names, att.frames, att.frame_names)


@pytest.fixture(scope="module")
def loaded(fixtures, tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PROFINSIGHT_CACHE", str(tmp_path_factory.getbasetemp() / "tree-rows-cache"))
        return {
            "text_level1": profinsight.load(fixtures / "ascend_pt" / "text_level1" / "rank0_ascend_pt"),
            "qwen3": profinsight.load(fixtures / "ascend_llm" / "qwen3_level2_4rank"),
            "amd_mi250": profinsight.load(fixtures / "kineto" / "amd_mi250.json.gz"),
        }


@pytest.mark.parametrize("name", ["text_level1", "qwen3", "amd_mi250"])
@pytest.mark.parametrize("user_only", [False, True])
def test_arrays_give_the_pandas_rows_on_the_fixtures(loaded, name, user_only):
    p = loaded[name]
    kernel_types = [None, *p.table("device_tasks")["type"].dropna().value_counts().index[:2]]
    checked = 0
    for kernel_type in kernel_types:
        att = attribute(p, None, None, kernel_type, user_only)
        for which, labels in (("m", A._module_paths(att)), ("f", att.frame_names)):
            pos = att.tasks[WHICH[which][0]]
            for tasks in (att.tasks, att.tasks[pos >= 0], att.tasks[pos < 0], att.tasks.iloc[::-1]):
                fast, frames = _both(_cut(att, tasks), which, labels)
                pd.testing.assert_frame_equal(fast, frames, check_exact=True)
                checked += len(fast)
    assert checked > 0


def _hand_made(names: list[str], durs: list[int], pos: list[int]) -> tuple[Attribution, np.ndarray]:
    """Tasks under a two-level module tree: position 0 = ``Net_0``, 1 = ``Net_0/A_0``, 2 =
    ``Net_0/B_0`` (one thread); a position of -1 is a task launched outside any module."""
    n = len(names)
    tasks = pd.DataFrame(
        {
            "rank": pd.array([0] * n, dtype="Int32"),
            "task_uid": pd.array(range(1, n + 1), dtype="Int64"),
            "kind": pd.array(["kernel"] * n, dtype="string"),
            "name": pd.array(names, dtype="string"),
            "start_ns": pd.array([1000 * i for i in range(n)], dtype="Int64"),
            "dur_ns": pd.array(durs, dtype="Int64"),
            "phase": ["forward" if q >= 0 else "other" for q in pos],
            "module_reason": [None if q >= 0 else "launched outside any nn.Module" for q in pos],
            "frame_reason": ["no Python frames recorded"] * n,
            "module_pos": np.array(pos, np.int64),
            "frame_pos": np.full(n, -1, np.int64),
        }
    )
    zero = np.zeros(0, np.int64)
    modules = Nesting(np.zeros(3, np.int64), np.array([0, 10, 50]), np.array([100, 40, 90]))
    names_ = np.array(["Net_0", "A_0", "B_0"], dtype=object)
    att = Attribution(tasks, modules, names_, Nesting(zero, zero, zero), np.zeros(0, object))
    return att, A._module_paths(att)


def test_ties_are_broken_as_the_pandas_version_breaks_them():
    # Net_0 holds A_0 (tasks 1, 3, 4) and B_0 (tasks 2, 5); "Mul" and "Add" tie at 30 ns under A_0.
    # The longest tasks (50 ns) are task 2 (B_0) and task 4 (A_0): A_0's tasks appear first, so
    # Net_0's longest is A_0's, although task 2 comes before task 4
    att, labels = _hand_made(
        ["Mul", "Conv", "Add", "Relu", "Conv", "Copy"], [30, 50, 30, 50, 10, 7], [1, 2, 1, 1, 2, -1]
    )
    fast, frames = _both(att, "m", labels)
    pd.testing.assert_frame_equal(fast, frames, check_exact=True)
    rows = fast.set_index("path")
    assert rows.loc["Net_0/A_0", "top_kernels"] == "Relu (45.5%); Add (27.3%); Mul (27.3%)"
    assert rows.loc["Net_0", "longest_task_uid"] == 4
    assert rows.loc["Net_0", ["inclusive_us", "self_us", "kernels"]].tolist() == [0.17, 0.0, 5]
    assert rows.loc["(unattributed)", ["self_us", "top_kernels"]].tolist() == [0.007, "Copy (100.0%)"]


def test_a_task_without_a_name_or_time_goes_the_pandas_way(monkeypatch):
    att, labels = _hand_made(["Mul", None, "Relu"], [30, 20, 50], [1, 1, 2])
    monkeypatch.setattr(A, "tree_rows", lambda *a, **k: pytest.fail("arrays used for a task without a name"))
    got, frames = _both(att, "m", labels)
    pd.testing.assert_frame_equal(got, frames)
    # the pandas group-bys leave the nameless task out of the counts
    assert got.set_index("path").loc["Net_0", "kernels"] == 2
    att, labels = _hand_made(["Mul", "Add", "Relu"], [30, None, 50], [1, 1, 2])
    got, frames = _both(att, "m", labels)
    pd.testing.assert_frame_equal(got, frames)
