"""Memory tables and counters: ``memory_samples``, ``memory_blocks``, ``module_memory``,
``counters``.

Why it is built this way: the DB already stores bytes and ns, so the only work is naming.

* Counter names and units follow the text export's timeline (``trace_view.json``), so one chart
  reads both exports: the msprof timeline assemblers convert B/s to MB/s with 2^20 (HBM, LLC
  throughput) and bytes to KB with 2^10 (``NPU MEM``); ``Acc PMU`` levels are one series per
  accelerator.  LLC hit rates stay in percent (the DB's unit); the timeline divides
  them by 100 while still labelling them ``%``.
* ``OP_MEMORY`` names graph-engine blocks without the ``cann::`` prefix the text export's
  ``operator_memory.csv`` gives them; the prefix is added so both exports name them alike.
* The APP memory curve is ``NPU_MEM`` rows of type ``app`` (``MEMORY_RECORD`` has no APP rows),
  as the text export's ``memory_record.csv`` shows.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..base import RankData
from .device import _map, _only_ints, _texts
from .reader import Db

_MIB = 1024 * 1024


#: the columns read of ``MEMORY_RECORD``, ``OP_MEMORY`` and ``NPU_MODULE_MEM`` (name -> aliases)
_RECORD = {
    "component": ("component",),
    "ts": ("timestamp", "timestampNs"),
    "alloc": ("totalAllocated",),
    "reserved": ("totalReserved",),
    "active": ("totalActive",),
    "stream": ("streamPtr",),
    "device": ("deviceId",),
}
_BLOCKS = {
    "name": ("name",),
    "size_bytes": ("size",),
    "alloc_ns": ("allocationTime",),
    "release_ns": ("releaseTime",),
    "active_release_ns": ("activeReleaseTime",),
    "alloc_total_allocated_bytes": ("allocationTotalAllocated",),
    "alloc_total_reserved_bytes": ("allocationTotalReserved",),
    "alloc_total_active_bytes": ("allocationTotalActive",),
    "release_total_allocated_bytes": ("releaseTotalAllocated",),
    "release_total_reserved_bytes": ("releaseTotalReserved",),
    "release_total_active_bytes": ("releaseTotalActive",),
    "stream_ptr": ("streamPtr",),
    "device": ("deviceId",),
}
_MODULES = {"module": ("moduleId",), "ts": ("timestampNs",), "reserved": ("totalReserved",), "device": ("deviceId",)}
#: the read of ``ACC_PMU`` (statement, columns)
_ACC_READ = (
    "SELECT deviceId, timestampNs, accId, readBwLevel, writeBwLevel, readOstLevel, writeOstLevel "
    "FROM ACC_PMU ORDER BY timestampNs, accId",
    7,
)


def reads(db: Db) -> list[tuple[str, int]]:
    """What :func:`load_memory` and :func:`load_counters` read column by column, in their order,
    for :meth:`Db.read_ahead`."""
    out = db.select_reads(("MEMORY_RECORD", _RECORD), ("OP_MEMORY", _BLOCKS), ("NPU_MODULE_MEM", _MODULES))
    return out + ([_ACC_READ] if db.has("ACC_PMU") else [])


def load_memory(db: Db, data: RankData) -> None:
    """Fill ``memory_samples``, ``memory_blocks`` and ``module_memory``."""
    _samples(db, data)
    _blocks(db, data)
    _modules(db, data)


def _samples(db: Db, data: RankData) -> None:
    m = db.select("MEMORY_RECORD", _RECORD)
    comps = _texts(db, m["component"])
    # GE events record no "active" total (the DB writes 0, the text export leaves it empty)
    ge = pc.fill_null(pc.equal(comps, "GE"), False)
    cols = {
        "device": pa.array(m["device"], pa.int32()),
        "component": comps,
        "ts_ns": pa.array(m["ts"], pa.int64()),
        "allocated_bytes": pa.array(m["alloc"], pa.int64()),
        "reserved_bytes": pa.array(m["reserved"], pa.int64()),
        "active_bytes": pc.if_else(ge, pa.scalar(None, pa.int64()), pa.array(m["active"], pa.int64())),
        "stream_ptr": _decimal_texts(m["stream"]),
    }
    app = _npu_mem(db, "app")
    n_app = len(app["ts_ns"])
    if not len(cols["ts_ns"]) + n_app:
        return
    data.tables["memory_samples"] = pa.table(
        {
            k: pa.concat_arrays([v, pa.array(app.get(k, [None] * n_app), v.type)]) if n_app else v
            for k, v in cols.items()
        }
    )


def _npu_mem(db: Db, kind: str) -> dict[str, list]:
    """``NPU_MEM`` rows of one type (``app`` / ``device``) as APP samples."""
    n = db.select("NPU_MEM", {"type": ("type",), "hbm": ("hbm",), "ts": ("timestampNs",), "device": ("deviceId",)})
    keep = [i for i, t in enumerate(db.text(n["type"])) if t == kind]
    return {
        "device": [n["device"][i] for i in keep],
        "component": ["APP"] * len(keep),
        "ts_ns": [n["ts"][i] for i in keep],
        "reserved_bytes": [_i(n["hbm"][i]) for i in keep],
    }


def _blocks(db: Db, data: RankData) -> None:
    m = db.select("OP_MEMORY", _BLOCKS)
    if not m["name"]:
        return
    names = db.text(m["name"])
    # GE (graph engine) blocks carry neither a stream nor an "active" total; the text export
    # names them `cann::<op>`, the DB without the prefix: add it so both exports agree.
    ge = [
        (n or "").startswith("cann::") or (s is None and a is None)
        for n, s, a in zip(names, m["stream_ptr"], m["alloc_total_active_bytes"])
    ]
    m["name"] = [f"cann::{n}" if g and n is not None and not n.startswith("cann::") else n for n, g in zip(names, ge)]
    m["component"] = ["GE" if g else "PTA" for g in ge]
    m["stream_ptr"] = [None if s is None else str(s) for s in m["stream_ptr"]]
    data.tables["memory_blocks"] = _table(
        m, {"device": pa.int32(), "name": pa.string(), "component": pa.string(), "stream_ptr": pa.string()}
    )


def _modules(db: Db, data: RankData) -> None:
    m = db.select("NPU_MODULE_MEM", _MODULES)
    if not m["ts"]:
        return
    names = db.enum("ENUM_MODULE")
    data.tables["module_memory"] = pa.table(
        {
            "device": pa.array(m["device"], pa.int32()),
            "component": _map(m["module"], lambda i: names.get(i, str(i)), pa.string()),
            "ts_ns": pa.array(m["ts"], pa.int64()),
            "reserved_bytes": _whole_numbers(m["reserved"]),
        }
    )


def load_counters(db: Db, data: RankData) -> None:
    """Fill ``counters`` from every counter table present (names/units as the text timeline)."""
    cols: dict[str, list] = {"device": [], "track": [], "name": [], "ts_ns": [], "value": [], "unit": []}

    def add(device, track, name, ts, value, unit):
        # a damaged time or value (text, NaN, beyond int64: counted by the reader's damage scan)
        # costs that sample, never the counters of the whole DB
        ts, value = _ns(ts), _finite(value)
        if ts is None or value is None:
            return
        cols["device"].append(device), cols["track"].append(track), cols["name"].append(name)
        cols["ts_ns"].append(ts), cols["value"].append(value), cols["unit"].append(unit)

    for dev, ts, freq in (
        db.rows("SELECT deviceId, timestampNs, freq FROM AICORE_FREQ ORDER BY timestampNs")
        if db.has("AICORE_FREQ")
        else ()
    ):
        add(dev, "AI Core Freq", "AI Core Freq", ts, freq, "MHz")
    if db.has("HBM"):
        for dev, ts, bw, hbm, typ in db.rows("SELECT deviceId, timestampNs, bandwidth, hbmId, type FROM HBM"):
            add(dev, "HBM", f"HBM {hbm}/{str(db.strings.get(typ, typ)).capitalize()}", ts, _div(bw, _MIB), "MB/s")
    if db.has("LLC"):
        for dev, llc, ts, hit, thr, mode in db.rows(
            "SELECT deviceId, llcId, timestampNs, hitRate, throughput, mode FROM LLC"
        ):
            m = str(db.strings.get(mode, mode)).capitalize()
            add(dev, "LLC", f"LLC {llc} {m}/Hit Rate", ts, hit, "%")
            add(dev, "LLC", f"LLC {llc} {m}/Throughput", ts, _div(thr, _MIB), "MB/s")
    if db.has("NPU_MEM"):
        for typ, ddr, hbm, ts, dev in db.rows("SELECT type, ddr, hbm, timestampNs, deviceId FROM NPU_MEM"):
            who = {"app": "APP", "device": "Device"}.get(db.strings.get(typ), str(db.strings.get(typ, typ)))
            add(dev, "NPU MEM", f"{who}/DDR", ts, _div(ddr, 1024), "KB")
            add(dev, "NPU MEM", f"{who}/HBM", ts, _div(hbm, 1024), "KB")
            add(dev, "NPU MEM", f"{who}/Memory", ts, _div((ddr or 0) + (hbm or 0), 1024), "KB")
    _acc_pmu(db, add, cols)
    if db.has("SOC_BANDWIDTH_LEVEL"):
        for l2, mata, ts, dev in db.rows(
            "SELECT l2BufferBwLevel, mataBwLevel, timestampNs, deviceId FROM SOC_BANDWIDTH_LEVEL"
        ):
            add(dev, "Stars Soc Info", "L2 Buffer Bw Level", ts, l2, "level")
            add(dev, "Stars Soc Info", "Mata Bw Level", ts, mata, "level")
    if cols["ts_ns"]:
        data.tables["counters"] = _table(
            cols,
            {
                "device": pa.int32(),
                "track": pa.string(),
                "name": pa.string(),
                "value": pa.float64(),
                "unit": pa.string(),
            },
        )


#: the ``Acc PMU`` levels of one ``ACC_PMU`` row, in the order they are added
_ACC_METRICS = ("read_bandwidth", "write_bandwidth", "read_ost", "write_ost")


def _acc_pmu(db: Db, add, cols: dict[str, list]) -> None:
    """``Acc PMU`` levels, one series per accelerator: ``read_bandwidth (acc_id 3)``, as the text
    importer names the timeline's per-accelerator events.  Rows are sampled all through a run
    (4 levels each): where their times are integers and their levels numbers, the samples are
    kept or dropped as ``add`` would keep or drop them, by array (69 k rows: 0.28 -> 0.18 s,
    0.08 s of it the rows' fetch, now read column by column); any other value takes ``add`` itself."""
    if not db.has("ACC_PMU"):
        return
    dev, ts, acc, *levels = db.column_lists(*_ACC_READ)
    if not ts:
        return
    arrays = _plain_numbers(ts, *levels)
    if arrays is None:
        for d, t, a, *values in zip(dev, ts, acc, *levels):
            for metric, value in zip(_ACC_METRICS, values):
                add(d, "Acc PMU", f"{metric} (acc_id {a})", t, value, "level")
        return
    t, *lv = arrays
    value = np.column_stack([np.asarray(a.to_numpy(zero_copy_only=False), dtype=np.float64) for a in lv])
    t_ok = np.asarray(pc.is_valid(t), dtype=bool)
    row, metric = np.nonzero(t_ok[:, None] & np.isfinite(value))  # row by row, metrics in order
    # one name per accelerator and level, told apart by type too: 3 and 3.0 are one dict key
    # but two names
    code: dict = {}
    acc_code = np.array([code.setdefault((a.__class__, a), len(code)) for a in acc], dtype=np.int64)
    k = len(_ACC_METRICS)
    name = np.array([f"{_ACC_METRICS[m]} (acc_id {a})" for _, a in code for m in range(k)], dtype=object)
    cols["device"].extend(np.array(dev, dtype=object)[row].tolist())
    cols["track"].extend(["Acc PMU"] * len(row))
    cols["name"].extend(name[acc_code[row] * k + metric].tolist())
    # nulls filled, not converted to float: a time in ns needs all 64 bits
    cols["ts_ns"].extend(pc.fill_null(t, 0).to_numpy()[row].tolist())
    cols["value"].extend(value[row, metric].tolist())
    cols["unit"].extend(["level"] * len(row))


def _plain_numbers(times: list, *values: list) -> list[pa.Array] | None:
    """``times`` as int64 and each of ``values`` as int64 or float64 Arrow arrays (nulls where
    None), or None when any holds something else (text, a bool, an integer beyond int64): then
    the per-value checks of :func:`_ns` and :func:`_finite` decide."""
    try:
        out = [pa.array(times)] + [pa.array(v) for v in values]
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return None
    if not (pa.types.is_integer(out[0].type) or pa.types.is_null(out[0].type)):
        return None
    if not all(
        pa.types.is_integer(a.type) or pa.types.is_floating(a.type) or pa.types.is_null(a.type) for a in out[1:]
    ):
        return None
    return [out[0].cast(pa.int64())] + [a.cast(pa.float64()) for a in out[1:]]


def _table(cols: dict[str, list], types: dict[str, pa.DataType]) -> pa.Table:
    return pa.table({k: pa.array(v, types.get(k, pa.int64())) for k, v in cols.items()})


def _ns(value) -> int | None:
    """An integer time exactly as stored (ns), or None where it is not a whole number in int64."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if -(2**63) <= value < 2**63 else None
    f = _finite(value)
    return int(f) if f is not None and f.is_integer() and abs(f) < 2**63 else None


def _finite(value) -> float | None:
    """A finite number, or None (missing, text, NaN or infinite)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _i(value) -> int | None:
    return None if value is None else int(value)


def _whole_numbers(values: list) -> pa.Array:
    """``[_i(v) for v in values]`` as int64: a column of integers (the exports' byte counts) as
    it is, anything else value by value."""
    if _only_ints(values):
        return pa.array(values, pa.int64())
    return pa.array([_i(v) for v in values], pa.int64())


def _decimal_texts(values: list) -> pa.Array:
    """``[None if v is None else str(v) for v in values]``: a column of integers (stream
    pointers) in decimal digits by one cast, anything else value by value."""
    if _only_ints(values):
        return pa.array(values, pa.int64()).cast(pa.string())
    return pa.array([None if v is None else str(v) for v in values], pa.string())


def _div(value, by: float) -> float | None:
    return None if value is None else float(value) / by
