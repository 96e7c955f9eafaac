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
