"""The one Chrome-trace reader: both forms (array, object), plain or gzip, are told apart by
content, and every importer cuts and recovers at the same event boundary."""

from __future__ import annotations

import gzip
import json

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
    assert _array._BOUNDARY is chrome_trace.BOUNDARY is _object.BOUNDARY is _salvage.BOUNDARY
    bad = tmp_path / "events.json"
    bad.write_bytes(b'[{"a": 1}, {"b": 2, oops}, {"c": 3}]')
    kept, dropped, _lost = chrome_trace.salvage(bad, tmp_path / "fixed.json")
    assert (kept, dropped) == (2, 1)
    assert json.loads((tmp_path / "fixed.json").read_text()) == [{"a": 1}, {"c": 3}]


def _events_file(tmp_path, n=400, every=25):
    """``n`` events; every ``every``-th holds ``}, {`` inside a string (a false cut)."""
    events = [
        {
            "ph": "X",
            "name": f"e{i}",
            "pid": 1,
            "tid": 1,
            "ts": f"{i}.000",
            "dur": 1,
            "args": {"s": "a}, {b" * 20} if i % every == 0 else {"a": i},
        }
        for i in range(n)
    ]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(events))
    return path


def test_pieces_through_pipes_read_as_copied_pieces_do(tmp_path, monkeypatch):
    """A batch of pieces streamed through named pipes gives the rows, the piece count and the
    recovery of pieces copied into files, false cuts (failed batches) included, and leaves no
    thread or file behind."""
    import threading

    from profinsight.importers._common import duck

    path = _events_file(tmp_path)
    got = {}
    for stream in (True, False):
        monkeypatch.setattr(_array, "_CAN_STREAM", stream)
        before = threading.active_count()
        con = duck()
        read = _array.read_trace_json(con, path, "ev", chunk_bytes=700)
        rows = con.sql("SELECT * FROM ev ORDER BY idx").fetchall()
        assert threading.active_count() == before
        got[stream] = (read, rows)
    assert got[True] == got[False]
    read, rows = got[True]
    assert read.events == 400 and not read.truncated and read.chunks > 20
    assert [r[2] for r in rows] == [f"e{i}" for i in range(400)]


def test_pipes_a_statement_left_unread_do_not_hang(tmp_path):
    """The pipes of a statement that failed before opening them, or stopped half-way through
    one, are drained on leaving: every filling thread ends."""
    import threading

    data = b"".join(b'{"a": %d}, ' % i for i in range(200_000))
    path = tmp_path / "big.json"
    path.write_bytes(data)
    size = len(data)
    ranges = [(0, size // 3), (size // 3, 2 * size // 3), (2 * size // 3, size)]
    folder = tmp_path / "pieces"
    folder.mkdir()

    def use():
        with _array._pieces(path, ranges, str(folder), 0) as names:
            assert len(names) == 3
            with open(names[1], "rb") as f:  # one read in part, the others never opened
                assert f.read(10)[:1] == b"["

    before = threading.active_count()
    t = threading.Thread(target=use)
    t.start()
    t.join(20)
    assert not t.is_alive()
    assert threading.active_count() == before
    assert list(folder.iterdir()) == []
