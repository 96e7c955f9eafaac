"""One rank's canonical tables from a cluster :class:`~._read.Summary`.

The step figures.  A cluster summary has no tasks, only the vendor's per-rank figures; the step
views compute their figures from ``device_tasks`` intervals (``analyses.steps``).  So each rank's
step becomes a few blocks whose unions *are* the figures (integer ns, rounded from the us written):

    [ Computing (kernel) ........ ][ Free gap ][ Communication (not overlapped) ][ Bubble ]
              [ Communication (overlapped) ]

- a ``kernel`` block of length Computing, a ``communication`` block over its last Overlapped ns,
- the gap: Free = Stage + Bubble - Computing - Communication(Not Overlapped) (the written Free
  differs by at most 0.12 us in the fixture: the vendor rounds Stage to its timestamps' resolution),
- a ``communication`` block of Communication(Not Overlapped) - Bubble, then the Bubble as an
  ``hcom_receive`` block (the breakdown's Bubble is the receive ops' time).

Then computing, communication not overlapped, overlapped, communication, bubble and step (=
Stage) come out exactly as written.  Every rank's step k starts at the same instant; the steps are
laid end to end and end where the first recorded communication op starts, so that no block
overlaps a real op (the collectives' overlap with compute stays 0, as it must: it is unknown).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa

from ._read import Summary

TRANSPORTS = ("hccs", "rdma", "pcie", "sdma", "sio")
KERNEL = "Computing (cluster summary)"
COMM = "Communication (cluster summary)"
BUBBLE = "hcom_receive Bubble (cluster summary)"
SUMMARY_TYPE = "cluster_summary"
_TYPE_IN_NAME = re.compile(r"^(hcom_[A-Za-z0-9]+_)")


def ns(us) -> int:
    return 0 if us is None else int(round(float(us) * 1000))


def _ms_ns(ms) -> int | None:
    return None if ms is None or ms == "" else int(round(float(ms) * 1_000_000))


def _mb_bytes(mb) -> int | None:
    return None if mb is None or mb == "" else int(round(float(mb) * 1_000_000))


# -- the step blocks ------------------------------------------------------------------------
def blocks(row: dict) -> tuple[list[tuple], int]:
    """``(kind, name, type, offset_ns, dur_ns)`` blocks of one rank-step row, and its span."""
    c, cno, o, b = ns(row["computing"]), ns(row["cno"]), ns(row["overlapped"]), ns(row["bubble"])
    stage = ns(row["stage"]) if row["stage"] is not None else c + cno + ns(row["free"]) - b
    o = min(o, c)
    x = max(cno - b, 0)
    free = max(stage + b - c - cno, 0)
    segs: list[tuple[int, list[tuple]]] = []  # (length, blocks relative to the segment start)
    if c > 0:
        segs.append(
            (
                c,
                [("kernel", KERNEL, SUMMARY_TYPE, 0, c)]
                + ([("communication", COMM, SUMMARY_TYPE, c - o, o)] if o else []),
            )
        )
    if x > 0:
        segs.append((x, [("communication", COMM, SUMMARY_TYPE, 0, x)]))
    if b > 0:
        segs.append((b, [("communication", BUBBLE, "hcom_receive", 0, b)]))
    if free and len(segs) == 1:  # the gap needs a block on each side: split the only segment
        length, parts = segs[0]
        head = length // 2
        first = [(k, n, t, off, min(d, head - off)) for k, n, t, off, d in parts if off < head]
        second = [
            (k, n, t, max(off - head, 0), off + d - max(off, head)) for k, n, t, off, d in parts if off + d > head
        ]
        segs = [(head, first), (length - head, second)]
    out, at = [], 0
    for i, (length, parts) in enumerate(segs):
        out += [(k, n, t, at + off, d) for k, n, t, off, d in parts if d > 0]
        at += length + (free if i == 0 else 0)
    return out, at


def _origins(s: Summary) -> dict:
    """Start of each step (the same on every rank): end to end, ending where the first
    recorded communication op starts (0 when none has a start)."""
    spans: dict = {}
    for r in s.ranks:
        spans[r["step"]] = max(spans.get(r["step"], 0), blocks(r)[1])
    starts = [ns(o["start_us"]) for o in s.ops if o.get("start_us")]
    total = sum(spans.values())
    at = (min(starts) - total) if starts else 0
    out = {}
    for step in sorted(spans, key=lambda v: (v is None, v or 0)):
        out[step] = at
        at += spans[step]
    return out


def build(s: Summary, rank: int) -> dict[str, pa.Table]:
    origins = _origins(s)
    tasks = {k: [] for k in ("task_uid", "kind", "name", "type", "start_ns", "dur_ns", "step")}
    steps = {k: [] for k in ("step", "device_start_ns", "device_end_ns")}
    for row in sorted((r for r in s.ranks if r["rank"] == rank), key=lambda r: (r["step"] is None, r["step"] or 0)):
        parts, span = blocks(row)
        t0 = origins[row["step"]]
        for kind, name, typ, off, dur in parts:
            tasks["task_uid"].append(len(tasks["task_uid"]))
            tasks["kind"].append(kind)
            tasks["name"].append(name)
            tasks["type"].append(typ)
            tasks["start_ns"].append(t0 + off)
            tasks["dur_ns"].append(dur)
            tasks["step"].append(row["step"])
        if row["step"] is not None:
            steps["step"].append(row["step"])
            steps["device_start_ns"].append(t0)
            steps["device_end_ns"].append(t0 + span)
    strings = {"kind", "name", "type"}
    out = {
        "device_tasks": pa.table(
            {k: pa.array(v, pa.string() if k in strings else pa.int64()) for k, v in tasks.items()}
        ),
        "steps": pa.table({k: pa.array(v, pa.int64()) for k, v in steps.items()}),
        "comm_ops": _comm_ops(s, rank),
        "comm_links": _comm_links(s, rank),
    }
    return out


def _comm_ops(s: Summary, rank: int) -> pa.Table:
    ops = sorted((o for o in s.ops if o["rank"] == rank), key=lambda o: (float(o["start_us"] or 0), o["name"]))
    cols: dict[str, list] = {
        k: []
        for k in (
            "step",
            "name",
            "type",
            "category",
            "group",
            "start_ns",
            "dur_ns",
            "transit_ns",
            "wait_ns",
            "sync_ns",
            "idle_ns",
            "bytes",
            *[f"{t}_{u}" for t in TRANSPORTS for u in ("bytes", "transit_ns")],
        )
    }
    for o in ops:
        m = _TYPE_IN_NAME.match(o["name"] or "")
        cols["step"].append(o["step"])
        cols["name"].append(o["name"])
        cols["type"].append(m.group(1) if m else None)
        cols["category"].append(o["category"])
        cols["group"].append(o["group"])
        cols["start_ns"].append(ns(o["start_us"]) if o["start_us"] else None)
        cols["dur_ns"].append(_ms_ns(o["elapse_ms"]))
        for k in ("transit", "wait", "sync", "idle"):
            cols[f"{k}_ns"].append(_ms_ns(o[f"{k}_ms"]))
        bands = s.bands.get((rank, o["step"], o["name"]), {})
        for tr in TRANSPORTS:  # an analysed op moved 0 bytes over a link type it does not list
            size, ms = bands.get(tr.upper(), (0, 0) if bands else (None, None))
            cols[f"{tr}_bytes"].append(_mb_bytes(size))
            cols[f"{tr}_transit_ns"].append(_ms_ns(ms))
        # SDMA repeats the on-node HCCS figures: left out of the total, as every importer does
        moved = [cols[f"{tr}_bytes"][-1] for tr in TRANSPORTS if tr != "sdma"]
        cols["bytes"].append(sum(v for v in moved if v is not None) if any(v is not None for v in moved) else None)
    strings = {"name", "type", "category", "group"}
    return pa.table({k: pa.array(v, pa.string() if k in strings else pa.int64()) for k, v in cols.items()})


def _comm_links(s: Summary, rank: int) -> pa.Table:
    """The matrix rows whose source is ``rank`` (a link belongs to the rank that sends)."""
    keys = (
        "step",
        "category",
        "op_type",
        "summary",
        "group",
        "src_rank",
        "dst_rank",
        "transport",
        "bytes",
        "transit_ns",
        "op_name",
    )
    cols: dict[str, list] = {k: [] for k in keys}
    for link in s.links:
        if link["src"] != rank:
            continue
        for k, v in (
            ("step", link["step"]),
            ("category", link["category"]),
            ("op_type", link["op_type"]),
            ("summary", link["summary"]),
            ("group", link["group"]),
            ("src_rank", link["src"]),
            ("dst_rank", link["dst"]),
            ("transport", link["transport"]),
            ("bytes", _mb_bytes(link["size_mb"])),
            ("transit_ns", _ms_ns(link["time_ms"])),
            ("op_name", link["op_name"]),
        ):
            cols[k].append(v)
    ints = {"step", "src_rank", "dst_rank", "bytes", "transit_ns"}
    return pa.table({k: pa.array(v, pa.int64() if k in ints else pa.string()) for k, v in cols.items()})


def run_info(path: Path, rank: int, s: Summary, export_kind: str, fmt: str) -> pa.Table:
    ranks = sorted({r["rank"] for r in s.ranks} | {o["rank"] for o in s.ops})
    stages = [{"step": st["step"], "ranks": st["ranks"]} for st in s.stages]
    extra = {"collection": "msprof-analyze cluster", "stages": stages, "groups": s.groups}
    row = {
        "device": None,
        "source_format": fmt,
        "path": str(path),
        "activities": "NPU",
        "env": "{}",
        "versions": "{}",
        "world_size": len(ranks) or None,
        "extra": json.dumps(extra, sort_keys=True),
        "device_family": "npu",
        "export_kind": export_kind,
        "has_host_ops": False,
        "has_stack": False,
        "has_memory": False,
    }
    types = {"device": pa.int32(), "world_size": pa.int64()}
    types.update({k: pa.bool_() for k in ("has_host_ops", "has_stack", "has_memory")})
    return pa.table({k: pa.array([v], types.get(k, pa.string())) for k, v in row.items()})
