"""A Kineto trace written as a bare JSON array (``[ev, ev, ...]``, no ``traceEvents`` object),
as some tools and the older TensorBoard-plugin samples save one.

Why a copy: the event passes read a plain array file with DuckDB; a gzip file is decompressed
into the import's temp folder once, streaming, through the shared Chrome-trace byte stream
(:func:`..chrome_trace.decompressed_chunks`), which also survives a damaged gzip stream.  An
array cut short (no closing ``]``) is closed after its last complete event, like the object
form.  Such a file has no top-level metadata: no ``baseTimeNanoseconds``, ``distributedInfo``
or ``deviceProperties`` (the rank is then unknown, times are Kineto's epoch microseconds).
"""

from __future__ import annotations

from pathlib import Path

from .. import chrome_trace

_TAIL = 1 << 20  # bytes kept from the end of the copy to find the array's end in
_WS = b" \t\r\n\x00"


def extract_array(path: Path, tmpdir: Path) -> chrome_trace.Extract:
    """Copy the array at ``path`` (plain or gzip) to ``tmpdir/events.json``, closed."""
    res = chrome_trace.Extract(events_path=tmpdir / "events.json")
    errors: list[str] = []
    tail = b""
    with open(res.events_path, "wb+") as out:
        for chunk in chrome_trace.decompressed_chunks(path, errors):
            res.total_bytes += len(chunk)
            out.write(chunk)
            tail = (tail + chunk)[-_TAIL:]
        end = tail.rstrip(_WS)
        if end.endswith(b"]"):
            res.kept_bytes = res.total_bytes
        else:  # cut short: keep every complete event, then close the array
            res.truncated = True
            start = res.total_bytes - len(tail)
            # the last whole event, as the object form finds it: also one the copy stopped right
            # after (its '}', or the ',' after it), whatever '}, {' its strings hold
            last = chrome_trace.last_event_end(tail, at_array_start=start == 0)
            keep = start + last + 1 if last is not None else _array_start(out)
            out.truncate(keep)
            out.seek(keep)
            out.write(b"]")
            res.kept_bytes = keep
    if errors:
        res.stream_error = errors[0]
        res.truncated = True
    return res


def _array_start(out) -> int:
    """Just after the opening ``[`` (an array cut before its first complete event)."""
    out.seek(0)
    head = out.read(4096)
    return head.find(b"[") + 1
