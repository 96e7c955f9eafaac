"""The one Chrome-trace JSON reader (Trace Event Format): every importer of a Chrome trace reads
through it -- the Ascend text export's ``trace_view.json``, Kineto traces, and the msprof
timeline files to come.

The format comes in two forms, and the reader serves each the way its size asks for:

- the bare event **array** (``[ev, ev, ...]``: trace_view.json, ``msprof_*.json``):
  :func:`read_trace_json` reads it into DuckDB in pieces cut at event boundaries, so raw events
  never all exist at once (:mod:`._array`);
- the **object** (``{"traceEvents": [...], ...}``: Kineto): :func:`extract` streams it once (gzip
  or plain), keeps the metadata around the array and copies the array to a file DuckDB reads in
  one pass (:mod:`._object`).

Both cut, recover and close a truncated file at the same event boundary (:data:`BOUNDARY`),
decompress through the same tolerant stream (:func:`decompressed_chunks`), and :func:`salvage`
keeps what parses of an array damaged in the middle.  :mod:`.damage` drops (and counts) the
single events no table can take -- an unusable ``ts``, no ``pid``, an unknown ``ph``, a negative
``dur`` -- and exact copies, so one bad event never costs its rank.  :func:`form` and :func:`head` are the
cheap looks an importer's ``recognise`` takes.
"""

from __future__ import annotations

from . import _damage as damage
from ._array import (
    ASCEND_EXTRA,
    CHUNK_BYTES,
    KINETO_COLUMNS,
    TRACE_COLUMNS,
    TraceRead,
    create_empty_trace,
    drop_ahead,
    drop_trace,
    out_of_memory,
    read_trace_json,
    scan_ahead,
)
from ._bytes import BOUNDARY, decompressed_chunks, form, head
from ._object import Extract, ReadError, extract, last_event_end
from ._salvage import salvage

__all__ = [
    "ASCEND_EXTRA",
    "BOUNDARY",
    "CHUNK_BYTES",
    "KINETO_COLUMNS",
    "TRACE_COLUMNS",
    "Extract",
    "ReadError",
    "TraceRead",
    "create_empty_trace",
    "damage",
    "decompressed_chunks",
    "drop_ahead",
    "drop_trace",
    "extract",
    "form",
    "head",
    "last_event_end",
    "out_of_memory",
    "read_trace_json",
    "salvage",
    "scan_ahead",
]
