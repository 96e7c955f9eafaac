"""Device time attributed to the code that caused it: by ``nn.Module`` (``module_time``) and by
Python source line (``code_time``).

Each compute, communication, memcpy and memset task is followed back to its launch, through the
task queue and, for backward kernels, through the autograd sequence number to the forward op
that created them (:mod:`._attribute`).  The tree rows carry self time (tasks whose innermost
module / frame is the row) and inclusive time (the row and everything under it); time that
cannot be followed sits in ``(unattributed)`` rows, one per phase and reason, so ``self_us``
sums to the device time of the tasks attributed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..registry import Chart, Param, analysis
from ._attribute import Attribution, attribute
from ._sql import query, scope
from ._tree_rows import UNATTRIBUTED, tree_rows

_PHASES = {"forward": 0, "backward": 1, "other": 2}
_FRAME = r"^(?P<file>.*)\((?P<line>\d+)\): (?P<function>.*)$"

_COMMON = {
    "phase": "forward (inside a module's forward), backward (launched by an autograd node, "
    "attributed to the forward op of the same sequence number) or other",
    "self_us": "device time of the tasks whose innermost module / frame is this row",
    "inclusive_us": "device time of the tasks under this row (itself and below)",
    "kernels": "device tasks counted in inclusive_us",
    "self_kernels": "device tasks counted in self_us",
    "share_of_step_ratio": "inclusive_us over the step time of the scope (communication that overlaps "
    "compute makes rows add up to more than 1)",
    "top_kernels": "the three task names with the most inclusive time, with their share of the row",
    "reason": "(unattributed) rows: why the tasks could not be followed to a module / frame",
    "start_ns": "start of the row's first task, epoch ns (with end_ns: the range to show on the timeline)",
    "end_ns": "end of the row's last task, epoch ns",
    "longest_rank": "rank of the row's longest task",
    "longest_task_uid": "`device_tasks.task_uid` of the row's longest task (to select it on the timeline)",
}

_PARAMS = (
    Param("rank", int, None, help="only rank R"),
    Param("step", int, None, help="only step N"),
    Param("kernel_type", str, None, help="only device tasks of this op type (TransData)"),
)


@analysis(
    "module_time",
    title="Device time by nn.Module",
    params=_PARAMS,
    chart=Chart("bar", "module", ("self_us",), title="Device self time by module (us)"),
    columns={
        "path": "module names from the outermost down, joined by `/`; `(unattributed)` for the rest",
        "module": "the innermost module name (`Conv2d_0`)",
        "parent": "path of the enclosing module; null at a root",
        "depth": "number of enclosing modules (0 at a root)",
        **_COMMON,
    },
)
def module_time(profile, rank=None, step=None, kernel_type=None) -> pd.DataFrame:
    """Device time of every compute, communication, memcpy and memset task, attributed to the
    ``nn.Module`` frames enclosing the host op that launched it: a tree by module path with
    self and inclusive time, split by phase (backward kernels go to the forward module that
    created them, through the autograd sequence number).  Needs a profile collected with
    ``with_stack=True`` (or ``with_modules=True``); what cannot be followed is shown as
    ``(unattributed)`` with the reason, so the rows' ``self_us`` sum to the device total."""
    att = attribute(profile, rank, step, kernel_type, with_frames=False)
    paths = _module_paths(att)
    rows = _tree(att, "module_pos", "module_reason", paths)
    seg = rows["path"].str.rsplit("/", n=1)
    root = rows["path"].str.count("/") == 0
    rows.insert(1, "module", seg.str[-1])
    rows.insert(2, "parent", seg.str[0].where(~root))
    rows.insert(3, "depth", rows["path"].str.count("/").astype("int64"))
    return _finish(profile, rows, rank, step)


@analysis(
    "code_time",
    title="Device time by source line",
    params=(
        *_PARAMS,
        Param(
            "user_only",
            bool,
            False,
            help="skip frames of Python, torch and the profiler: the innermost model line gets self",
        ),
    ),
    chart=Chart("bar", "frame", ("inclusive_us",), title="Device time by source line (us)"),
    columns={
        "frame": "`file:line function` of the Python frame; `(unattributed)` for the rest",
        "file": "source file as recorded",
        "line": "line number; null for built-in frames",
        "function": "function name",
        **_COMMON,
    },
)
def code_time(profile, rank=None, step=None, kernel_type=None, user_only=False) -> pd.DataFrame:
    """Device time by Python source line: for every task, the Python frames recorded around
    the host op that launched it (backward tasks: around their forward op).  ``self_us`` goes
    to the innermost frame, ``inclusive_us`` to every frame on the stack (once per task, even
    under recursion).  Needs ``with_stack=True``; without it all time is ``(unattributed)``
    and the reason says how to collect it."""
    att = attribute(profile, rank, step, kernel_type, user_only)
    rows = _tree(att, "frame_pos", "frame_reason", att.frame_names)
    parts = rows["frame"].str.extract(_FRAME) if len(rows) else pd.DataFrame(columns=["file", "line", "function"])
    known = parts["file"].notna() & (rows["frame"] != UNATTRIBUTED)
    rows.insert(1, "file", parts["file"].where(known, rows["frame"].where(rows["frame"] != UNATTRIBUTED)))
    rows.insert(2, "line", pd.to_numeric(parts["line"], errors="coerce").astype("Int64"))
    rows.insert(3, "function", parts["function"])
    rows["frame"] = np.where(known, parts["file"] + ":" + parts["line"] + " " + parts["function"], rows["frame"])
    return _finish(profile, rows, rank, step)


def _module_paths(att: Attribution) -> np.ndarray:
    """Per sorted module position: the names from its root down, joined by ``/`` (one pass per
    depth level)."""
    mods = att.modules
    paths = att.module_names.copy()
    for d in range(1, int(mods.depth.max()) + 1 if len(mods) else 0):
        sel = np.flatnonzero(mods.depth == d)
        paths[sel] = paths[mods.parent[sel]] + "/" + paths[sel]
    return paths


def _tree(att: Attribution, pos_col: str, reason_col: str, labels: np.ndarray) -> pd.DataFrame:
    """Rows (label, phase) with self / inclusive time, counts and top kernels, plus the
    unattributed rows; ``labels`` names each sorted slice position (paths or frames).  On arrays
    (:mod:`._tree_rows`) when every task has a name and times, and every task not followed a
    reason; otherwise with pandas, whose group-bys leave out the tasks with a null key."""
    key = "path" if pos_col == "module_pos" else "frame"
    nest = att.modules if pos_col == "module_pos" else att.frames
    t = att.tasks
    complete = not t[["name", "start_ns", "dur_ns"]].isna().to_numpy().any()
    if complete and not t[reason_col].isna().to_numpy()[t[pos_col].to_numpy() < 0].any():
        return _columns(tree_rows(t, pos_col, reason_col, key, nest, labels), key)
    return _tree_frames(att, pos_col, reason_col, labels, key, nest)


def _tree_frames(att: Attribution, pos_col: str, reason_col: str, labels: np.ndarray, key: str, nest) -> pd.DataFrame:
    """:func:`_tree` with pandas: the tasks' group-bys leave out a task whose key (name) is null,
    and take the times of the others."""
    t = att.tasks
    hit = t[t[pos_col] >= 0]
    # weights per (leaf slice, phase, task name): the chain is walked once per leaf, not per task
    leaf = hit.groupby([pos_col, "phase", "name"], sort=False).agg(ns=("dur_ns", "sum"), n=("dur_ns", "size"))
    leaf = leaf.reset_index()
    span = _spans(hit, [pos_col, "phase"])
    leaves = leaf[pos_col].unique()
    pairs = [(leaves[r], labels[p]) for r, p in nest.ancestors(leaves)]
    chain = pd.DataFrame(
        {
            pos_col: np.concatenate([a for a, _ in pairs]) if pairs else np.zeros(0, np.int64),
            key: np.concatenate([b for _, b in pairs]) if pairs else np.zeros(0, object),
        }
    ).drop_duplicates()  # a frame that recurs on one stack counts once
    inc = leaf.merge(chain, on=pos_col).groupby([key, "phase"], sort=False).agg(ns=("ns", "sum"), n=("n", "sum"))
    own = leaf.assign(**{key: labels[leaf[pos_col].to_numpy("int64")]}).groupby([key, "phase"], sort=False)
    own = own.agg(self_ns=("ns", "sum"), self_n=("n", "sum"))
    top = _top_kernels(leaf.merge(chain, on=pos_col), key)
    spans = _merge_spans(span.merge(chain, on=pos_col), [key, "phase"])
    rows = inc.join(own, how="left").join(top, how="left").join(spans, how="left").reset_index()
    rows["reason"] = None
    lost = t[t[pos_col] < 0].groupby(["phase", reason_col], sort=False)
    lost = lost.agg(ns=("dur_ns", "sum"), n=("dur_ns", "size")).reset_index().rename(columns={reason_col: "reason"})
    lost_top = _top_kernels(
        t[t[pos_col] < 0].assign(**{key: UNATTRIBUTED, "ns": t["dur_ns"], "n": 1}), key, by=("phase", reason_col)
    )
    lost = lost.merge(lost_top.reset_index().rename(columns={reason_col: "reason"}), on=["phase", "reason"], how="left")
    lost_span = _spans(t[t[pos_col] < 0], ["phase", reason_col]).rename(columns={reason_col: "reason"})
    lost = lost.merge(lost_span, on=["phase", "reason"], how="left")
    lost = lost.assign(**{key: UNATTRIBUTED, "self_ns": lost["ns"], "self_n": lost["n"]})
    rows = pd.concat([rows, lost], ignore_index=True) if len(lost) else rows
    return _columns(rows, key)


def _spans(tasks: pd.DataFrame, by: list) -> pd.DataFrame:
    """Per group: first start, last end, and the longest task (rank, task_uid, dur)."""
    if tasks.empty:
        return pd.DataFrame(columns=[*by, "start_ns", "end_ns", "long_ns", "longest_rank", "longest_task_uid"])
    t = tasks.assign(end_ns=tasks["start_ns"] + tasks["dur_ns"])
    g = t.groupby(by, sort=False)
    out = g.agg(start_ns=("start_ns", "min"), end_ns=("end_ns", "max"))
    longest = t.loc[g["dur_ns"].idxmax().to_numpy()].set_index(by)
    out["long_ns"] = longest["dur_ns"]
    out["longest_rank"] = longest["rank"]
    out["longest_task_uid"] = longest["task_uid"]
    return out.reset_index()


def _merge_spans(spans: pd.DataFrame, by: list) -> pd.DataFrame:
    """Spans of the leaves under each row: their union range and their longest task."""
    if spans.empty:
        return pd.DataFrame(
            {c: pd.Series(dtype="int64") for c in ("start_ns", "end_ns", "longest_rank", "longest_task_uid")},
            index=pd.MultiIndex.from_arrays([[]] * len(by), names=by),
        )
    g = spans.groupby(by, sort=False)
    out = g.agg(start_ns=("start_ns", "min"), end_ns=("end_ns", "max"))
    longest = spans.loc[g["long_ns"].idxmax().to_numpy()].set_index(by)
    out["longest_rank"] = longest["longest_rank"]
    out["longest_task_uid"] = longest["longest_task_uid"]
    return out


def _top_kernels(weighted: pd.DataFrame, key: str, by: tuple = ("phase",)) -> pd.DataFrame:
    """Per (key, *by): the three names with the most time, as ``name (share%)`` joined by ``; ``."""
    cols = [key, *by]
    if weighted.empty:
        return pd.DataFrame(
            {"top_kernels": pd.Series(dtype=object)}, index=pd.MultiIndex.from_arrays([[]] * len(cols), names=cols)
        )
    per = weighted.groupby([*cols, "name"], sort=False)["ns"].sum().reset_index()
    per["total"] = per.groupby(cols, sort=False)["ns"].transform("sum")
    per = per.sort_values([*cols, "ns", "name"], ascending=[True] * len(cols) + [False, True])
    per = per.groupby(cols, sort=False).head(3)
    share = np.where(per["total"] > 0, per["ns"] / per["total"].where(per["total"] > 0, 1), 0.0)
    per["text"] = per["name"].astype(str) + " (" + pd.Series(share * 100, index=per.index).round(1).astype(str) + "%)"
    return per.groupby(cols, sort=False)["text"].agg("; ".join).rename("top_kernels").to_frame()


def _columns(rows: pd.DataFrame, key: str) -> pd.DataFrame:
    out = pd.DataFrame(
        {
            key: rows[key].astype(object) if len(rows) else pd.Series(dtype=object),
            "phase": rows["phase"].astype(object) if len(rows) else pd.Series(dtype=object),
            "self_us": rows["self_ns"].fillna(0).astype("float64") / 1e3 if len(rows) else pd.Series(dtype=float),
            "inclusive_us": rows["ns"].astype("float64") / 1e3 if len(rows) else pd.Series(dtype=float),
            "kernels": rows["n"].astype("int64") if len(rows) else pd.Series(dtype="int64"),
            "self_kernels": rows["self_n"].fillna(0).astype("int64") if len(rows) else pd.Series(dtype="int64"),
            "top_kernels": rows["top_kernels"] if len(rows) else pd.Series(dtype=object),
            "reason": rows["reason"] if len(rows) else pd.Series(dtype=object),
        }
    )
    for c in ("start_ns", "end_ns", "longest_rank", "longest_task_uid"):
        out[c] = rows[c].astype("Int64") if len(rows) else pd.Series(dtype="Int64")
    lost = (out[key] == UNATTRIBUTED).astype(int)
    order = out["phase"].map(_PHASES).fillna(3)
    out = out.assign(_l=lost, _o=order).sort_values(["_o", "_l", key, "reason"], na_position="first", kind="stable")
    return out.drop(columns=["_l", "_o"]).reset_index(drop=True)


def _finish(profile, rows: pd.DataFrame, rank, step) -> pd.DataFrame:
    steps = profile.view("step_breakdown")
    if rank is not None:
        steps = steps[steps["rank"] == rank]
    if step is not None:
        steps = steps[steps["step"] == step]
    total = float(steps["step_us"].sum()) if "step_us" in steps and steps["step_us"].notna().any() else 0.0
    share = rows["inclusive_us"] / total if total > 0 else pd.Series(np.nan, index=rows.index)
    pos = rows.columns.get_loc("self_kernels") + 1
    rows.insert(pos, "share_of_step_ratio", share.astype("float64"))
    return rows


def module_steps(profile, rank=None) -> pd.DataFrame:
    """Per (rank, step, path, phase): the inclusive device time (us) of each module in each step
    (``(unattributed)`` rows included), the per-step series that run comparisons and layer
    folding need.  Not a registered analysis: ``module_time(step=N)`` gives one step's tree."""
    att = attribute(profile, rank, with_frames=False)
    t = att.tasks.merge(_task_steps(profile, rank), on=["rank", "task_uid"], how="left", validate="one_to_one").assign(
        step=lambda d: d["step"].astype("Int64").fillna(-1)
    )
    paths = _module_paths(att)
    hit = t[t["module_pos"] >= 0]
    leaf = hit.groupby(["rank", "step", "module_pos", "phase"], sort=False)["dur_ns"].sum().reset_index()
    leaves = leaf["module_pos"].unique()
    pairs = list(att.modules.ancestors(leaves))
    chain = pd.DataFrame(
        {
            "module_pos": np.concatenate([leaves[r] for r, _ in pairs]) if pairs else np.zeros(0, np.int64),
            "path": np.concatenate([paths[p] for _, p in pairs]) if pairs else np.zeros(0, object),
        }
    )
    inc = leaf.merge(chain, on="module_pos").groupby(["rank", "step", "path", "phase"], sort=False)["dur_ns"].sum()
    lost = t[t["module_pos"] < 0].assign(path=UNATTRIBUTED).groupby(["rank", "step", "path", "phase"], sort=False)
    out = pd.concat([inc, lost["dur_ns"].sum()]).rename("inclusive_ns").reset_index()
    out["inclusive_us"] = out.pop("inclusive_ns").astype("float64") / 1e3
    out["step"] = out["step"].astype("Int64").replace(-1, pd.NA)
    return out.astype({"path": object, "phase": object})


def _task_steps(profile, rank) -> pd.DataFrame:
    from ._attribute import KINDS

    kinds = ", ".join(f"'{k}'" for k in KINDS)
    cond = scope(rank)
    return query(profile, f"SELECT rank, task_uid, step FROM device_tasks WHERE kind IN ({kinds}) AND {cond}")
