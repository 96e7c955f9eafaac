"""The rows of an attribution tree (``module_time``, ``code_time``) computed on NumPy arrays.

A tree has tens of rows and its tasks are a few thousand to a few hundred thousand, so the cost of
the pandas version was its ~40 group-bys, merges and joins at about a millisecond each, not the
data: 65 ms per call for the 2,565 TransData tasks of the 100 MB Ascend profile, twice on the
advisor's longest chain (``module_time`` then ``code_time``).  Here each grouping is one
``np.unique`` over integer codes and each sum one ``np.add.at``; the answer is the same row for
row, ties included:

* a row's ``top_kernels`` lists its names by time, then by name (code point order);
* a leaf's longest task is the first of its longest tasks in the tasks' order;
* a row's longest task is that of the first of its leaves with the longest task, leaves in the
  order they first appear among the tasks (a leaf is a slice position and phase).

It needs every task's name, start and duration: the caller keeps the pandas version for tasks
where one is null (its group-bys leave such a task out of some sums and in others).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

UNATTRIBUTED = "(unattributed)"


def tree_rows(tasks: pd.DataFrame, pos_col: str, reason_col: str, key: str, nest, labels: np.ndarray) -> pd.DataFrame:
    """One row per (label, phase) under which tasks sit, then one per (phase, reason) of the tasks
    that could not be followed; the columns :func:`~.attribution._columns` reads."""
    pos = tasks[pos_col].to_numpy(np.int64)
    start = tasks["start_ns"].to_numpy(np.int64)
    dur = tasks["dur_ns"].to_numpy(np.int64)
    phase_code, phases = pd.factorize(tasks["phase"])
    name_code, names = pd.factorize(tasks["name"], sort=True)  # code order is name order
    phases = np.asarray(phases, dtype=object)
    names = np.asarray(names, dtype=object)
    rows = np.arange(len(tasks))
    t = _Tasks(rows, start, dur, phase_code, name_code)
    parts = []
    hit = pos >= 0
    if hit.any():
        parts.append(_attributed(t.take(hit), pos[hit], key, nest, labels, phases, names))
    if (~hit).any():
        reasons = tasks[reason_col].to_numpy(object)
        parts.append(_unattributed(t.take(~hit), reasons[~hit], key, phases, names))
    if not parts:
        return pd.DataFrame()
    out = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    # the column types the pandas version gives: reasons are objects (a None beside strings), and
    # so are the top kernels of unattributed rows alone (its empty tree rows' column is of objects)
    out["reason"] = out["reason"].astype(object)
    if not hit.any():
        out["top_kernels"] = out["top_kernels"].astype(object)
    longest = out.pop("_longest").to_numpy(np.int64)
    out["longest_rank"] = tasks["rank"].take(longest).to_numpy(object)
    out["longest_task_uid"] = tasks["task_uid"].take(longest).to_numpy(object)
    return out


class _Tasks:
    """The columns of some tasks, as arrays (``row``: the task's row in the attribution)."""

    def __init__(self, row, start, dur, phase, name):
        self.row, self.start, self.dur, self.phase, self.name = row, start, dur, phase, name
        self.end = start + dur

    def take(self, mask: np.ndarray) -> _Tasks:
        return _Tasks(self.row[mask], self.start[mask], self.dur[mask], self.phase[mask], self.name[mask])


def _ids(*codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Group id per row of the tuples ``codes`` (integer codes >= 0), ids in the order of the
    tuples, and the first row of each group."""
    key = np.zeros(len(codes[0]), np.int64)
    for c in codes:
        size = int(c.max()) + 1 if len(c) else 1
        if len(key) and int(key.max()) >= (1 << 62) // size:  # keep the mixed radix inside int64
            key = np.unique(key, return_inverse=True)[1].astype(np.int64)
        key = key * size + c
    _, first, ids = np.unique(key, return_index=True, return_inverse=True)
    return ids.reshape(-1), first


def _sums(ids: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(n, np.int64)
    np.add.at(out, ids, values)
    return out


def _heads(ids: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Per group, the first element of ``order`` (rows sorted with the group as the primary key)."""
    s = ids[order]
    return order[np.r_[True, s[1:] != s[:-1]]] if len(order) else order


def _ranges(starts: np.ndarray, ends: np.ndarray, ids: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    lo = np.full(n, np.iinfo(np.int64).max, np.int64)
    hi = np.full(n, np.iinfo(np.int64).min, np.int64)
    np.minimum.at(lo, ids, starts)
    np.maximum.at(hi, ids, ends)
    return lo, hi


def _top_kernels(group: np.ndarray, name: np.ndarray, ns: np.ndarray, n: int, names: np.ndarray) -> np.ndarray:
    """Per group: its three names with the most time, ``name (share%)`` joined by ``; `` (the
    share of the group's time, rounded to 0.1 as pandas rounds)."""
    gn, first = _ids(group, name)
    per_ns = _sums(gn, ns, len(first))
    per_g, per_name = group[first], name[first]
    total = _sums(per_g, per_ns, n)[per_g]
    order = np.lexsort((per_name, -per_ns, per_g))
    g_sorted = per_g[order]
    starts = np.r_[0, np.flatnonzero(g_sorted[1:] != g_sorted[:-1]) + 1]
    rank_in = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    keep = order[rank_in < 3]
    share = np.where(total[keep] > 0, per_ns[keep] / np.where(total[keep] > 0, total[keep], 1), 0.0)
    pct = pd.Series(share * 100).round(1).astype(str).tolist()
    text = [f"{names[c]} ({p}%)" for c, p in zip(per_name[keep].tolist(), pct)]
    out = np.empty(n, dtype=object)
    for g, piece in zip(per_g[keep].tolist(), text):
        out[g] = piece if out[g] is None else out[g] + "; " + piece
    return out


def _attributed(t: _Tasks, pos: np.ndarray, key: str, nest, labels: np.ndarray, phases, names) -> pd.DataFrame:
    """Rows (label, phase): self and inclusive time and counts, top kernels, range, longest task."""
    # leaves (slice position, phase, name) and spans (slice position, phase), over the tasks
    leaf, leaf_first = _ids(pos, t.phase, t.name)
    leaf_pos, leaf_ph, leaf_nm = pos[leaf_first], t.phase[leaf_first], t.name[leaf_first]
    leaf_ns = _sums(leaf, t.dur, len(leaf_first))
    leaf_n = np.bincount(leaf, minlength=len(leaf_first)).astype(np.int64)
    span, span_first = _ids(pos, t.phase)
    span_lo, span_hi = _ranges(t.start, t.end, span, len(span_first))
    span_long = _heads(span, np.lexsort((np.arange(len(pos)), -t.dur, span)))  # first longest task
    span_pos, span_ph = pos[span_first], t.phase[span_first]
    # the chain: every slice from each leaf's position up to its root, a label once per leaf
    leaves = np.unique(leaf_pos)
    pairs = list(nest.ancestors(leaves))
    c_pos = np.concatenate([leaves[r] for r, _ in pairs])
    label_code, label_of = pd.factorize(labels[np.concatenate([p for _, p in pairs])])
    label_of = np.asarray(label_of, dtype=object)
    own_code = label_code[: len(leaves)]  # the first level is each leaf itself
    _, keep = _ids(c_pos, label_code)
    c_pos, c_code = c_pos[keep], label_code[keep]
    by_pos = np.argsort(c_pos, kind="stable")
    c_pos, c_code = c_pos[by_pos], c_code[by_pos]

    def under(at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(index into ``at``, label code) for each label on the chain of each position."""
        lo = np.searchsorted(c_pos, at, "left")
        cnt = np.searchsorted(c_pos, at, "right") - lo
        src = np.repeat(np.arange(len(at)), cnt)
        return src, c_code[np.repeat(lo, cnt) + np.arange(len(src)) - np.repeat(np.cumsum(cnt) - cnt, cnt)]

    nph = len(phases)
    li, l_code = under(leaf_pos)
    row_key = np.unique(l_code * nph + leaf_ph[li])
    n = len(row_key)
    g = np.searchsorted(row_key, l_code * nph + leaf_ph[li])
    inc_ns, inc_n = _sums(g, leaf_ns[li], n), _sums(g, leaf_n[li], n)
    own = np.searchsorted(row_key, own_code[np.searchsorted(leaves, leaf_pos)] * nph + leaf_ph)
    self_ns, self_n = _sums(own, leaf_ns, n), _sums(own, leaf_n, n)
    top = _top_kernels(g, leaf_nm[li], leaf_ns[li], n, names)
    si, s_code = under(span_pos)
    gs = np.searchsorted(row_key, s_code * nph + span_ph[si])
    lo, hi = _ranges(span_lo[si], span_hi[si], gs, n)
    long_dur = t.dur[span_long][si]
    best = _heads(gs, np.lexsort((span_first[si], -long_dur, gs)))  # the first leaf of the longest
    longest = np.empty(n, np.int64)
    longest[gs[best]] = t.row[span_long[si[best]]]
    return pd.DataFrame(
        {
            key: label_of[row_key // nph],
            "phase": phases[row_key % nph],
            "ns": inc_ns,
            "n": inc_n,
            "self_ns": self_ns,
            "self_n": self_n,
            "top_kernels": top,
            "reason": np.full(n, None, dtype=object),
            "start_ns": lo,
            "end_ns": hi,
            "_longest": longest,
        }
    )


def _unattributed(t: _Tasks, reasons: np.ndarray, key: str, phases, names) -> pd.DataFrame:
    """Rows (phase, reason) of the tasks that could not be followed, labelled ``(unattributed)``."""
    reason_code, reason_of = pd.factorize(reasons)
    g, first = _ids(t.phase, reason_code)
    n = len(first)
    ns = _sums(g, t.dur, n)
    count = np.bincount(g, minlength=n).astype(np.int64)
    lo, hi = _ranges(t.start, t.end, g, n)
    longest = t.row[_heads(g, np.lexsort((np.arange(len(g)), -t.dur, g)))]
    return pd.DataFrame(
        {
            key: np.full(n, UNATTRIBUTED, dtype=object),
            "phase": phases[t.phase[first]],
            "ns": ns,
            "n": count,
            "self_ns": ns,
            "self_n": count,
            "top_kernels": _top_kernels(g, t.name, t.dur, n, names),
            "reason": np.asarray(reason_of, dtype=object)[reason_code[first]],
            "start_ns": lo,
            "end_ns": hi,
            "_longest": longest,
        }
    )
