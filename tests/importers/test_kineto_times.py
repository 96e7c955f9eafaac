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
