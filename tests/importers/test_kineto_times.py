"""Kineto times as traces write them: ``ts`` / ``dur`` as JSON strings (some exporters and
post-processors quote them), numbers with a nanosecond fraction (``1700000000000020.789``) or
finer (rounded to the ns), relative to ``baseTimeNanoseconds``.  Tiny traces written here as
text, so that no float ever touches the digits before the importer reads them."""

from __future__ import annotations

import pytest

import profinsight


def _trace(path, ts: dict, dur: dict, *, quote: bool, base: int | None = None) -> None:
    q = (lambda v: f'"{v}"') if quote else (lambda v: v)
    ev = [
        ("cpu_op", "ProfilerStep#1", 1, 1, "step", ""),
        ("cpu_op", "aten::mm", 1, 1, "mm", ""),
        ("cuda_runtime", "cudaLaunchKernel", 1, 1, "launch", ', "args": {"correlation": 7, "External id": 1}'),
        ("kernel", "gemm", 0, 7, "gemm", ', "args": {"correlation": 7, "device": 0, "stream": 7, "External id": 1}'),
    ]
    events = ",".join(
        f'{{"ph": "X", "cat": "{c}", "name": "{n}", "pid": {pid}, "tid": {tid}, "ts": {q(ts[k])}, "dur": {q(dur[k])}{a}}}'
        for c, n, pid, tid, k, a in ev
    )
    head = '{"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": 1}, '
    head += '"deviceProperties": [{"id": 0, "name": "GPU"}], '
    if base is not None:
        head += f'"baseTimeNanoseconds": {base}, '
    path.write_text(head + f'"traceEvents": [{events}]}}')


EPOCH_TS = {
    "step": "1700000000000000.000",
    "mm": "1700000000000010.123",
    "launch": "1700000000000012.5",
    "gemm": "1700000000000020.7896",
}
DUR = {"step": "1000.5", "mm": "20.25", "launch": "5", "gemm": "100.0016"}
#: the exact ns of the texts above (sub-ns digits rounded)
EXPECTED = {
    "ProfilerStep#1": (1700000000000000000, 1000500),
    "aten::mm": (1700000000000010123, 20250),
    "cudaLaunchKernel": (1700000000000012500, 5000),
    "gemm": (1700000000000020790, 100002),
}


def _times(p) -> dict:
    out = {}
    for table in ("host_ops", "api_calls", "device_tasks"):
        t = p.table(table)
        out.update({r["name"]: (int(r["start_ns"]), int(r["dur_ns"])) for _, r in t.iterrows()})
    return out


@pytest.mark.parametrize("quote", [True, False], ids=["strings", "numbers"])
def test_ts_and_dur_as_strings_or_numbers_give_the_same_exact_ns(tmp_path, quote):
    path = tmp_path / "t.json"
    _trace(path, EPOCH_TS, DUR, quote=quote)
    p = profinsight.load(path)
    assert _times(p) == EXPECTED
    assert len(p.table("launches")) >= 1  # the kernel links to its launch whatever the spelling
    step = p.table("steps").iloc[0]
    assert (step["host_start_ns"], step["device_start_ns"]) == (1700000000000000000, 1700000000000020790)
    assert {d.code for d in p.diagnostics} == {"no-shapes"}
    assert "no-device-activity" not in {d.code for d in p.diagnostics}


@pytest.mark.parametrize("quote", [True, False], ids=["strings", "numbers"])
def test_ns_fractions_relative_to_base_time(tmp_path, quote):
    base = 1_700_000_000_000_000_000
    rel = {"step": "0.000", "mm": "10.123", "launch": "12.5", "gemm": "20.7896"}
    path = tmp_path / "t.json"
    _trace(path, rel, DUR, quote=quote, base=base)
    assert _times(profinsight.load(path)) == EXPECTED


def test_a_ts_string_that_is_not_a_number_is_dropped_and_counted(tmp_path):
    path = tmp_path / "t.json"
    _trace(path, dict(EPOCH_TS, mm="soon"), DUR, quote=True)
    p = profinsight.load(path)
    assert "aten::mm" not in _times(p) and _times(p)["gemm"] == EXPECTED["gemm"]
    (dropped,) = [d for d in p.diagnostics if d.code == "events-dropped"]
    assert dropped.message.startswith("1 event(s) of t.json had no usable timestamp")


# --- the 64-bit window of times(): the same values as the 128-bit path, on every edge --------------
_NEAR = 1_700_000_000_000_000  # us, a trace's first ts
_TS_EDGES = [
    "1700000000000000.000",
    "1700000000000010.123",
    "1700000000000020.7896",
    "-0.001",
    "0",
    "12.5",
    # the window's edges and one step beyond them
    f"{_NEAR - 9 * 10**11}",
    f"{_NEAR - 9 * 10**11}.001",
    f"{_NEAR + 9 * 10**11}",
    f"{_NEAR + 9 * 10**11}.001",
    # offsets that fit 18 digits but whose ns would overflow int64: a CASE must never compute them
    f"{_NEAR + 5 * 10**14}.123",
    f"{_NEAR - 5 * 10**14}.5",
    "8999999999999999.999",
    "9000000000000000",
    "9000000000000000.001",
    "9999999999999999.999",
    "-9000000000000000",
    "1e16",
    "-1e30",
    "1e300",
]
_DUR_EDGES = [
    "0",
    "5",
    "1000.5",
    "100.0016",
    "1.0005",
    "-1.0005",
    "-0",
    "1e3",
    " 12.5 ",
    "+5",
    ".5",
    "5.",
    "1_000",
    "900000000000",
    "900000000000.001",
    "-900000000000.001",
    "999999999999.999",
    "1000000000000",
    "999999999999999.999",
    "1000000000000000",
    "8999999999999999",
    "9999999999999999.999",
    "1e16",
    "Infinity",
    "abc",
    "0x10",
    "",
]


@pytest.mark.parametrize(
    ("near", "base"),
    [(_NEAR, 0), (0, 1_700_000_000_000_000_000), (-5, 10**18), (None, 0), (9 * 10**15, 0), (_NEAR, 3 * 10**18)],
)
def test_times_near_the_first_ts_equal_the_exact_128_bit_path(near, base):
    from profinsight.importers._common import duck
    from profinsight.importers.kineto._events import times

    con = duck(threads=1)
    rows = (
        [(t, d) for t in _TS_EDGES for d in _DUR_EDGES[:3]] + [(_TS_EDGES[0], d) for d in _DUR_EDGES] + [(None, None)]
    )
    con.execute("CREATE TABLE e (ts VARCHAR, dur VARCHAR)")
    con.executemany("INSERT INTO e VALUES (?, ?)", rows)
    src = "(SELECT TRY_CAST(ts AS DECIMAL(38,3)) AS ts, dur, rowid AS r FROM e)"
    plain = con.execute(f"SELECT r, {times(base)} FROM {src} ORDER BY r").fetchall()
    fast = con.execute(f"SELECT r, {times(base, near)} FROM {src} ORDER BY r").fetchall()
    assert fast == plain
    got = dict(zip([r for r in rows], [row[1:] for row in plain]))
    # the exact values themselves, on both paths: ts to the ns, dur rounded to the ns
    assert got[("1700000000000020.7896", "1000.5")] == (1700000000000020790 + base, 1000500)
    assert got[(_TS_EDGES[0], "1.0005")][1] == 1001 and got[(_TS_EDGES[0], "-1.0005")][1] == -1001
    assert got[(_TS_EDGES[0], "999999999999999.999")][1] == 999999999999999999
    assert got[("9000000000000000.001", "0")][0] == (9000000000000000001 + base if base < 2 * 10**17 else None)
    assert got[("1e16", "0")][0] is None and got[(_TS_EDGES[0], "1e16")][1] is None


def test_first_ts_is_read_from_the_start_of_the_event_array(tmp_path):
    from profinsight.importers.kineto._events import first_ts_us

    path = tmp_path / "t.json"
    path.write_bytes(b'{"a": {"ts": 5}, "traceEvents": [{"ph": "X", "ts" : -1700000000000010.123, "dur": 1}]}')
    assert first_ts_us(path) == 5
    assert first_ts_us(path, path.read_bytes().index(b"[")) == -1700000000000010
    assert first_ts_us(path, len(path.read_bytes())) is None
    path.write_bytes(b'[{"ts": "12"}, {"ts": 123456789012345678}]')  # a string, then too many digits
    assert first_ts_us(path) is None
    assert first_ts_us(tmp_path / "missing.json") is None


def test_events_far_from_the_first_one_keep_their_exact_times(tmp_path):
    """One event 5e14 us (16 years) after the first: outside the 64-bit window, read the exact
    128-bit way; the ones near the first inside it.  Both to the ns."""
    far = {
        "step": "1700000000000000.000",
        "mm": "1700500000000010.123",
        "launch": "1700000000000012.5",
        "gemm": "1700000000000020.7896",
    }
    path = tmp_path / "t.json"
    _trace(path, far, DUR, quote=False)
    got = _times(profinsight.load(path))
    assert got["aten::mm"] == (1700500000000010123, 20250)
    assert got["gemm"] == EXPECTED["gemm"] and got["ProfilerStep#1"] == EXPECTED["ProfilerStep#1"]
