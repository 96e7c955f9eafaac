"""``memory_samples`` and ``memory_blocks`` from CANN's ``NPU_OP_MEM`` table.

Why this table: an msprof DB has no framework allocator tables (``MEMORY_RECORD``,
``OP_MEMORY`` are torch_npu's), but CANN records every operator allocation and free in
``NPU_OP_MEM``: one row per event (``type`` = ``allocate`` / ``release`` in ``ENUM_MEMORY``) with
the block's address and size and the allocator's totals after it.  So

* every row is one ``memory_samples`` sample of its ``component`` (the DB's own name: ``APP``,
  ``PTA+GE`` ...): ``allocated_bytes`` = ``totalAllocate``, ``reserved_bytes`` = ``totalReserve``;
* an allocation and the next release of the same address (and device) are one ``memory_blocks``
  row; a release without its allocation was allocated before the capture (``alloc_ns`` null, size
  negative, as the schema says), an allocation never released outlives it (``release_ns`` null).

Bytes and ns already; one sort and one pass over the events, no query per row.
"""

from __future__ import annotations

import pyarrow as pa

from ...schema import conform
from ..ascend_db.reader import Db
from ..base import RankData

_COLS = {
    "name": ("operatorName",),
    "addr": ("addr",),
    "type": ("type",),
    "size": ("size",),
    "ts": ("timestampNs", "timestamp"),
    "allocated": ("totalAllocate", "totalAllocated"),
    "reserved": ("totalReserve", "totalReserved"),
    "component": ("component",),
    "device": ("deviceId",),
}


def load_op_memory(db: Db, data: RankData) -> None:
    """Add the ``NPU_OP_MEM`` samples and blocks to whatever ``memory_samples`` /
    ``memory_blocks`` already hold."""
    m = db.select("NPU_OP_MEM", _COLS)
    n = len(m["ts"])
    if not n:
        return
    enum = db.enum("ENUM_MEMORY")
    kinds = [enum.get(t) if t is not None else None for t in m["type"]]
    names, comps = db.text(m["name"]), db.text(m["component"])
    alloc = [_int(v) for v in m["allocated"]]
    reserved = [_int(v) for v in m["reserved"]]
    _append(
        data,
        "memory_samples",
        pa.table(
            {
                "device": pa.array(m["device"], pa.int32()),
                "component": pa.array(comps, pa.string()),
                "ts_ns": pa.array(m["ts"], pa.int64()),
                "allocated_bytes": pa.array(alloc, pa.int64()),
                "reserved_bytes": pa.array(reserved, pa.int64()),
            }
        ),
    )
    blocks: dict[str, list] = {
        k: []
        for k in (
            "device",
            "name",
            "component",
            "size_bytes",
            "alloc_ns",
            "release_ns",
            "alloc_total_allocated_bytes",
            "alloc_total_reserved_bytes",
            "release_total_allocated_bytes",
            "release_total_reserved_bytes",
            "addr",
        )
    }

    def block(a: int | None, r: int | None) -> None:
        i = a if a is not None else r
        size = _int(m["size"][i])
        blocks["device"].append(m["device"][i])
        blocks["name"].append(names[i])
        blocks["component"].append(comps[i])
        blocks["size_bytes"].append(size if a is not None or size is None else -size)
        blocks["addr"].append(None if m["addr"][i] is None else str(m["addr"][i]))
        for side, row in (("alloc", a), ("release", r)):
            blocks[f"{side}_ns"].append(None if row is None else m["ts"][row])
            blocks[f"{side}_total_allocated_bytes"].append(None if row is None else alloc[row])
            blocks[f"{side}_total_reserved_bytes"].append(None if row is None else reserved[row])

    open_: dict[tuple, int] = {}  # (device, addr) -> row of the allocation still live
    order = sorted(range(n), key=lambda i: (m["ts"][i] is None, m["ts"][i] or 0, i))
    for i in order:
        key = (m["device"][i], m["addr"][i])
        if kinds[i] == "allocate":
            if key in open_:  # allocated again without a release: the first one outlived the capture
                block(open_.pop(key), None)
            open_[key] = i
        elif kinds[i] == "release":
            block(open_.pop(key, None), i)
    for a in open_.values():
        block(a, None)
    if blocks["device"]:
        types = {"device": pa.int32(), "name": pa.string(), "component": pa.string(), "addr": pa.string()}
        table = pa.table({k: pa.array(v, types.get(k, pa.int64())) for k, v in blocks.items()})
        _append(data, "memory_blocks", table)


def _append(data: RankData, name: str, table: pa.Table) -> None:
    have = data.tables.get(name)
    table = conform(name, table)
    data.tables[name] = table if have is None or not have.num_rows else pa.concat_tables([conform(name, have), table])


def _int(value) -> int | None:
    return None if value is None else int(value)
