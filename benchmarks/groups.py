"""Parallel groups and one slow rank per group for the rank folders ``generate.py`` writes.

Without this, the generated ranks are byte copies of rank 0: one HCCL group for all of them, no
layout in ``profiler_metadata.json`` and no slow rank, so every imbalance is truly 0.  With
``--group-size G`` (``apply``):

* **Layout** (Megatron order, TP 1): ``W`` ranks form ``P = W / G`` pipeline stages of ``G``
  data-parallel ranks.  Rank ``r`` is in dp group ``r // G`` (ranks ``gG .. gG+G-1``) and, where
  ``P > 1``, in pp group ``r % G`` (ranks ``i, i+G, ...``).  ``profiler_metadata.json`` gets
  ``distributed_args`` (tp 1, pp P, dp G, cp 1, ep 1) and ``parallel_group_info`` (``default_group``,
  ``dp``, ``pp``) as torch_npu writes them.  The seed's collectives are data-parallel all-reduces:
  each dp group's copies get their own HCCL group hash (the seed's hash minus ``1000 (g + 1)``,
  so the last three digits in the op names still match).  The pp groups have no ops (the seed
  has no point-to-point transfer): they are declared, not exercised.
* **One slow rank per dp group** (rank ``gG + (5g + 1) mod G``: a different position in every
  group), slowed by ``slow_us`` the realistic way, in every step copy: it computes ``slow_us``
  longer before the step's first all-reduce (the kernel that ends last before it runs longer)
  and so reaches it ``slow_us`` late; its ``G - 1`` peers wait ``slow_us`` longer in that
  all-reduce (its duration, Wait Time and Elapse Time grow by ``slow_us``); every later task
  of the group moves ``slow_us`` later.  The files that carry it: ``kernel_details.csv``,
  ``communication.json`` (start, elapse, wait, wait ratio, the Total Op Info sums) and
  ``step_trace_time.csv`` (slow rank: Computing and Stage + ``slow_us``; peers: Communication,
  Communication(Not Overlapped) (and Exclude Receive) and Stage + ``slow_us``).
  ``trace_view.json`` and the operator / memory files keep the seed's times: the per-rank
  timeline does not show the slowdown.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

SEED_GROUP = "17522688603477080586"
_HCCL = "HCCL"


def _write(path: Path, text: str) -> None:
    """A file of its own: the ranks may hard-link rank 0's files (``generate.py --link``), and
    writing into a shared one would change every rank."""
    path.unlink(missing_ok=True)
    path.write_text(text, encoding="utf-8")


def group_hash(g: int) -> str:
    return str(int(SEED_GROUP) - 1000 * (g + 1))


def slow_rank_of(g: int, group_size: int) -> int:
    return g * group_size + (5 * g + 1) % group_size


def metadata(r: int, world: int, group_size: int, seed_meta: dict) -> dict:
    stages = world // group_size
    g, i = divmod(r, group_size)
    groups = {"group_name_0": {"group_name": "default_group", "group_rank": r, "global_ranks": list(range(world))}}
    dp = list(range(g * group_size, (g + 1) * group_size))
    groups[f"group_name_{1 + g}"] = {"group_name": "dp", "group_rank": i, "global_ranks": dp}
    if stages > 1:
        pp = list(range(i, world, group_size))
        groups[f"group_name_{1 + stages + i}"] = {"group_name": "pp", "group_rank": g, "global_ranks": pp}
    args = {
        "tensor_model_parallel_size": 1,
        "pipeline_model_parallel_size": stages,
        "data_parallel_size": group_size,
        "context_parallel_size": 1,
        "expert_model_parallel_size": 1,
        "sequence_parallel": False,
        "rank": r,
        "world_size": world,
    }
    return {**seed_meta, "distributed_args": args, "parallel_group_info": groups}


def apply(rank_dirs: list[Path], group_size: int, slow_us: int) -> dict:
    """Write the layout and the slowdown into ``rank_dirs`` (rank r = ``rank_dirs[r]``)."""
    world = len(rank_dirs)
    if group_size < 2 or world % group_size:
        raise SystemExit(f"--group-size {group_size} must be at least 2 and divide --ranks {world}")
    slow = {g: slow_rank_of(g, group_size) for g in range(world // group_size)}
    for r, rd in enumerate(rank_dirs):
        g = r // group_size
        meta_path = rd / "profiler_metadata.json"
        seed_meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
        _write(meta_path, json.dumps(metadata(r, world, group_size, seed_meta), indent=4))
        out = rd / "ASCEND_PROFILER_OUTPUT"
        role = "slow" if slow[g] == r else "peer"
        d_ns = int(slow_us) * 1000 if slow_us else 0
        _kernel_details(out / "kernel_details.csv", role, d_ns)
        _communication(out / "communication.json", group_hash(g), role, d_ns)
        matrix = out / "communication_matrix.json"
        if matrix.is_file():
            _write(matrix, matrix.read_text().replace("@" + SEED_GROUP, "@" + group_hash(g)))
        _step_trace(out / "step_trace_time.csv", role, slow_us or 0)
    return {
        "group_size": group_size,
        "stages": world // group_size,
        "slow_us": slow_us,
        "slow_ranks": {group_hash(g): r for g, r in slow.items()},
    }


def _kernel_details(path: Path, role: str, d_ns: int) -> None:
    from generate import read_csv, rows_to_text, shift_us_str, us_str_to_ns

    if not d_ns or not path.is_file():
        return
    head, rows, term = read_csv(path)
    c = {h: i for i, h in enumerate(head)}
    start, dur, core, step = c["Start Time(us)"], c["Duration(us)"], c["Accelerator Core"], c["Step Id"]
    for s in sorted({row[step] for row in rows}):
        mine = [row for row in rows if row[step] == s]
        comm = [row for row in mine if row[core] == _HCCL]
        if not comm:
            continue
        first = min(comm, key=lambda row: us_str_to_ns(row[start]))
        s0 = us_str_to_ns(first[start])
        if role == "slow":
            before = [
                row for row in mine if row[core] != _HCCL and us_str_to_ns(row[start]) + us_str_to_ns(row[dur]) <= s0
            ]
            last = max(before, key=lambda row: us_str_to_ns(row[start]) + us_str_to_ns(row[dur]))
            for row in mine:
                if us_str_to_ns(row[start]) >= s0:
                    row[start] = shift_us_str(row[start], d_ns)
            last[dur] = shift_us_str(last[dur], d_ns)
        else:
            for row in mine:
                if us_str_to_ns(row[start]) > s0:
                    row[start] = shift_us_str(row[start], d_ns)
            first[dur] = shift_us_str(first[dur], d_ns)
    _write(path, rows_to_text([head, *rows], term))


def _ratio(t: dict) -> float:
    wait, transit = t.get("Wait Time(ms)", 0), t.get("Transit Time(ms)", 0)
    return round(wait / (wait + transit), 4) if wait + transit else 0


def _communication(path: Path, new_hash: str, role: str, d_ns: int) -> None:
    if not path.is_file():
        return
    data = json.loads(path.read_text().replace("@" + SEED_GROUP, "@" + new_hash))
    d_ms, d_us = d_ns / 1e6, d_ns / 1e3
    for groups in data.values():
        ops = groups.get("collective") or {}
        timed = sorted(
            (k for k in ops if k != "Total Op Info"),
            key=lambda k: ops[k]["Communication Time Info"]["Start Timestamp(us)"],
        )
        if not d_ns or not timed:
            continue
        for i, k in enumerate(timed):
            t = ops[k]["Communication Time Info"]
            if i > 0 or role == "slow":
                t["Start Timestamp(us)"] += d_us
            if i == 0 and role == "peer":
                t["Elapse Time(ms)"] += d_ms
                t["Wait Time(ms)"] += d_ms
                t["Wait Time Ratio"] = _ratio(t)
        total = (ops.get("Total Op Info") or {}).get("Communication Time Info")
        if total and role == "peer":
            total["Elapse Time(ms)"] += d_ms
            total["Wait Time(ms)"] += d_ms
            total["Wait Time Ratio"] = _ratio(total)
    _write(path, json.dumps(data))


_SLOW_COLS = ("Computing", "Stage")
_PEER_COLS = (
    "Communication(Not Overlapped)",
    "Communication",
    "Stage",
    "Communication(Not Overlapped and Exclude Receive)",
)


def _step_trace(path: Path, role: str, slow_us: float) -> None:
    if not slow_us or not path.is_file():
        return
    raw = path.read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(raw, newline="")))
    c = {h: i for i, h in enumerate(rows[0])}
    for row in rows[1:]:
        for col in _SLOW_COLS if role == "slow" else _PEER_COLS:
            if col in c and row[c[col]] not in ("", "N/A"):
                row[c[col]] = repr(float(row[c[col]]) + slow_us)
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n" if "\r\n" in raw else "\n").writerows(rows)
    _write(path, buf.getvalue())
