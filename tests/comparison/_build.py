"""Variants of a real fixture, built for the comparison tests (no profinsight.compare code)."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

from profinsight.analyses.categories import is_format_conversion
from profinsight.testing import profile_from_tables

TABLES = (
    "device_tasks",
    "host_ops",
    "launches",
    "steps",
    "memory_samples",
    "memory_blocks",
    "module_memory",
    "comm_ops",
    "comm_links",
    "api_calls",
    "counters",
    "trace_slices",
    "run_info",
)


def tables_of(p) -> dict:
    return {name: p.arrow(name) for name in TABLES}


def with_rank(t: pa.Table, rank: int) -> pa.Table:
    i = t.column_names.index("rank")
    return t.set_column(i, "rank", pa.array([rank] * t.num_rows, type=t.schema.field("rank").type))


def without_format_conversion(tables: dict):
    """Remove the format-conversion kernels and shift every later task on their streams earlier
    by the removed time before it; recompute the steps' device ranges.  Returns the new tables,
    the device tasks (pandas) before and after, and the removed rows."""
    return remove_kernels(
        tables,
        lambda r: r["kind"] == "kernel" and is_format_conversion(r["type"], r["input_formats"], r["output_formats"]),
    )


def remove_kernels(tables: dict, pred):
    dt = device_tasks(tables)
    conv = dt.apply(pred, axis=1).astype(bool)
    removed = dt[conv]
    keep = dt[~conv].copy()
    start = keep["start_ns"].astype("Int64").copy()
    for stream, rm in removed.groupby("stream"):
        on = keep["stream"] == stream
        on = on.fillna(False).astype(bool)
        for _, r in rm.iterrows():
            later = on & (keep["start_ns"] >= r["start_ns"] + r["dur_ns"])
            start[later] = start[later] - r["dur_ns"]
    keep["start_ns"] = start
    st = tables["steps"].to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)
    sel = keep[keep["step"].notna() & keep["kind"].isin(["kernel", "communication"])]
    rng = sel.groupby("step").agg(s=("start_ns", "min"), e=("start_ns", "max"))
    ends = (sel["start_ns"] + sel["dur_ns"]).groupby(sel["step"]).max()
    for k, row in st.iterrows():
        if row["step"] in rng.index:
            st.loc[k, "device_start_ns"] = rng.loc[row["step"], "s"]
            st.loc[k, "device_end_ns"] = max(int(ends.loc[row["step"]]), int(row["host_end_ns"]))
    out = dict(tables)
    out["device_tasks"] = pa.Table.from_pandas(keep, schema=tables["device_tasks"].schema, preserve_index=False)
    out["steps"] = pa.Table.from_pandas(st, schema=tables["steps"].schema, preserve_index=False)
    return out, dt, keep, removed


def device_tasks(tables) -> pd.DataFrame:
    return tables["device_tasks"].to_pandas(types_mapper={pa.int64(): pd.Int64Dtype(), pa.int32(): pd.Int32Dtype()}.get)


def union_len(iv) -> int:
    """Length of the union of (start, end) intervals (reference implementation for the tests)."""
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(iv):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def reference_breakdown(dt: pd.DataFrame) -> dict:
    """step (span), computing, busy, free, comm-not-overlapped of one step, in ns (no bubble)."""
    t = dt[dt["kind"].isin(["kernel", "communication"]) & dt["step"].notna()]
    iv = lambda d: list(zip(d["start_ns"].astype(int), (d["start_ns"] + d["dur_ns"]).astype(int)))  # noqa: E731
    comp = union_len(iv(t[t["kind"] == "kernel"]))
    busy = union_len(iv(t))
    span = int((t["start_ns"] + t["dur_ns"]).max() - t["start_ns"].min())
    return {"step": span, "computing": comp, "busy": busy, "free": span - busy, "cno": busy - comp}


def profile(tables: dict):
    return profile_from_tables(tables)
