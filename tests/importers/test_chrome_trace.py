"""The one Chrome-trace reader: both forms (array, object), plain or gzip, are told apart by
content, and every importer cuts and recovers at the same event boundary."""

from __future__ import annotations

import gzip
import json
import os

import pytest

from profinsight.importers import chrome_trace
from profinsight.importers.chrome_trace import _array, _object, _salvage


def test_form_by_content_plain_and_gzip(tmp_path):
    events = [{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1}]
    cases = {
        "a": (json.dumps(events).encode(), "array"),
        "b": (b"\xef\xbb\xbf  " + json.dumps({"traceEvents": events}).encode(), "object"),
        "c": (gzip.compress(json.dumps(events).encode()), "array"),
        "d": (b"name,ts\n", None),
    }
    for name, (data, want) in cases.items():
        (tmp_path / name).write_bytes(data)
        assert chrome_trace.form(tmp_path / name) == want, name
    assert chrome_trace.head(tmp_path / "c", 5) == b'[{"ph'


def test_both_forms_share_one_event_boundary(tmp_path):
    assert _array._BOUNDARY is chrome_trace.BOUNDARY is _object.BOUNDARY
    assert _array._separators is _salvage.separators
    bad = tmp_path / "events.json"
    bad.write_bytes(b'[{"a": 1}, {"b": 2, oops}, {"c": 3}]')
    kept, dropped, _lost = chrome_trace.salvage(bad, tmp_path / "fixed.json")
    assert (kept, dropped) == (2, 1)
    assert json.loads((tmp_path / "fixed.json").read_text()) == [{"a": 1}, {"c": 3}]
    # an event that lost its end: the next one follows a bare ', {' and is kept
    bad.write_bytes(b'[{"a": 1}, {"b": {"x": 2, {"c": 3}, {"d": [1, {"e": 4}]}]')
    kept, dropped, _lost = chrome_trace.salvage(bad, tmp_path / "fixed.json")
    assert (kept, dropped) == (3, 1)
    assert json.loads((tmp_path / "fixed.json").read_text()) == [{"a": 1}, {"c": 3}, {"d": [1, {"e": 4}]}]


def _object_trace(n: int, suffix: bytes = b"") -> bytes:
    """A Kineto-shaped object: metadata, ``n`` events (one holds ``}]`` in a string and a list
    of objects in its args), then ``suffix`` before the closing brace."""
    events = [
        {"ph": "X", "name": f"op{i}", "ts": i, "dur": 1, "pid": 1, "tid": 1, "args": {"l": [{"k": i}], "s": "}]"}}
        for i in range(n)
    ]
    head = b'{"schemaVersion": 1, "distributedInfo": {"rank": 3}, "traceEvents": '
    return head + json.dumps(events).encode() + suffix + b"}\n"


def test_plain_object_read_in_place_as_the_copy_would_be(tmp_path, monkeypatch):
    # small chunks and hold-back so that the tail window moves as it does over a GB file
    monkeypatch.setattr(_object, "CHUNK", 512)
    monkeypatch.setattr(chrome_trace._bytes, "CHUNK", 512)
    monkeypatch.setattr(_object, "HOLD", 2048)
    suffixes = [b"", b', "deviceProperties": [{"id": 0}], "traceName": "t"', b', "x": [{"a": "}]"}]']
    for n in (0, 1, 3, 40, 400):
        for k, suffix in enumerate(suffixes):
            path = tmp_path / f"t{n}_{k}.json"
            path.write_bytes(_object_trace(n, suffix))
            copied = chrome_trace.extract(path, tmp_path)
            copy = copied.events_path.read_bytes()
            placed = chrome_trace.extract(path, tmp_path, in_place=True)
            assert placed.events_path == path and placed.span is not None
            lo, hi = placed.span
            assert path.read_bytes()[lo:hi] == copy
            assert placed.meta == copied.meta and placed.meta["distributedInfo"] == {"rank": 3}
            assert (placed.total_bytes, placed.kept_bytes, placed.truncated) == (path.stat().st_size,) * 2 + (False,)
            placed.release()  # never the trace itself
            assert path.exists()
            assert placed.materialise(tmp_path).read_bytes() == copy and placed.span is None


def test_array_end_found_across_white_space(tmp_path):
    # an indented trace closes its array as "}\n  ]" (or "[\n  ]" when empty) and its metadata
    # after the array holds arrays of its own: the end is the first "]" whose rest parses
    for n in (0, 2):
        doc = {
            "schemaVersion": 1,
            "traceEvents": [{"ph": "X", "name": f"op{i}]", "args": {"d": [[i], []]}} for i in range(n)],
            "deviceProperties": [{"id": 0, "l": [1, []]}],
            "traceName": "t]",
        }
        for indent in (None, 1, 4):
            path = tmp_path / f"w{n}_{indent}.json"
            path.write_text(json.dumps(doc, indent=indent) + " \n")
            ex = chrome_trace.extract(path, tmp_path, in_place=True)
            lo, hi = ex.span
            assert json.loads(path.read_bytes()[lo:hi]) == doc["traceEvents"]
            assert ex.meta == {k: v for k, v in doc.items() if k != "traceEvents"}


def test_the_array_end_is_found_in_a_mapping_that_never_writes_the_file(tmp_path, monkeypatch):
    """The in-place read searches the held-back tail in a private mapping of the file and writes
    its probes there: the file's bytes stay as they were, and a file that cannot be mapped gets
    the same answer from the tail read into memory."""
    import mmap

    monkeypatch.setattr(_object, "CHUNK", 512)
    monkeypatch.setattr(chrome_trace._bytes, "CHUNK", 512)
    monkeypatch.setattr(_object, "HOLD", 6000)  # tails that start past the first mapping granule
    suffixes = [b"", b', "deviceProperties": [{"id": 0}], "traceName": "t"', b', "x": [{"a": "}]"}]']
    mapped, real_mmap = [], mmap.mmap
    monkeypatch.setattr(mmap, "mmap", lambda *a, **kw: mapped.append(kw.get("offset", 0)) or real_mmap(*a, **kw))
    found = {}
    for n in (0, 3, 400):
        for k, suffix in enumerate(suffixes):
            path = tmp_path / f"m{n}_{k}.json"
            path.write_bytes(_object_trace(n, suffix))
            before = path.read_bytes()
            ex = chrome_trace.extract(path, tmp_path, in_place=True)
            assert path.read_bytes() == before
            lo, hi = ex.span
            assert json.loads(before[lo:hi]) == json.loads(before)["traceEvents"]
            found[path] = (ex.span, ex.meta)
    assert len(mapped) == len(found) and max(mapped) > 0  # each file mapped, some from past its start

    def refuse(*args, **kwargs):
        raise OSError("this file system maps nothing")

    monkeypatch.setattr(mmap, "mmap", refuse)
    for path, (span, meta) in found.items():
        ex = chrome_trace.extract(path, tmp_path, in_place=True)
        assert (ex.span, ex.meta) == (span, meta)


def test_gzip_and_cut_short_objects_are_still_copied(tmp_path):
    data = _object_trace(50)
    gz = tmp_path / "t.json.gz"
    gz.write_bytes(gzip.compress(data))
    cut = tmp_path / "cut.json"
    cut.write_bytes(data[: len(data) // 2])
    for path in (gz, cut):
        ex = chrome_trace.extract(path, tmp_path, in_place=True)
        assert ex.span is None and ex.events_path == tmp_path / "events.json"
    kept = json.loads(ex.events_path.read_bytes())  # closed after its last complete event
    assert ex.truncated and 0 < len(kept) < 50 and kept == json.loads(data)["traceEvents"][: len(kept)]
    ex.release()
    assert not ex.events_path.exists()


def _events(n: int, broken: dict[int, tuple[str, str]] | None = None) -> bytes:
    """A JSON array of ``n`` small slices, event ``i`` with ``broken[i] = (old, new)`` replaced."""
    texts = []
    for i in range(n):
        t = json.dumps({"ph": "X", "name": f"e{i}", "pid": 1, "tid": 1, "ts": f"{i}.000", "dur": 1, "args": {"a": i}})
        if broken and i in broken:
            t = t.replace(*broken[i], 1)
        texts.append(t)
    return ("[" + ", ".join(texts) + "]").encode()


def test_duckdb_says_which_piece_failed_and_how_far_it_parsed(tmp_path):
    """The damage search is guided by DuckDB's parse error: the file that failed among a batch's
    and how many elements parsed before the failure.  Read from real errors, so a DuckDB whose
    messages change fails here (the reader then falls back to halving and bisection)."""
    import duckdb

    good, bad = tmp_path / "a.json", tmp_path / "b.json"
    good.write_bytes(_events(50))
    bad.write_bytes(_events(50, {37: ('"dur": 1', '"dur": @')}))
    con = duckdb.connect()
    try:
        con.sql(f"SELECT count(*) FROM {_array._source([str(good), str(bad)])}").fetchall()
    except duckdb.Error as exc:
        error = str(exc).splitlines()[0]
    assert _array._failed_file(error) == str(bad)
    assert _array._parsed_before(error) == 37 and not _array._at_end_of_data(error)
    cut = tmp_path / "c.json"
    cut.write_bytes(_events(50)[:-300])
    try:
        con.sql(f"SELECT count(*) FROM {_array._source([str(cut)])}").fetchall()
    except duckdb.Error as exc:
        error = str(exc).splitlines()[0]
    assert _array._at_end_of_data(error) and _array._parsed_before(error) == 46
    assert _array._parsed_before("Malformed JSON somewhere") is None
    assert _array._at_end_of_data("Malformed JSON somewhere")  # no position: treated as a possible false cut


def test_damage_in_the_middle_of_a_piece_is_searched_in_that_piece_only(tmp_path, monkeypatch):
    """Invalid bytes in the middle of a piece are damage, never a false cut: the read neither
    re-parses the batch in halves, nor widens the piece, nor reads the rest of the file whole.
    It reads the pieces before the damaged one as a batch, the damaged piece's readable prefix
    (as many events as DuckDB parsed), and goes on after the broken event."""
    from profinsight.importers._common import duck

    path = tmp_path / "t.json"
    path.write_bytes(_events(600, {250: ('"dur": 1', '"dur": @')}))
    given: list[list[int]] = []
    real = _array._read_piece

    def read_piece(con, files, *a, **kw):
        given.append([len(open(f, "rb").read()) for f in ([files] if isinstance(files, str) else files)])
        return real(con, files, *a, **kw)

    monkeypatch.setattr(_array, "_read_piece", read_piece)
    con = duck()
    got = _array.read_trace_json(con, path, "ev", chunk_bytes=2_000)
    names = [r[0] for r in con.sql("SELECT name FROM ev ORDER BY idx").fetchall()]
    assert names == [f"e{i}" for i in range(600) if i != 250]
    assert (got.events, got.skipped_places, got.skipped_events, got.truncated) == (599, 1, 1, False)
    assert max(max(g) for g in given) < 2_000 + 200  # no piece widened, no rest read whole
    # the first batch of 16 pieces fails, the pieces before the damaged one read as one
    # batch, then its prefix, then the rest in batches that start small and double while they
    # read (halving, widening and the rest read whole took 24 reads; one batch of 16 after the
    # damage would have written and parsed all of them again at the next damaged place)
    assert [len(g) for g in given] == [16, 11, 1, 2, 4, 8, 3], given


def test_dense_damage_costs_each_place_a_small_read_and_each_probe_once(tmp_path, monkeypatch):
    """Damage every 25 events: after each damaged place the read goes on in small batches that
    grow while they read, not in a full batch that fails at the next place having written and
    parsed the rest of the file again; and the search for the next event parses each span once
    (the prefix search and the resync after it try the same damaged event against the same
    stops).  Every event that is not damaged is read, in order."""
    from profinsight.importers._common import duck

    broken = {i: ('"dur": 1', '"dur": @') for i in range(12, 1200, 25)}
    path = tmp_path / "t.json"
    path.write_bytes(_events(1200, broken))
    written: list[int] = []
    probed: list[tuple[int, int]] = []
    real_read, real_parse = _array._read_piece, _array._Reader._parse

    def read_piece(con, files, *a, **kw):
        written.extend(os.path.getsize(f) for f in ([files] if isinstance(files, str) else files))
        return real_read(con, files, *a, **kw)

    def parse(self, lo, hi, read):
        if "_probe" in read.__qualname__:
            probed.append((lo, hi))
        return real_parse(self, lo, hi, read)

    monkeypatch.setattr(_array, "_read_piece", read_piece)
    monkeypatch.setattr(_array._Reader, "_parse", parse)
    con = duck()
    got = _array.read_trace_json(con, path, "ev", chunk_bytes=4_000)
    names = [r[0] for r in con.sql("SELECT name FROM ev ORDER BY idx").fetchall()]
    assert names == [f"e{i}" for i in range(1200) if i not in broken]
    assert (got.events, got.skipped_places, got.skipped_events, got.truncated) == (1152, 48, 48, False)
    assert len(probed) == len(set(probed)) == 480, "a span probed twice"  # 912 probes before
    # each place costs about a batch of two 4 kB pieces: 0.64-0.68 MB of pieces in all for this
    # 115 kB file (which of a batch's two files DuckDB names as failed depends on its threads);
    # a batch of 16 after each place wrote 2.47 MB
    assert sum(written) < 800_000, sum(written)


def _event_texts(n: int, many: set[int], broken: set[int]) -> list[str]:
    """Small slices; those in ``many`` hold 13 false boundaries (``}, {`` in a string and between
    nested objects), more than a resync try steps over; those in ``broken`` lose a key's quotes."""
    texts = []
    for i in range(n):
        args = {"s": "a}, {b" * 12, "n": [{"x": 1}, {"y": 2}]} if i in many else {"a": i}
        t = json.dumps({"ph": "X", "name": f"e{i}", "pid": 1, "tid": 1, "ts": f"{i}.000", "dur": 1, "args": args})
        texts.append(t.replace('"ph"', "ph", 1) if i in broken else t)
    return texts


def test_events_with_many_false_boundaries_beside_damage_are_read(tmp_path):
    """Events with more ``}, {`` inside them than a try steps over, right before a damaged event,
    right after one, between two, and cut by a piece's end just before one, are read like any
    other: only the damaged events are skipped.  Before, depending on where the pieces fell, such an event
    was skipped as damaged too."""
    from profinsight.importers._common import duck

    many, broken = {9, 40, 61, 90, 93, 111}, {41, 60, 95, 110, 112}
    path = tmp_path / "t.json"
    path.write_text("[" + ", ".join(_event_texts(130, many, broken)) + "]")
    for chunk in (300, 700, 1_000, 2_500, 4_000, 1 << 20):
        con = duck()
        got = _array.read_trace_json(con, path, "ev", chunk_bytes=chunk)
        names = [r[0] for r in con.sql("SELECT name FROM ev ORDER BY idx").fetchall()]
        assert names == [f"e{i}" for i in range(130) if i not in broken], chunk
        assert (got.skipped_places, got.skipped_events, got.truncated) == (5, 5, False), (chunk, got)


def test_event_starts_after_damage_are_found_once_across_windows(tmp_path):
    """Where an event can start after damage: each ``}, {`` (its end just after the ``}``) and
    each bare ``, {`` (its end the ``,``), in file order, each once whatever the window size
    (a separator can straddle two windows, and a window can find a boundary's ``, {`` bare)."""
    data = b'{"a": 1},  {"b": {"c"  ,\n {"d": [1, {"e": 2}]}, {"f": 3}'
    path = tmp_path / "s.json"
    path.write_bytes(data)
    want = [(data.index(b"}") + 1, data.index(b'{"b"'), False), (data.index(b",\n"), data.index(b'{"d"'), True)]
    want += [(data.index(b"[1") + 2, data.index(b'{"e"'), True), (data.rindex(b"}]}") + 3, data.index(b'{"f"'), False)]
    for window in (4, 8, 13, 1 << 20):
        assert list(_array._starts_from(path, 0, len(data), window)) == want, window


@pytest.mark.parametrize(
    ("lost", "many"),
    [({20}, set()), ({28}, set()), ({20, 21}, set()), ({5, 20, 22}, set()), ({20}, {19, 21}), ({3, 16}, {4, 17})],
)
def test_an_event_that_lost_its_end_costs_only_itself(tmp_path, lost, many):
    """An event cut from inside its args through its closing braces (bytes lost in a copy) is
    followed by the next event's ``, {`` with no ``}`` before it.  The read goes on at that event:
    after the last event too (28 of 30), after two such events in a row, and beside events with
    13 false boundaries.  Before, it resumed only at the next ``}, {``: the event after each
    damaged one was lost as well (and the last one turned the file into a cut), while the count
    said one event per place."""
    from profinsight.importers._common import duck

    texts = _event_texts(30, many, set())
    for i in lost:
        texts[i] = texts[i][: texts[i].index('"args"') + 12]  # '..."args": {"a"' and no more
    path = tmp_path / "t.json"
    path.write_text("[" + ", ".join(texts) + "]")
    places = len([i for i in sorted(lost) if i - 1 not in lost])
    for chunk in (300, 1_000, 1 << 20):
        con = duck()
        got = _array.read_trace_json(con, path, "ev", chunk_bytes=chunk)
        names = [r[0] for r in con.sql("SELECT name FROM ev ORDER BY idx").fetchall()]
        assert names == [f"e{i}" for i in range(30) if i not in lost], chunk
        assert (got.skipped_places, got.skipped_events, got.truncated) == (places, len(lost), False), (chunk, got)


@pytest.mark.parametrize("form", ["array", "object"])
@pytest.mark.parametrize("lost", [False, True])
def test_the_last_event_is_read_after_damage_whatever_its_strings_hold(tmp_path, form, lost):
    """The array's last event holds 13 false boundaries and follows a damaged event (a key
    unquoted, or its end lost): it ends where the events do, which no ``}, {`` marks, so that end
    is among the stops its tries parse to.  Before, every stop was a false boundary inside it: it
    was skipped and the file said to be cut."""
    from profinsight.importers._common import duck

    texts = _event_texts(40, {39}, set() if lost else {38})
    if lost:
        texts[38] = texts[38][: texts[38].index('"args"') + 12]
    events = ", ".join(texts)
    path = tmp_path / "t.json"
    head = '{"schemaVersion": 1, "traceEvents": ['
    path.write_text("[" + events + "]" if form == "array" else head + events + '], "traceName": "x"}')
    ex = chrome_trace.extract(path, tmp_path, in_place=True) if form == "object" else None
    for chunk in (300, 1 << 20):
        con = duck()
        got = _array.read_trace_json(con, path, "ev", chunk_bytes=chunk, span=None if ex is None else ex.span)
        names = [r[0] for r in con.sql("SELECT name FROM ev ORDER BY idx").fetchall()]
        assert names == [f"e{i}" for i in range(40) if i != 38], chunk
        assert (got.skipped_places, got.skipped_events, got.truncated) == (1, 1, False), (chunk, got)
    if ex is not None:
        ex.release()


def test_a_file_cut_after_the_comma_keeps_the_last_event(tmp_path):
    """A copy that stopped right after the separator that follows a whole event (``}, ``)
    keeps that event: only the closing bracket is missing."""
    from profinsight.importers._common import duck

    texts = _event_texts(80, set(), set())
    path = tmp_path / "t.json"
    path.write_text("[" + ", ".join(texts[:50]) + ", ")
    for resync in (True, False):
        con = duck()
        got = _array.read_trace_json(con, path, "ev", chunk_bytes=700, resync=resync)
        assert (got.events, got.truncated, got.lost_bytes) == (50, True, 0)
        assert con.sql("SELECT max(name) FROM ev WHERE idx = 49").fetchall() == [("e49",)]


def _random_damage(rnd, low: int) -> tuple[list[str], set[int]]:
    """``low``-1500 small events, some with 1-12 ``}, {`` inside strings and lists or ``]}`` in
    strings, 0-5 of them broken (a key unquoted, a control character in a string, an object
    closed early, or the end lost from inside the args on) -> (their texts, the broken ones)."""
    n = rnd.randint(low, 1500)
    texts = []
    for i in range(n):
        r = rnd.random()
        if r < 0.05:
            args = {"s": "a}, {b" * rnd.randint(1, 12), "n": [{"x": 1}, {"y": 2}]}
        elif r < 0.1:
            args = {"dims": [[1, 2], [3]], "t": "]}"}
        else:
            args = {"a": i}
        texts.append(json.dumps({"ph": "X", "name": f"e{i}", "pid": 1, "tid": 1, "ts": i, "dur": 1, "args": args}))
    broken = set(rnd.sample(range(n), rnd.randint(0, 5)))
    change = rnd.choice([('"ph"', "ph"), ('"name": "', '"name": "\x01'), ('"tid": 1', '"tid": 1}'), None])
    for i in broken:
        texts[i] = texts[i][: texts[i].index('"args"') + 12] if change is None else texts[i].replace(*change, 1)
    return texts, broken


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(24))
def test_random_damage_costs_only_the_broken_events(tmp_path, seed):
    """A seeded campaign against the reader (:func:`_random_damage`), the file cut short in one
    case of five, pieces of 300 B to 1 MB, with resync and without.  With resync every whole
    event that is not broken is read, in order; without, the events before the first damage."""
    import random

    from profinsight.importers._common import duck

    rnd = random.Random(seed)
    texts, broken = _random_damage(rnd, 50)
    n = len(texts)
    body = "[" + ", ".join(texts) + "]"
    if rnd.random() < 0.2:
        body = body[: rnd.randint(len(body) // 2, len(body) - 1)]
    whole = [i for i in range(n) if len("[" + ", ".join(texts[: i + 1])) <= len(body)]
    chunk = rnd.choice([300, 1000, 4000, 1 << 20])
    resync = rnd.random() < 0.8
    path = tmp_path / "t.json"
    path.write_text(body)
    con = duck()
    got = _array.read_trace_json(con, path, "ev", chunk_bytes=chunk, resync=resync)
    names = [r[0] for r in con.sql("SELECT name FROM ev ORDER BY idx").fetchall()]
    if resync:
        expected = [f"e{i}" for i in whole if i not in broken]
    else:
        expected = [f"e{i}" for i in whole if i < min(broken, default=n)]
    assert names == expected, (n, sorted(broken), len(body), chunk, resync, got)
    assert got.events == len(expected)
    assert got.truncated == (len(body) < len("[" + ", ".join(texts) + "]") or (not resync and bool(broken)))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(12))
def test_random_damage_in_the_object_form_costs_only_the_broken_events(tmp_path, seed):
    """The same campaign in the Kineto form (``{"traceEvents": [...], ...}`` with metadata before
    and after the array, plain or gzip, cut short in one case of four), through the copy or
    location of the array (``extract``) and the reader with resync: every whole event that is not
    broken is read, in order."""
    import random

    from profinsight.importers._common import duck

    rnd = random.Random(1000 + seed)
    texts, broken = _random_damage(rnd, 20)
    head = '{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "GPU"}], "traceEvents": ['
    tail = rnd.choice(['], "traceName": "x", "baseTimeNanoseconds": 1000}', '], "extra": [{"a": [1]}, {"b": 2}]}'])
    body = head + ", ".join(texts) + tail
    if rnd.random() < 0.25:
        body = body[: rnd.randint(len(head) + 10, len(body) - 1)]
    whole = [i for i in range(len(texts)) if len(head + ", ".join(texts[: i + 1])) <= len(body)]
    path = tmp_path / ("t.json.gz" if rnd.random() < 0.2 else "t.json")
    path.write_bytes(gzip.compress(body.encode()) if path.suffix == ".gz" else body.encode())
    ex = chrome_trace.extract(path, tmp_path, in_place=True)
    con = duck()
    got = _array.read_trace_json(con, ex.events_path, "ev", chunk_bytes=rnd.choice([300, 1000, 1 << 20]), span=ex.span)
    names = [r[0] for r in con.sql("SELECT name FROM ev ORDER BY idx").fetchall()]
    assert names == [f"e{i}" for i in whole if i not in broken], (len(texts), sorted(broken), len(body), got)
    ex.release()


def test_an_object_cut_right_after_an_event_keeps_it(tmp_path):
    """A Kineto-form trace whose copy stopped right after an event (its ``}``, or the ``,`` after
    it) keeps that event, also when ``}, {`` inside its strings comes after the last real
    boundary, and when it is the array's only event; gzip the same.  Before, the copy ended at the
    last boundary, and the final whole event was lost."""
    texts = _event_texts(30, {29}, set())
    head = '{"schemaVersion": 1, "traceEvents": ['
    for n, tail in ((30, ""), (30, ", "), (12, ","), (1, "")):
        for name, ex, kept in _extracted(tmp_path / f"{n}{len(tail)}", head + ", ".join(texts[:n]) + tail):
            assert ex.truncated and kept == [f"e{i}" for i in range(n)], (n, tail, name)


def test_an_object_cut_after_its_array_closed_keeps_the_last_event(tmp_path):
    """A Kineto-form trace cut in the keys after its array (``], "traceName": "x", "baseTime``)
    keeps every event, and says the array closed; also when the last event holds ``]}`` and
    ``}, {`` in its strings, and when the cut is right after the ``]`` or its ``,``; gzip the
    same.  Before, the cut was taken to lie inside the array: the last event was dropped."""
    from profinsight.importers._common import duck

    texts = _event_texts(30, {29}, set())
    texts[28] = texts[28].replace('"args": {', '"args": {"t": "]}", ', 1)
    head = '{"schemaVersion": 1, "traceEvents": ['
    whole = head + ", ".join(texts) + '], "traceName": "x", "baseTimeNanoseconds": 1000}'
    close = whole.rindex("]")
    for cut in (close + 1, close + 2, close + 5, close + 19, len(whole) - 8, len(whole) - 1):
        for name, ex, kept in _extracted(tmp_path / str(cut), whole[:cut]):
            assert (ex.truncated, ex.array_closed) == (True, True), (cut, name)
            assert kept == [f"e{i}" for i in range(30)], (cut, name)
    # cut before the ']': inside the array, as before
    for name, ex, kept in _extracted(tmp_path / "in", whole[:close]):
        assert (ex.truncated, ex.array_closed, len(kept)) == (True, False, 30), name

    # cut inside the last event, after a list of objects in its args ('[{"x": 1}, {"y": 2}], "s"'):
    # '{"y": 2}' before a ']' is no event, and the array did not close
    texts[29] = texts[29].replace('"args": {', '"args": {"n": [{"x": 1}, {"y": 2}], ', 1)
    inside = head + ", ".join(texts)
    for name, ex, _kept in _extracted(tmp_path / "nested", inside[: inside.index('{"y": 2}], ') + 14]):
        assert (ex.truncated, ex.array_closed) == (True, False), name
        con = duck()
        _array.read_trace_json(con, ex.events_path, "ev", chunk_bytes=1 << 20, span=ex.span)
        assert [r[0] for r in con.sql("SELECT name FROM ev ORDER BY idx").fetchall()] == [f"e{i}" for i in range(29)]


@pytest.mark.parametrize("tail", ["", ",", ", "])
def test_the_last_event_after_a_lost_end_is_found_in_a_cut_tail(tail):
    """A tail cut right after an event (or the ``,`` after it) that follows a bare ``, {`` (the
    event before it lost its end): that event is whole, and its ``}`` is the end to keep.  Before,
    only a ``}, {`` started a candidate, and the end kept was the one before the damaged event."""
    texts = _event_texts(10, set(), set())
    texts[8] = texts[8][: texts[8].index('"args": {') + 12]
    data = ("[" + ", ".join(texts)).encode()
    assert chrome_trace.last_event_end(data + tail.encode(), at_array_start=True) == len(data) - 1


def _extracted(folder, text: str):
    """(file name, :func:`chrome_trace.extract` of it, the names of the events it kept, or None
    where its copy does not parse) for ``text`` written plain and gzip, each in a folder of its own
    under ``folder``."""
    data = text.encode()
    for name, raw in (("t.json", data), ("t.json.gz", gzip.compress(data))):
        where = folder / name
        where.mkdir(parents=True)
        path = where / name
        path.write_bytes(raw)
        ex = chrome_trace.extract(path, where, in_place=True)
        try:
            kept = [e["name"] for e in json.loads(ex.events_path.read_bytes())]
        except ValueError:  # a tail cut inside an event: the reader's damage search takes it from here
            kept = None
        yield name, ex, kept
        ex.release()
