"""The event array read by the compiled scanner (``_scan.c``) into an Arrow table.

Why: DuckDB's JSON reader spends most of a Kineto import's parse on the event-level columns
(0.66-0.73 s of CPU for a 100 MB trace); the scanner walks the same bytes in about a third of
that, on several threads, and hands the columns to DuckDB as Arrow, which the same SQL then
reads in place of the JSON pieces -- 128 MB of the file at a time (:func:`batches`), so a large
trace is never all in memory as columns.  It gives each value as DuckDB's reader would (the
rules are in ``_scan.c``), and it gives up (:class:`GaveUp`) on anything it cannot give the same
way, on damage of any kind and where the library was not built: the caller reads the rest of
the file with DuckDB, so the scanner only ever changes how fast a file is read, never what is
read.

It also reads what DuckDB's reader cannot give as a column: the key/value pairs of an object
(:func:`entries`), so that a caller's SQL need not parse that object's JSON again -- the Ascend
export's counter events, whose args the import would otherwise convert to a MAP. Where DuckDB's
reader reads the events such a column is NULL, and the caller converts the JSON itself.

``PROFINSIGHT_NATIVE=0`` turns it off (the DuckDB reader alone, to compare the two).
"""

from __future__ import annotations

import ctypes
import mmap
import os
import re
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ._native_build import HERE, LIB_NAME, source_hash

if TYPE_CHECKING:  # loaded where the columns become Arrow: reading ahead (scan_ahead) needs neither
    import numpy as np
    import pyarrow as pa

MAX_COLS = 16
#: the kinds of column the scanner reads, by the DuckDB type the reader gives them
KINDS = {"VARCHAR": 0, "DECIMAL(38,3)": 1, "JSON": 2}
_DECIMAL = KINDS["DECIMAL(38,3)"]
_ENTRIES, _ENTRY_VALUES = 3, 4
#: the SQL type of an entries column (:func:`entries`), as ``map_entries`` of a MAP gives it
ENTRIES_TYPE = "STRUCT(key VARCHAR, value VARCHAR)[]"
_ENTRIES_SPEC = re.compile(r"ENTRIES\((?P<key>[^=()]+)\)(?: WHEN (?P<col>[^=()]+)=(?P<val>[^=()]+))?")

ENV = "PROFINSIGHT_NATIVE"
#: below this an array is read as one part: a thread costs more than it saves
PART_MIN_BYTES = 8 << 20
#: bytes of the file per table :func:`batches` yields (the DuckDB reader's batch: 16 pieces of 8 MB)
BATCH_BYTES = 128 << 20


class _Out(ctypes.Structure):
    _fields_ = [
        ("ncols", ctypes.c_int32),
        ("kinds", ctypes.c_int32 * MAX_COLS),
        ("keys", ctypes.c_char_p * MAX_COLS),
        ("key_lens", ctypes.c_int64 * MAX_COLS),
        ("rows", ctypes.c_int64),
        ("bytes", ctypes.c_int64 * MAX_COLS),
        ("offsets", ctypes.c_void_p * MAX_COLS),
        ("data", ctypes.c_void_p * MAX_COLS),
        ("values", ctypes.c_void_p * MAX_COLS),
        ("valid", ctypes.c_void_p * MAX_COLS),
        ("stopped_at", ctypes.c_int64),
        ("cap_rows", ctypes.c_int64),
        ("cap_bytes", ctypes.c_int64 * MAX_COLS),
        ("when_col", ctypes.c_int32 * MAX_COLS),
        ("when_val", ctypes.c_char_p * MAX_COLS),
        ("when_len", ctypes.c_int64 * MAX_COLS),
        ("entries", ctypes.c_int64 * MAX_COLS),
        ("cap_entries", ctypes.c_int64 * MAX_COLS),
    ]


@lru_cache(maxsize=1)
def _lib():
    """The scanner library, or None where it was not built, does not load, or was built from
    another version of ``_scan.c`` (a checkout whose source changed since: its rules may differ)."""
    path = HERE / LIB_NAME
    if not path.is_file():
        return None
    try:
        lib = ctypes.CDLL(str(path))  # CDLL: its calls release the GIL
        lib.pi_scan.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.POINTER(_Out), ctypes.c_int, ctypes.c_int]
        lib.pi_scan.restype = ctypes.c_int64
        lib.pi_free.argtypes = [ctypes.POINTER(_Out)]
        lib.pi_free.restype = None
        lib.pi_next_event.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]
        lib.pi_next_event.restype = ctypes.c_int64
        lib.pi_out_size.restype = ctypes.c_int64
        lib.pi_source_hash.restype = ctypes.c_char_p
        if lib.pi_out_size() != ctypes.sizeof(_Out) or stale(lib):  # another layout, another source
            return None
        return lib
    except (OSError, AttributeError):
        return None


def stale(lib) -> bool:
    """Whether the loaded library ``lib`` was built from another ``_scan.c`` than the one beside
    it (the hash compiled into it, :func:`._native_build.source_hash`)."""
    try:
        return lib.pi_source_hash().decode() != source_hash()
    except (OSError, AttributeError, UnicodeDecodeError):
        return True


def available() -> bool:
    """Whether the scanner is built and loads (whatever ``PROFINSIGHT_NATIVE`` says)."""
    return _lib() is not None


def enabled() -> bool:
    return os.environ.get(ENV, "1") != "0" and available()


def entries(key: str, when: tuple[str, str] | None = None) -> str:
    """The type to give a column of the key/value pairs of the object at ``key`` -- as
    ``map_entries(json_transform(<it>, '"MAP(VARCHAR, VARCHAR)"'))`` gives them -- read only
    for events whose text column ``when[0]`` says ``when[1]`` (say, ``("ph", "C")``: the counter
    events).  Where the conversion would give anything else (a nested value, a number it writes
    another way, a key written twice) the column is NULL for that event, as it is for every event
    DuckDB's reader reads: the caller converts those objects itself.  Only the scanner reads such
    a column (see :func:`..read_trace_json`'s ``extra``)."""
    spec = f"ENTRIES({key})"
    return spec + (f" WHEN {when[0]}={when[1]}" if when else "")


def sql_type(kind: str) -> str:
    """The DuckDB type of a scanner column of type ``kind``."""
    return ENTRIES_TYPE if _ENTRIES_SPEC.fullmatch(kind) else kind


def supports(columns: dict[str, str]) -> bool:
    """Whether the scanner reads columns of these types (at most 16 slots: an entries column takes
    two), every entries column's ``WHEN`` naming a text column of them."""
    try:
        return 0 < len(_slots(columns)) <= MAX_COLS
    except ValueError:
        return False


class _Slot(NamedTuple):
    key: str
    kind: int
    when: tuple[int, str] | None = None  # entries: (slot of the text column, the value)


def _slots(columns: dict[str, str]) -> list[_Slot]:
    """The scanner's column slots for ``columns``; ValueError where it cannot read them."""
    slots, at = [], {}
    for name, t in columns.items():
        if t in KINDS:
            at[name] = len(slots)
            slots.append(_Slot(name, KINDS[t]))
            continue
        m = _ENTRIES_SPEC.fullmatch(t)
        if not m:
            raise ValueError(f"no scanner column of type {t}")
        slots.append(_Slot(m["key"], _ENTRIES, (m["col"], m["val"]) if m["col"] else None))
        slots.append(_Slot(m["key"], _ENTRY_VALUES))
    out = []
    for s in slots:
        if s.kind == _ENTRIES and s.when is not None:
            col = at.get(s.when[0])
            if col is None or slots[col].kind != KINDS["VARCHAR"]:
                raise ValueError(f"WHEN names no text column: {s.when[0]}")
            s = s._replace(when=(col, s.when[1]))
        out.append(s)
    return out


class GaveUp(Exception):
    """The scanner cannot read this array as DuckDB's reader would (or not at all); ``at``: the
    file offset of the event where the table it could not give starts (None: before any)."""

    def __init__(self, why: str, at: int | None = None):
        super().__init__(why)
        self.at = at


def read_array(
    path: Path, columns: dict[str, str], span: tuple[int, int] | None = None, threads: int = 1
) -> pa.Table | None:
    """The events of the array at ``path`` (the bytes ``span`` of it, ``[`` to ``]``, when given)
    as one Arrow table of ``columns`` (key -> DuckDB type), in file order, read in ``threads``
    parts at once; None where the scanner is off, not built, or gives up on the file (see the
    module docstring)."""
    try:
        read = list(batches(path, columns, span, threads, batch_bytes=None))
    except GaveUp:
        return None
    return read[0].table if read else None


class Batch(NamedTuple):
    """A table of events, and the file offset where the bytes it was read from end."""

    table: pa.Table
    end: int


def batches(
    path: Path,
    columns: dict[str, str],
    span: tuple[int, int] | None = None,
    threads: int = 1,
    batch_bytes: int | None = BATCH_BYTES,
) -> Iterator[Batch]:
    """The events of the array, as :func:`read_array` reads them, in tables of about
    ``batch_bytes`` of the file each (None: one table), so that a large trace is never all in
    memory as columns at once: the caller takes each before the next is read, and the file's
    pages read so far are given back.  Raises :class:`GaveUp` where :func:`read_array` gives
    None, with the offset where the table it could not give starts (:attr:`GaveUp.at`): a
    caller that took the tables before it reads on from there."""
    if not enabled() or not supports(columns):
        raise GaveUp("the scanner is off or not built")
    lib = _lib()
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        lo, hi = span if span is not None else (0, size)
        if size == 0 or not 0 <= lo < hi <= size:
            raise GaveUp("no array there")
        ahead = _take_ahead(f, columns, lo)
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            import numpy as np

            buf = np.frombuffer(mm, dtype=np.uint8)
            try:
                base, start = buf.ctypes.data, lo
                while True:
                    end = hi
                    if batch_bytes and hi - start > batch_bytes * 3 // 2:
                        at = lib.pi_next_event(base, hi, start + batch_bytes)
                        end = at if at > start else hi
                    early = None
                    if ahead is not None:  # the first batch: its first events may be read already
                        if lo < ahead[0] <= end:
                            early = (ahead[0] - lo, ahead[1])
                        else:
                            ahead[1].free()
                        ahead = None
                    try:
                        table = _read(
                            lib,
                            base + start,
                            end - start,
                            columns,
                            max(1, int(threads)),
                            start == lo,
                            end == hi,
                            early,
                        )
                    except (OSError, ValueError, MemoryError) as exc:
                        raise GaveUp(str(exc), None if start == lo else start) from None
                    if table is None:
                        raise GaveUp(
                            f"the scanner gave up between bytes {start:,} and {end:,}", None if start == lo else start
                        )
                    yield Batch(table, end)
                    del table  # taken: gone before the next is read
                    if end == hi:
                        return
                    _forget(mm, lo, end)
                    start = end
            finally:
                del buf  # the mmap closes only once no array points into it


def _forget(mm: mmap.mmap, lo: int, hi: int) -> None:
    """Give back the file's pages in [lo, hi) that were read (they count in the process's RSS)."""
    page = mmap.PAGESIZE
    a, b = lo // page * page, hi // page * page
    if b > a and hasattr(mm, "madvise") and hasattr(mmap, "MADV_DONTNEED"):
        try:
            mm.madvise(mmap.MADV_DONTNEED, a, b - a)
        except OSError:
            pass


def _read(
    lib,
    addr: int,
    length: int,
    columns: dict[str, str],
    threads: int,
    first: bool,
    last: bool,
    early: tuple[int, _Part] | None = None,
):
    """The table of bytes [addr, addr + length) in ``threads`` parts (``first``: they start at the
    array's ``[``; ``last``: they end at its ``]``), or None.  ``early``: (n, part) where the
    first ``n`` bytes were read already into ``part`` (:func:`scan_ahead`); the rest is one part."""
    if early is not None:
        at, done = early
        parts, rows = [done], [done.rows]
        if at < length:  # the bytes after it, one part
            parts.append(_Part(lib, columns))
            rows.append(parts[1].scan(addr + at, length - at, first=False, last=last))
        return _table(lib, addr, length, columns, first, last, parts, rows)
    cuts = _cuts(lib, addr, length, threads)
    parts = [_Part(lib, columns) for _ in range(len(cuts) - 1)]

    def scan(i: int) -> int:
        a, b = cuts[i], cuts[i + 1]
        return parts[i].scan(addr + a, b - a, first=first and i == 0, last=last and i == len(parts) - 1)

    if len(parts) == 1:
        rows = [scan(0)]
    else:
        with ThreadPoolExecutor(len(parts)) as pool:
            rows = list(pool.map(scan, range(len(parts))))
    return _table(lib, addr, length, columns, first, last, parts, rows)


def _table(lib, addr: int, length: int, columns: dict[str, str], first: bool, last: bool, parts: list, rows: list):
    """The table of the scanned ``parts`` (``rows`` events each, negative where one gave up)."""
    import pyarrow as pa

    if any(r < 0 for r in rows) and len(parts) > 1:
        # a cut inside an event, or damage: read once more as one part, which tells them apart
        for p in parts:
            p.free()
        parts = [_Part(lib, columns)]
        rows = [parts[0].scan(addr, length, first=first, last=last)]
    if any(r < 0 for r in rows):
        for p in parts:
            p.free()
        return None
    # each part's memory goes when the last Arrow buffer over it does
    return pa.table([pa.chunked_array([p.column(i) for p in parts]) for i in range(len(columns))], names=list(columns))


def _cuts(lib, addr: int, length: int, threads: int) -> list[int]:
    """Where the parts start (the first at the array, the others at an event) and the end."""
    cuts = [0]
    if threads > 1 and length >= PART_MIN_BYTES:
        for k in range(1, threads):
            at = lib.pi_next_event(addr, length, length * k // threads)
            if at > cuts[-1]:
                cuts.append(at)
    cuts.append(length)
    return cuts


def _flags(address: int, n: int) -> np.ndarray:
    """The ``n`` validity bytes the scanner wrote at ``address``, as booleans (no copy)."""
    import numpy as np

    if n == 0:
        return np.zeros(0, bool)
    return np.ctypeslib.as_array(ctypes.cast(address, ctypes.POINTER(ctypes.c_uint8)), (n,)).view(bool)


def _mask(valid: np.ndarray) -> tuple:
    """An Arrow validity bitmap for ``valid`` (None where nothing is null) and the null count."""
    import numpy as np
    import pyarrow as pa

    nulls = len(valid) - int(np.count_nonzero(valid))
    return (pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None), nulls


class _Part:
    """One part's columns: read by the C scanner into memory it allocated, handed to Arrow as
    foreign buffers that keep this object -- and so that memory -- alive while any of them is."""

    def __init__(self, lib, columns: dict[str, str]):
        self.lib, self.out, self.freed = lib, _Out(), False
        slots = _slots(columns)
        self.kinds = [s.kind for s in slots]
        self.keys = [s.key.encode() for s in slots]  # kept: the struct points into them
        self.whens = [s.when[1].encode() if s.when else b"" for s in slots]  # kept, likewise
        #: the first slot of each column, in the order of ``columns``
        self.firsts = [i for i, s in enumerate(slots) if s.kind != _ENTRY_VALUES]
        self.out.ncols = len(slots)
        for i, (k, s) in enumerate(zip(self.keys, slots)):
            self.out.kinds[i], self.out.keys[i], self.out.key_lens[i] = s.kind, k, len(k)
            self.out.when_col[i] = s.when[0] if s.when else -1
            self.out.when_val[i], self.out.when_len[i] = self.whens[i], len(self.whens[i])
        self.rows = 0

    def scan(self, addr: int, length: int, first: bool, last: bool) -> int:
        self.rows = self.lib.pi_scan(addr, length, ctypes.byref(self.out), int(first), int(last))
        return self.rows

    def column(self, j: int) -> pa.Array:
        """The ``j``-th column of ``columns`` (an entries column is the slot pair it starts)."""
        import numpy as np
        import pyarrow as pa

        o, n, i = self.out, self.rows, self.firsts[j]
        valid = _flags(o.valid[i], n)
        if self.kinds[i] == _ENTRIES:
            return self._entries(i, n, valid)
        if self.kinds[i] == _DECIMAL:
            bitmap, nulls = _mask(valid)
            v = np.ctypeslib.as_array(ctypes.cast(o.values[i], ctypes.POINTER(ctypes.c_int64)), (n,))
            wide = np.empty((n, 2), np.int64)  # 128-bit little-endian: the value, then its sign
            wide[:, 0] = v
            wide[:, 1] = v >> 63
            return pa.Array.from_buffers(pa.decimal128(38, 3), n, [bitmap, pa.py_buffer(wide)], null_count=nulls)
        return self._strings(i, n, valid)

    def _strings(self, slot: int, n: int, valid: np.ndarray) -> pa.Array:
        """The ``n`` strings of ``slot`` (its offsets and bytes), null where ``valid`` is False."""
        import pyarrow as pa

        o = self.out
        bitmap, nulls = _mask(valid)
        offsets = pa.foreign_buffer(o.offsets[slot], (n + 1) * 8, base=self)
        data = pa.foreign_buffer(o.data[slot], o.bytes[slot], base=self) if o.bytes[slot] else pa.py_buffer(b"")
        return pa.Array.from_buffers(pa.large_string(), n, [bitmap, offsets, data], null_count=nulls)

    def _entries(self, i: int, n: int, valid: np.ndarray) -> pa.Array:
        """Slots ``i`` (keys) and ``i + 1`` (values) as a list of key/value structs per row."""
        import numpy as np
        import pyarrow as pa

        o, m = self.out, int(self.out.entries[i])
        keys = self._strings(i, m, np.ones(m, bool))
        values = self._strings(i + 1, m, _flags(o.valid[i + 1], m))
        pairs = pa.StructArray.from_arrays([keys, values], names=["key", "value"])
        bitmap, nulls = _mask(valid)
        starts = pa.foreign_buffer(o.values[i], (n + 1) * 8, base=self)
        return pa.Array.from_buffers(pa.large_list(pairs.type), n, [bitmap, starts], null_count=nulls, children=[pairs])

    def free(self) -> None:
        if not self.freed:
            self.freed = True
            self.lib.pi_free(ctypes.byref(self.out))

    def __del__(self):
        try:
            self.free()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


# --- reading ahead ------------------------------------------------------------------------------
#: the array's first events of a trace read ahead of a command's own imports (:func:`scan_ahead`),
#: by the file's identity
_AHEAD: dict[tuple, _Ahead] = {}
_AHEAD_LOCK = threading.Lock()
#: the bytes at the file's end a read ahead leaves to the import, which knows where the array
#: closes: the keys after it, and the last events (the import reads them as a second part)
AHEAD_TAIL = 4 << 20
#: smaller arrays are not read ahead: the thread and the wait cost about what they save
AHEAD_MIN_BYTES = 16 << 20
#: where a Kineto trace's event array opens: the ``[`` after ``"traceEvents":`` (the import's
#: span says where it really is; a read ahead that guessed another place is not used)
_TRACE_EVENTS = re.compile(rb'"traceEvents"\s*:\s*\[')


def _identity(f) -> tuple:
    st = os.fstat(f.fileno())
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


class _Ahead:
    """One read ahead: the events of bytes ``[lo, end)`` of a file, in :attr:`part`, once
    :attr:`done` is set (``part`` None where it did not read them)."""

    def __init__(self, ident: tuple, columns: dict[str, str], lo: int):
        self.ident, self.columns, self.lo = ident, dict(columns), lo
        self.pid = os.getpid()
        self.done = threading.Event()
        self.end: int | None = None
        self.part: _Part | None = None
        self.unwanted = False
        self._lock = threading.Lock()  # the reading thread and the one that drops it

    def run(self, path: Path) -> None:
        try:
            end, part = _scan_first(path, self.ident, self.columns, self.lo)
        except Exception:  # noqa: BLE001 - reading ahead never fails a command: the import reads it all
            end, part = None, None
        with self._lock:
            if self.unwanted and part is not None:
                part.free()
                part = None
            self.end, self.part = end, part
            self.done.set()

    def release(self) -> None:
        """Free what it read, now or (still reading) as soon as it is done."""
        with self._lock:
            self.unwanted = True
            if self.part is not None:
                self.part.free()
                self.part = None


def _scan_first(path: Path, ident: tuple, columns: dict[str, str], lo: int):
    """(end, part): the events from the array's ``[`` at ``lo`` up to an event start ``end`` --
    the first batch's end where :func:`batches` reads the file in batches, else
    :data:`AHEAD_TAIL` before the file's end -- read by the scanner on this thread; (None, None)
    where it could not."""
    lib = _lib()
    with open(path, "rb") as f:
        if lib is None or _identity(f) != ident:
            return None, None
        size = ident[2]
        # a private mapping (copy on write, never written) gives the scanner an address without
        # NumPy, which this thread does not load
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY) as mm:
            view = ctypes.c_char.from_buffer(mm)
            try:
                base = ctypes.addressof(view)
                goal = lo + BATCH_BYTES if size - lo > BATCH_BYTES * 3 // 2 else size - AHEAD_TAIL
                if goal <= lo:
                    return None, None
                end = lib.pi_next_event(base, size, goal)
                if not lo < end < size:
                    return None, None
                part = _Part(lib, columns)
                if part.scan(base + lo, end - lo, first=True, last=False) < 0:
                    part.free()
                    return None, None
                return end, part
            finally:
                del view  # the mapping closes only once nothing points into it


def scan_ahead(path: str | Path, columns: dict[str, str], form: str = "object") -> bool:
    """Begin reading the events of the Chrome trace at ``path`` (a plain file: ``form`` "object",
    ``{"traceEvents": [...``, as Kineto writes it, or "array", a bare ``[...]`` as torch_npu's
    trace_view.json) into ``columns`` on a thread of its own, now; :func:`batches` takes what it
    read for the same file, columns and array start.  Whether it began.

    Why: a command spends its first 0.3-0.45 s importing its modules (pyarrow, DuckDB, NumPy,
    pandas), all of it holding the interpreter lock on one core, while the other core has nothing
    to do; the scanner holds no lock and needs none of those modules, and reading a 100 MB trace
    is 0.27-0.37 s of its CPU.  What it reads is exactly what the import's own read of those bytes
    would give (the same scanner, the same columns, the array split at an event as the import's
    parts are), and where anything differs -- the file changed, the array starts elsewhere, the
    scanner gave up -- the import reads the file itself."""
    if not enabled() or not supports(columns):
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(64 << 10)
            ident = _identity(f)
    except OSError:
        return False
    text = head.lstrip(b" \t\r\n\xef\xbb\xbf")
    if form == "array":  # read from the file's start, as the import reads an array file
        if not text.startswith(b"["):
            return False
        lo = 0
    else:
        m = _TRACE_EVENTS.search(head)
        if m is None or not text.startswith(b"{"):
            return False
        lo = m.end() - 1
    if ident[2] - lo < AHEAD_MIN_BYTES:
        return False
    job = _Ahead(ident, columns, lo)
    with _AHEAD_LOCK:
        old = _AHEAD.get(ident)
        if old is not None and old.columns == job.columns and old.lo == lo:
            return True  # begun already (the command asked before its imports, the load asks again)
        _AHEAD[ident] = job
    if old is not None:
        old.release()
    threading.Thread(target=job.run, args=(Path(path),), name="trace-read-ahead", daemon=True).start()
    return True


def _take_ahead(f, columns: dict[str, str], lo: int) -> tuple[int, _Part] | None:
    """(end, part) read ahead for the open file ``f``, ``columns`` and an array at ``lo``, waited
    for where it is still reading; None where nothing matching was read ahead in this process."""
    if not _AHEAD:
        return None
    with _AHEAD_LOCK:
        job = _AHEAD.pop(_identity(f), None)
    if job is None or job.pid != os.getpid():
        return None
    if job.columns != columns or job.lo != lo:
        job.release()
        return None
    job.done.wait()
    if job.part is None:
        return None
    return job.end, job.part


def drop_ahead() -> None:
    """Free whatever was read ahead and not taken (the profile came from the cache)."""
    with _AHEAD_LOCK:
        jobs = list(_AHEAD.values())
        _AHEAD.clear()
    for job in jobs:
        job.release()


def _after_fork() -> None:
    """A forked process has none of the threads reading ahead: it reads every file itself."""
    global _AHEAD_LOCK
    _AHEAD_LOCK = threading.Lock()
    _AHEAD.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
