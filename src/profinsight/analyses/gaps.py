"""Why the device waits: idle gaps with the host activity behind them, launch overhead and
data loading.

``idle_gaps`` finds the stretches where no device task runs and says what the host was doing
then, so that "starved by data" (data loading), "launch bound" (the host was dispatching),
"synchronisation" and plain host-side Python can be told apart.  ``launch_stats`` measures the
dispatch side per step, ``dataloader`` the data-loading side.  All interval work is DuckDB SQL
(merged unions and range joins), never a Python loop per task.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from ..registry import Chart, Param, analysis
from ._sql import arrow, query, query_with, to_pandas
from .steps import IN_STEP, breakdown, islands_sql, union_length_sql

#: device task kinds that occupy the device (a gap is where none of them runs)
DEVICE_KINDS = "kind IN ('kernel', 'communication', 'memcpy', 'memset')"
#: host events that load data (torch's ``enumerate(DataLoader)#_...Iter.__next__`` ops,
#: user ranges and Python frames of torch/utils/data/dataloader.py)
DATA_LOADING = "name ILIKE '%dataloader%'"
#: host ops / API calls that wait for the device (RE2, DuckDB regexp_matches)
SYNC_RE = r"(?i:synchroni[sz]e)|Sync([A-Z_]|$)|^aten::(item|_local_scalar_dense)$"
#: names of host ops / API calls that wait for the device (the regex confirms a cheap test)
SYNC_OPS = ("aten::item", "aten::_local_scalar_dense")


def _is_sync(col: str) -> str:
    ops = ", ".join(f"'{o}'" for o in SYNC_OPS)
    cheap = f"(strpos({col}, 'ync') > 0 OR strpos({col}, 'YNC') > 0)"
    return f"({col} IN ({ops}) OR ({cheap} AND regexp_matches({col}, '{SYNC_RE}')))"


#: the order in which activities win when several overlap a gap
ACTIVITIES = ("data_loading", "synchronization", "launch", "python", "idle")


def _launching_threads_sql() -> str:
    """(rank, thread) of every thread that launched a device task: the thread of a linked API
    call, or of a linked host op."""
    return """
        SELECT DISTINCT a.rank, a.thread FROM launches l
        JOIN api_calls a ON a.rank = l.rank AND a.call_id = l.api_call_id
        WHERE a.thread IS NOT NULL
        UNION
        SELECT DISTINCT h.rank, h.thread FROM launches l
        JOIN host_ops h ON h.rank = l.rank AND h.op_id = l.host_op_id
        WHERE h.thread IS NOT NULL"""


def _host_events_sql(python: bool = False) -> str:
    """The host events that can explain a gap, with their activity class (1 data loading,
    2 synchronisation, 3 launch, 4 python).  ``python=False``: classes 1-3 (ops, ranges, queue
    events, API calls; Python frames only where they are data loading); ``python=True``: class 4
    only (Python frames and user ranges), needed only for gaps that nothing else explains.
    Events that explain nothing (ProfilerStep#N, ops on threads that never launch device work)
    get a null class and are dropped by the caller."""
    if python:
        return """
    ev AS (
        SELECT rank, 0 AS src, op_id AS id, start_ns AS s, start_ns + dur_ns AS e, dur_ns, 4 AS prio
        FROM host_ops
        WHERE category IN ('python', 'annotation') AND name NOT LIKE 'ProfilerStep#%'
          AND start_ns IS NOT NULL AND dur_ns IS NOT NULL)"""
    return f"""
    lt AS ({_launching_threads_sql()}),
    ev AS (
        SELECT h.rank, 0 AS src, h.op_id AS id, h.start_ns AS s, h.start_ns + h.dur_ns AS e, h.dur_ns,
               CASE
                 WHEN h.category IN ('op', 'annotation', 'python') AND h.{DATA_LOADING} THEN 1
                 WHEN h.category IN ('op', 'annotation', 'queue') AND {_is_sync("h.name")} THEN 2
                 WHEN h.category IN ('op', 'queue') AND lt.thread IS NOT NULL
                      AND h.name NOT LIKE 'ProfilerStep#%' THEN 3
               END AS prio
        FROM host_ops h LEFT JOIN lt ON lt.rank = h.rank AND lt.thread = h.thread
        WHERE h.start_ns IS NOT NULL AND h.dur_ns IS NOT NULL
          AND (h.category <> 'python' OR h.{DATA_LOADING})
        UNION ALL
        SELECT a.rank, 1, a.call_id, a.start_ns, a.start_ns + a.dur_ns, a.dur_ns,
               CASE
                 WHEN {_is_sync("a.name")} THEN 2
                 WHEN lt.thread IS NOT NULL THEN 3
               END
        FROM api_calls a LEFT JOIN lt ON lt.rank = a.rank AND lt.thread = a.thread
        WHERE a.start_ns IS NOT NULL AND a.dur_ns IS NOT NULL)"""


_GAP_COLUMNS = {
    "rank": "rank id",
    "step": "step of the first device task after the gap (the work the gap delays); null on a rank that "
    "marks no steps (the whole capture is one range)",
    "position": "in_step (both neighbours belong to the same step) or between_steps",
    "start_ns": "gap start: end of the last device task before it, epoch ns",
    "end_ns": "gap end: start of the next device task, epoch ns",
    "dur_us": "gap length",
    "offset_us": "gap start minus the host ProfilerStep start of `step` (where to look on the timeline); "
    "on a rank that marks no steps, minus its first device task",
    "host_activity": "what the host did during the gap: "
    + " / ".join(ACTIVITIES)
    + " (the first that applies, in this order)",
    "host_op": "the host op / API / Python frame of that activity that best explains the gap: the largest "
    "overlap x (overlap / its own duration), so a call that ran during the gap beats an op "
    "enclosing the whole forward pass",
    "overlap_us": "overlap of host_op with the gap; null when idle",
    "host_api": "the runtime / CANN / CUDA API call in progress during the gap (api_calls): the one that "
    "overlaps it most, the shorter of equals (the innermost); null where the rank records no API calls "
    "or none overlaps the gap",
    "host_api_overlap_us": "overlap of host_api with the gap",
    "next_task": "name of the device task that ends the gap",
    "label": "'r<rank> s<step> +<offset> ms', the chart label",
}


@analysis(
    "idle_gaps",
    title="Device idle gaps and what the host was doing",
    params=(
        Param("min_us", float, 50.0, help="keep gaps at least this long (us)"),
        Param("top", int, None, help="keep the N longest gaps"),
    ),
    chart=Chart("bar", "label", ("dur_us",), title="Longest device idle gaps (us)"),
    columns=_GAP_COLUMNS,
)
def idle_gaps(profile, min_us: float = 50.0, top: int | None = None) -> pd.DataFrame:
    """Device idle intervals per rank — gaps in the union of all kernels, communication ops,
    memory copies and memsets, inside a step and between consecutive steps — each with what the
    host was doing meanwhile: ``data_loading`` (a DataLoader op or frame overlaps the gap),
    ``synchronization`` (a synchronize / ``aten::item`` op or a Synchronize API), ``launch`` (API
    calls or framework ops on a thread that launches device work: the host was dispatching),
    ``python`` (only Python frames or user ``record_function`` ranges), ``idle`` (nothing
    recorded but the ProfilerStep itself).  Longest first."""
    min_ns = max(float(min_us or 0.0), 0.0) * 1e3
    found = arrow(
        profile,
        f"""
    WITH t AS (
        SELECT rank, step, task_uid AS uid, start_ns AS s, start_ns + dur_ns AS e FROM device_tasks
        WHERE {DEVICE_KINDS} AND {IN_STEP} AND start_ns IS NOT NULL AND dur_ns IS NOT NULL),
    -- sorted by start, a task that starts after every earlier task has ended closes a gap
    -- that began at the largest earlier end (pe), left by a task of step prev_step.  The window
    -- carries the task's row id, not its name: kernel names are long, and sorting them with
    -- every task took 2.6x the memory (1 GB Kineto trace: +730 against +280 MB, 0.37 against
    -- 0.25 s); the names of the tasks that end a gap are joined to the gaps alone
    g AS (
        SELECT rank, pe AS gs, s AS ge, prev_step, step, uid FROM (
            SELECT rank, step, uid, s,
                   max(e) OVER w AS pe, arg_max(step, e) OVER w AS prev_step
            FROM t WINDOW w AS (PARTITION BY rank ORDER BY s, e
                                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING))
        WHERE s > pe AND s - pe >= {min_ns}
          AND (step - prev_step BETWEEN 0 AND 1 OR (step IS NULL AND prev_step IS NULL))),
    -- where the gap lies: from the host step start, or on a rank without steps from its first task
    o AS (SELECT g.*, d.name AS next_task, g.gs - coalesce(st.host_start_ns, f.t0) AS off
          FROM g LEFT JOIN device_tasks d ON d.rank = g.rank AND d.task_uid = g.uid
                 LEFT JOIN steps st ON st.rank = g.rank AND st.step = g.step
                 LEFT JOIN (SELECT rank, min(s) AS t0 FROM t GROUP BY rank) f ON f.rank = g.rank)
    SELECT rank, step,
           CASE WHEN step IS NOT DISTINCT FROM prev_step THEN 'in_step' ELSE 'between_steps' END AS position,
           gs AS start_ns, ge AS end_ns, (ge - gs) / 1e3 AS dur_us, off / 1e3 AS offset_us, next_task,
           'r' || rank || ' s' || coalesce(CAST(step AS VARCHAR), '-') || ' +' || printf('%.3f', off / 1e6) || ' ms'
               AS label
    FROM o""",
    )
    # longest first (the order the result is shown in), ordered here on three integer columns:
    # DuckDB's ORDER BY moved the names and labels with the keys (28,841 gaps: 13 of 47 ms); the
    # gaps of a rank are disjoint, so (length, rank, start) has no ties and the order is the
    # same.  Only the top ones where ``top`` is given: each gap is explained on its own
    rank = _ints(found["rank"])
    gs, ge = _ints(found["start_ns"]), _ints(found["end_ns"])
    order = np.lexsort((gs, rank, gs - ge))
    if top:
        order = order[: max(int(top), 0)]
    gaps = to_pandas(found.take(order))
    rank, gs, ge = rank[order], gs[order], ge[order]
    # the explanations walk the gaps in time order per rank: they get the three columns they
    # read in that order, and their answers go back to the rows by position (sorting the whole
    # frame afterwards moved its long kernel-name strings: 0.39 s of 2.4 s at 287 k gaps)
    by_start = np.lexsort((gs, rank))
    timed = pd.DataFrame({"rank": rank[by_start], "start_ns": gs[by_start], "end_ns": ge[by_start]})

    def placed(values) -> list:
        out = np.empty(len(gaps), dtype=object)
        out[by_start] = np.asarray(values, dtype=object)
        return out.tolist()

    activity, host_op, overlap = _explain_gaps(profile, timed)
    gaps.insert(7, "host_activity", pd.array(placed(activity), dtype="string"))
    gaps.insert(8, "host_op", pd.array(placed(host_op), dtype="string"))
    gaps.insert(9, "overlap_us", pd.array(placed(overlap), dtype="Float64"))
    api, api_ov = _api_in_progress(profile, timed)
    gaps.insert(10, "host_api", pd.array(placed(api), dtype="string"))
    gaps.insert(11, "host_api_overlap_us", pd.array(placed(api_ov), dtype="Float64"))
    return gaps


def _ints(col) -> np.ndarray:
    """An integer column as int64, a null (none is expected) after every value, as SQL's ``ORDER
    BY`` puts it."""
    return col.cast(pa.int64()).fill_null(np.iinfo(np.int64).max).to_numpy()


#: host_activity by the priority (``prio``) of the event that explains a gap
_CLASS_NAMES = np.array([None, "data_loading", "synchronization", "launch", "python"], dtype=object)


def _explain_gaps(profile, gaps: pd.DataFrame):
    """For each gap (rows sorted by rank, start): the activity, the host event that best
    explains it and their overlap (us).

    The host events come from SQL; matching them to gaps is vectorised numpy on sorted arrays:
    gaps are disjoint, so the gaps an event [s, e) overlaps are the run from the first gap
    ending after s to the last gap starting before e (two ``searchsorted``), expanded with
    ``repeat``.  The winner per gap is the first activity class, then the largest
    overlap x (overlap / event duration) — an op that encloses the whole forward pass overlaps
    every gap completely but explains none of them, the call that ran during the gap does —
    then the shorter event.  Python frames (the most numerous events) are read only for the
    gaps that nothing else explains."""
    n = len(gaps)
    activity = np.array(["idle"] * n, dtype=object)
    host_op = np.array([None] * n, dtype=object)
    overlap = np.array([None] * n, dtype=object)
    if n == 0:
        return activity.tolist(), host_op.tolist(), overlap.tolist()
    g_rank = gaps["rank"].to_numpy("int64")
    g_s = gaps["start_ns"].to_numpy("int64")
    g_e = gaps["end_ns"].to_numpy("int64")
    open_ = np.ones(n, dtype=bool)
    for python in (False, True):
        idx = np.flatnonzero(open_)
        if not len(idx):
            break
        won = _best_events(profile, python, g_rank[idx], g_s[idx], g_e[idx])
        if won is None:
            continue
        local, ev, ov = won
        names = _event_names(profile, ev)
        rows = idx[local]
        activity[rows] = _CLASS_NAMES[ev["prio"].to_numpy("int64")]
        host_op[rows] = names
        overlap[rows] = (ov / 1e3).tolist()
        open_[rows] = False
    return activity.tolist(), host_op.tolist(), overlap.tolist()


def _api_in_progress(profile, gaps: pd.DataFrame):
    """Per gap the API call that overlaps it most (the shorter of equal overlaps: the innermost
    of nested calls; then the lower call id) and that overlap in us; None where no call overlaps.

    A sweep over sorted arrays per rank, not a SQL range join: the join compared every gap with
    every call (39 k gaps x 321 k calls on a 5 M-event profile: 75 s).  The gaps of a rank are
    disjoint, so a call overlaps a gap either by starting inside it (one gap per call, found by
    a binary search) or by being open at the gap's start (the gaps whose start lies inside the
    call, a range of the sorted gap starts): the candidate pairs are at most the calls plus
    their nesting across gap starts."""
    n = len(gaps)
    name = np.full(n, None, dtype=object)
    ov_us = np.full(n, None, dtype=object)
    if n == 0:
        return name.tolist(), ov_us.tolist()
    calls = query(
        profile,
        "SELECT rank, name, start_ns, dur_ns, call_id FROM api_calls "
        "WHERE start_ns IS NOT NULL AND dur_ns > 0 ORDER BY rank, start_ns",
    )
    if not len(calls):
        return name.tolist(), ov_us.tolist()
    c_rank = calls["rank"].astype("int64").to_numpy()
    g_rank = gaps["rank"].astype("int64").to_numpy()
    for rank in np.unique(g_rank):
        gi = np.flatnonzero(g_rank == rank)
        gi = gi[np.argsort(gaps["start_ns"].to_numpy()[gi].astype(np.int64), kind="stable")]
        gs = gaps["start_ns"].to_numpy()[gi].astype(np.int64)
        ge = gaps["end_ns"].to_numpy()[gi].astype(np.int64)
        ci = np.flatnonzero(c_rank == rank)
        if not len(ci):
            continue
        s = calls["start_ns"].to_numpy()[ci].astype(np.int64)
        e = s + calls["dur_ns"].to_numpy()[ci].astype(np.int64)
        # calls that start inside a gap [gs, ge)
        j = np.searchsorted(gs, s, "right") - 1
        inside = (j >= 0) & (s < ge[np.maximum(j, 0)])
        pg, pc = [j[inside]], [np.flatnonzero(inside)]
        # calls open at a gap's start: the gaps with s < gs < e
        lo = np.searchsorted(gs, s, "right")
        hi = np.searchsorted(gs, e, "left")
        cnt = np.maximum(hi - lo, 0)
        if cnt.sum():
            k = np.repeat(np.arange(len(s)), cnt)
            first = np.repeat(lo - np.r_[0, np.cumsum(cnt)[:-1]], cnt)
            pg.append(first + np.arange(len(k)))
            pc.append(k)
        g_idx, c_idx = np.concatenate(pg), np.concatenate(pc)
        if not len(g_idx):
            continue
        ov = np.minimum(e[c_idx], ge[g_idx]) - np.maximum(s[c_idx], gs[g_idx])
        dur = (e - s)[c_idx]
        cid = calls["call_id"].astype("Int64").fillna(np.iinfo(np.int64).max).to_numpy(np.int64)[ci][c_idx]
        # per gap: the largest overlap, then the shortest call, then the lowest call id
        order = np.lexsort((cid, dur, -ov, g_idx))
        g_sorted = g_idx[order]
        best = order[np.r_[True, g_sorted[1:] != g_sorted[:-1]]]
        rows = gi[g_idx[best]]
        name[rows] = calls["name"].to_numpy()[ci][c_idx[best]]
        ov_us[rows] = [float(o) / 1e3 for o in ov[best].tolist()]
    return name.tolist(), ov_us.tolist()


def _best_events(profile, python: bool, g_rank, g_s, g_e):
    """(gap positions, winning events, overlaps ns) for the gaps given (sorted by rank, start),
    or None when no event overlaps any of them."""
    ranks = np.unique(g_rank)
    lo = [int(g_s[g_rank == r].min()) for r in ranks]
    hi = [int(g_e[g_rank == r].max()) for r in ranks]
    ev = query(
        profile,
        f"""
        WITH {_host_events_sql(python)},
        b AS (SELECT unnest($1::INTEGER[]) AS rank, unnest($2::BIGINT[]) AS lo, unnest($3::BIGINT[]) AS hi)
        SELECT ev.rank, ev.src, ev.id, ev.s, ev.e, ev.dur_ns, ev.prio FROM ev JOIN b ON b.rank = ev.rank
        WHERE ev.prio IS NOT NULL AND ev.dur_ns > 0 AND ev.e > b.lo AND ev.s < b.hi""",
        [[int(r) for r in ranks], lo, hi],
    )
    if ev.empty:
        return None
    e_rank = ev["rank"].to_numpy("int64")
    e_s, e_e = ev["s"].to_numpy("int64"), ev["e"].to_numpy("int64")
    e_dur, e_prio = ev["dur_ns"].to_numpy("int64"), ev["prio"].to_numpy("int64")
    pair_gap, pair_ev = [], []
    for r in ranks:  # one pass per rank, vectorised within
        gi = np.flatnonzero(g_rank == r)
        ei = np.flatnonzero(e_rank == r)
        first = np.searchsorted(g_e[gi], e_s[ei], side="right")  # first gap ending after s
        last = np.searchsorted(g_s[gi], e_e[ei], side="left") - 1  # last gap starting before e
        ok = first <= last
        cnt = (last - first + 1)[ok]
        if not len(cnt):
            continue
        offs = np.arange(cnt.sum()) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        pair_gap.append(gi[np.repeat(first[ok], cnt) + offs])
        pair_ev.append(np.repeat(ei[ok], cnt))
    if not pair_gap:
        return None
    pg, pe = np.concatenate(pair_gap), np.concatenate(pair_ev)
    ov = np.minimum(g_e[pg], e_e[pe]) - np.maximum(g_s[pg], e_s[pe])
    score = ov.astype("float64") ** 2 / e_dur[pe]
    order = np.lexsort((pe, e_dur[pe], -score, e_prio[pe], pg))  # the last key sorts first
    pg, pe, ov = pg[order], pe[order], ov[order]
    head = np.r_[True, pg[1:] != pg[:-1]]
    return pg[head], ev.iloc[pe[head]].reset_index(drop=True), ov[head]


def _event_names(profile, chosen: pd.DataFrame) -> np.ndarray:
    """Names of the chosen host events (src 0: host_ops.op_id, 1: api_calls.call_id), None where
    the event is not found; looked up by index, not per event in Python."""
    keys = pd.MultiIndex.from_arrays([chosen[c].to_numpy("int64") for c in ("rank", "src", "id")])
    src, ids = keys.get_level_values(1).to_numpy(), keys.get_level_values(2).to_numpy()
    got = query_with(
        profile,
        """
        SELECT h.rank, 0 AS src, h.op_id AS id, h.name FROM host_ops h
        SEMI JOIN gap_host_ids w ON h.op_id = w.id
        UNION ALL
        SELECT a.rank, 1, a.call_id, a.name FROM api_calls a
        SEMI JOIN gap_api_ids w ON a.call_id = w.id""",
        {"gap_host_ids": _ids_table(ids[src == 0]), "gap_api_ids": _ids_table(ids[src == 1])},
    )
    got = got.drop_duplicates(["rank", "src", "id"], keep="last")  # as a dict keyed by them would
    found = pd.MultiIndex.from_arrays([got[c].to_numpy("int64") for c in ("rank", "src", "id")])
    pos = found.get_indexer(keys)
    names = np.append(got["name"].to_numpy(dtype=object), None)
    return names[pos]  # -1 (not found): the None appended last


def _ids_table(ids: np.ndarray) -> pa.Table:
    """Distinct ids as a one-column Arrow table ``id`` (BIGINT) for a SQL join."""
    return pa.table({"id": pa.array(np.unique(np.asarray(ids, np.int64)), pa.int64())})


_LAUNCH_COLUMNS = {
    "rank": "rank id",
    "step": "step number",
    "kernels": "compute kernels of the step",
    "launched_kernels": "kernels whose launch is known (a launches row to an API call or, failing that, a host op)",
    "short_kernels": "kernels that ran shorter than the call that launched them (the host cannot keep up)",
    "median_kernel_us": "median kernel duration",
    "median_launch_us": "median duration of the launching call",
    "median_delay_us": "median launch-to-start delay: kernel start - launching call start",
    "p90_delay_us": "90th percentile of that delay",
    "dispatch_us": "time the launching threads spent in API calls (synchronize calls excluded) during the "
    "host step (union per thread, summed over threads); null when the profile has no API calls",
    "host_step_us": "host ProfilerStep duration",
    "step_us": "device step (vendor Stage), as in step_breakdown",
    "share_of_step_ratio": "dispatch_us / step_us",
    "share_of_host_step_ratio": "dispatch_us / host_step_us",
}


def _calls_in_steps_sql(calls: str) -> str:
    """SQL relation ``rank, step, thread, s, e``: each call of ``calls`` (``rank, thread,
    start_ns, dur_ns``) in every host step it starts in, cut at the step's end.

    A rank's host steps follow each other, so a call starts in at most one: the last step that
    starts at or before it (an ASOF join, one binary search per call).  The plain range join
    tested every step of the rank for every call (1 GB: 682 k calls x 1,134 steps, 1.2 s).  A
    rank whose steps overlap or share a start (damaged input) keeps the range join, so the rows
    are those of the plain definition either way."""
    return f"""(
        WITH sr AS (
            SELECT rank, step, host_start_ns, host_end_ns,
                   coalesce(bool_or(host_start_ns < pe OR same > 1) OVER (PARTITION BY rank), false) AS tangled
            FROM (SELECT rank, step, host_start_ns, host_end_ns,
                         max(host_end_ns) OVER (PARTITION BY rank ORDER BY host_start_ns, host_end_ns
                                                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pe,
                         count(*) OVER (PARTITION BY rank, host_start_ns) AS same
                  FROM steps WHERE host_start_ns IS NOT NULL))
        SELECT a.rank, st.step, a.thread, a.start_ns AS s, least(a.start_ns + a.dur_ns, st.host_end_ns) AS e
        FROM {calls} a ASOF JOIN (SELECT * FROM sr WHERE NOT tangled) st
             ON st.rank = a.rank AND a.start_ns >= st.host_start_ns
        WHERE a.start_ns < st.host_end_ns
        UNION ALL
        SELECT a.rank, st.step, a.thread, a.start_ns, least(a.start_ns + a.dur_ns, st.host_end_ns)
        FROM {calls} a JOIN (SELECT * FROM sr WHERE tangled) st
             ON st.rank = a.rank AND a.start_ns >= st.host_start_ns AND a.start_ns < st.host_end_ns)"""


@analysis(
    "launch_stats",
    title="Kernel launch overhead per step",
    chart=Chart("bar", "label", ("dispatch_us",), title="Dispatch time per step (us)"),
    columns={**_LAUNCH_COLUMNS, "label": "'r<rank> s<step>', the chart label"},
)
def launch_stats(profile) -> pd.DataFrame:
    """Per rank and step: how many kernels ran shorter than their launch, how long a kernel
    waited between its launch call and its start, and how much host time went into dispatch.
    A launch is the linked runtime/CANN API call (the innermost one: the latest-starting of
    the task's linked calls); where a task has none, its linked host op."""
    sql = f"""
    WITH k AS (
        SELECT rank, task_uid, step, start_ns, dur_ns FROM device_tasks
        WHERE kind = 'kernel' AND step IS NOT NULL),
    la AS (
        SELECT l.rank, l.task_uid, arg_max(a.start_ns, a.start_ns) AS ls, arg_max(a.dur_ns, a.start_ns) AS ld
        FROM launches l JOIN api_calls a ON a.rank = l.rank AND a.call_id = l.api_call_id
        GROUP BY l.rank, l.task_uid),
    lh AS (  -- host-op launchers only for the tasks no API call launched (the fallback)
        SELECT l.rank, l.task_uid, arg_max(h.start_ns, h.start_ns) AS ls, arg_max(h.dur_ns, h.start_ns) AS ld
        FROM (SELECT * FROM launches WHERE host_op_id IS NOT NULL) l
        ANTI JOIN la ON la.rank = l.rank AND la.task_uid = l.task_uid
        JOIN host_ops h ON h.rank = l.rank AND h.op_id = l.host_op_id
        GROUP BY l.rank, l.task_uid),
    kl AS (
        SELECT k.*, coalesce(la.ls, lh.ls) AS ls, CASE WHEN la.ls IS NOT NULL THEN la.ld ELSE lh.ld END AS ld
        FROM k LEFT JOIN la ON la.rank = k.rank AND la.task_uid = k.task_uid
               LEFT JOIN lh ON lh.rank = k.rank AND lh.task_uid = k.task_uid),
    ks AS (
        SELECT rank, step, count(*) AS kernels, count(ls) AS launched_kernels,
               count(*) FILTER (WHERE ls IS NOT NULL AND dur_ns < ld) AS short_kernels,
               median(dur_ns) / 1e3 AS median_kernel_us, median(ld) / 1e3 AS median_launch_us,
               quantile_cont(start_ns - ls, 0.5) / 1e3 AS median_delay_us,
               quantile_cont(start_ns - ls, 0.9) / 1e3 AS p90_delay_us
        FROM kl GROUP BY rank, step),
    lth AS (
        SELECT DISTINCT a.rank, a.thread FROM launches l
        JOIN api_calls a ON a.rank = l.rank AND a.call_id = l.api_call_id),
    ca AS (
        SELECT a.rank, a.thread, a.start_ns, a.dur_ns FROM api_calls a
        JOIN lth ON lth.rank = a.rank AND lth.thread = a.thread
        WHERE a.dur_ns IS NOT NULL AND NOT {_is_sync("a.name")}),
    api AS {_calls_in_steps_sql("ca")},
    disp AS (SELECT rank, step, sum(len_ns) AS dispatch_ns
             FROM {union_length_sql("api", ("rank", "step", "thread"))} GROUP BY rank, step),
    has_api AS (SELECT DISTINCT rank FROM api_calls)
    SELECT st.rank, st.step, coalesce(ks.kernels, 0) AS kernels,
           coalesce(ks.launched_kernels, 0) AS launched_kernels, coalesce(ks.short_kernels, 0) AS short_kernels,
           ks.median_kernel_us, ks.median_launch_us, ks.median_delay_us, ks.p90_delay_us,
           CASE WHEN ha.rank IS NOT NULL THEN coalesce(d.dispatch_ns, 0) / 1e3 END AS dispatch_us
    FROM steps st LEFT JOIN ks ON ks.rank = st.rank AND ks.step = st.step
           LEFT JOIN disp d ON d.rank = st.rank AND d.step = st.step
           LEFT JOIN has_api ha ON ha.rank = st.rank
    ORDER BY st.rank, st.step"""
    df = query(profile, sql)
    for c in ("kernels", "launched_kernels", "short_kernels"):
        df[c] = df[c].astype("Int64")
    b = breakdown(profile)[["rank", "step", "host_step_us", "step_us", "label"]]
    df = df.merge(b, on=["rank", "step"], how="left")
    df["share_of_step_ratio"] = df["dispatch_us"] / df["step_us"].where(df["step_us"] > 0)
    df["share_of_host_step_ratio"] = df["dispatch_us"] / df["host_step_us"].where(df["host_step_us"] > 0)
    return df[[*_LAUNCH_COLUMNS, "label"]]


_DL_COLUMNS = {
    "rank": "rank id",
    "step": "step number",
    "count": "data-loading host ops of the step (ops/ranges whose name contains DataLoader)",
    "dataloader_us": "union of their intervals (host time spent loading data)",
    "host_step_us": "host ProfilerStep duration",
    "share_of_host_step_ratio": "dataloader_us / host_step_us",
    "device_busy_during_us": "part of dataloader_us during which some device task ran",
    "device_idle_during_us": "dataloader_us - device_busy_during_us: data loading the device waited for",
    "overlaps_device": "whether any device work ran during data loading",
}


@analysis(
    "dataloader",
    title="Data loading per step",
    chart=Chart(
        "stacked",
        "label",
        ("device_idle_during_us", "device_busy_during_us"),
        title="Data-loading time per step: device idle / busy meanwhile (us)",
    ),
    columns={**_DL_COLUMNS, "label": "'r<rank> s<step>', the chart label"},
)
def dataloader(profile) -> pd.DataFrame:
    """Per rank and step: host time spent in the data loader (``enumerate(DataLoader)#...``
    ops and other ops or ranges named after a DataLoader), its share of the host step, and how
    much of it the device spent idle (data loading not hidden behind device work).  Every step
    has a row; steps without data loading show 0."""
    sql = f"""
    WITH dl AS (
        SELECT rank, step, start_ns AS s, start_ns + dur_ns AS e FROM host_ops
        WHERE category IN ('op', 'annotation') AND {DATA_LOADING} AND step IS NOT NULL
          AND start_ns IS NOT NULL AND dur_ns IS NOT NULL),
    cnt AS (SELECT rank, step, count(*) AS n FROM dl GROUP BY rank, step),
    dli AS {islands_sql("dl", ("rank", "step"))},
    dt AS (
        SELECT rank, start_ns AS s, start_ns + dur_ns AS e FROM device_tasks
        WHERE {DEVICE_KINDS} AND start_ns IS NOT NULL AND dur_ns IS NOT NULL
          AND rank IN (SELECT rank FROM dl)),
    dti AS {islands_sql("dt", ("rank",))},
    ov AS (
        SELECT a.rank, a.step, sum(least(a.e, b.e) - greatest(a.s, b.s)) AS busy_ns
        FROM dli a JOIN dti b ON a.rank = b.rank AND b.s < a.e AND b.e > a.s
        GROUP BY a.rank, a.step),
    u AS (SELECT rank, step, sum(e - s) AS dl_ns FROM dli GROUP BY rank, step)
    SELECT st.rank, st.step, coalesce(cnt.n, 0) AS count,
           coalesce(u.dl_ns, 0) / 1e3 AS dataloader_us,
           (st.host_end_ns - st.host_start_ns) / 1e3 AS host_step_us,
           coalesce(u.dl_ns, 0) / nullif(st.host_end_ns - st.host_start_ns, 0) AS share_of_host_step_ratio,
           coalesce(ov.busy_ns, 0) / 1e3 AS device_busy_during_us,
           (coalesce(u.dl_ns, 0) - coalesce(ov.busy_ns, 0)) / 1e3 AS device_idle_during_us,
           coalesce(ov.busy_ns, 0) > 0 AS overlaps_device,
           'r' || st.rank || ' s' || st.step AS label
    FROM steps st
    LEFT JOIN cnt ON cnt.rank = st.rank AND cnt.step = st.step
    LEFT JOIN u ON u.rank = st.rank AND u.step = st.step
    LEFT JOIN ov ON ov.rank = st.rank AND ov.step = st.step
    ORDER BY st.rank, st.step"""
    df = query(profile, sql)
    df["count"] = df["count"].astype("Int64")
    return df
