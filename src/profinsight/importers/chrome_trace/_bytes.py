"""The bytes of a Chrome-trace JSON file, shared by both of its forms (the bare event array and
the ``{"traceEvents": [...]}`` object): decompressed streaming (gzip by its magic bytes, a cut
stream yielding everything before the damage), the first bytes for sniffing, which form a file
has, and the boundary between two events that every cut and every recovery is made at.
"""

from __future__ import annotations

import re
import zlib
from pathlib import Path

from .. import progress

CHUNK = 4 << 20  # compressed / plain bytes read per step

#: a ``}`` that closes one event, then the ``,`` and ``{`` of the next (the exports write ``}, {``
#: or ``},\n{``); it can also occur inside a string, which each user of it guards against
BOUNDARY = re.compile(rb"\}\s*,\s*\{")
#: a ``,`` and the ``{`` after it: where an event can start.  A ``}`` before the ``,`` makes it a
#: :data:`BOUNDARY`; without one (bare), the event before lost its end (bytes cut out of it from
#: inside its args on).  The ``,`` leads the pattern, so that a scan is as fast as one for a
#: literal: ``(\}\s*)?,\s*\{`` took 0.33-0.46 s per 8 MB here, this 0.014-0.020 s
SEPARATOR = re.compile(rb",\s*\{")
SPACE = frozenset(b" \t\n\r\x0b\x0c")  # what \s matches in a bytes pattern


def separators(data, begin: int = 0, stop: int | None = None):
    """``(end, start, bare)`` for every :data:`SEPARATOR` in ``data`` whose ``,`` lies in
    [``begin``, ``stop``): ``start`` is the ``{``; ``end`` is just after the ``}`` before the
    ``,`` (only white space between), or, ``bare``, where no ``}`` comes first, the ``,``."""
    for m in SEPARATOR.finditer(data, begin):
        if stop is not None and m.start() >= stop:
            return
        j = m.start() - 1
        while j >= 0 and data[j] in SPACE:
            j -= 1
        if j >= 0 and data[j] == 0x7D:  # '}'
            yield j + 1, m.end() - 1, False
        else:
            yield m.start(), m.end() - 1, True


_LEAD = b" \t\r\n\xef\xbb\xbf"


def decompressed_chunks(path: Path, stream_errors: list):
    """Decompressed byte chunks of ``path``; a damaged gzip stream ends the iteration and
    records why in ``stream_errors``."""
    with open(path, "rb") as f:
        if f.read(2) != b"\x1f\x8b":
            f.seek(0)
            while b := f.read(CHUNK):
                yield b
                progress.read(path, f.tell())  # counted once the reader has used them
            return
        f.seek(0)
        d, fed, members = zlib.decompressobj(wbits=47), False, 0
        while b := f.read(CHUNK // 4):
            read = f.tell()
            while b:
                try:
                    out = d.decompress(b)
                except zlib.error as exc:
                    if not (members and not fed):  # garbage after a complete member is ignored
                        stream_errors.append(f"the gzip data is damaged ({exc})")
                    return
                fed = True
                if out:
                    yield out
                b = b""
                if d.eof:  # concatenated gzip members
                    b, members = d.unused_data, members + 1
                    d, fed = zlib.decompressobj(wbits=47), False
            # counted once the reader has used what they held: a file counted whole is one whose
            # reading is over (the progress line then says what comes next, not "99%")
            progress.read(path, read)
        if fed and not d.eof:
            if tail := d.flush():
                yield tail
            stream_errors.append("the gzip stream ends before its end marker (the file was cut short)")


def head(path: Path, limit: int) -> bytes:
    """The first ``limit`` decompressed bytes, inflating only as much as needed."""
    try:
        with open(path, "rb") as f:
            raw = f.read(limit)
            if raw[:2] != b"\x1f\x8b":
                return raw
            f.seek(0)
            d, out = zlib.decompressobj(wbits=47), b""
            while len(out) < limit and (piece := f.read(16 << 10)):
                out += d.decompress(piece, limit - len(out))
            return out
    except (OSError, zlib.error):
        return b""


def form(path: Path, limit: int = 4096) -> str | None:
    """``"array"`` (a bare event array, e.g. torch_npu's trace_view.json), ``"object"`` (e.g. a
    Kineto trace) or None, from the first non-blank byte of the (decompressed) file."""
    lead = head(Path(path), limit).lstrip(_LEAD)[:1]
    return {b"[": "array", b"{": "object"}.get(lead)
