#!/usr/bin/env python
"""Scale a REAL profiling fixture up to a target size, for the load benchmark.

Nothing is invented: every event and every CSV row of the output is an event or row of the
seed fixture, repeated N times as if the profiled step had run N times back to back.  Copy k
(k = 0 .. N-1) of the seed step is shifted in time by k * period, where period = (time span of
everything in the seed) + gap, rounded up to a whole millisecond so that the shift is exact in
every time format of the seed (us strings with 3 decimals, us strings without decimals, ns
integers).  Copy 0 is the seed byte for byte (the generator checks this).

Ascend text (seed: fixtures/ascend_pt/text_level1/rank0_ascend_pt, one step, ProfilerStep#50):

* trace_view.json: events of copy k get ts + shift (string, same format), ``ProfilerStep#50``
  -> ``ProfilerStep#{50+k}``, ids offset so that links stay valid *and* unique per copy:
  ``async_npu`` ids (= device task start in ns) + shift; ``async_task_queue`` ids and
  ``correlation_id`` args + k * stride; ``fwdbwd`` ids and ``Sequence number`` args (same id
  space) + k * stride; ``connection_id`` args + k * stride; ``Python id`` / ``Python parent id``
  + k * stride; device task ids (``Physic Stream Id``/``Task Id``/``Batch Id`` on Ascend
  Hardware, ``stream id``/``task id`` of HCCL small tasks) advance per stream by that stream's
  task count per step, carrying into ``Batch Id`` when the 16-bit task id wraps (what the
  device does); ``HostToDevice`` ids (connection id, or the bit-packed
  stream/task/batch/context key) are recomputed from those, and their ``HostToDevice{id}``
  names with them; HCCL op names ``hcom_{type}__{group}_{seq}_{n}`` get seq + k * (ops per
  step).  Process/thread metadata (``ph: M``) is written once.  Events are written one copy at
  a time (a chunk of ~10k events), never the whole file in memory.
* kernel_details.csv, operator_details.csv, memory_record.csv, operator_memory.csv,
  npu_module_mem.csv, l2_cache.csv, step_trace_time.csv: rows repeated with the same time
  shift, step ids, task ids and op names; blocks keep the seed's grouping (memory_record: APP
  samples first, then the PTA/GE stream; npu_module_mem: grouped by component).  The first
  kernel of each copy gets its real ``Wait Time(us)`` (gap to the last kernel of the copy
  before).  op_statistic.csv / api_statistic.csv (aggregates): counts and totals x N, min / avg /
  max / ratio / variance unchanged (exact for N identical copies).
* communication.json / communication_matrix.json: one ``step{50+k}`` entry per copy, start
  timestamps shifted, op names renumbered.
* profiler_info_{rank}.json (``rank_id`` set) and profiler_metadata.json copied.
* ranks > 0: the rank-0 files copied into ``rank{r}_ascend_pt`` with their own
  ``profiler_info_{r}.json``.

Kineto (seed: fixtures/kineto/gpu_2rank_rank0.json.gz, 2 steps): ``traceEvents`` repeated with
ts + shift (us integers), ``External id`` / ``correlation`` (one id space: kernels carry their
launch's correlation as External id), ``Ev Idx``, ``Sequence number`` and flow ids offset per
copy, ``ProfilerStep#N`` -> ``ProfilerStep#{N + k * steps}``; metadata events once; the
``PyTorch Profiler`` span widened to cover every copy; written uncompressed as ``.json``.

Deterministic: the same arguments give the same bytes.

    python benchmarks/generate.py --target-mb 100 --out benchmarks/data/100mb
    python benchmarks/generate.py --target-mb 10 --out /tmp/x --format ascend --ranks 2
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import math
import os
import re
import shutil
import sys
import time
from pathlib import Path

FIXTURES = Path(os.environ.get("PROFINSIGHT_FIXTURES", Path(__file__).resolve().parents[2] / "shared" / "fixtures"))
ASCEND_SEED = FIXTURES / "ascend_pt" / "text_level1" / "rank0_ascend_pt"
KINETO_SEED = FIXTURES / "kineto" / "gpu_2rank_rank0.json.gz"

MB = 1_000_000  # sizes are decimal MB, as `ls -l --si` / the issue ("1 GB") count them

_STEP_RE = re.compile(r"^ProfilerStep#(\d+)$")
_HCOM_RE = re.compile(r"(hcom_[A-Za-z]+_*__\d+_)(\d+)(_\d+)")
_TS_RE = re.compile(r"^(\d+)(?:\.(\d+))?(\s*)$")


# ---------------------------------------------------------------------------------------------
# exact time helpers
# ---------------------------------------------------------------------------------------------
def us_str_to_ns(s: str) -> int:
    """'1736408883704643.212' (optionally tab-suffixed, any number of decimals) -> int ns."""
    m = _TS_RE.match(s)
    if not m:
        raise ValueError(f"not a us timestamp: {s!r}")
    whole, frac = m.group(1), m.group(2) or ""
    frac_ns = (frac + "000")[:3]
    return int(whole) * 1000 + int(frac_ns)


def shift_us_str(s: str, shift_ns: int) -> str:
    """Add ``shift_ns`` (a multiple of 1000) to a us timestamp string, keeping its exact format
    (number of decimals, trailing whitespace such as the CSV tab)."""
    if shift_ns == 0 or s == "" or s.strip() in ("", "N/A"):
        return s
    m = _TS_RE.match(s)
    if not m:
        raise ValueError(f"not a us timestamp: {s!r}")
    whole, frac, tail = m.group(1), m.group(2), m.group(3)
    assert shift_ns % 1000 == 0
    if frac is None:
        return f"{int(whole) + shift_ns // 1000}{tail}"
    d = len(frac)
    units = int(whole) * 10**d + int(frac) + shift_ns * 10**d // 1000
    return f"{units // 10**d}.{units % 10**d:0{d}d}{tail}"


def ceil_to(x: int, q: int) -> int:
    return -(-x // q) * q


# ---------------------------------------------------------------------------------------------
# output helpers
# ---------------------------------------------------------------------------------------------
class Writer:
    """Buffered text writer that counts bytes (utf-8)."""

    def __init__(self, path: Path, newline: str | None = None):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.f = open(path, "w", encoding="utf-8", newline=newline if newline is not None else "")
        self.bytes = 0

    def write(self, s: str) -> None:
        self.f.write(s)

    def close(self) -> int:
        self.f.close()
        return self.path.stat().st_size


def csv_lineterminator(raw: bytes) -> str:
    return "\r\n" if raw.split(b"\n", 1)[0].endswith(b"\r") else "\n"


def read_csv(path: Path) -> tuple[list[str], list[list[str]], str]:
    raw = path.read_bytes()
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))
    return rows[0], rows[1:], csv_lineterminator(raw)


def rows_to_text(rows, term: str) -> str:
    buf = io.StringIO(newline="")
    csv.writer(buf, lineterminator=term).writerows(rows)
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------
# Ascend text
# ---------------------------------------------------------------------------------------------
class AscendPlan:
    """Everything that varies between copies, measured once from the seed."""

    def __init__(self, seed: Path, gap_ms: float):
        self.seed = seed
        out = seed / "ASCEND_PROFILER_OUTPUT"
        self.out = out
        self.trace_raw = (out / "trace_view.json").read_bytes()
        self.events = json.loads(self.trace_raw)
        ev = self.events
        # -- time span of everything in the seed: trace events and every CSV timestamp
        lo, hi = None, None

        def see(a, b):
            nonlocal lo, hi
            lo = a if lo is None else min(lo, a)
            hi = b if hi is None else max(hi, b)

        for e in ev:
            if "ts" in e:
                t = us_str_to_ns(e["ts"])
                d = e.get("dur") or 0
                see(t, t + int(math.ceil(float(d) * 1000)))
        for name, cols in (
            ("kernel_details.csv", ("Start Time(us)",)),
            ("memory_record.csv", ("Timestamp(us)",)),
            ("npu_module_mem.csv", ("Timestamp(us)",)),
            ("operator_memory.csv", ("Allocation Time(us)", "Release Time(us)", "Active Release Time(us)")),
        ):
            p = out / name
            if not p.exists():
                continue
            header, rows, _ = read_csv(p)
            idx = [header.index(c) for c in cols if c in header]
            for r in rows:
                for i in idx:
                    if r[i].strip() not in ("", "N/A"):
                        t = us_str_to_ns(r[i])
                        see(t, t)
        self.t0, self.t1 = lo, hi
        self.span_ns = hi - lo
        self.period_ns = ceil_to(self.span_ns + int(gap_ms * 1e6), 1_000_000)

        # -- id strides (max - min + 1 of each id space in the seed)
        def stride(vals):
            vals = [v for v in vals if v is not None]
            return (max(vals) - min(vals) + 1) if vals else 0

        args = [e.get("args") or {} for e in ev]
        self.steps = sorted({int(m.group(1)) for e in ev if (m := _STEP_RE.match(str(e.get("name", ""))))})
        self.step_stride = stride(self.steps) or 1
        self.conn_stride = stride([a.get("connection_id") for a in args])
        self.corr_stride = stride(
            [a.get("correlation_id") for a in args] + [e["id"] for e in ev if e.get("cat") == "async_task_queue"]
        )
        seq = [a.get("Sequence number") for a in args if a.get("Sequence number", -1) >= 0]
        seq += [e["id"] for e in ev if e.get("cat") == "fwdbwd"]
        self.seq_stride = stride(seq)
        self.py_stride = stride([a.get("Python id") for a in args] + [a.get("Python parent id") for a in args])
        # device task ids per stream (trace hardware tasks, HCCL small tasks, kernel_details, l2_cache)
        per_stream: dict[int, list[int]] = {}
        for a in args:
            if "Physic Stream Id" in a and "Task Id" in a:
                per_stream.setdefault(int(a["Physic Stream Id"]), []).append(
                    int(a.get("Batch Id", 0)) * 65536 + int(a["Task Id"])
                )
            if "stream id" in a and "task id" in a:
                per_stream.setdefault(int(a["stream id"]), []).append(int(a["task id"]))
        for name, s_col, t_col in (
            ("kernel_details.csv", "Stream ID", "Task ID"),
            ("l2_cache.csv", "Stream Id", "Task Id"),
        ):
            p = out / name
            if p.exists():
                header, rows, _ = read_csv(p)
                si, ti = header.index(s_col), header.index(t_col)
                for r in rows:
                    if r[si].strip().isdigit() and r[ti].strip().isdigit():
                        per_stream.setdefault(int(r[si]), []).append(int(r[ti]))
        self.task_stride = {s: stride(v) for s, v in per_stream.items()}
        self.task_stride_default = max(self.task_stride.values(), default=1)
        # HCCL op sequence numbers
        seqs = []
        for e in ev:
            m = _HCOM_RE.search(str(e.get("name", "")))
            if m:
                seqs.append(int(m.group(2)))
        self.hcom_stride = (max(seqs) + 1) if seqs else 1
        self.seps = self._separators()
        self.events_per_copy = sum(1 for e in ev if e.get("ph") != "M")
        self.meta_events = len(ev) - self.events_per_copy

    def _separators(self) -> list[str]:
        """The text between consecutive events in the seed (torch_npu writes the array in
        chunks, so it is sometimes ',' and sometimes ', '); reused so copy 0 is byte-exact."""
        raw = self.trace_raw.decode("utf-8")
        enc = json.JSONEncoder().encode
        pos = raw.index("[") + 1
        seps = []
        for e in self.events:
            s = enc(e)
            if raw.startswith(s, pos):
                pos += len(s)
            else:  # cannot align (format differs): fall back to a plain separator
                return [", "] * (len(self.events) - 1) + [""]
            nxt = raw.find("{", pos)
            end = raw.rfind("]")
            stop = nxt if 0 <= nxt < end else end
            seps.append(raw[pos:stop])
            pos = stop
        return seps

    # -- per-copy transforms -------------------------------------------------------------------
    def shift(self, k: int) -> int:
        return k * self.period_ns

    def step(self, n: int, k: int) -> int:
        return n + k * self.step_stride

    def task(self, stream: int, task: int, batch: int, k: int) -> tuple[int, int]:
        """(task, batch) of copy k: the per-stream global task counter advances, 16-bit task
        ids wrap into the batch id."""
        g = batch * 65536 + task + k * self.task_stride.get(stream, self.task_stride_default)
        return g & 0xFFFF, g >> 16

    def rename(self, s: str, k: int) -> str:
        if k == 0:
            return s
        m = _STEP_RE.match(s)
        if m:
            return f"ProfilerStep#{self.step(int(m.group(1)), k)}"
        if "hcom_" in s:
            return _HCOM_RE.sub(lambda m: f"{m.group(1)}{int(m.group(2)) + k * self.hcom_stride}{m.group(3)}", s)
        return s

    def h2d_id(self, sid: str, k: int) -> str:
        v = int(sid)
        if v < (1 << 32):  # a CANN connection id
            return str(v + k * self.conn_stride)
        stream, task, batch, ctx = v >> 64, (v >> 48) & 0xFFFF, (v >> 32) & 0xFFFF, v & 0xFFFFFFFF
        if stream == 0 and task == 0:  # HCCL op: connection id in bits 32.. (value < 2**64 stays < 2**64)
            return str(v + ((k * self.conn_stride) << 32))
        t, b = self.task(stream, task, batch, k)
        return str((stream << 64) + (t << 48) + (b << 32) + ctx)

    def event(self, e: dict, k: int) -> dict:
        if k == 0:
            return e
        sh = self.shift(k)
        e = dict(e)
        if "ts" in e:
            e["ts"] = shift_us_str(e["ts"], sh)
        if "name" in e:
            e["name"] = self.rename(e["name"], k)
        cat = e.get("cat")
        if "id" in e:
            if cat == "async_npu":
                e["id"] = e["id"] + sh
            elif cat == "HostToDevice":
                old = e["id"]
                e["id"] = self.h2d_id(old, k)
                if e.get("name") == f"HostToDevice{old}":
                    e["name"] = f"HostToDevice{e['id']}"
            elif cat == "async_task_queue":
                e["id"] = e["id"] + k * self.corr_stride
            elif cat == "fwdbwd":
                e["id"] = e["id"] + k * self.seq_stride
        a = e.get("args")
        if a:
            a = dict(a)
            if "connection_id" in a:
                a["connection_id"] += k * self.conn_stride
            if "correlation_id" in a:
                a["correlation_id"] += k * self.corr_stride
            if "Python id" in a:
                a["Python id"] += k * self.py_stride
            if "Python parent id" in a and a["Python parent id"] >= 0:
                a["Python parent id"] += k * self.py_stride
            if a.get("Sequence number", -1) >= 0:
                a["Sequence number"] += k * self.seq_stride
            if "Physic Stream Id" in a and "Task Id" in a:
                t, b = self.task(int(a["Physic Stream Id"]), int(a["Task Id"]), int(a.get("Batch Id", 0)), k)
                a["Task Id"] = t
                if "Batch Id" in a:
                    a["Batch Id"] = b
            if "stream id" in a and "task id" in a:
                a["task id"] = self.task(int(a["stream id"]), int(a["task id"]), 0, k)[0]
            e["args"] = a
        return e

    def comm_record(self, obj, k: int):
        """communication.json / communication_matrix.json value of one step, for copy k."""
        if k == 0:
            return obj
        sh_us = self.shift(k) / 1000.0

        def walk(o):
            if isinstance(o, dict):
                out = {}
                for key, v in o.items():
                    nk = self.rename(key, k) if "hcom_" in key else key
                    if key == "Start Timestamp(us)" and isinstance(v, (int, float)):
                        out[nk] = v + sh_us
                    elif key == "Op Name" and isinstance(v, str):
                        out[nk] = self.rename(v, k)
                    else:
                        out[nk] = walk(v)
                return out
            if isinstance(o, list):
                return [walk(x) for x in o]
            return o

        return walk(obj)


def _ascend_trace(plan: AscendPlan, n: int, dst: Path) -> tuple[int, int]:
    """Write trace_view.json in the seed's exact style (events joined by ',', json.dumps inside)."""
    w = Writer(dst)
    w.write("[")
    first = True
    count = 0
    dumps = json.JSONEncoder().encode
    last = len(plan.events) - 1
    for k in range(n):
        chunk = []
        for i, e in enumerate(plan.events):
            if k > 0 and e.get("ph") == "M":
                continue
            chunk.append(dumps(plan.event(e, k)))
            chunk.append(plan.seps[i] if i < last else "")
        count += len(chunk) // 2
        w.write(("" if first else ",") + "".join(chunk))
        first = False
        del chunk
    w.write(plan.seps[last] + "]" if plan.seps[last].strip() == "" else "]")
    return w.close(), count


def _ascend_csv(plan: AscendPlan, name: str, n: int, dst: Path) -> int | None:
    src = plan.out / name
    if not src.exists():
        return None
    header, rows, term = read_csv(src)
    col = {c: i for i, c in enumerate(header)}

    def set_ts(r, c, sh):
        if c in col and r[col[c]].strip() not in ("", "N/A"):
            r[col[c]] = shift_us_str(r[col[c]], sh)

    def set_task(r, s_col, t_col, k):
        if s_col in col and t_col in col and r[col[s_col]].strip().isdigit() and r[col[t_col]].strip().isdigit():
            r[col[t_col]] = str(plan.task(int(r[col[s_col]]), int(r[col[t_col]]), 0, k)[0])

    def set_step(r, c, k):
        if c in col and r[col[c]].strip().isdigit():
            r[col[c]] = str(plan.step(int(r[col[c]]), k))

    group_key = lambda r: 0  # noqa: E731
    scale = None
    if name == "kernel_details.csv":
        st, du, wt = col.get("Start Time(us)"), col.get("Duration(us)"), col.get("Wait Time(us)")
        first_start = us_str_to_ns(rows[0][st])
        last = max(rows, key=lambda r: us_str_to_ns(r[st]))
        last_end = us_str_to_ns(last[st]) + round(float(last[du]) * 1000)

        def tf(r, k, i):
            set_step(r, "Step Id", k)
            set_task(r, "Stream ID", "Task ID", k)
            set_ts(r, "Start Time(us)", plan.shift(k))
            r[col["Name"]] = plan.rename(r[col["Name"]], k)
            if i == 0 and k > 0 and wt is not None:  # real gap to the previous copy's last kernel
                r[wt] = repr(round((first_start + plan.period_ns - last_end) / 1000.0, 3))
    elif name == "step_trace_time.csv":

        def tf(r, k, i):
            set_step(r, "Step", k)
    elif name == "memory_record.csv":
        group_key = lambda r: r[col["Component"]] == "APP"  # noqa: E731

        def tf(r, k, i):
            set_ts(r, "Timestamp(us)", plan.shift(k))
    elif name == "npu_module_mem.csv":
        group_key = lambda r: r[col["Component"]]  # noqa: E731

        def tf(r, k, i):
            set_ts(r, "Timestamp(us)", plan.shift(k))
    elif name == "operator_memory.csv":

        def tf(r, k, i):
            for c in ("Allocation Time(us)", "Release Time(us)", "Active Release Time(us)"):
                set_ts(r, c, plan.shift(k))
    elif name == "l2_cache.csv":

        def tf(r, k, i):
            set_task(r, "Stream Id", "Task Id", k)
            r[col["Op Name"]] = plan.rename(r[col["Op Name"]], k)
    elif name == "operator_details.csv":

        def tf(r, k, i):
            pass
    elif name == "op_statistic.csv":
        scale = (("Count",), ("Total Time(us)",))
    elif name == "api_statistic.csv":
        scale = (("Count",), ("Time(us)",))
    else:  # unknown CSV: copy verbatim
        shutil.copyfile(src, dst)
        return dst.stat().st_size

    w = Writer(dst)
    w.write(rows_to_text([header], term))
    if scale is not None:  # aggregates over N identical copies
        ints, floats = scale
        out = []
        for r in rows:
            r = list(r)
            for c in ints:
                if c in col:
                    r[col[c]] = str(int(r[col[c]]) * n)
            for c in floats:
                if c in col:
                    r[col[c]] = repr(round(float(r[col[c]]) * n, 3))
            out.append(r)
        w.write(rows_to_text(out, term))
        return w.close()
    # keep the seed's block structure: consecutive rows with the same key form a block; every
    # block is written for all copies before the next block
    blocks: list[list[list[str]]] = []
    keys: list = []
    for r in rows:
        key = group_key(r)
        if blocks and keys[-1] == key:
            blocks[-1].append(r)
        else:
            blocks.append([r])
            keys.append(key)
    merged: dict = {}
    order = []
    for key, b in zip(keys, blocks):  # a key that reappears later joins its first block
        if key not in merged:
            merged[key] = []
            order.append(key)
        merged[key].extend(b)
    for key in order:
        b = merged[key]
        for k in range(n):
            out = []
            for i, r in enumerate(b):
                r = list(r)
                tf(r, k, i)
                out.append(r)
            w.write(rows_to_text(out, term))
    return w.close()


def _ascend_comm(plan: AscendPlan, name: str, n: int, dst: Path) -> int | None:
    src = plan.out / name
    if not src.exists():
        return None
    seed = json.loads(src.read_bytes())
    w = Writer(dst)
    w.write("{")
    first = True
    for k in range(n):
        for key, val in seed.items():
            m = re.fullmatch(r"step(\d+)", key)
            nk = f"step{plan.step(int(m.group(1)), k)}" if m else (key if k == 0 else None)
            if nk is None:
                continue
            w.write(("" if first else ", ") + json.dumps(nk) + ": " + json.dumps(plan.comm_record(val, k)))
            first = False
    w.write("}")
    return w.close()


def _self_check_ascend(plan: AscendPlan) -> None:
    """Copy 0 must be the seed byte for byte (proves the writers reproduce the format)."""
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"profinsight-gen-check-{os.getpid()}"
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        _ascend_trace(plan, 1, tmp / "trace_view.json")
        bad = [] if (tmp / "trace_view.json").read_bytes() == plan.trace_raw else ["trace_view.json"]
        for p in sorted(plan.out.glob("*.csv")):
            if p.name in ("op_statistic.csv", "api_statistic.csv"):
                continue
            _ascend_csv(plan, p.name, 1, tmp / p.name)
            if (tmp / p.name).read_bytes() != p.read_bytes():
                bad.append(p.name)
        for name in ("communication.json", "communication_matrix.json"):
            if (
                _ascend_comm(plan, name, 1, tmp / name) is not None
                and (tmp / name).read_bytes() != (plan.out / name).read_bytes()
            ):
                bad.append(name)
        if bad:
            raise SystemExit(f"generator self-check failed: copy 0 differs from the seed in {bad}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def generate_ascend(
    target_mb: float,
    out: Path,
    ranks: int = 1,
    gap_ms: float = 10.0,
    copies: int | None = None,
    seed: Path = ASCEND_SEED,
    check: bool = True,
    group_size: int | None = None,
    slow_us: int = 5000,
    link: bool = False,
) -> dict:
    """``link``: ranks > 0 hard-link rank 0's files instead of copying them (what ``--group-size``
    rewrites is written as a file of its own), so 1,024 ranks take ~0.1 GB instead of ~3 GB; the
    readers see ordinary files."""
    plan = AscendPlan(seed, gap_ms)
    if check:
        _self_check_ascend(plan)
    # bytes of one later copy (ids get a little longer than in copy 0)
    enc = json.JSONEncoder().encode
    per_copy = sum(len(enc(plan.event(e, 1)).encode()) + 1 for e in plan.events if e.get("ph") != "M")
    n = copies or max(1, round((target_mb * MB - len(plan.trace_raw)) / per_copy) + 1)
    t_start = time.perf_counter()
    rank0 = out / "ascend" / "rank0_ascend_pt"
    if rank0.exists():
        shutil.rmtree(rank0)
    dst = rank0 / "ASCEND_PROFILER_OUTPUT"
    dst.mkdir(parents=True)
    files = {}
    size, events = _ascend_trace(plan, n, dst / "trace_view.json")
    files["trace_view.json"] = size
    for p in sorted(plan.out.iterdir()):
        if p.suffix == ".csv":
            files[p.name] = _ascend_csv(plan, p.name, n, dst / p.name)
        elif p.name in ("communication.json", "communication_matrix.json"):
            files[p.name] = _ascend_comm(plan, p.name, n, dst / p.name)
        elif p.name != "trace_view.json":
            shutil.copyfile(p, dst / p.name)
            files[p.name] = p.stat().st_size
    info_src = next(seed.glob("profiler_info*.json"))
    info = json.loads(info_src.read_text())
    meta = seed / "profiler_metadata.json"
    rank_dirs = []
    for r in range(ranks):
        rd = out / "ascend" / f"rank{r}_ascend_pt"
        if r > 0:
            if rd.exists():
                shutil.rmtree(rd)
            shutil.copytree(
                rank0 / "ASCEND_PROFILER_OUTPUT",
                rd / "ASCEND_PROFILER_OUTPUT",
                copy_function=os.link if link else shutil.copy2,
            )
        info["rank_id"] = r
        (rd / f"profiler_info_{r}.json").write_text(json.dumps(info, indent=4))
        if meta.exists():
            shutil.copyfile(meta, rd / "profiler_metadata.json")
        rank_dirs.append(rd)
    groups = None
    if group_size:  # real parallel groups and one slow rank per group (benchmarks/groups.py)
        import groups as G

        groups = G.apply(rank_dirs, group_size, slow_us)
    steps = [plan.step(s, k) for k in range(n) for s in plan.steps]
    total = sum(f.stat().st_size for f in rank0.rglob("*") if f.is_file())
    return {
        "groups": groups,
        "format": "ascend_text",
        "seed": str(seed),
        "copies": n,
        "ranks": ranks,
        "rank_dirs": [str(p) for p in rank_dirs],
        "trace": str(dst / "trace_view.json"),
        "trace_bytes": size,
        "rank_folder_bytes": total,
        "events": events,
        "steps": [steps[0], steps[-1]],
        "n_steps": len(steps),
        "period_ns": plan.period_ns,
        "files": files,
        "seconds": round(time.perf_counter() - t_start, 2),
    }


# ---------------------------------------------------------------------------------------------
# Kineto
# ---------------------------------------------------------------------------------------------
class KinetoPlan:
    def __init__(self, seed: Path, gap_ms: float):
        raw = gzip.open(seed).read() if seed.suffix == ".gz" else seed.read_bytes()
        self.raw = raw
        self.doc = json.loads(raw)
        ev = self.doc["traceEvents"]
        self.events = ev
        lo = min(e["ts"] for e in ev if isinstance(e.get("ts"), (int, float)))
        hi = max(e["ts"] + (e.get("dur") or 0) for e in ev if isinstance(e.get("ts"), (int, float)))
        self.span_us = hi - lo
        self.period_us = int(ceil_to(int(math.ceil(self.span_us + gap_ms * 1000)), 1000))

        def stride(vals):
            vals = [v for v in vals if isinstance(v, int) and v >= 0]
            return (max(vals) - min(vals) + 1) if vals else 0

        args = [e.get("args") or {} for e in ev]
        self.ext_stride = stride(
            [a.get("External id") for a in args]
            + [a.get("correlation") for a in args]
            + [e.get("id") for e in ev if e.get("cat") == "ac2g"]
        )
        self.evidx_stride = stride([a.get("Ev Idx") for a in args])
        self.seq_stride = stride(
            [a.get("Sequence number") for a in args] + [e.get("id") for e in ev if e.get("cat") == "fwdbwd"]
        )
        self.rf_stride = stride([a.get("Record function id") for a in args])
        self.pyid_stride = stride([a.get("Python id") for a in args] + [a.get("Python parent id") for a in args])
        self.steps = sorted({int(m.group(1)) for e in ev if (m := _STEP_RE.match(str(e.get("name", ""))))})
        self.step_stride = (max(self.steps) - min(self.steps) + 1) if self.steps else 1

    def once(self, e: dict) -> bool:
        """Events written once, not per copy: metadata and the profiler span."""
        return e.get("ph") == "M" or e.get("cat") == "Trace" or isinstance(e.get("pid"), str)

    def event(self, e: dict, k: int, n: int) -> dict:
        if self.once(e):
            if e.get("cat") == "Trace" and "dur" in e and n > 1:
                e = dict(e)
                e["dur"] = e["dur"] + (n - 1) * self.period_us
            return e
        if k == 0:
            return e
        e = dict(e)
        if isinstance(e.get("ts"), (int, float)):
            e["ts"] = e["ts"] + k * self.period_us
        m = _STEP_RE.match(str(e.get("name", "")))
        if m:
            e["name"] = f"ProfilerStep#{int(m.group(1)) + k * self.step_stride}"
        if "id" in e and isinstance(e["id"], int):
            if e.get("cat") == "ac2g":
                e["id"] += k * self.ext_stride
            elif e.get("cat") == "fwdbwd":
                e["id"] += k * self.seq_stride
        a = e.get("args")
        if a:
            a = dict(a)
            for key, s in (
                ("External id", self.ext_stride),
                ("correlation", self.ext_stride),
                ("Ev Idx", self.evidx_stride),
                ("Sequence number", self.seq_stride),
                ("Record function id", self.rf_stride),
                ("Python id", self.pyid_stride),
                ("Python parent id", self.pyid_stride),
            ):
                if isinstance(a.get(key), int) and a[key] >= 0:
                    a[key] += k * s
            e["args"] = a
        return e


def _kineto_write(plan: KinetoPlan, n: int, dst: Path, rank: int | None = None) -> tuple[int, int]:
    """Write the trace in the seed's style (json.dumps with default separators)."""
    doc = plan.doc
    head = {k: v for k, v in doc.items() if k != "traceEvents"}
    if rank is not None and isinstance(head.get("distributedInfo"), dict):
        head["distributedInfo"] = dict(head["distributedInfo"], rank=rank)
    keys = list(doc.keys())
    before = {k: head[k] for k in keys[: keys.index("traceEvents")]}
    after = {k: head[k] for k in keys[keys.index("traceEvents") + 1 :]}
    enc = json.JSONEncoder().encode
    w = Writer(dst)
    pre = enc(before)
    w.write(pre[:-1] + (", " if before else "") + '"traceEvents": [')
    first = True
    count = 0
    for k in range(n):
        chunk = [enc(plan.event(e, k, n)) for e in plan.events if k == 0 or not plan.once(e)]
        count += len(chunk)
        w.write(("" if first else ", ") + ", ".join(chunk))
        first = False
    w.write("]")
    if after:
        w.write(", " + enc(after)[1:])
    else:
        w.write("}")
    return w.close(), count


def generate_kineto(
    target_mb: float,
    out: Path,
    ranks: int = 1,
    gap_ms: float = 10.0,
    copies: int | None = None,
    seed: Path = KINETO_SEED,
    check: bool = True,
) -> dict:
    plan = KinetoPlan(seed, gap_ms)
    kdir = out / "kineto"
    kdir.mkdir(parents=True, exist_ok=True)
    if check:
        tmp = kdir / ".check.json"
        _kineto_write(plan, 1, tmp)
        same = tmp.read_bytes() == plan.raw
        tmp.unlink()
        if not same:
            raise SystemExit("generator self-check failed: Kineto copy 0 differs from the seed")
    enc = json.JSONEncoder().encode
    per_copy = sum(len(enc(plan.event(e, 1, 2)).encode()) + 2 for e in plan.events if not plan.once(e))
    n = copies or max(1, round((target_mb * MB - len(plan.raw)) / per_copy) + 1)
    t_start = time.perf_counter()
    paths, size, events = [], 0, 0
    for r in range(ranks):
        dst = kdir / f"bench_rank{r}.pt.trace.json"
        size, events = _kineto_write(plan, n, dst, rank=r if ranks > 1 else None)
        paths.append(str(dst))
    steps = [s + k * plan.step_stride for k in range(n) for s in plan.steps]
    return {
        "format": "kineto",
        "seed": str(seed),
        "copies": n,
        "ranks": ranks,
        "traces": paths,
        "trace": paths[0],
        "trace_bytes": size,
        "events": events,
        "steps": [steps[0], steps[-1]] if steps else [],
        "n_steps": len(steps),
        "period_us": plan.period_us,
        "seconds": round(time.perf_counter() - t_start, 2),
    }


# ---------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--target-mb",
        type=float,
        required=True,
        help="target size of trace_view.json / the Kineto .json in MB (10^6 bytes)",
    )
    ap.add_argument("--out", type=Path, required=True, help="output folder (ascend/ and kineto/ go inside)")
    ap.add_argument("--format", choices=("ascend", "kineto", "both"), default="both")
    ap.add_argument("--ranks", type=int, default=1, help="ranks to write (copies of rank 0 with their own rank id)")
    ap.add_argument("--gap-ms", type=float, default=10.0, help="idle gap between repeated steps")
    ap.add_argument(
        "--group-size",
        type=int,
        default=None,
        help="ascend: data-parallel groups of this many ranks (pipeline stages across them), each with its own "
        "HCCL group and one rank slowed by --slow-us (benchmarks/groups.py)",
    )
    ap.add_argument("--slow-us", type=int, default=5000, help="how much longer the slow rank of each group computes")
    ap.add_argument("--copies", type=int, default=None, help="force the number of step copies")
    ap.add_argument(
        "--link", action="store_true", help="ascend: ranks > 0 hard-link rank 0's files (1,024 ranks in ~0.1 GB)"
    )
    ap.add_argument("--no-check", action="store_true", help="skip the copy-0-equals-seed self-check")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    need = a.target_mb * MB * 1.35 * (1 if a.link else a.ranks) * (2 if a.format == "both" else 1)
    free = shutil.disk_usage(a.out).free
    if free < need:
        print(f"not enough disk space in {a.out}: need ~{need / 1e9:.2f} GB, have {free / 1e9:.2f} GB", file=sys.stderr)
        return 2
    out = {}
    if a.format in ("ascend", "both"):
        out["ascend"] = generate_ascend(
            a.target_mb,
            a.out,
            a.ranks,
            a.gap_ms,
            a.copies,
            check=not a.no_check,
            group_size=a.group_size,
            slow_us=a.slow_us,
            link=a.link,
        )
    if a.format in ("kineto", "both"):
        out["kineto"] = generate_kineto(a.target_mb, a.out, a.ranks, a.gap_ms, a.copies, check=not a.no_check)
    (a.out / "generated.json").write_text(json.dumps(out, indent=2))
    if a.json:
        print(json.dumps(out, indent=2))
        return 0
    for fmt, s in out.items():
        print(f"[{fmt}] {s['copies']} copies of {s['seed']}  ({s['seconds']} s)")
        print(
            f"  trace  {s['trace']}  {s['trace_bytes'] / MB:.1f} MB, {s['events']:,} events, "
            f"{s['n_steps']} steps (ProfilerStep#{s['steps'][0]}..#{s['steps'][-1]})"
            if s["steps"]
            else ""
        )
        if fmt == "ascend":
            print(f"  rank folder(s): {', '.join(s['rank_dirs'])}  ({s['rank_folder_bytes'] / MB:.1f} MB each)")
            for name, size in s["files"].items():
                if size is not None:
                    print(f"    {name:28s} {size / MB:10.2f} MB")
        else:
            for p in s["traces"][1:]:
                print(f"  trace  {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
