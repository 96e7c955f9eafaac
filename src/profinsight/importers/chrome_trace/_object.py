"""Cut a Chrome trace in the JSON *object* form (Kineto) into its top-level metadata and its bare event array, streaming.

Why: a Kineto file is *one* JSON object ``{"schemaVersion": .., "traceEvents": [...], ...}``.
Parsed whole (``orjson.loads`` or DuckDB's unstructured reader) a 1 GB trace costs 7-9x its
size in memory.  DuckDB reads a bare top-level *array* of objects streaming, at a fraction of
that cost, but only from a file that holds nothing else.  So this module streams the
(decompressed) bytes once, keeps the small object around the array (parsed with orjson), and
copies the array itself to a temporary file:

* the prefix ``{ .. "traceEvents": [`` is found by trying each ``"traceEvents"`` match until
  the text before it parses as the start of an object;
* the last ``HOLD`` bytes are held back; at the end the array's closing ``]`` is the earliest
  ``} ]`` whose remainder parses as the end of the object (later candidates lie inside arrays
  of the trailing metadata, earlier ones inside events never leave a valid remainder);
* when no such ``]`` exists the file was cut short: the array is closed after the last complete
  event (``} , {``) and :class:`Extract` says how much was dropped.

Gzip is detected by its magic bytes and decompressed with ``zlib`` so that a truncated stream
still yields everything before the damage.

A plain (uncompressed) file need not be copied at all (``in_place``): its array is read where it
lies, by byte range.  The prefix is found in the first chunks as above, and the end in the very
window of the file's last bytes that the streaming copy would hold back (computed from the chunk
sizes, not read), so both give the same metadata and the same array; only a file cut short (no
closing ``]`` in that window) is copied, to be closed after its last complete event.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ._array import copy_range
from ._bytes import BOUNDARY, CHUNK, SEPARATOR, SPACE, decompressed_chunks

HOLD = 16 << 20  # bytes held back to find the array end in
PREFIX_LIMIT = 256 << 20  # give up looking for "traceEvents" after this much text

_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')
#: a ``]`` right after ``}``, ``[`` or white space: where the array may close (the end of the last
#: event, or an empty array), confirmed by :func:`_closes`.  A pattern that starts with the
#: literal ``]`` lets the scanner skip to each one (``[}\[]\s*\]`` tried every ``}`` of the
#: events: 0.07 s against 0.02 s over a 24 MB tail)
_CLOSE = re.compile(rb"\](?<=[}\[\s]\])")
#: the same without ``[]``: where the array itself may close, an empty array only where the text
#: begins with it (:data:`_EMPTY_AT_START`).  Kineto's ``"Input Dims": [[], [1]]`` put 25 k empty
#: lists in a 100 MB trace's tail, each a candidate turned down in Python (0.067 against 0.017 s)
_CLOSE_ARRAY = re.compile(rb"\](?<=[}\s]\])")
_EMPTY_AT_START = re.compile(rb"\[\s*\]")
_OBJ_END = re.compile(rb"\s*\}[\s\x00]*")
_NEXT_KEY = re.compile(rb'\s*,\s*"')
_WS = b" \t\r\n"
_PROBE = b'{"_":0'  # written before a candidate remainder to parse it as an object
#: how many of a cut tail's last boundaries are tried as the start of a final whole event
_FINAL_TRIES = 16


class ReadError(Exception):
    """Nothing readable: not JSON, not an object, no ``traceEvents``."""


@dataclass
class Extract:
    """What :func:`extract` found.  ``events_path`` holds ``[ev, ev, ...]``; with ``span`` it
    is the trace itself, whose bytes ``[span[0], span[1])`` are that array (``[`` to ``]``)."""

    meta: dict = field(default_factory=dict)
    events_path: Path | None = None
    span: tuple[int, int] | None = None
    total_bytes: int = 0  # decompressed bytes read from the file
    kept_bytes: int = 0  # bytes of the file up to the last complete event
    truncated: bool = False  # the JSON text ends before the object closes
    stream_error: str | None = None  # the gzip stream itself was damaged
    suffix_missing: bool = False  # metadata after the array (if any) was lost
    array_closed: bool = False  # the text ends after the array's ``]``, in the keys after it

    @property
    def lost_bytes(self) -> int:
        return max(self.total_bytes - self.kept_bytes, 0)

    def materialise(self, tmpdir: Path) -> Path:
        """The array as a file of its own (``tmpdir/events.json``, copied from the trace when it
        was read in place): what a reader of whole files (``salvage``) needs."""
        if self.span is not None:
            out_path = Path(tmpdir) / "events.json"
            with open(self.events_path, "rb") as src, open(out_path, "wb") as out:
                copy_range(src, out, self.span[0], self.span[1] - self.span[0])
            self.events_path, self.span = out_path, None
        return self.events_path

    def release(self) -> None:
        """Delete the copy of the array (never the trace itself)."""
        if self.span is None and self.events_path is not None:
            self.events_path.unlink(missing_ok=True)


def extract(path: Path, tmpdir: Path, in_place: bool = False) -> Extract:
    """Stream ``path`` once; write the event array to ``tmpdir/events.json`` -- or, with
    ``in_place`` and a plain complete file, only locate it there (:attr:`Extract.span`)."""
    if in_place:
        found = _locate(path)
        if found is not None:
            return found
    res = Extract()
    errors: list[str] = []
    chunks = decompressed_chunks(path, errors)
    buf = bytearray()
    start = None
    search_from = 0
    for chunk in chunks:
        res.total_bytes += len(chunk)
        buf += chunk
        start, meta = _find_prefix(buf, search_from)
        if start is not None:
            res.meta = meta
            break
        search_from = max(0, len(buf) - 64)
        if len(buf) > PREFIX_LIMIT:
            break
    if start is None:
        _no_prefix(buf, errors)
    out_path = tmpdir / "events.json"
    res.events_path = out_path
    written = 0
    with open(out_path, "wb") as out:
        pending = bytearray(buf[start:])  # starts with "["
        del buf
        for chunk in chunks:
            res.total_bytes += len(chunk)
            pending += chunk
            if len(pending) > 2 * HOLD:
                cut = len(pending) - HOLD
                with memoryview(pending) as view, view[:cut] as head:  # no 16 MB+ copy
                    out.write(head)
                written += cut
                del pending[:cut]
        prefix_len = res.total_bytes - written - len(pending)
        end, suffix = _find_end(pending, at_array_start=(written == 0))
        if end is not None:
            out.write(pending[: end + 1])
            res.meta.update(suffix)
            res.kept_bytes = res.total_bytes
        else:
            res.truncated = True
            res.suffix_missing = True
            last = last_event_end(pending, at_array_start=(written == 0))
            if last is None:  # no complete event in the held tail
                out.write(b"[]" if written == 0 else b"]")
                res.kept_bytes = prefix_len + written + (1 if written == 0 else 0)
            else:
                out.write(pending[: last + 1])
                out.write(b"]")
                res.kept_bytes = prefix_len + written + last + 1
                res.array_closed = bytes(pending[last + 1 : last + 4097]).lstrip(_WS).startswith(b"]")
    if errors:
        res.stream_error = errors[0]
        res.truncated = True
        res.suffix_missing = True
    return res


def _locate(path: Path) -> Extract | None:
    """The :class:`Extract` of a plain file whose array closes, found without copying it; None
    for a gzip file or one cut short (those are copied).

    The tail that :func:`extract`'s streaming copy would hold back is searched where it lies, in
    a private (copy-on-write) mapping of the file: reading its 16-32 MB and copying them again
    for the probes took 40 ms of a 100 MB Kineto trace's import, holding the interpreter lock
    while DuckDB's module loaded on another thread; mapped, 22 ms.  The probes' writes touch a
    page or two of the mapping, never the file.  Where the file cannot be mapped, the tail is
    read as before."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        if f.read(2) == b"\x1f\x8b":
            return None
        f.seek(0)
        buf, start, meta, search_from = bytearray(), None, None, 0
        while start is None and len(buf) <= PREFIX_LIMIT and (chunk := f.read(CHUNK)):
            buf += chunk
            start, meta = _find_prefix(buf, search_from)
            search_from = max(0, len(buf) - 64)
        if start is None:
            return None  # the streaming copy says why
        written = _held_back_from(len(buf) - start, size - len(buf))
        found = _find_end_mapped(f, size, start + written, at_array_start=(written == 0))
        if found is None:
            f.seek(start + written)
            found = _find_end(f.read(), at_array_start=(written == 0))
    end, suffix = found
    if end is None:
        return None
    meta.update(suffix)
    return Extract(meta, path, (start, start + written + end + 1), total_bytes=size, kept_bytes=size)


def _find_end_mapped(f, size: int, tail_at: int, at_array_start: bool):
    """:func:`_find_end` of the file's bytes from ``tail_at`` on, searched in a private mapping
    of them (with the bytes before them the probe is written over); None where the file cannot
    be mapped."""
    import mmap

    # the mapping starts at a multiple of the allocation granularity, at least a probe's length
    # before the tail: the array's "[" comes after '"traceEvents":', so there is room
    offset = max(0, tail_at - len(_PROBE)) // mmap.ALLOCATIONGRANULARITY * mmap.ALLOCATIONGRANULARITY
    if tail_at - offset < len(_PROBE):
        return None
    try:
        mapped = mmap.mmap(f.fileno(), size - offset, offset=offset, access=mmap.ACCESS_COPY)
    except (OSError, ValueError):
        return None
    with mapped:  # _find_end_in releases its views of the mapping before it returns
        return _find_end_in(mapped, tail_at - offset, at_array_start)


def _held_back_from(pending: int, rest: int) -> int:
    """Bytes of the array (after its first ``pending``) that :func:`extract`'s streaming copy
    writes out before the tail it holds back, given ``rest`` more bytes of the file read in
    :data:`CHUNK` steps: where that tail starts."""
    written = 0
    while rest > 0:
        step = min(CHUNK, rest)
        rest -= step
        pending += step
        if pending > 2 * HOLD:
            written += pending - HOLD
            pending = HOLD
    return written


def _find_prefix(buf: bytearray, search_from: int):
    """(index of the ``[`` that opens traceEvents, metadata before it) or (None, None)."""
    head = bytes(buf[:64]).lstrip(_WS + b"\xef\xbb\xbf")
    if head and not head.startswith(b"{"):
        raise ReadError(
            "the file is not a JSON object (a torch_npu trace_view.json or another Chrome trace is a bare array)"
        )
    for m in _KEY.finditer(buf, search_from):
        before = bytes(buf[: m.start()]).rstrip(_WS)
        if before.endswith(b","):
            before = before[:-1]
        try:
            meta = orjson.loads(before.lstrip(_WS + b"\xef\xbb\xbf") + b"}")
        except orjson.JSONDecodeError:
            continue
        if isinstance(meta, dict):
            return m.end() - 1, meta
    return None, None


def _no_prefix(buf: bytearray, errors: list[str]):
    text = bytes(buf)
    try:
        obj = orjson.loads(text)
    except orjson.JSONDecodeError:
        why = errors[0] if errors else "it is not valid JSON or ends before the event list starts"
        raise ReadError(f'no readable "traceEvents" list: {why}') from None
    if isinstance(obj, dict):
        raise ReadError('the JSON object has no "traceEvents" key')
    raise ReadError('the file is not a JSON object with "traceEvents"')


def _find_end(tail: bytearray, at_array_start: bool):
    """Index of the ``]`` that closes the event array in ``tail``, and the metadata after it
    (:func:`_find_end_in` over one working copy of the tail, with room for the probe before it)."""
    return _find_end_in(bytearray(len(_PROBE)) + tail, len(_PROBE), at_array_start)


def _find_end_in(work, lo: int, at_array_start: bool):
    """Index (from ``lo``) of the ``]`` that closes the event array in the tail ``work[lo:]``,
    and the metadata after it; ``work`` is writable (a bytearray, or a private mapping of the
    file) and holds at least a probe's length of bytes before ``lo``.

    Each candidate's remainder is parsed in place (``{"_":0`` written over the bytes just
    before it, then put back), so a candidate costs what orjson reads before failing, not a
    copy of the tail.  The search sees the tail alone, as if it began the text: a ``]`` at its
    very start has nothing before it, as in the streaming copy's held-back tail."""
    stop = _without_trailing_nul(work)
    view = memoryview(work)
    tail = view[lo:]
    try:
        # positions, not matches: a match holds the view, which is released before the mapping closes
        empty = [m.end() - 1 for m in [_EMPTY_AT_START.match(tail)] if m] if at_array_start else []
        for close in empty + [m.start() for m in _CLOSE_ARRAY.finditer(tail)]:
            before = _closes(tail, close)
            if before is None or (tail[before] == ord("[") and not (at_array_start and before == 0)):
                continue
            # cheap necessary conditions first: the object ends here, or a key follows
            if not (_OBJ_END.fullmatch(tail, close + 1) or _NEXT_KEY.match(tail, close + 1)):
                continue
            at = lo + close + 1 - len(_PROBE)  # the probe ends where the remainder begins
            saved = bytes(work[at : at + len(_PROBE)])
            work[at : at + len(_PROBE)] = _PROBE
            try:
                obj = orjson.loads(view[at:stop])
            except orjson.JSONDecodeError:
                continue
            finally:
                work[at : at + len(_PROBE)] = saved
            obj.pop("_", None)
            return close, obj
        return None, {}
    finally:
        tail.release()
        view.release()


def _without_trailing_nul(buf: bytearray, step: int = 1 << 16) -> int:
    """Length of ``buf`` without its trailing NUL bytes (the padding of a file preallocated and
    cut short), found from the end a slice at a time: ``buf.rstrip`` copies the whole buffer,
    16-32 MB here, to drop what is nearly always nothing."""
    stop = len(buf)
    while stop and buf[stop - 1] == 0:
        piece = bytes(buf[max(0, stop - step) : stop]).rstrip(b"\x00")
        stop = stop - min(step, stop) + len(piece)
        if piece:
            break
    return stop


def _closes(tail: bytearray, close: int) -> int | None:
    """Where the ``}`` or ``[`` before the ``]`` at ``close`` is (only white space between), or
    None when another character comes first."""
    i = close - 1
    while i >= 0 and tail[i] in SPACE:
        i -= 1
    return i if i >= 0 and tail[i] in b"}[" else None


def last_event_end(tail: bytes | bytearray, at_array_start: bool = False):
    """Index of the ``}`` ending the last complete event in a cut-short tail, or None.  The last
    event a boundary follows, or the one after it when the copy stopped right after that event
    (its ``}``, or the ``,`` after it): it is whole, only the rest of the file is missing.  The
    last few separators are tried for that, from the last back (``}, {`` inside the final
    event's strings is none); a bare ``, {`` among them, where the event before lost its end.
    Where the array closed and the copy stopped in the keys after it, the last event is the one
    before the ``]``.  ``at_array_start``: ``tail`` begins with the array's ``[`` (its first
    event needs no boundary before it)."""
    ends = [m.start() for m in BOUNDARY.finditer(tail)]
    # the '{' each separator ends with: after a '}', or bare where the event before lost its end
    seps = [m.end() - 1 for m in SEPARATOR.finditer(tail)]
    starts = seps[-_FINAL_TRIES:]
    if at_array_start and len(seps) < _FINAL_TRIES:
        starts.insert(0, len(tail) - len(tail.lstrip(b" \t\r\n[").lstrip(b" \t\r\n")))
    rest = bytes(tail).rstrip(b" \t\r\n\x00")
    rest = rest[:-1].rstrip(b" \t\r\n") if rest.endswith(b",") else rest
    last = [len(rest) - 1] if rest.endswith(b"}") else []
    # or the array closed and the cut came in the keys after it ('], "baseTimeNanoseconds": 1'):
    # the last event ends at the '}' before that ']'
    for m in _CLOSE.finditer(rest, starts[-1] if starts else 0):
        before = _closes(rest, m.start())
        after = rest[m.start() + 1 :]
        if before is not None and rest[before] == ord("}") and (not after.strip() or _NEXT_KEY.match(after)):
            last.append(before)
    for end in last:
        for nxt in reversed(starts):
            try:
                event = orjson.loads(rest[nxt : end + 1])
            except orjson.JSONDecodeError:
                continue
            # an event, not an object nested in one ('[{"x": 1}, {"y": 2}], "s": ...' in its args)
            if isinstance(event, dict) and "ph" in event:
                return end
    return ends[-1] if ends else None
