"""Each device task -> the host context that caused it: the ``nn.Module`` frame and the Python
frame enclosing the launch, and the phase (forward / backward / other).

The chain, from the canonical tables only (every format fills them the same way):

1. the **launch point**: the host op that launched the task (``launches.host_op_id``; a
   ``torch_to_npu`` link first, else the innermost op), else the runtime API call that did
   (``launches.api_call_id``); its thread and start time.
2. **task queue**: a launch point inside a ``Dequeue`` slice (torch_npu runs ops from a task
   queue on its own thread) moves to the matching ``Enqueue`` on the submitting thread.  The
   queue is first in, first out: the k-th Dequeue of a process pairs with its k-th Enqueue
   (used only where the two counts agree).
3. **backward**: a point inside an autograd node (an op with a sequence number and a forward
   thread id other than 0, ``ConvolutionBackward0``; Kineto writes 0 on forward ops) moves to
   the forward op of the same sequence number, and the task is in phase ``backward``.  Ops that
   create no autograd node carry the number the next node will get, so the op that created
   node S is the **last** forward op numbered S (an op inside ``aten::convolution``, not the
   data-loading ``aten::to`` that saw the same number earlier).
4. the innermost ``nn.Module: Name_i`` slice on that thread running at that time is the
   task's module; the innermost other Python frame (``file.py(line): func``) its source line.

A task that cannot be followed keeps a reason instead (:data:`REASONS`).  Everything is array
work: SQL joins for the links, :class:`~profinsight.nesting.Nesting` for containment.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..nesting import Nesting
from ._sql import query, scope

#: device tasks attributed: what runs on the device for the program (sync/comm_task rows are
#: parts of those or waits, and are not counted twice)
KINDS = ("kernel", "communication", "memcpy", "memset")

REASONS = {
    "no_frames": "no nn.Module frames recorded (collect with with_stack=True or with_modules=True)",
    "no_python": "no Python frames recorded (collect with with_stack=True)",
    "no_link": "no launch link to a host op or API call",
    "outside": "launched outside any nn.Module",
    "outside_code": "launched outside any recorded Python frame",
    "no_forward": "backward op whose forward op (same sequence number) is not in the trace",
}

_MODULE = "nn.Module: "


@dataclass
class Attribution:
    """Per task (rows of :attr:`tasks`: rank, task_uid, kind, name, dur_ns, phase) the sorted
    position of its module slice in :attr:`modules` and of its Python frame in :attr:`frames`
    (-1: none; then ``module_reason`` / ``frame_reason`` say why)."""

    tasks: pd.DataFrame
    modules: Nesting
    module_names: np.ndarray  # per sorted module position: the name without ``nn.Module: ``
    frames: Nesting
    frame_names: np.ndarray


#: frames of the Python runtime, torch and the profiler: ``user_only`` skips them, so a line of
#: the model (``torchvision/models/alexnet.py:47``, ``model.py:12``) is the innermost frame
LIBRARY_FRAMES = r"^(<|torch/|torch_npu/|multiprocessing/|threading\.py|runpy\.py|typing\.py|.*site-packages/torch/)"


def attribute(profile, rank=None, step=None, kernel_type=None, user_only=False, with_frames=True) -> Attribution:
    """Each task's module and (``with_frames``) Python frame; without frames (``module_time``)
    :attr:`Attribution.frames` is empty and every ``frame_pos`` -1."""
    base = _memo(profile, ("attribution", rank, step, kernel_type), lambda: _base(profile, rank, step, kernel_type))
    if with_frames:
        frames, frame_names, frm, has_py = base.frames(user_only)
    else:
        none = np.zeros(0, np.int64)
        frames, frame_names = Nesting(none, none, none), np.zeros(0, object)
        frm, has_py = np.full(len(base.tasks), -1), np.zeros(len(base.tasks), bool)
    tasks, mod = base.tasks, base.mod
    out = tasks[["rank", "task_uid", "kind", "name", "start_ns", "dur_ns"]].copy()
    out["phase"] = np.where(base.phase == "backward", "backward", np.where(mod >= 0, "forward", "other"))
    out["module_reason"] = _reasons(mod, base.has_mod, base.linked, base.lost, "no_frames", "outside")
    out["frame_reason"] = _reasons(frm, has_py, base.linked, base.lost, "no_python", "outside_code")
    out["module_pos"], out["frame_pos"] = mod, frm
    return Attribution(out, base.modules, base.module_names, frames, frame_names)


def _memo(profile, key: tuple, compute):
    """``compute()`` once per profile and ``key``, in memory (``module_time`` and ``code_time`` of
    the same tasks share everything but the Python frames they keep)."""
    memo = getattr(getattr(profile, "_results", None), "memo", None)
    return memo(key, compute, keep=_KEEP) if memo is not None else compute()


#: attributions kept per profile: ``module_time`` and ``code_time`` of one filter ask one after
#: the other; a viewer that walks through kernel types must not hold one per type (at 1 GB one
#: holds the Python frames of the whole rank, ~60 MB)
_KEEP = 2


class _Base:
    """What every attribution of one set of tasks shares: their launch points followed through
    the queue and autograd, their ``nn.Module`` frames, and the other Python frames of the ranks
    (those kept depend on ``user_only``: :meth:`frames`, once per value)."""

    def __init__(self, tasks, group, at, phase, lost, linked, modules, module_names, mod, has_mod, code):
        self.tasks, self.group, self.at, self.phase, self.lost, self.linked = tasks, group, at, phase, lost, linked
        self.modules, self.module_names, self.mod, self.has_mod = modules, module_names, mod, has_mod
        self._code = code  # the other Python frames: group, start_ns, end_ns, name, rank
        self._frames: dict = {}
        self._lock = threading.Lock()

    def frames(self, user_only: bool):
        """(frames Nesting, their names, innermost frame per task, whether its rank has frames)."""
        with self._lock:
            if user_only not in self._frames:
                c = self._code
                keep = np.ones(len(c["name"]), bool)
                if user_only:  # the same few hundred frames recur: match each distinct one once
                    which, distinct = pd.factorize(c["name"])
                    library = pd.Series(distinct, dtype=object).str.match(LIBRARY_FRAMES).to_numpy(bool)
                    keep = ~library[which] if len(which) else keep
                nest = Nesting(c["group"][keep], c["start_ns"][keep], c["end_ns"][keep])
                names = c["name"][keep][nest.order]
                follow = self.linked & ~self.lost
                frm = np.where(follow, nest.innermost(self.group, self.at), -1)
                has_py = _ranks_with(self.tasks["rank"], pd.Series(c["rank"][keep]))
                self._frames[user_only] = (nest, names, frm, has_py)
            return self._frames[user_only]


def _base(profile, rank, step, kernel_type) -> _Base:
    cond = scope(rank, step, "t")
    if kernel_type is not None:
        cond += " AND t.type = " + _quote(kernel_type)
    tasks = _launch_points(profile, cond)
    codes = _Codes()
    group = codes(tasks["rank"], tasks["thread"])
    at = tasks["at_ns"].to_numpy("int64", na_value=0)
    group, at = _through_queue(profile, codes, group, at)
    phase, group, at, lost = _through_autograd(profile, codes, group, at)
    linked = tasks["linked"].to_numpy(bool)

    def frames(modules: bool) -> pd.DataFrame:  # split in SQL: filtering a frame of Arrow strings copies them
        return query(
            profile,
            f"""SELECT rank, thread, name, start_ns, start_ns + dur_ns AS end_ns FROM host_ops
                WHERE category = 'python' AND {"" if modules else "NOT "}coalesce(starts_with(name, {_quote(_MODULE)}), false)
                  AND {scope(rank)} ORDER BY rank, thread, start_ns, name""",
        )

    module_py = frames(True)
    modules, module_names = _nest(module_py, codes, strip=len(_MODULE))
    code_py = frames(False)
    code = {
        "group": codes(code_py["rank"], code_py["thread"]),
        "start_ns": code_py["start_ns"].to_numpy("int64"),
        "end_ns": code_py["end_ns"].to_numpy("int64"),
        "name": code_py["name"].astype(str).to_numpy(object),
        "rank": code_py["rank"].to_numpy(),
    }
    follow = linked & ~lost
    mod = np.where(follow, modules.innermost(group, at), -1)
    has_mod = _ranks_with(tasks["rank"], module_py["rank"])
    return _Base(tasks, group, at, phase, lost, linked, modules, module_names, mod, has_mod, code)


def _quote(text: str) -> str:
    return "'" + str(text).replace("'", "''") + "'"


def _reasons(pos, has_frames, linked, lost, none_key, outside_key) -> np.ndarray:
    r = np.full(len(pos), None, dtype=object)
    r[pos < 0] = REASONS[outside_key]
    r[lost & (pos < 0)] = REASONS["no_forward"]
    r[~linked] = REASONS["no_link"]
    r[~has_frames] = REASONS[none_key]
    return r


def _ranks_with(task_ranks: pd.Series, frame_ranks: pd.Series) -> np.ndarray:
    return task_ranks.isin(set(frame_ranks.tolist())).to_numpy(bool)


class _Codes:
    """Small integer codes for (rank, thread), shared by every array of one attribution."""

    def __init__(self):
        self.known: dict = {}

    def __call__(self, rank: pd.Series, thread: pd.Series) -> np.ndarray:
        keys = pd.MultiIndex.from_arrays(
            [rank.astype("Int64").fillna(-1).to_numpy("int64"), thread.astype("Int64").fillna(-1).to_numpy("int64")]
        )
        for k in keys.unique():  # one entry per thread, not per event
            self.known.setdefault(k, len(self.known))
        if not self.known:
            return np.zeros(0, np.int64)
        return np.asarray(pd.MultiIndex.from_tuples(list(self.known)).get_indexer(keys), np.int64)


def _nest(df: pd.DataFrame, codes: _Codes, strip: int) -> tuple[Nesting, np.ndarray]:
    nest = Nesting(codes(df["rank"], df["thread"]), df["start_ns"].to_numpy("int64"), df["end_ns"].to_numpy("int64"))
    names = df["name"].astype(str).str.slice(strip).to_numpy(object)[nest.order]
    return nest, names


def _launch_points(profile, cond: str) -> pd.DataFrame:
    """One row per attributed task with the thread and time it was launched from.  Only the
    launches of the tasks in scope are ranked (``tl``): a call for one kernel type ranks its own
    few launches, not every launch of the profile."""
    kinds = ", ".join(f"'{k}'" for k in KINDS)
    return query(
        profile,
        f"""
    WITH t AS (SELECT rank, task_uid, kind, name, start_ns, dur_ns FROM device_tasks t
               WHERE kind IN ({kinds}) AND {cond}),
    tl AS (SELECT l.* FROM launches l SEMI JOIN t ON t.rank = l.rank AND t.task_uid = l.task_uid),
    lh AS (SELECT l.rank, l.task_uid, o.op_id
           FROM tl l JOIN host_ops o ON o.rank = l.rank AND o.op_id = l.host_op_id
           WHERE o.thread IS NOT NULL
           QUALIFY row_number() OVER (PARTITION BY l.rank, l.task_uid
                                      ORDER BY l.link <> 'torch_to_npu', o.dur_ns, o.op_id) = 1),
    la AS (SELECT l.rank, l.task_uid, a.call_id
           FROM tl l JOIN api_calls a ON a.rank = l.rank AND a.call_id = l.api_call_id
           WHERE a.thread IS NOT NULL
           QUALIFY row_number() OVER (PARTITION BY l.rank, l.task_uid ORDER BY a.dur_ns, a.call_id) = 1)
    SELECT t.*, coalesce(o.thread, a.thread) AS thread, coalesce(o.start_ns, a.start_ns) AS at_ns,
           (o.op_id IS NOT NULL OR a.call_id IS NOT NULL) AS linked
    FROM t LEFT JOIN lh ON lh.rank = t.rank AND lh.task_uid = t.task_uid
    LEFT JOIN host_ops o ON o.rank = lh.rank AND o.op_id = lh.op_id
    LEFT JOIN la ON la.rank = t.rank AND la.task_uid = t.task_uid
    LEFT JOIN api_calls a ON a.rank = la.rank AND a.call_id = la.call_id
    ORDER BY t.rank, t.task_uid""",
    )


def _through_queue(profile, codes: _Codes, group: np.ndarray, at: np.ndarray):
    """Move points inside a ``Dequeue`` slice to the paired ``Enqueue`` (FIFO order per
    process; only where Enqueue and Dequeue counts agree)."""
    q = query(
        profile,
        """
    WITH q AS (SELECT rank, pid, thread, start_ns, dur_ns, starts_with(name, 'Dequeue') AS deq,
                      row_number() OVER (PARTITION BY rank, pid, starts_with(name, 'Dequeue')
                                         ORDER BY start_ns, op_id) AS k
               FROM host_ops WHERE category = 'queue'
                 AND (starts_with(name, 'Enqueue') OR starts_with(name, 'Dequeue'))),
    ok AS (SELECT rank, pid FROM q GROUP BY ALL
           HAVING count(*) FILTER (deq) = count(*) FILTER (NOT deq))
    SELECT d.rank, d.thread, d.start_ns, d.start_ns + d.dur_ns AS end_ns,
           e.thread AS to_thread, e.start_ns AS to_ns
    FROM q d JOIN q e ON e.rank = d.rank AND e.pid = d.pid AND e.k = d.k AND NOT e.deq
    WHERE d.deq AND (d.rank, d.pid) IN (SELECT (rank, pid) FROM ok)""",
    )
    if q.empty:
        return group, at
    deq = Nesting(codes(q["rank"], q["thread"]), q["start_ns"].to_numpy("int64"), q["end_ns"].to_numpy("int64"))
    pos = deq.innermost(group, at)
    hit = pos >= 0
    src = deq.order[pos[hit]]
    to_group = codes(q["rank"], q["to_thread"])
    group, at = group.copy(), at.copy()
    group[hit] = to_group[src]
    at[hit] = q["to_ns"].to_numpy("int64")[src]
    return group, at


def _through_autograd(profile, codes: _Codes, group: np.ndarray, at: np.ndarray):
    """Points inside an autograd node move to its forward op; returns (phase, group, at,
    lost) where ``lost`` marks backward points whose forward op is missing."""
    bw = query(
        profile,
        """
    WITH f AS (SELECT rank, sequence, arg_max(thread, (start_ns, op_id)) AS thread,
                      max(start_ns) AS start_ns
               FROM host_ops WHERE category = 'op' AND sequence IS NOT NULL AND coalesce(fwd_thread, 0) = 0
               GROUP BY ALL)
    SELECT b.rank, b.thread, b.start_ns, b.start_ns + b.dur_ns AS end_ns,
           f.thread AS to_thread, f.start_ns AS to_ns
    FROM host_ops b LEFT JOIN f ON f.rank = b.rank AND f.sequence = b.sequence
    WHERE b.category = 'op' AND b.sequence IS NOT NULL AND coalesce(b.fwd_thread, 0) <> 0""",
    )
    phase = np.full(len(at), "", dtype=object)
    lost = np.zeros(len(at), bool)
    if bw.empty:
        return phase, group, at, lost
    nodes = Nesting(codes(bw["rank"], bw["thread"]), bw["start_ns"].to_numpy("int64"), bw["end_ns"].to_numpy("int64"))
    pos = nodes.innermost(group, at)
    hit = pos >= 0
    src = nodes.order[pos[hit]]
    phase[hit] = "backward"
    found = bw["to_ns"].notna().to_numpy(bool)[src]
    idx = np.flatnonzero(hit)
    lost[idx[~found]] = True
    to_group = codes(bw["rank"], bw["to_thread"])
    group, at = group.copy(), at.copy()
    group[idx[found]] = to_group[src[found]]
    at[idx[found]] = bw["to_ns"].to_numpy("int64", na_value=0)[src[found]]
    return phase, group, at, lost
