"""One rank's canonical tables from a cluster :class:`~._read.Summary`.

The step figures.  A cluster summary has no tasks, only the vendor's per-rank figures: each
rank-step row of the step trace becomes a ``steps`` row with no host or device range and the
figures in the ``vendor_*_ns`` columns (integer ns, rounded once from the us written), which
``step_breakdown`` shows for a rank without device tasks (``source = 'vendor_summary'``).
Nothing is invented: ``device_tasks`` stays empty, so no view shows a kernel that was never
recorded.  The cluster step trace has no Preparing: ``vendor_preparing_ns`` stays null.
"""

from __future__ import annotations

import json
import re
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import pyarrow as pa

from ._read import Summary

TRANSPORTS = ("hccs", "rdma", "pcie", "sdma", "sio")
_TYPE_IN_NAME = re.compile(r"^(hcom_[A-Za-z0-9]+_)")
#: the summary's figure (``_read.FIGURES`` key) -> the ``steps`` column that holds it
STEP_FIGURES = (
    ("computing", "vendor_computing_ns"),
    ("cno", "vendor_comm_not_overlapped_ns"),
    ("overlapped", "vendor_overlapped_ns"),
    ("communication", "vendor_comm_ns"),
    ("free", "vendor_free_ns"),
    ("stage", "vendor_stage_ns"),
    ("bubble", "vendor_bubble_ns"),
    ("cno_excl", "vendor_comm_not_overlapped_exclude_receive_ns"),
)


def ns(us) -> int | None:
    if isinstance(us, Decimal):  # exact, as written (epoch us carry more digits than a float)
        return int((us * 1000).to_integral_value(ROUND_HALF_EVEN))
    return None if us is None else int(round(float(us) * 1000))


def _ms_ns(ms) -> int | None:
    if isinstance(ms, Decimal):
        return int((ms * 1_000_000).to_integral_value(ROUND_HALF_EVEN))
    return None if ms is None or ms == "" else int(round(float(ms) * 1_000_000))


def _mb_bytes(mb) -> int | None:
    return None if mb is None or mb == "" else int(round(float(mb) * 1_000_000))


def _steps(s: Summary, rank: int) -> pa.Table:
    """The rank's steps with the vendor's figures (a row without a step number has no step to
    hang them on and is left out)."""
    rows = sorted((r for r in s.ranks if r["rank"] == rank and r["step"] is not None), key=lambda r: r["step"])
    cols = {"step": [r["step"] for r in rows]}
    for key, col in STEP_FIGURES:
        cols[col] = [ns(r[key]) for r in rows]
    if any("preparing" in r for r in rows):  # a rank's own step trace has Preparing; the cluster one has not
        cols["vendor_preparing_ns"] = [ns(r.get("preparing")) for r in rows]
    return pa.table({k: pa.array(v, pa.int64()) for k, v in cols.items()})


def build(s: Summary, rank: int, sender_only: bool = True) -> dict[str, pa.Table]:
    """``sender_only``: keep the matrix rows whose source is ``rank`` (a cluster summary holds
    every rank's links); a rank's own matrix keeps all its rows, as the rank importers do."""
    return {
        "steps": _steps(s, rank),
        "comm_ops": _comm_ops(s, rank),
        "comm_links": _comm_links(s, rank, sender_only),
    }


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


def _comm_links(s: Summary, rank: int, sender_only: bool = True) -> pa.Table:
    """The matrix rows whose source is ``rank`` (a link belongs to the rank that sends), or
    every row (``sender_only`` False: the rank's own matrix)."""
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
        if sender_only and link["src"] != rank:
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
    world, text = _job(s)
    row = _info_row(path, export_kind, fmt, world, text)
    types = {"device": pa.int32(), "world_size": pa.int64()}
    types.update({k: pa.bool_() for k in ("has_host_ops", "has_stack", "has_memory")})
    return pa.table({k: pa.array([v], types.get(k, pa.string())) for k, v in row.items()})


def _job(s: Summary) -> tuple[int | None, str]:
    """The world size and the ``extra`` text of summary ``s``, worked out once per summary (every
    rank of a 1,000-rank cluster summary asks for them)."""
    cached = getattr(s, "_job", None)
    if cached is not None:
        return cached
    ranks = {r["rank"] for r in s.ranks} | {o["rank"] for o in s.ops}
    stages = [{"step": st["step"], "ranks": st["ranks"]} for st in s.stages]
    extra = {"collection": "msprof-analyze cluster", "stages": stages, "groups": s.groups}
    if s.metadata:  # the summary tier of a rank folder: its profiler_metadata.json (parallel layout)
        extra = {"collection": "rank summaries", "metadata": s.metadata}
    s._job = (len(ranks) or None, json.dumps(extra, sort_keys=True))
    return s._job


def _info_row(path: Path, export_kind: str, fmt: str, world: int | None, extra: str) -> dict:
    return {
        "device": None,
        "source_format": fmt,
        "path": str(path),
        "activities": "NPU",
        "env": "{}",
        "versions": "{}",
        "world_size": world,
        "extra": extra,
        "device_family": "npu",
        "export_kind": export_kind,
        "has_host_ops": False,
        "has_stack": False,
        "has_memory": False,
    }
