"""Collective communication: per op the vendor's time split (elapse = transit + wait + idle,
synchronisation being part of wait), bytes and bandwidth per link type, and how much of each op
compute kernels hide; per rank and op type the totals; the rank-to-rank link matrix.

Bandwidths are decimal GB/s (bytes / ns), as the vendor's ``Bandwidth(GB/s)`` = MB / ms with
decimal MB.  On Ascend the ``SDMA`` figures are the aggregate of the on-node links and duplicate
``HCCS``: never add them.  GPU (NCCL) traces carry no transit/wait split: those columns are null
and bandwidth is bytes / elapsed time.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import ProfileError
from ..profile import to_pandas
from ..registry import Chart, Param, analysis
from ._sql import query, scope

LINKS = ("hccs", "rdma", "pcie", "sdma", "sio")
#: bandwidth expected of one link per transport, decimal GB/s: HCCS 19.3 (on-node, one SDMA stream,
#: the vendor's communication cost model), RDMA 12.0 (one stream, after protocol headers).  The
#: slow-link rule (:mod:`.links`) judges links against them and ``comm_summary`` states each row's
#: bandwidth as a share of them; other transports have no such figure.
EXPECTED_GBPS = {"hccs": 19.3, "rdma": 12.0}


def _filters(rank=None, step=None, alias: str = "c") -> str:
    return scope(rank, step, alias)


def _ops_with_overlap(profile, where: str) -> pa.Table:
    """The comm ops of ``where`` with ``overlapped_ns``: the ns of each op's interval covered by
    the union of the compute kernels (kind = 'kernel') of the same rank."""
    ops = _arrow(profile.connection().sql(f"SELECT c.* FROM comm_ops c WHERE {where}"))
    overlapped = np.zeros(ops.num_rows, dtype=np.int64)
    if ops.num_rows:
        ranks = ops.column("rank").to_numpy(zero_copy_only=False)
        start = ops.column("start_ns").fill_null(0).to_numpy()
        end = start + ops.column("dur_ns").fill_null(0).to_numpy()
        for r in np.unique(ranks):
            sel = ranks == r
            covered = _kernel_cover(profile, int(r))
            overlapped[sel] = covered(end[sel]) - covered(start[sel])
    return ops.append_column("overlapped_ns", pa.array(overlapped))


def _kernel_cover(profile, rank: int):
    """``covered(x)``: ns of the union of the rank's compute kernels that lie before x.

    Kernels sorted by start are merged into disjoint intervals (a new one starts where a kernel
    begins after every earlier kernel ended), each carrying the covered length before it; then
    covered(x) is one binary search.  Vectorised (numpy), linear in the kernels."""
    k = _arrow(
        profile.connection().sql(
            f"SELECT start_ns, start_ns + dur_ns AS end_ns FROM device_tasks WHERE kind = 'kernel' AND dur_ns > 0 AND start_ns IS NOT NULL "
            f"AND rank = {rank} ORDER BY start_ns"
        )
    )
    s, e = k.column("start_ns").to_numpy(), k.column("end_ns").to_numpy()
    if not len(s):
        return lambda x: np.zeros(len(x), dtype=np.int64)
    run = np.maximum.accumulate(e)
    first = np.flatnonzero(np.r_[True, s[1:] > run[:-1]])  # first kernel of each merged interval
    ms, me = s[first], run[np.r_[first[1:], len(s)] - 1]
    before = np.r_[0, np.cumsum(me - ms)[:-1]]

    def covered(x):
        j = np.searchsorted(ms, x, side="right") - 1
        jc = np.maximum(j, 0)
        return np.where(j >= 0, before[jc] + np.minimum(x, me[jc]) - ms[jc], 0)

    return covered


def _over(profile, ops: pa.Table, sql: str) -> pd.DataFrame:
    """Run ``sql`` over the table ``ov`` (the ops with their overlap); nullable-dtype pandas."""
    return _floats(to_pandas(_arrow(profile.connection().from_arrow(ops).query("ov", sql))))


def _arrow(rel) -> pa.Table:
    return rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow()


def _link_cols(prefix: str = "c.") -> str:
    return ",\n           ".join(
        f"CASE WHEN {prefix}{t}_bytes > 0 THEN {prefix}{t}_bytes / nullif({prefix}{t}_transit_ns, 0)::DOUBLE END"
        f" AS {t}_gbps"
        for t in LINKS
    )


COLLECTIVE_COLUMNS = {
    "rank": "rank",
    "step": "step",
    "name": "op name",
    "type": "op type",
    "category": "collective / p2p",
    "group": "communication group",
    "start_ns": "op start, epoch ns",
    "elapse_us": "elapsed time of the op",
    "transit_us": "time moving data (null on GPU)",
    "wait_us": "time waiting for peers before data moved",
    "sync_us": "synchronisation part of the wait",
    "idle_us": "elapse - transit - wait",
    "wait_ratio": "wait / (wait + transit), the vendor's Wait Time Ratio (unrounded)",
    "bytes": "bytes moved by this rank (SDMA not double counted)",
    "bandwidth_gbps": "bytes / transit time (GPU: bytes / elapse), decimal GB/s",
    **{
        f"{t}_gbps": f"{t.upper()} bytes / {t.upper()} transit time, decimal GB/s (null without {t.upper()} bytes)"
        for t in LINKS
    },
    "overlapped_us": "part of the op's interval covered by compute kernels of the same rank",
    "share_of_comm_overlapped_ratio": "overlapped_us / elapse_us",
    "label": "the op as one text (the chart's bar label; prefixed by the rank when several)",
}


@analysis(
    "collectives",
    title="Collective communication ops",
    params=(
        Param("rank", int, None, help="one rank; all when omitted"),
        Param("step", int, None, help="one step; all when omitted"),
    ),
    chart=Chart("bar", "label", ("elapse_us",), title="elapsed (us)"),
    columns=COLLECTIVE_COLUMNS,
)
def collectives(profile, rank=None, step=None) -> pd.DataFrame:
    """One row per communication op: the vendor's split of its elapsed time into transit, wait
    (with synchronisation) and idle, the bytes and bandwidth per link type, and the part that
    compute kernels overlap.  A high wait share means the rank waited for slower peers; a low
    overlapped share means the communication is exposed on the step."""
    sql = f"""
    SELECT c.rank, c.step, c.name, c.type, c.category, c."group", c.start_ns,
           c.dur_ns / 1e3 AS elapse_us, c.transit_ns / 1e3 AS transit_us, c.wait_ns / 1e3 AS wait_us,
           c.sync_ns / 1e3 AS sync_us, c.idle_ns / 1e3 AS idle_us,
           c.wait_ns / nullif(c.wait_ns + c.transit_ns, 0)::DOUBLE AS wait_ratio,
           c.bytes,
           CASE WHEN c.bytes > 0 THEN c.bytes / nullif(coalesce(c.transit_ns, c.dur_ns), 0)::DOUBLE END AS bandwidth_gbps,
           {_link_cols()},
           c.overlapped_ns / 1e3 AS overlapped_us,
           c.overlapped_ns / nullif(c.dur_ns, 0)::DOUBLE AS share_of_comm_overlapped_ratio,
           CASE WHEN count(DISTINCT c.rank) OVER () > 1 THEN 'rank ' || c.rank || ' ' ELSE '' END || c.name AS label
    FROM ov c
    ORDER BY c.rank, c.start_ns, c.name"""
    return _over(profile, _ops_with_overlap(profile, _filters(rank, step)), sql)


SUMMARY_COLUMNS = {
    "rank": "rank",
    "type": "op type",
    "category": "collective / p2p",
    "count": "ops",
    "elapse_us": "total elapsed",
    "transit_us": "total transit",
    "wait_us": "total wait",
    "sync_us": "total synchronisation",
    "idle_us": "total idle",
    "bytes": "total bytes",
    "bandwidth_gbps": "bytes / transit (GPU: / elapse), decimal GB/s",
    **{f"{t}_gbps": f"sum of {t.upper()} bytes / sum of {t.upper()} transit time" for t in LINKS},
    **{
        f"{t}_expected_ratio": f"{t}_gbps / the {gbps:g} GB/s expected of one {t.upper()} link (slow_links' figure)"
        for t, gbps in EXPECTED_GBPS.items()
    },
    "share_of_comm_ratio": "elapse_us / elapsed time of all communication ops of the rank",
    "wait_ratio": "wait / (wait + transit) over the ops (the vendor's Total Op Info ratio)",
    "overlapped_us": "elapsed time overlapped by compute kernels",
    "share_of_comm_overlapped_ratio": "overlapped_us / elapse_us",
    "label": "the op type as one text (the chart's bar label; prefixed by the rank when several)",
}


@analysis(
    "comm_summary",
    title="Communication per rank and op type",
    params=(
        Param("rank", int, None, help="one rank; all when omitted"),
        Param("step", int, None, help="one step; all when omitted"),
    ),
    chart=Chart("stacked", "label", ("transit_us", "wait_us", "idle_us"), title="time (us)"),
    columns=SUMMARY_COLUMNS,
)
def comm_summary(profile, rank=None, step=None) -> pd.DataFrame:
    """Per rank and op type: how many ops, their total elapsed / transit / wait / sync / idle
    time, bytes and bandwidth (overall and per link type, HCCS and RDMA also as a share of the
    bandwidth expected of one such link), their share of the rank's communication, the wait
    share and how much compute overlaps them."""
    links = ",\n           ".join(
        f"CASE WHEN sum(c.{t}_bytes) > 0 THEN sum(c.{t}_bytes) / nullif(sum(c.{t}_transit_ns), 0)::DOUBLE END"
        f" AS {t}_gbps"
        for t in LINKS
    )
    sql = f"""
    WITH g AS (
      SELECT c.rank, c.type, c.category, count(*) AS count, sum(c.dur_ns) AS dur, sum(c.transit_ns) AS transit,
             sum(c.wait_ns) AS wait, sum(c.sync_ns) AS sync, sum(c.idle_ns) AS idle, sum(c.bytes) AS bytes,
             CASE WHEN sum(c.bytes) > 0 THEN sum(c.bytes) / nullif(coalesce(sum(c.transit_ns), sum(c.dur_ns)), 0)::DOUBLE
                  END AS bandwidth_gbps,
           {links},
             sum(c.overlapped_ns) AS overlapped
      FROM ov c GROUP BY c.rank, c.type, c.category)
    SELECT rank, type, category, count::BIGINT AS count, dur / 1e3 AS elapse_us, transit / 1e3 AS transit_us,
           wait / 1e3 AS wait_us, sync / 1e3 AS sync_us, idle / 1e3 AS idle_us, bytes::BIGINT AS bytes,
           bandwidth_gbps, {", ".join(f"{t}_gbps" for t in LINKS)},
           {", ".join(f"{t}_gbps / {gbps} AS {t}_expected_ratio" for t, gbps in EXPECTED_GBPS.items())},
           dur / nullif(sum(dur) OVER (PARTITION BY rank), 0)::DOUBLE AS share_of_comm_ratio,
           wait / nullif(wait + transit, 0)::DOUBLE AS wait_ratio,
           overlapped / 1e3 AS overlapped_us, overlapped / nullif(dur, 0)::DOUBLE AS share_of_comm_overlapped_ratio,
           CASE WHEN count(DISTINCT c.rank) OVER () > 1 THEN 'rank ' || c.rank || ' ' ELSE '' END || c.type AS label
    FROM g c ORDER BY rank, elapse_us DESC, type"""
    return _over(profile, _ops_with_overlap(profile, _filters(rank, step)), sql)


SUMMARIES = ("top1", "middle", "bottom1", "bottom2", "bottom3", "total")
MATRIX_COLUMNS = {
    "rank": "rank whose profile recorded the link",
    "step": "step",
    "category": "collective / p2p",
    "op_type": "lower-case op type",
    "summary": "top1 / middle / bottom1..3 / total (the vendor's)",
    "group": "communication group",
    "src_rank": "source rank (communicator rank)",
    "dst_rank": "destination rank",
    "transport": "LOCAL / HCCS / PCIE / RDMA / SIO / SDMA",
    "bytes": "bytes over the link",
    "transit_us": "transit time over the link",
    "bandwidth_gbps": "bytes / transit time, decimal GB/s",
    "op_name": "the concrete op behind the row",
    "label": "op type, src->dst and transport as one text (the chart's bar label)",
}


@analysis(
    "comm_matrix",
    title="Rank-to-rank communication matrix",
    params=(
        Param(
            "summary",
            str,
            "total",
            choices=SUMMARIES,
            help="which of the vendor's per-link summaries (total = all ops of the type)",
        ),
        Param("step", int, None, help="one step; all when omitted"),
        Param("rank", int, None, help="one loaded rank; all when omitted"),
    ),
    chart=Chart("bar", "label", ("bandwidth_gbps",), title="bandwidth (GB/s)"),
    columns=MATRIX_COLUMNS,
)
def comm_matrix(profile, summary="total", step=None, rank=None) -> pd.DataFrame:
    """Every rank-to-rank link: bytes, transit time and bandwidth per op type and transport, one
    row per (loaded rank, step, op type, group, src, dst) — pivot ``src_rank`` x ``dst_rank`` for
    the matrix.  A slow link shows as a low bandwidth in its row."""
    cond = [_filters(rank, step, alias="l")]
    if summary is not None:
        if summary not in SUMMARIES:
            raise ProfileError(f"summary must be one of {', '.join(SUMMARIES)}, not {summary!r}")
        cond.append(f"l.summary = '{summary}'")
    sql = f"""
    SELECT l.rank, l.step, l.category, l.op_type, l.summary, l."group", l.src_rank, l.dst_rank, l.transport,
           l.bytes, l.transit_ns / 1e3 AS transit_us,
           CASE WHEN l.bytes > 0 THEN l.bytes / nullif(l.transit_ns, 0)::DOUBLE END AS bandwidth_gbps, l.op_name,
           l.op_type || ' ' || l.src_rank || '->' || l.dst_rank || ' ' || l.transport AS label
    FROM comm_links l WHERE {" AND ".join(cond)}
    ORDER BY l.rank, l.step, l.category, l.op_type, l."group", l.summary, l.src_rank, l.dst_rank, l.transport"""
    return _floats(query(profile, sql))


def _floats(df: pd.DataFrame) -> pd.DataFrame:
    """``*_us``, ``*_gbps`` and ``*_ratio`` columns as nullable floats even when all null."""
    for c in df.columns:
        if c.endswith(("_us", "_gbps", "_ratio")):
            df[c] = df[c].astype("Float64")
    return df
