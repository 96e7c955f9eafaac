"""What goes over the wire: safe JSON (``<``, ``>``, ``&`` escaped, so a name such as
``<script>`` can never become markup even if a client mishandles the content type), timeline
answers as columnar JSON per track, and the same answers as Arrow IPC streams.

Times: epoch nanoseconds do not fit a JavaScript number (2^53), so timeline JSON carries
``origin_ns`` as a string and every time as nanoseconds relative to it (exact up to ~104 days).
Arrow answers keep absolute int64 nanoseconds (BigInt64Array in JavaScript) with ``origin_ns``
in the schema metadata.
"""

from __future__ import annotations

import decimal

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

ARROW_MIME = "application/vnd.apache.arrow.stream"


def _default(obj):
    if isinstance(obj, decimal.Decimal):
        return int(obj) if obj == obj.to_integral_value() else float(obj)
    if isinstance(obj, np.generic):
        return obj.item()
    return str(obj)


def dumps(data) -> bytes:
    """JSON bytes with HTML-significant characters escaped (valid JSON, same values)."""
    raw = orjson.dumps(data, default=_default, option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS)
    return raw.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")


def by_track(table: pa.Table, origin_ns: int, time_cols=("start_ns",), drop=()) -> dict[str, dict]:
    """Arrow rows sorted by track -> {track: {column: [values]}} with times relative to origin."""
    cols = {}
    for name in table.column_names:
        if name == "track" or name in drop:
            continue
        col = table.column(name)
        if name in time_cols:
            col = pc.subtract(col, pa.scalar(origin_ns, pa.int64()))
        cols[name] = col.to_pylist()
    tracks = table.column("track").to_pylist()
    out: dict[str, dict] = {}
    lo = 0
    for i in range(1, len(tracks) + 1):
        if i == len(tracks) or tracks[i] != tracks[lo]:
            out[tracks[lo]] = {k: v[lo:i] for k, v in cols.items()}
            lo = i
    return out


def arrow_stream(table: pa.Table, **meta) -> bytes:
    """``table`` as an Arrow IPC stream, ``meta`` in the schema metadata (as text)."""
    table = table.replace_schema_metadata({k: str(v) for k, v in meta.items()})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()
