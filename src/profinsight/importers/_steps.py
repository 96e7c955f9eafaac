"""Steps shared by every importer: host ``ProfilerStep#N`` ranges -> device ranges -> step of a task.

The vendor's rule (torch_npu, checked against step_trace_time.csv): a step's device range starts
at the first device task *launched* inside the host step and ends at max(last such task's end,
host step end).  Tasks are then assigned to the step whose device range contains their start;
where no launch time is known the host range is used.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_STEP_RE = re.compile(r"^ProfilerStep#(\d+)$")


def step_number(name: str) -> int | None:
    """``ProfilerStep#50`` -> 50; anything else -> None."""
    m = _STEP_RE.match(name or "")
    return int(m.group(1)) if m else None


def build_steps(host_steps: list[tuple[int, int, int]], start_ns, end_ns, launch_ns) -> pa.Table:
    """Steps table (without ``rank``) from host ranges ``[(step, host_start, host_end)]`` and the
    device tasks' ``start_ns``/``end_ns``/``launch_ns`` arrays (launch may hold nulls).

    Vectorised: each task finds its host step with one binary search (O(n log s)), so
    thousands of steps cost no more than one."""
    start = _np(start_ns)
    end = _np(end_ns)
    launch, has_launch = _np_masked(launch_ns)
    if len(launch) != len(start):
        launch, has_launch = np.zeros(len(start), np.int64), np.zeros(len(start), bool)
    hs_sorted = sorted(host_steps, key=lambda r: r[1])
    steps = np.array([r[0] for r in hs_sorted], np.int64)
    hs = np.array([r[1] for r in hs_sorted], np.int64)
    he = np.array([r[2] for r in hs_sorted], np.int64)
    lo_l, hi_l, n_l = _ranges_by(launch, has_launch, hs, he, start, end)
    lo_s, hi_s, n_s = _ranges_by(start, np.ones(len(start), bool), hs, he, start, end)
    use_launch = n_l > 0  # no launch times for a step: fall back to tasks starting inside it
    dev_lo = np.where(use_launch, lo_l, lo_s)
    dev_hi = np.where(use_launch, hi_l, hi_s)
    found = use_launch | (n_s > 0)
    dev_hi = np.maximum(dev_hi, he)
    return pa.table(
        {
            "step": pa.array(steps, pa.int64()),
            "host_start_ns": pa.array(hs, pa.int64()),
            "host_end_ns": pa.array(he, pa.int64()),
            "device_start_ns": pa.array(dev_lo, pa.int64(), mask=~found),
            "device_end_ns": pa.array(dev_hi, pa.int64(), mask=~found),
        }
    )


def _ranges_by(key, valid, hs, he, start, end):
    """Per host step: min start, max end and count of the tasks whose ``key`` time lies in the
    host range [hs, he] (the latest step starting at or before the key)."""
    n = len(hs)
    lo = np.full(n, np.iinfo(np.int64).max, np.int64)
    hi = np.full(n, np.iinfo(np.int64).min, np.int64)
    cnt = np.zeros(n, np.int64)
    if n == 0 or len(key) == 0:
        return lo, hi, cnt
    idx = np.searchsorted(hs, key, side="right") - 1
    ok = valid & (idx >= 0)
    ok &= key <= he[np.clip(idx, 0, n - 1)]
    i = idx[ok]
    np.minimum.at(lo, i, start[ok])
    np.maximum.at(hi, i, end[ok])
    np.add.at(cnt, i, 1)
    return lo, hi, cnt


def assign_steps(start_ns, steps: pa.Table) -> pa.Array:
    """Step of each start time: the step whose device range (else host range) contains it;
    where ranges overlap the earlier step wins (:func:`earliest_containing`)."""
    start = _np(start_ns)
    if not steps.num_rows or not len(start):
        return pa.nulls(len(start), pa.int64())
    lo = pc.coalesce(steps["device_start_ns"], steps["host_start_ns"])
    hi = pc.coalesce(steps["device_end_ns"], steps["host_end_ns"])
    return earliest_containing(start, lo, hi, steps["step"])


def earliest_containing(t, lo, hi, ids, rank=None) -> pa.Array:
    """For each time in ``t``: the id of the range [lo, hi] (ends included) that contains it and
    comes first by ``rank`` (default: ``lo``), ties going to the smaller id; null where none
    does (and for a null time).  Ranges may overlap or nest; ranges with a null bound or rank
    never match.  This is
    ``(SELECT min_by(id, rank) FROM ranges WHERE t BETWEEN lo AND hi)`` without the nested loop
    such a correlated lookup costs (times x ranges).

    Exact and O((n + s) log s) when ``lo`` rises with ``rank`` (always for the default, and for
    real step ranges): in rank order the running maximum of the ends never falls, so the first
    range that reaches ``t`` is one binary search away, and it contains ``t`` exactly when it
    starts at or before ``t`` (every later range starts no earlier).  Otherwise the ranges are
    visited in rank order, O(n x s), which gives the same answer."""
    t, t_ok = _np_masked(t)
    lo, lo_ok = _np_masked(lo)
    hi, hi_ok = _np_masked(hi)
    ids, id_ok = _np_masked(ids)
    rk, rk_ok = (lo, lo_ok) if rank is None else _np_masked(rank)
    keep = lo_ok & hi_ok & id_ok & rk_ok
    lo, hi, ids, rk = lo[keep], hi[keep], ids[keep], rk[keep]
    if not len(lo) or not len(t):
        return pa.nulls(len(t), pa.int64())
    order = np.lexsort((ids, rk))
    lo, hi, ids = lo[order], hi[order], ids[order]
    if np.all(lo[1:] >= lo[:-1]):
        # three arrays of the times' size alive at once (the 1.36 M host ops of the 1 GB Kineto
        # trace are stepped where its import peaks: +16 MB, against +39 MB with seven)
        reach = np.maximum.accumulate(hi)
        i = np.searchsorted(reach, t, side="left")
        np.minimum(i, len(lo) - 1, out=i)
        found = lo[i] <= t
        found &= reach[i] >= t  # false only past every end
        found &= t_ok
        out = ids[i]
        del i
        return pa.array(out, pa.int64(), mask=~found)
    out = np.full(len(t), -1, np.int64)
    found = np.zeros(len(t), bool)
    for a, b, step in zip(lo, hi, ids):
        hit = ~found & t_ok & (t >= a) & (t <= b)
        out[hit] = step
        found |= hit
    return pa.array(out, pa.int64(), mask=~found)


def _np(values):
    if isinstance(values, (pa.ChunkedArray, pa.Array)):
        values = values.to_pylist() if values.null_count else values.to_numpy(zero_copy_only=False)
    return np.asarray(values, dtype=np.int64)


def _np_masked(values):
    """int64 values plus a validity mask (exact: never goes through float)."""
    if values is None:
        return np.zeros(0, np.int64), np.zeros(0, bool)
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        return values.astype(np.int64, copy=False), np.ones(len(values), bool)
    if isinstance(values, (pa.ChunkedArray, pa.Array)):
        arr = pa.chunked_array([values]) if isinstance(values, pa.Array) else values
        valid = arr.is_valid().to_numpy(zero_copy_only=False)
        filled = arr.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
        return filled, valid
    lst = list(values)
    valid = np.array([v is not None for v in lst], bool)
    return np.array([0 if v is None else v for v in lst], np.int64), valid
