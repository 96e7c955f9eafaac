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

_STEP_RE = re.compile(r"^ProfilerStep#(\d+)$")


def step_number(name: str) -> int | None:
    """``ProfilerStep#50`` -> 50; anything else -> None."""
    m = _STEP_RE.match(name or "")
    return int(m.group(1)) if m else None


def build_steps(host_steps: list[tuple[int, int, int]], start_ns, end_ns, launch_ns) -> pa.Table:
    """Steps table (without ``rank``) from host ranges ``[(step, host_start, host_end)]`` and the
    device tasks' ``start_ns``/``end_ns``/``launch_ns`` arrays (launch may hold nulls/NaN)."""
    start = _np(start_ns)
    end = _np(end_ns)
    launch, has_launch = _np_masked(launch_ns)
    if len(launch) != len(start):
        launch, has_launch = np.zeros(len(start), np.int64), np.zeros(len(start), bool)
    rows = {"step": [], "host_start_ns": [], "host_end_ns": [], "device_start_ns": [], "device_end_ns": []}
    for step, hs, he in sorted(host_steps, key=lambda r: r[1]):
        mask = has_launch & (launch >= hs) & (launch <= he)
        if not mask.any():  # no launch times: fall back to tasks that start inside the host range
            mask = (start >= hs) & (start <= he)
        rows["step"].append(step)
        rows["host_start_ns"].append(hs)
        rows["host_end_ns"].append(he)
        if mask.any():
            rows["device_start_ns"].append(int(start[mask].min()))
            rows["device_end_ns"].append(int(max(end[mask].max(), he)))
        else:
            rows["device_start_ns"].append(None)
            rows["device_end_ns"].append(None)
    return pa.table({k: pa.array(v, pa.int64()) for k, v in rows.items()})


def assign_steps(start_ns, steps: pa.Table) -> pa.Array:
    """Step of each start time: the step whose device range (else host range) contains it."""
    start = _np(start_ns)
    out = np.full(len(start), -1, dtype=np.int64)
    if steps.num_rows:
        d = steps.to_pydict()
        for i, step in enumerate(d["step"]):
            lo = d["device_start_ns"][i] if d["device_start_ns"][i] is not None else d["host_start_ns"][i]
            hi = d["device_end_ns"][i] if d["device_end_ns"][i] is not None else d["host_end_ns"][i]
            out[(start >= lo) & (start <= hi) & (out == -1)] = step
    return pa.array(out, pa.int64(), mask=out == -1)


def _np(values):
    if isinstance(values, (pa.ChunkedArray, pa.Array)):
        values = values.to_pylist() if values.null_count else values.to_numpy(zero_copy_only=False)
    return np.asarray(values, dtype=np.int64)


def _np_masked(values):
    """int64 values plus a validity mask (exact: never goes through float)."""
    if values is None:
        return np.zeros(0, np.int64), np.zeros(0, bool)
    if isinstance(values, (pa.ChunkedArray, pa.Array)):
        arr = pa.chunked_array([values]) if isinstance(values, pa.Array) else values
        valid = arr.is_valid().to_numpy(zero_copy_only=False)
        filled = arr.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        return filled, valid
    lst = list(values)
    valid = np.array([v is not None for v in lst], bool)
    return np.array([0 if v is None else v for v in lst], np.int64), valid
