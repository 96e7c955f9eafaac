"""Old Kineto traces (PyTorch 1.8-1.13: capitalised categories ``Operator``, ``Runtime``,
``Kernel``, ``Memcpy``, ``Memset``; ``external id`` in lower case; ``Input dims``) and traces
written as a bare JSON array, against the real files in ../shared/fixtures/kineto/legacy.

Every expected value is written out, and counted again here from the JSON (gzip + json), so a
wrong literal and a wrong importer both show up.
"""

from __future__ import annotations

import gzip
import json
import shutil
from collections import Counter

import pytest

import profinsight
from profinsight.importers import kineto, load_rank

FILES = {
    # name: (kernel, memset, memcpy, ops, runtime calls, steps, correlation links, external-id links, tasks in a step)
    "resnet50_tb_plugin_2021": (9564, 439, 12, 33384, 10920, 6, 9282, 9180, 10015),
    "resnet50_json_array": (9538, 377, 12, 42438, 10800, 6, 9162, 9060, 9839),
    "inference_rank_1": (4, 0, 0, 0, 8, 0, 4, 0, 0),
}
_LOADED: dict = {}


def _path(fixtures, name):
    return fixtures / "kineto" / "legacy" / f"{name}.json.gz"


def _events(fixtures, name) -> list:
    doc = json.loads(gzip.open(_path(fixtures, name)).read())
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def _load(fixtures, name):
    if name not in _LOADED:
        _LOADED[name] = load_rank(kineto.sniff(_path(fixtures, name)))
    return _LOADED[name]


def _counted(ev: list) -> tuple:
    """The facts of FILES, counted from the raw events the way the old traces link them."""
    cats = Counter(e.get("cat") for e in ev if e.get("ph") == "X")
    runtime = {e["args"]["correlation"]: e for e in ev if e.get("cat") == "Runtime"}
    ops: dict = {}
    for e in ev:
        if e.get("cat") == "Operator":
            ops.setdefault(e["args"]["External id"], []).append(e)
    dev = [e for e in ev if e.get("cat") in ("Kernel", "Memset", "Memcpy")]
    steps = [e for e in ev if e.get("cat") == "Operator" and e["name"].startswith("ProfilerStep#")]
    corr = ext = stepped = 0
    for d in dev:
        call = runtime.get(d["args"]["correlation"])
        corr += call is not None
        at = call["ts"] if call else None
        ext += any(
            (o["ts"] <= at <= o["ts"] + o["dur"]) if at is not None else o["ts"] <= d["ts"]
            for o in ops.get(d["args"]["external id"], [])
        )
        launch = at if at is not None else d["ts"]
        stepped += any(s["ts"] <= launch < s["ts"] + s["dur"] for s in steps)
    return (
        cats["Kernel"],
        cats["Memset"],
        cats["Memcpy"],
        cats["Operator"],
        cats["Runtime"],
        len(steps),
        corr,
        ext,
        stepped,
    )


@pytest.mark.parametrize("name", sorted(FILES))
def test_old_categories_fill_every_table(fixtures, name):
    assert _counted(_events(fixtures, name)) == FILES[name]
    kernel, memset, memcpy, ops, runtime, steps, corr, ext, stepped = FILES[name]
    rd = _load(fixtures, name)
    t = rd.tables
    assert Counter(t["device_tasks"]["kind"].to_pylist()) == Counter(
        {k: v for k, v in {"kernel": kernel, "memset": memset, "memcpy": memcpy}.items() if v}
    )
    assert t["host_ops"].num_rows == ops and set(t["host_ops"]["category"].to_pylist()) <= {"op"}
    assert Counter(t["api_calls"]["level"].to_pylist()) == {"cuda_runtime": runtime}
    assert t["steps"].num_rows == steps
    links = Counter(t["launches"]["link"].to_pylist())
    assert links["correlation"] == corr and links["external_id"] == ext
    assert t["device_tasks"].num_rows - t["device_tasks"]["step"].null_count == stepped
    info = t["run_info"].to_pylist()[0]
    assert info["device_family"] == "gpu" and info["activities"] == "CPU,CUDA"
    assert "no-device-activity" not in {d.code for d in rd.diagnostics}


def test_old_arg_spellings_are_read(fixtures):
    ev = _events(fixtures, "resnet50_tb_plugin_2021")
    rd = _load(fixtures, "resnet50_tb_plugin_2021")
    ho, dt, api = (rd.tables[n] for n in ("host_ops", "device_tasks", "api_calls"))
    # External id (ops), external id (kernels, runtime calls), Input dims: in file order
    ops = [e for e in ev if e.get("cat") == "Operator"]
    assert ho["external_id"].to_pylist() == [e["args"]["External id"] for e in ops]
    dev = [e for e in ev if e.get("cat") in ("Kernel", "Memset", "Memcpy")]
    assert dt["external_id"].to_pylist() == [e["args"]["external id"] for e in dev]
    assert api["external_id"].to_pylist() == [e["args"]["external id"] for e in ev if e.get("cat") == "Runtime"]
    assert ho["input_shapes"].to_pylist()[:3] == [";;;;;", "1", ";;;;"]
    steps = rd.tables["steps"].to_pylist()
    assert [s["step"] for s in steps] == [5, 6, 7, 8, 9, 10]
    first = next(e for e in ops if e["name"] == "ProfilerStep#5")
    assert steps[0]["host_start_ns"] == first["ts"] * 1000
    assert steps[0]["host_end_ns"] == (first["ts"] + first["dur"]) * 1000


def test_a_bare_array_is_found_by_content(fixtures, tmp_path):
    shutil.copy(_path(fixtures, "resnet50_json_array"), tmp_path / "blob")
    (run,) = profinsight.discover(tmp_path)
    assert run.format == "kineto" and run.root.name == "blob"
    # torch_npu's trace_view.json (also a bare array) and a bare array of plain events are not Kineto
    assert all(kineto.sniff(p) is None for p in (fixtures / "ascend_pt").rglob("trace_view.json"))
    (tmp_path / "other.json").write_text(json.dumps([{"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "pid": 1}]))
    assert kineto.sniff(tmp_path / "other.json") is None


def test_a_bare_array_cut_short_keeps_its_complete_events(fixtures, tmp_path):
    text = gzip.open(_path(fixtures, "inference_rank_1")).read()
    doc = json.loads(text)
    events = doc["traceEvents"]
    whole = json.dumps(events, indent=1).encode()
    (tmp_path / "whole.json").write_bytes(whole)
    rd = load_rank(kineto.sniff(tmp_path / "whole.json"))
    assert rd.tables["device_tasks"].num_rows == 4 and rd.tables["api_calls"].num_rows == 8
    assert "trace-truncated" not in {d.code for d in rd.diagnostics}
    # cut inside the last kernel: the events before it stay
    last_kernel = max(i for i, e in enumerate(events) if e.get("cat") == "Kernel")
    cut = json.dumps(events[: last_kernel + 1], indent=1).encode()[:-40]
    (tmp_path / "cut.json").write_bytes(cut)
    rd = load_rank(kineto.sniff(tmp_path / "cut.json"))
    assert rd.tables["device_tasks"].num_rows == 3
    assert {d.code: d.severity for d in rd.diagnostics}["trace-truncated"] == "warning"


@pytest.mark.parametrize("after", ["}", "},", "}, "])
def test_a_bare_array_cut_right_after_an_event_keeps_it(fixtures, tmp_path, after):
    """inference_rank_1's events as a bare array, cut right after its last kernel's ``}`` (or the
    ``,`` after it): that kernel is whole and read, plain and gzip, also when a string of it
    holds ``}, {``.  Before, the copy was closed at the last ``}, {``, and the kernel was lost."""
    events = json.loads(gzip.open(_path(fixtures, "inference_rank_1")).read())["traceEvents"]
    last_kernel = max(i for i, e in enumerate(events) if e.get("cat") == "Kernel")
    for note in ("", "a}, {b"):
        kept = [dict(e) for e in events[: last_kernel + 1]]
        if note:
            kept[-1]["args"] = {**kept[-1]["args"], "note": note}
        text = json.dumps(kept, indent=1)
        data = (text[: text.rindex("}") + 1] + after[1:]).encode()  # the array's ']' and what follows cut
        for name, raw in (("cut.json", data), ("cut.json.gz", gzip.compress(data))):
            path = tmp_path / f"{len(note)}{name}"
            path.write_bytes(raw)
            rd = load_rank(kineto.sniff(path))
            assert rd.tables["device_tasks"].num_rows == 4, (note, name)
            codes = {d.code for d in rd.diagnostics}
            assert "trace-truncated" in codes and "malformed-events" not in codes, (note, name)


@pytest.mark.parametrize("form", ["bare", "object"])
def test_a_copy_cut_right_after_the_event_that_follows_a_lost_end_keeps_it(fixtures, tmp_path, form):
    """inference_rank_1 cut right after its last kernel, where the flow event before that kernel
    lost its end (bytes cut out of it from inside on): the kernel follows a bare ``, {``.  It is
    whole and read, as a bare array and in the ``traceEvents`` object, plain and gzip; only the
    flow event is lost, and said.  Before, the last whole event was looked for only after a
    ``}, {``, and the kernel was lost with the damaged event."""
    events = json.loads(gzip.open(_path(fixtures, "inference_rank_1")).read())["traceEvents"]
    last_kernel = max(i for i, e in enumerate(events) if e.get("cat") == "Kernel")
    texts = [json.dumps(e) for e in events[: last_kernel + 1]]
    assert json.loads(texts[-2])["ph"] == "s"
    texts[-2] = texts[-2][: texts[-2].index(', "bp"')]  # '{"ph": "s", ..., "name": "cudaLaunchKernel"'
    head = "[" if form == "bare" else '{"schemaVersion": 1, "traceEvents": ['
    data = (head + ", ".join(texts)).encode()
    for name, raw in (("cut.json", data), ("cut.json.gz", gzip.compress(data))):
        path = tmp_path / f"{form}{name}"
        path.write_bytes(raw)
        rd = load_rank(kineto.sniff(path))
        # every kernel, and every runtime call before the cut (7 of the trace's 8)
        assert rd.tables["device_tasks"].num_rows == 4 and rd.tables["api_calls"].num_rows == 7, name
        codes = {d.code for d in rd.diagnostics}
        assert {"trace-truncated", "malformed-events"} <= codes, (name, codes)


@pytest.mark.parametrize("pad", [1, 70_000, 300_000])
def test_nul_padding_after_the_object_is_not_data(fixtures, tmp_path, pad):
    """A file preallocated and cut short ends in NUL bytes: the object before them is the trace,
    whole (the end of its event array is found in place, past any amount of padding)."""
    from profinsight.importers.chrome_trace._object import _locate, _without_trailing_nul

    raw = gzip.open(fixtures / "kineto" / "gpu_alexnet.json.gz").read()
    plain, padded = tmp_path / "plain.json", tmp_path / "padded.json"
    plain.write_bytes(raw)
    padded.write_bytes(raw + b"\x00" * pad)
    assert _locate(padded).span == _locate(plain).span
    a, b = profinsight.load(plain), profinsight.load(padded)
    assert [d.code for d in b.diagnostics] == [d.code for d in a.diagnostics]
    for name in ("host_ops", "device_tasks", "api_calls", "launches", "trace_slices"):
        assert b.arrow(name).equals(a.arrow(name))
    for buf in (b"", b"\x00" * 9, b"a\x00b" + b"\x00" * 70_000, b"xy"):
        assert _without_trailing_nul(bytearray(buf), step=4) == len(buf.rstrip(b"\x00"))
