"""Read a Chrome trace in the JSON *array* form (Ascend ``trace_view.json``, ``msprof_*.json``) into DuckDB,
in pieces, and survive a file that was cut short.

Why DuckDB ``read_json``: these files reach gigabytes; DuckDB parses them in C++ without building
Python objects, and every canonical table is then derived with SQL.

Why in pieces: one ``read_json`` over a whole GB array keeps every raw event (``args`` text
included) in memory at once, and with file order preserved it cannot spill, so it needs about
twice the file size and fails outright under a tighter memory cap.  The array is instead cut at
event boundaries -- a ``}`` closing one element, then ``,`` and the ``{`` of the next (the
exports write ``}, {`` on one line) -- into pieces of :data:`CHUNK_BYTES`, each read as an array of
its own.  The fast form (``take``) hands a batch of pieces to ONE statement of the caller's that
parses them -- in parallel, one file per DuckDB thread -- and appends the slim rows it needs, in
file order, so each event's JSON is parsed once and the raw events never exist as a table at all.
The older form (``consume``) reads each piece into a table first and lets the caller run several
statements over it, with ``idx`` (the 0-based position in the file) carried explicitly.

Why a cut can be trusted: ``}`` + ``,`` + ``{`` can also occur inside a string or between nested
objects.  A piece ending at such a false cut ends inside an open string or object, which no JSON
parser accepts, so a false cut always shows as a failed piece -- one that fails at its end (DuckDB:
"unexpected end of data").  That piece is then widened to the next cut (a false cut disappears
inside it); if that keeps failing, the rest of the file is read as one piece, as without cuts,
and only if that fails too is the damage real.  A piece that fails before its end holds invalid
bytes: that is damage at once, and DuckDB's error says which piece of a batch it was and how
many events of it parsed before the failure, so the search starts right there (each step is
parsed again before anything is kept: the error is a hint, never trusted on its own).

Why the recovery path: a profile copied off a cluster is often truncated (disk full, interrupted
``scp``).  The events before the cut are still valid, so instead of refusing the file we keep
every piece before the damage, find the last complete event inside the damaged piece, and report
how much was lost.  Damage in the middle (bytes overwritten, a bad sector) would lose everything
after it that way -- 90% of a 100 MB trace for four bad bytes at 10% -- so the read goes on at the
first later event that parses and has a ``ph`` (``resync``), and counts the stretches it skipped.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import ProfileError
from .. import progress
from .._common import sql_str, temp_dir
from ._bytes import BOUNDARY as _BOUNDARY
from ._bytes import separators as _separators

if TYPE_CHECKING:  # DuckDB loads when an import starts, not when this module does
    import duckdb

#: every key of a Chrome-trace event we keep; values that are numbers in one producer and strings
#: in another (``ts``, ``id``, ``pid``) are read as text and converted in SQL
TRACE_COLUMNS = {
    "ph": "VARCHAR",
    "name": "VARCHAR",
    "pid": "VARCHAR",
    "tid": "VARCHAR",
    "ts": "VARCHAR",
    "dur": "VARCHAR",
    "cat": "VARCHAR",
    "id": "VARCHAR",
    "bp": "VARCHAR",
    "s": "VARCHAR",
    "args": "JSON",
}

#: the columns a Kineto trace's events are read into (``kineto._events`` says why each is of its
#: type): here, where a command can begin reading the trace before the Kineto importer and the
#: libraries it loads are imported (:func:`scan_ahead`)
KINETO_COLUMNS = {
    "ph": "VARCHAR",
    "cat": "VARCHAR",
    "name": "VARCHAR",
    "pid": "VARCHAR",
    "tid": "VARCHAR",
    "ts": "DECIMAL(38,3)",
    "dur": "VARCHAR",
    "args": "JSON",
}


#: the column the Ascend text import reads trace_view.json with beside :data:`TRACE_COLUMNS`: the
#: key/value pairs of its counter events' args (``ascend_text._trace`` says why), read by the
#: scanner only (:func:`._native.entries`); here for the same reason as :data:`KINETO_COLUMNS`
ASCEND_EXTRA = {"args_entries": "ENTRIES(args) WHEN ph=C"}


def scan_ahead(path, form: str = "kineto") -> bool:
    """Begin reading the trace at ``path`` on a thread of its own while the command loads its
    modules (:func:`._native.scan_ahead`); the import takes what it read.  ``form``: "kineto" (a
    Kineto trace) or "ascend" (torch_npu's trace_view.json).  Whether it began."""
    from . import _native

    if form == "ascend":
        return _native.scan_ahead(path, {**TRACE_COLUMNS, **ASCEND_EXTRA}, "array")
    return _native.scan_ahead(path, KINETO_COLUMNS)


def drop_ahead() -> None:
    """Free what :func:`scan_ahead` read and no import took (the profile came from the cache)."""
    import sys

    native = sys.modules.get(f"{__package__}._native")
    if native is not None:
        native.drop_ahead()


#: target size of one piece of the array; small enough that a piece's raw events (about twice
#: its bytes in DuckDB) stay well under any sensible memory cap, large enough that the per-piece
#: statements cost nothing next to the parse
CHUNK_BYTES = 32 << 20

#: target size of one piece when pieces are taken in one statement each batch (``take``): small
#: enough that a batch of them keeps every DuckDB thread busy (each file is parsed by one thread),
#: large enough that a statement's fixed cost is nothing next to its parse
TAKE_CHUNK_BYTES = 8 << 20

#: pieces per statement in the ``take`` mode: their files are parsed in parallel, one per thread.
#: 16, not 8: each statement ends on one thread (the last piece, the append) and the next batch's
#: files are written while DuckDB waits, so fewer statements keep the cores busier -- 100 MB
#: Kineto import 1.01-1.08 -> 0.95-0.98 s, Ascend 1.64-1.74 -> 1.61-1.66 s; 1 GB Ascend 18.6-20.7
#: -> 18.3-19.6 s, peak RSS in the same range (1,107-1,174 / 1,114-1,202 MiB: DuckDB's working
#: memory is bounded by its threads, not by the files a statement names)
TAKE_BATCH = 16

#: consume(con, view): take what is needed out of ``view`` (one piece's events, with ``idx``)
Consume = Callable[[object, str], None]

#: take(con, source) -> rows: ONE statement that reads ``source`` -- a table expression over the
#: raw events of one or more pieces in file order (the columns of :data:`TRACE_COLUMNS`, no
#: ``idx``) -- and appends what it needs; it returns how many events it read.  A source is parsed
#: once per statement, so a second statement over it would parse it again.
Take = Callable[[object, str], int]

_TAIL_TRIES = 4
#: how many parses (of one event each, a few ms) a resync after damage tries before the rest of
#: the file counts as lost
_RESYNC_TRIES = 1000
#: with resync, a rest of at most this many bytes is read whole when its cuts keep failing
_REST_BYTES = 256 << 20
#: how many event ends after a resync candidate are tried as the end of its event (a ``}, {``
#: inside its args is a false one): see ``_Reader._resume``
_PROBE_STOPS = 8
#: the same while an event is known to parse (DuckDB parsed it before the damage it met)
_GROW_STOPS = 256
#: a resync candidate at most this far from the end of the events is also tried as the start of
#: all that is left (one parse of at most this many bytes)
_REST_PROBE_BYTES = 1 << 20
_MAX_OBJECT = 1 << 30
_WIDEN = 2  # how many times a failed piece is widened before its failure counts as damage
#: pieces in the first statement after the read stepped over damage; each batch that reads
#: doubles the next, up to :data:`TAKE_BATCH`.  A batch that fails costs every piece it names
#: (each written out, parsed up to where DuckDB stops): where damage is dense, a full batch after
#: every damaged place wrote and parsed the rest of a 100 MB file again.  Two, not one: two files
#: keep two cores parsing
_RESUME_BATCH = 2
#: the size of the first piece after damage, doubled for each next one up to the piece size:
#: damage close to more damage is then found in a small piece, and the readable events before
#: it are parsed again only from that piece's start.  40 damaged events spread over the 100 MB
#: Ascend trace (``benchmarks/README.md``): 2.4 GB of pieces written and the import 9.2 s before;
#: batches of 2 growing, 7.1 s; with pieces of 2 MB growing too, 4.8-5.1 s (1 MB: 5.1-5.6 s)
_RESUME_CHUNK_BYTES = 2 << 20


@dataclass(frozen=True)
class TraceRead:
    """What reading one trace file gave: ``events`` rows in the table; when the file was cut
    short, ``truncated`` with the bytes after the last readable event (``lost_bytes``) and an
    estimate of the events they held."""

    events: int
    total_bytes: int
    truncated: bool = False
    lost_bytes: int = 0
    lost_events_estimate: int = 0
    error: str | None = None
    chunks: int = 1
    #: stretches of damage in the middle that the read skipped, to go on at the next event that
    #: parses: how many, their bytes and an estimate of the events they held
    skipped_places: int = 0
    skipped_bytes: int = 0
    skipped_events: int = 0

    @property
    def damaged(self) -> bool:
        """Whether anything of the file could not be read: cut short, or skipped in the middle."""
        return self.truncated or self.skipped_places > 0

    @property
    def lost_fraction(self) -> float:
        return self.lost_bytes / self.total_bytes if self.total_bytes else 0.0

    def describe(self, name: str) -> str:
        """One sentence for a diagnostic: what was read and what was lost."""
        read_mb = (self.total_bytes - self.lost_bytes) / 1e6
        if self.lost_bytes == 0:
            return f"{name} lacks its closing ']': read all {self.events} events ({read_mb:.1f} MB)"
        if self.lost_fraction >= 0.01:
            return (
                f"{name} is truncated: read {self.events} events, about {self.lost_fraction:.0%} of the file "
                f"({self.lost_bytes / 1e6:.1f} MB, roughly {self.lost_events_estimate} events) was lost"
            )
        return (
            f"{name} is truncated: read {self.events} events ({read_mb:.1f} MB); the file ends inside an "
            f"event, so every event after the cut is lost"
        )

    def describe_skipped(self, name: str) -> str:
        """One sentence for a diagnostic: the damage in the middle that the read skipped."""
        size = f"{self.skipped_bytes:,} bytes" if self.skipped_bytes < 10_000 else f"{self.skipped_bytes / 1e6:.2f} MB"
        where = "one place" if self.skipped_places == 1 else f"{self.skipped_places} places"
        return (
            f"{name} is damaged in {where}: {size} (roughly {self.skipped_events} event(s)) are not valid JSON "
            f"and were skipped; the {self.events} events around them were read"
        )


def read_trace_json(
    con: duckdb.DuckDBPyConnection,
    path: str | Path,
    table: str = "ev",
    consume: Consume | None = None,
    chunk_bytes: int | None = None,
    take: Take | None = None,
    columns: dict[str, str] | None = None,
    ignore_errors: bool = False,
    span: tuple[int, int] | None = None,
    resync: bool = True,
    extra: dict[str, str] | None = None,
) -> TraceRead:
    """Read the JSON array at ``path`` piece by piece.

    Without ``consume`` or ``take`` the events are collected in ``table`` (``idx`` = 0-based
    event order, then :data:`TRACE_COLUMNS`).  With ``take`` (the fast form) every batch of
    pieces is parsed once, in parallel, by the one statement ``take`` runs over it (see
    :data:`Take`); file order is the order of the rows it appends.  With ``consume`` each piece
    is first read into a table and ``consume`` is called with the name of a view over that
    piece's events (same columns plus ``idx``); it may run several statements, and must copy out
    what it needs before returning.  A truncated or invalid file yields its longest readable
    prefix.  DuckDB running out of memory is a :class:`ProfileError` that says so (never
    reported as a damaged file).  ``columns`` replaces :data:`TRACE_COLUMNS` (a reader that wants
    ``ts`` as an exact DECIMAL, say); ``ignore_errors`` makes a value of an impossible type NULL
    (a syntax error still fails its piece).  ``span``: the array is the bytes ``[span[0],
    span[1])`` of ``path`` (``[`` to ``]``, inside a ``{"traceEvents": [...]}`` object), read
    there without a copy.  ``resync``: damage in the middle costs only the events it hit -- the
    read goes on at the next event that parses and counts what it skipped
    (:attr:`TraceRead.skipped_events`); without it the read stops at the damage, as at a cut.
    ``extra`` (with ``take`` only): columns only the compiled scanner reads, name -> type (an
    object's entries, :func:`._native.entries`); where DuckDB's reader reads the events they are
    NULL, so that ``take`` sees the same columns either way."""
    path = Path(path)
    size = path.stat().st_size if span is None else span[1]
    resume = None
    if take is not None:
        native = _native_read(con, path, size, take, {**(columns or TRACE_COLUMNS), **(extra or {})}, span)
        if native is not None:
            events, resume_at = native
            if resume_at is None:  # the scanner read the whole array
                progress.read_whole(path)
                return TraceRead(events, size)
            resume = (resume_at, events)  # DuckDB reads what the scanner gave up on
    if take is not None and extra:
        take = _without(take, extra)
    if consume is None and take is None:
        create_empty_trace(con, table)
        take = _collect_into(table)
    default = TAKE_CHUNK_BYTES if take is not None else CHUNK_BYTES
    reader = _Reader(con, path, size, table, consume, chunk_bytes or default, take)
    reader.spec = (columns or TRACE_COLUMNS, ignore_errors)
    reader.span = span
    reader.resync = resync
    reader.resume = resume
    try:
        result = reader.run()
    except _oom_error() as exc:
        raise out_of_memory(path, size, exc) from None
    finally:
        reader.cleanup()
    # the array is read as far as it goes: the bytes around it (the object holding it, a cut
    # tail) hold no events, and a watcher left at the array's end would say "reading, 99%"
    # while the importer builds its tables
    progress.read_whole(path)
    return result


def _native_read(
    con, path: Path, size: int, take: Take, columns: dict[str, str], span
) -> tuple[int, int | None] | None:
    """The array read by the compiled scanner (:mod:`._native`) and handed to ``take`` as Arrow
    tables, in file order, 128 MB of the file at a time (each on the import's threads).  Returns
    (events taken, None) when it read the whole array; (events taken, offset) when it gave up at
    that offset (an event's start) after taking the events before it -- the pieces reader goes
    on from there; None when it took nothing (off, not built, or it gave up at once), and the
    pieces are read as before.  It gives up on any damage, on a value DuckDB would give
    differently and on a value of a type the column cannot take."""
    from . import _native

    if not _native.enabled() or not _native.supports(columns):
        return None
    threads = int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])
    name, events, taken = "native_events", 0, 0
    try:
        for batch in _native.batches(path, columns, span, threads, _native.BATCH_BYTES):
            con.register(name, batch.table)
            try:
                events += take(con, name)
            finally:
                con.unregister(name)
            taken += 1
            progress.read(path, batch.end)
            del batch
    except _native.GaveUp as gave:
        return (events, gave.at) if taken and gave.at is not None else None
    except _oom_error() as exc:
        raise out_of_memory(path, size, exc) from None
    return events, None


def out_of_memory(path: Path, size: int, exc: BaseException) -> ProfileError:
    """The error a user sees when DuckDB could not get the memory it needed."""
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return ProfileError(
        f"ran out of memory while importing {Path(path).name} ({size / 1e9:.2f} GB): {first}",
        file=path,
        fix="close other programs or import on a machine with more free memory (about twice the "
        "file size is enough); the file itself is not damaged",
    )


def _without(take: Take, extra: dict[str, str]) -> Take:
    """``take`` over a source that lacks the scanner-only columns ``extra``: given as NULL."""
    from . import _native

    nulls = ", ".join(f'NULL::{_native.sql_type(t)} AS "{name}"' for name, t in extra.items())

    def taken(con, source: str) -> int:
        return take(con, f"(SELECT *, {nulls} FROM {source})")

    return taken


def _collect_into(table: str) -> Take:
    def take(con, source: str) -> int:
        return con.execute(f"INSERT INTO {table}_raw SELECT * FROM {source}").fetchall()[0][0]

    return take


class _Reader:
    """One pass over the array: plan the cuts, read piece after piece, recover at damage."""

    def __init__(self, con, path: Path, size: int, table: str, consume, chunk_bytes: int, take=None):
        self.con, self.path, self.size, self.table = con, path, size, table
        self.consume, self.chunk_bytes = consume, max(int(chunk_bytes), 1)
        self.take = take
        self.spec: tuple[dict[str, str], bool] = (TRACE_COLUMNS, False)
        self.span: tuple[int, int] | None = None
        self.resync = False
        #: (offset of an event, events taken before it): the compiled scanner took the events before
        #: that offset and gave up there; the read goes on from it
        self.resume: tuple[int, int] | None = None
        self.skipped: list[tuple[int, int, int]] = []  # (from, to, events) of each stretch skipped
        self._probed: dict[tuple[int, int], str | None] = {}  # (lo, hi) -> what _probe found
        self._end = size  # where the events end (before the closing bracket), once known
        self.events = 0
        self.pieces = 0
        self.tmpdir = temp_dir("trace")

    def cleanup(self) -> None:
        for name in os.listdir(self.tmpdir):
            try:
                os.unlink(os.path.join(self.tmpdir, name))
            except OSError:
                pass
        try:
            os.rmdir(self.tmpdir)
        except OSError:
            pass

    def run(self) -> TraceRead:
        body = self._body()
        if body is None:  # not an array at all: nothing to recover
            return TraceRead(0, self.size, True, self.size, 0, self._first_error(), 0)
        start, end, closed = body
        if self.resume is not None and start <= self.resume[0] <= end:
            start, self.events = self.resume
        self._end = end
        resumed = False
        while True:
            stopped = self._read_span(start, end, resumed)
            if stopped is None:
                break
            lo, hi, error = stopped
            if not self.resync:
                return self._recover(lo, hi, error)
            kept = self._keep_prefix(lo, hi, _parsed_before(error))
            resume = self._resume(lo, kept, end)
            if resume is None:  # nothing after the damage parses: the file was cut there
                return self._cut_at(kept, error)
            start, resumed = resume, True
        if not closed:
            return self._read(truncated=True, error="missing closing ']'")
        return self._read()

    def _read(self, truncated: bool = False, lost: int = 0, lost_events: int = 0, error=None) -> TraceRead:
        return TraceRead(
            self.events,
            self.size,
            truncated,
            lost,
            lost_events,
            error,
            self.pieces,
            len(self.skipped),
            sum(b - a for a, b, _ in self.skipped),
            sum(n for _, _, n in self.skipped),
        )

    def _read_span(self, start: int, end: int, resumed: bool = False) -> tuple[int, int, str] | None:
        """Read the events in [start, end) piece by piece; None when all of them read, else the
        bytes ``(lo, hi)`` that do not and the parse error of exactly those bytes.  ``resumed``:
        the read goes on after damage, in small pieces and batches that grow while they read
        (:data:`_RESUME_BATCH`).

        A piece that fails because it was cut at a false boundary fails at its end ("unexpected
        end of data"): it is widened, and if that keeps failing the rest of the file is tried
        whole (with resync only a rest of at most :data:`_REST_BYTES`).  A piece whose parse
        fails before its end holds invalid bytes -- damage, never a false cut -- and is returned
        as it is: the search for the damage stays in it (``_keep_prefix``, guided by the number
        of events DuckDB parsed before the failure)."""
        cuts = self._cuts(start, end, _RESUME_CHUNK_BYTES if resumed else None)
        batch = _RESUME_BATCH if resumed else TAKE_BATCH
        last = len(cuts) - 1
        i = 0
        known: tuple[int, str] | None = None  # (piece, its error): the piece a failed batch named
        while i < last:
            n = min(batch, (known[0] if known is not None else last) - i)
            if self.take is not None and n >= 2:
                failed = self._batch(cuts[i : i + n + 1])
                if failed is None:
                    i += n
                    batch = min(2 * batch, TAKE_BATCH)
                    continue
                k, error = failed
                if k is not None:  # DuckDB named the failing piece: the ones before it are read as a batch
                    known = (i + k, error)
                else:  # it did not: halve the batch (a damaged piece fails every batch holding it)
                    batch = max(n // 2, 1)
                continue
            lo, hi = cuts[i][1], cuts[i + 1][0]
            if known is not None and known[0] == i:
                error, known = known[1], None  # its parse failed in the batch: not parsed again
            else:
                error = self._piece(lo, hi)
            if error is None:
                batch = min(2 * batch, TAKE_BATCH)
                i += 1
                continue
            if self.resync and not _at_end_of_data(error):
                return lo, hi, error
            j = i + 1
            for widen in range(1, _WIDEN + 1):
                if j == last:
                    break
                j = min(i + 1 + widen, last)
                hi = cuts[j][0]
                error = self._piece(lo, hi)
                if error is None:
                    break
            rest = cuts[-1][0] - lo
            if error is not None and j < last and (not self.resync or rest <= _REST_BYTES):
                # cuts keep failing: read the rest as one piece, as a reader without cuts would.
                # With resync, not a long rest: there, failing cuts are damage far more often
                # than three false cuts in a row, and a copy of the rest of a GB file for each
                # damage costs more than the search for it, which stays in the widened piece and
                # steps over false cuts event by event (``_keep_prefix``, ``_resume``)
                widened, widened_error = hi, error
                j, hi = last, cuts[-1][0]
                try:
                    error = self._piece(lo, hi)
                except _oom_error():
                    if not self.resync:
                        raise
                    error = "out of memory reading the rest of the file as one piece"
                if error is not None and self.resync:
                    hi, error = widened, widened_error
            if error is not None:
                return lo, hi, error
            i = j
        return None

    # -- layout ----------------------------------------------------------------------------
    def _body(self) -> tuple[int, int, bool] | None:
        """(offset of the first event, offset after the last byte of events, whether the
        closing ``]`` is there), or None when the file does not hold an array."""
        if self.span is not None:  # a closed array inside an object: [span[0]] is '[', [span[1] - 1] ']'
            return self.span[0] + 1, self.span[1] - 1, True
        with open(self.path, "rb") as fh:
            head = fh.read(4096)
            stripped = head.lstrip(b" \t\r\n")
            if stripped.startswith(b"\xef\xbb\xbf"):
                stripped = stripped[3:].lstrip(b" \t\r\n")
            if not stripped.startswith(b"["):
                return None
            start = len(head) - len(stripped) + 1
            tail_at = max(start, self.size - 4096)
            fh.seek(tail_at)
            tail = fh.read()
        t = tail.rstrip(b" \t\r\n\x00")
        closed = t.endswith(b"]") and tail_at + len(t) - 1 >= start
        if closed:
            t = t[:-1]
        elif t.endswith(b","):  # cut right after the separator that follows a whole event
            t = t[:-1].rstrip(b" \t\r\n")
        return start, max(start, tail_at + len(t)), closed

    def _cuts(self, start: int, end: int, first: int | None = None) -> list[tuple[int, int]]:
        """Piece limits: ``(end of the previous piece, start of the next)`` pairs, the first
        ``(start, start)``, the last ``(end, end)``; in between the first event boundary at or
        after every ``chunk_bytes``.  ``first``: the first piece's size, doubled for each next
        one up to ``chunk_bytes``."""
        cuts = [(start, start)]
        step = min(first or self.chunk_bytes, self.chunk_bytes)
        target = start + step
        with open(self.path, "rb") as fh:
            while target < end:
                found = None
                window = 1 << 16
                while found is None and target < end:
                    fh.seek(target)
                    data = fh.read(min(window, end - target))
                    m = _BOUNDARY.search(data)
                    if m is not None:
                        found = (target + m.start() + 1, target + m.end() - 1)
                    elif target + len(data) >= end:
                        break
                    else:
                        target += max(len(data) - 64, 1)  # a boundary may straddle the window edge
                        window = min(window * 4, 16 << 20)
                if found is None:
                    break
                cuts.append(found)
                step = min(2 * step, self.chunk_bytes)
                target = found[1] + step
        cuts.append((end, end))
        return cuts

    # -- reading ---------------------------------------------------------------------------
    def _write_piece(self, lo: int, hi: int, k: int = 0) -> str:
        tmp = os.path.join(self.tmpdir, f"piece{self.pieces + k}.json")
        with open(tmp, "wb") as out, open(self.path, "rb") as src:
            out.write(b"[")
            out.flush()
            copy_range(src, out, lo, hi - lo)
            out.write(b"]")
        return tmp

    def _batch(self, cuts: list[tuple[int, int]]) -> tuple[int | None, str] | None:
        """Take the pieces between ``cuts`` in one statement; None when they read, else (nothing
        taken: a failed statement appends nothing) the index of the piece that failed, when
        DuckDB's error names its file, and the error, so that the pieces before it are read as
        a batch and it alone with the widening and recovery of a single piece."""
        ranges = [(cuts[k][1], cuts[k + 1][0]) for k in range(len(cuts) - 1)]
        files = {self._write_piece(lo, hi, k): k for k, (lo, hi) in enumerate(ranges) if hi > lo}
        if not files:
            return None
        try:
            n = _read_piece(self.con, list(files), self.table, self.take, spec=self.spec)
        except _oom_error():
            raise
        except _duck_error() as exc:
            error = _error_text(exc)
            return files.get(_failed_file(error)), error
        finally:
            for f in files:
                os.unlink(f)
        self.events += n
        self.pieces += len(files)
        progress.read(self.path, cuts[-1][0])
        return None

    def _piece(self, lo: int, hi: int) -> str | None:
        """Read bytes [lo, hi) as one array and hand it to ``consume``; the parse error, if any."""
        if hi <= lo:
            return None
        n, error = self._parse(lo, hi, lambda f: _read_piece(self.con, f, self.table, self.take, spec=self.spec))
        if error is not None:
            return error
        self._hand_over(n)
        progress.read(self.path, hi)
        return None

    def _parse(self, lo: int, hi: int, read: Callable[[str], object]) -> tuple[object, str | None]:
        """``read(file)`` of bytes [lo, hi) written as an array file of their own -> (what it
        returned, None), or (None, the parse error).  Running out of memory is raised."""
        tmp = self._write_piece(lo, hi)
        try:
            return read(tmp), None
        except _oom_error():
            raise
        except _duck_error() as exc:
            return None, _error_text(exc)
        finally:
            os.unlink(tmp)

    def _hand_over(self, n: int) -> None:
        if self.take is not None:  # already taken by the statement that read it
            self.events += n
            self.pieces += 1
            return
        view = f"{self.table}_piece"
        self.con.execute(
            f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT rowid + {self.events} AS idx, * FROM {self.table}_piece_raw"
        )
        try:
            self.consume(self.con, view)
        finally:
            self.con.execute(f"DROP VIEW IF EXISTS {view}")
            self.con.execute(f"DROP TABLE IF EXISTS {self.table}_piece_raw")
        self.events += n
        self.pieces += 1

    def _first_error(self) -> str:
        try:
            _read_piece(self.con, str(self.path), self.table, probe=True, spec=self.spec)
        except _oom_error():
            raise
        except _duck_error() as exc:
            return str(exc).splitlines()[0]
        finally:
            self.con.execute(f"DROP TABLE IF EXISTS {self.table}_piece_raw")
        return "not a JSON array"

    # -- recovery --------------------------------------------------------------------------
    def _recover(self, lo: int, hi: int, error: str) -> TraceRead:
        """Bytes [lo, hi) do not read: keep their longest readable prefix (the pieces before
        ``lo`` are already in) and end the read there, as at a cut."""
        return self._cut_at(self._keep_prefix(lo, hi, _parsed_before(error)), error)

    def _cut_at(self, cut: int, error: str) -> TraceRead:
        """The result of a read that ends at ``cut``: the bytes after it are lost."""
        if not self.events:
            return self._read(True, self.size, 0, error)
        lost = self.size - cut
        return self._read(True, lost, int(lost / (cut / self.events)), error)

    def _keep_prefix(self, lo: int, hi: int, parsed: int | None = None) -> int:
        """Hand over the longest readable prefix of bytes [lo, hi) and return where it ends
        (``lo`` when none reads).

        ``parsed``: how many events DuckDB parsed in [lo, hi) before its parse failed, when its
        error said so.  The prefix of that many events is tried first: its end is the
        ``parsed``-th boundary unless a false one comes before it (or the event before the
        damage runs into it: then the boundary before).  Without it, the last few event
        boundaries are tried (a file cut at its end).  Where neither gives a prefix of
        ``parsed`` events, a bisection over the boundaries after what was kept looks for more
        (false boundaries can put the hint's boundary events short of the damage)."""
        events_before = self.events
        tried: set[int] = set()
        best = handed = None  # the readable prefix found / handed over: [lo, best), [lo, handed)
        if parsed == 0:  # the first event is the one that failed
            return lo
        if parsed is not None:
            ends = [e for e, _ in itertools.islice(_boundaries_from(self.path, lo, hi), parsed)]
            for cut in ends[-1:] + ends[-2:-1] if len(ends) == parsed else ():
                tried.add(cut)
                if self._try(lo, cut):
                    best = handed = cut
                    break
        # a cut file fails in its last piece: the tail is worth a few tries there, not before
        tail = _tail_boundaries(self.path, lo, hi) if hi >= self._end and best is None else ()
        for cut in itertools.islice((c for c in tail if c not in tried), _TAIL_TRIES):
            tried.add(cut)
            if self._try(lo, cut):
                best = handed = cut
                break
        if best is None or (parsed is not None and self.events - events_before < parsed):
            cuts = [c for c in _all_boundaries(self.path, lo, hi) if c not in tried and (best is None or c > best)]
            a, b = 0, len(cuts) - 1
            while a <= b:  # readable(prefix) is monotone: shorter prefixes of a readable one read too
                mid = (a + b) // 2
                # [lo, best) is known to read: only the events after it are parsed again
                at = lo if best is None else _next_start(self.path, best, hi)
                if at is not None and self._try(at, cuts[mid], probe=True):
                    best, a = cuts[mid], mid + 1
                else:
                    b = mid - 1
            if best is not None and best != handed:
                self._try(lo if handed is None else _next_start(self.path, handed, hi), best)
        # a false boundary (``}, {`` inside an event) breaks that monotony and can stop the
        # bisection events short of the damage: the prefix then grows an event at a time while
        # the next event reads on its own (its end among the next few boundaries; among more
        # while DuckDB's count says the events up to the damage parse)
        while (nxt := lo if best is None else _next_start(self.path, best, hi)) is not None:
            short = parsed is not None and self.events - events_before < parsed
            stops = _GROW_STOPS if short else _PROBE_STOPS
            ends = [e for e, _ in itertools.islice(_boundaries_from(self.path, nxt, hi), stops)]
            grown = next((e for e in ends if self._event_at(nxt, [e])), None)
            if grown is None or not self._try(nxt, grown):
                break
            best = grown
        return lo if best is None else best

    def _resume(self, lo: int, after: int, end: int) -> int | None:
        """Where the read goes on after the readable prefix of the piece at ``lo`` ended at
        ``after``: the start of the first later event that parses and is an event (has a
        ``ph``: a ``}, {`` inside an event's args starts an object that is none).  None when
        none does within :data:`_RESYNC_TRIES` tries: the file is cut, or garbage to its end.
        The stretch skipped is recorded.

        The event at ``after`` is tried first when the prefix is not empty: a prefix found by
        bisection can end short of the damage (a false boundary breaks its monotony), and the
        events up to the damage are then read, not skipped.  Where the piece's first event did
        not read, it is the damaged one; the read always moves past ``lo``."""
        first = _next_start(self.path, after, end) if after > lo else None
        # (end of an event, start of the next), and the starts that follow an event whose end was
        # lost (``end`` is then the ``,`` before the start); ``first`` is tried on its own
        pairs = (p for p in _starts_from(self.path, after, end) if p[1] != first)
        ahead = list(itertools.islice(pairs, _PROBE_STOPS))
        failed_at = [] if first is not None else [after]  # where the tries that failed started
        tries = 0  # parses, at most one per stop tried
        here, ended = first, None  # a candidate, and the end of the event before it
        while tries < _RESYNC_TRIES:
            if here is not None:
                stops = [a for a, _, bare in ahead if not bare]
                # the last event ends where the events do, which no separator marks: that end is
                # a stop too where every separator left is in ``ahead`` or the rest is short (the
                # last event can hold more false boundaries than a try's stops)
                if len(ahead) < _PROBE_STOPS or end - here <= _REST_PROBE_BYTES:
                    stops.append(end)
                tries += len(stops)
                if self._event_at(here, stops):
                    if failed_at:  # a try failed: ``here`` came from ``ahead``, so ``ended`` is set
                        self._skip(after, here, ended, failed_at, 0 if first is not None else 1)
                    return here
                failed_at.append(here)
            if not ahead:
                return None
            ended, here, _ = ahead.pop(0)
            ahead.extend(itertools.islice(pairs, _PROBE_STOPS - len(ahead)))
        return None

    def _skip(self, after: int, here: int, ended: int, failed_at: list[int], whole: int) -> None:
        """Record the stretch from ``after`` to ``here`` as skipped -- all but the events in it
        that read.  An event with more false boundaries than a try's stops fails on its own: it
        can follow the damaged event, or be the event the tries began with (``whole`` = 0: the
        first failed try started at an event), which a piece cut inside it left unread.  So from
        each failed try on, the stretch up to ``here`` (to ``ended``) is read: whole, or, where
        DuckDB parsed events of it before more damage, its readable prefix.  What reads is
        handed over, and only the rest is skipped."""
        for j in range(whole, len(failed_at)):
            at = failed_at[j]
            error = self._probe(at, ended)
            if error is None and self._try(at, ended):
                if j:
                    self.skipped.append((after, at, j))
                return
            parsed = _parsed_before(error) if error is not None else None
            if parsed:  # events start here, and read up to more damage before ``here``
                kept = self._keep_prefix(at, ended, parsed)
                if kept > at:
                    if j:
                        self.skipped.append((after, at, j))
                    self.skipped.append((kept, here, max(sum(1 for c in failed_at if c >= kept), 1)))
                    return
        self.skipped.append((after, here, len(failed_at)))

    def _probe(self, lo: int, hi: int) -> str | None:
        """Parse [lo, hi) as events without handing them over: None when they read and all have
        a ``ph``, else the parse error (:data:`_NO_PH` when they read without one).

        Each span is parsed once per read: the search for a readable prefix and the resync after
        it try the same damaged event against the same stops (40 damaged events in the 100 MB
        Ascend trace: 720 probes, 18 a place, before the answers were kept)."""
        if (lo, hi) in self._probed:
            return self._probed[(lo, hi)]
        counts, error = self._parse(
            lo, hi, lambda f: self.con.sql(f"SELECT count(*), count(ph) FROM {_source([f], *self.spec)}").fetchall()[0]
        )
        if error is None:
            n, with_ph = counts
            error = None if n > 0 and with_ph == n else _NO_PH
        self._probed[(lo, hi)] = error
        return error

    def _event_at(self, here: int, stops: list[int]) -> bool:
        """Whether an event starts at ``here``: the bytes from it to one of the next ``stops``
        (event ends, some of them false) read as events that all have a ``ph``."""
        for stop in stops:
            error = self._probe(here, stop)
            if error is None or error == _NO_PH:  # the first stop that parses decides
                return error is None
        return False

    def _try(self, lo: int, cut: int, probe: bool = False) -> bool:
        """Whether [lo, cut) reads; unless ``probe``, hand it over when it does."""
        take = None if probe else self.take
        n, error = self._parse(
            lo, cut, lambda f: _read_piece(self.con, f, self.table, take, probe=probe, spec=self.spec)
        )
        if error is not None:
            return False
        if not probe:
            self._hand_over(n)
        return True


def _read_piece(
    con, files: str | list[str], table: str, take: Take | None = None, probe: bool = False, spec=None
) -> int:
    """Read one or more array files (one piece each, in order); the number of events.

    With ``take``, the one statement ``take`` runs over them reads them (in parallel, one file
    per thread); with ``probe``, they are only parsed and counted; otherwise they become
    ``{table}_piece_raw`` (rows in file order) for a ``consume`` to read."""
    source = _source([files] if isinstance(files, str) else files, *(spec or (TRACE_COLUMNS, False)))
    if take is not None:
        return int(take(con, source))
    if probe:
        return con.sql(f"SELECT count(*) FROM {source}").fetchall()[0][0]
    con.execute(f"CREATE OR REPLACE TEMP TABLE {table}_piece_raw AS SELECT * FROM {source}")
    return con.sql(f"SELECT count(*) FROM {table}_piece_raw").fetchall()[0][0]


def _source(files: list[str], columns: dict[str, str] = TRACE_COLUMNS, ignore_errors: bool = False) -> str:
    """``read_json`` of the array files ``files`` with ``columns`` (default :data:`TRACE_COLUMNS`).

    No object can be larger than its file, and DuckDB sizes its read buffer from
    ``maximum_object_size`` (twice that), so the bound is the largest file's size: a fixed 1 GB
    bound would ask for 2 GB up front, more than the memory cap."""
    cols = "{" + ", ".join(f"{_key(k)}: '{v}'" for k, v in columns.items()) + "}"
    bound = min(_MAX_OBJECT, max(max(os.path.getsize(f) for f in files) + 16, 1 << 20))
    names = "[" + ", ".join(sql_str(f) for f in files) + "]"
    lax = ", ignore_errors=true" if ignore_errors else ""
    return f"read_json({names}, format='array', columns={cols}, maximum_object_size={bound}{lax})"


def _key(name: str) -> str:
    return name if name.isidentifier() else '"' + name.replace('"', '""') + '"'


def copy_range(src, dst, offset: int, n: int) -> None:
    """Copy ``n`` bytes at ``offset`` of ``src`` to the end of ``dst`` -- in the kernel when it
    can (no user-space buffer, so a piece costs no memory), else in 16 MB blocks."""
    if n <= 0:
        return
    try:
        done = 0
        while done < n:
            k = os.copy_file_range(src.fileno(), dst.fileno(), n - done, offset + done)
            if k <= 0:
                break
            done += k
        if done == n:
            return
        offset, n = offset + done, n - done
    except (AttributeError, OSError):
        pass
    src.seek(offset)
    remaining = n
    while remaining:
        buf = src.read(min(16 << 20, remaining))
        if not buf:
            break
        dst.write(buf)
        remaining -= len(buf)


def create_empty_trace(con, table: str) -> None:
    """An empty event table with the columns :func:`read_trace_json` creates."""
    cols = ", ".join(f"{k} {v}" for k, v in TRACE_COLUMNS.items())
    con.execute(f"CREATE OR REPLACE TABLE {table}_raw ({cols})")
    con.execute(f"CREATE OR REPLACE VIEW {table} AS SELECT rowid AS idx, * FROM {table}_raw")


def drop_trace(con, table: str = "ev") -> None:
    """Free the event table (view and raw rows) once nothing needs it any more."""
    con.execute(f"DROP VIEW IF EXISTS {table}")
    con.execute(f"DROP TABLE IF EXISTS {table}_raw")


def _tail_boundaries(path: Path, lo: int, hi: int):
    """Event boundaries in [lo, hi) (offset just after the closing ``}``), last first, from
    ``hi`` backwards; the window grows until some are found."""
    window = 1 << 20
    while True:
        start = max(lo, hi - window)
        with open(path, "rb") as fh:
            fh.seek(start)
            data = fh.read(hi - start)
        found = [start + m.start() + 1 for m in _BOUNDARY.finditer(data)]
        if data.rstrip().endswith(b"}"):  # only the closing ']' is missing
            found.append(start + len(data.rstrip()))
        if found or start == lo:
            yield from reversed(found)
            return
        window *= 8


def _boundaries_from(path: Path, lo: int, hi: int, window: int = 1 << 20):
    """(end of an event, start of the next) for every event boundary in [lo, hi), in file
    order (:func:`_starts_from` without the bare ones)."""
    return ((end, start) for end, start, bare in _starts_from(path, lo, hi, window) if not bare)


def _starts_from(path: Path, lo: int, hi: int, window: int = 1 << 20):
    """(end, start, bare) for every place in [lo, hi) where an event can start, in file order:
    each event boundary (``end`` just after its ``}``), and each bare ``, {`` -- the event before
    it lost its end, so no ``}`` precedes the ``,``; ``end`` is then the offset of that ``,``
    (where no event ends).  Read a window at a time (the damage is usually one event long:
    nothing is read ahead of need), each with the bytes before it that a ``}`` may lie in."""
    overlap = 4096  # white space runs between '}' ',' '{' are short in practice
    with open(path, "rb") as fh:
        pos = lo
        while pos < hi:
            back = min(overlap, pos - lo)
            fh.seek(pos - back)
            data = fh.read(min(back + window + overlap, hi - pos + back))
            if len(data) <= back:
                return
            last = pos - back + len(data) >= hi
            base = pos - back
            for end, start, bare in _separators(data, back, None if last else back + window):
                yield base + end, base + start, bare
            if last:
                return
            pos += window


def _next_start(path: Path, at: int, hi: int) -> int | None:
    """The ``{`` of the event after the ``}`` that ends just before ``at`` (only ``,`` and white
    space between), or None."""
    with open(path, "rb") as fh:
        fh.seek(at)
        head = fh.read(min(4096, hi - at))
    rest = head.lstrip(b" \t\r\n").removeprefix(b",").lstrip(b" \t\r\n")
    return at + len(head) - len(rest) if rest.startswith(b"{") else None


def _all_boundaries(path: Path, lo: int, hi: int, chunk: int = 64 << 20) -> list[int]:
    """The end (just after its ``}``) of every event in [lo, hi) that a boundary follows."""
    return sorted({end for end, _ in _boundaries_from(path, lo, hi, chunk)})


__all__ = [
    "CHUNK_BYTES",
    "TAKE_BATCH",
    "TAKE_CHUNK_BYTES",
    "Take",
    "ASCEND_EXTRA",
    "KINETO_COLUMNS",
    "TRACE_COLUMNS",
    "TraceRead",
    "create_empty_trace",
    "drop_trace",
    "out_of_memory",
    "read_trace_json",
    "scan_ahead",
    "drop_ahead",
]


#: where DuckDB's ``read_json`` says a parse failed: ``Malformed JSON in file "F", at byte B in
#: record/value R: ...`` -- R counts from 2 for the array's first element (DuckDB 1.x-2.x), so
#: R - 2 elements parsed before the failing one
_WHERE = re.compile(r'in file "(?P<file>[^"]*)", at byte \d+ in record/value (?P<record>\d+)')


#: what :meth:`_Reader._probe` says of bytes that parse into elements without a ``ph``
_NO_PH = "an element without a ph"


def _error_text(exc: BaseException) -> str:
    """The first line of a DuckDB error (where it says what failed, and where)."""
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _failed_file(error: str) -> str | None:
    """The file a DuckDB parse error names, or None."""
    m = _WHERE.search(error)
    return m.group("file") if m else None


def _parsed_before(error: str) -> int | None:
    """How many array elements parsed before the one DuckDB's ``error`` failed in, or None when
    it does not say.  Only a hint: whatever it leads to is parsed again before it is kept."""
    m = _WHERE.search(error)
    return max(int(m.group("record")) - 2, 0) if m else None


def _at_end_of_data(error: str) -> bool:
    """Whether a parse failed at the end of its bytes -- a piece cut inside an event, as at a
    false boundary -- rather than at invalid bytes before it (damage)."""
    return "end of data" in error or _WHERE.search(error) is None


def _duck_error():
    """DuckDB's error base class, imported on use (discovery must not load DuckDB)."""
    import duckdb

    return duckdb.Error


def _oom_error():
    import duckdb

    return duckdb.OutOfMemoryException
