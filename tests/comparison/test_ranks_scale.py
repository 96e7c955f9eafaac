"""A 16-rank profile from copies of a real rank, one made slow the realistic way: it computes D
longer, so it reaches the first allreduce D late and waits D less there, while its 15 peers wait
D longer; every later task of every rank moves D later (the step grows by D everywhere)."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import _build as B  # noqa: E402

import profinsight  # noqa: E402
from profinsight.api import ranks_report  # noqa: E402

N, SLOW, D = 16, 11, 6_000_000


def synchronous_copy(tables: dict, slow: bool) -> tuple[dict, pd.DataFrame]:
    dt = B.device_tasks(tables)
    comm = dt[dt["kind"] == "communication"].sort_values("start_ns")
    first = comm.index[0]
    a0, dur0 = int(dt.loc[first, "start_ns"]), int(dt.loc[first, "dur_ns"])
    later = dt["start_ns"] >= a0 + dur0
    dt.loc[later, "start_ns"] = dt.loc[later, "start_ns"] + D
    co = tables["comm_ops"].to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)
    k = co.sort_values("start_ns").index[0]
    co_later = co["start_ns"] >= a0 + dur0
    co.loc[co_later, "start_ns"] = co.loc[co_later, "start_ns"] + D
    if slow:  # computes D more, arrives D late, the allreduce ends with the others' (wait as before)
        extra = dt[dt["kind"] == "kernel"].iloc[[0]].copy()
        extra["start_ns"], extra["dur_ns"], extra["name"] = a0, D, "SlowKernel"
        dt.loc[first, "start_ns"] = a0 + D
        co.loc[k, "start_ns"] = a0 + D
        dt = pd.concat([dt, extra], ignore_index=True)
    else:  # waits D longer for the slow rank
        dt.loc[first, "dur_ns"] = dur0 + D
        co.loc[k, "dur_ns"] = int(co.loc[k, "dur_ns"]) + D
        co.loc[k, "wait_ns"] = int(co.loc[k, "wait_ns"]) + D
    st = tables["steps"].to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)
    st["device_end_ns"] = st["device_end_ns"] + D
    st["host_end_ns"] = st["host_end_ns"] + D
    out = dict(tables)
    out["device_tasks"] = pa.Table.from_pandas(dt, schema=tables["device_tasks"].schema, preserve_index=False)
    out["comm_ops"] = pa.Table.from_pandas(co, schema=tables["comm_ops"].schema, preserve_index=False)
    out["steps"] = pa.Table.from_pandas(st, schema=tables["steps"].schema, preserve_index=False)
    return out, dt


def test_slow_rank_among_16(fixtures):
    p = profinsight.load(fixtures / "ascend_pt/text_level1/rank0_ascend_pt")
    tables = B.tables_of(p)
    peer, peer_dt = synchronous_copy(tables, slow=False)
    slow, slow_dt = synchronous_copy(tables, slow=True)
    per_rank = [slow if r == SLOW else peer for r in range(N)]
    merged = {
        name: pa.concat_tables(
            [B.with_rank(t[name], r) for r, t in enumerate(per_rank)]
            if "rank" in tables[name].column_names
            else [tables[name]]
        )
        for name in B.TABLES
    }
    prof = B.profile(merged)
    assert prof.ranks == list(range(N))
    ref_peer, ref_slow = B.reference_breakdown(peer_dt), B.reference_breakdown(slow_dt)
    extra_compute = (ref_slow["computing"] - ref_peer["computing"]) / 1e3
    assert extra_compute > 0.5 * D / 1e3
    assert ref_slow["step"] == ref_peer["step"]  # everyone ends together
    orig_wait = float(tables["comm_ops"].column("wait_ns").to_pandas().sum()) / 1e3

    rep = ranks_report(prof)
    s = rep.summary().set_index("rank")
    assert s.loc[SLOW, "comm_wait_us"] == pytest.approx(orig_wait, abs=1e-6)
    assert s.drop(index=SLOW)["comm_wait_us"].tolist() == pytest.approx([orig_wait + D / 1e3] * (N - 1), abs=1e-6)
    assert s.loc[SLOW, "computing_vs_median_us"] == pytest.approx(extra_compute, abs=1e-6)
    sr = rep.slow_ranks()
    assert list(sr["rank"].unique()) == [SLOW]
    top = sr.iloc[0]
    assert top["component"] == "computing_us" and top["steps"] == "50"
    assert top["deviation_us"] == pytest.approx(extra_compute, abs=1e-6)
    assert top["comm_wait_vs_median_us"] == pytest.approx(-D / 1e3, abs=1e-6)
    assert f"rank {SLOW}" in top["evidence"] and "wait for it" in top["evidence"]
