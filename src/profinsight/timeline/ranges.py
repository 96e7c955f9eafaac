"""What a time range of the timeline holds: per-name statistics of the slices in a dragged range,
and the device idle gaps of a window.

Both answer from the per-track numpy arrays of the index (lod.py), never by scanning the
profile in Python, so a range over a million slices costs tens of milliseconds.

Which slices a range holds: those that **overlap** ``[start_ns, end_ns)`` (a slice that starts
before the range and ends inside it counts; a zero-length slice counts when it lies inside), each
with its **whole** duration — so the statistics of a slice never depend on where the drag began.
In SQL over the slice rows (``index_of(p).slice_table()``)::

    start_ns < $end AND (start_ns + dur_ns > $start OR start_ns >= $start)

A slice's **self** time is its duration minus the parts of its direct children (the slices one
nesting level below it on its track that start inside it) that lie inside it.  Where a track's
slices only partly overlap (a text export's Python frames can), a slice that sticks out of the
one above it is subtracted only where the two overlap, so self times there are an estimate.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import ProfileError
from .index import index_of

#: the most names a range answer lists (the longest total first); ``names_total`` counts all
MAX_NAMES = 500


def _overlapping(tr, s: int, e: int):
    """(start, dur, depth, name) of the rows of ``tr`` overlapping [s, e), in track order
    (start ascending, longer first on ties), main and long rows merged."""
    ms, md = tr.m_start, tr.m_dur
    i0 = int(np.searchsorted(ms, s - tr.lookback, "left"))
    i1 = int(np.searchsorted(ms, e, "left"))
    st, du = ms[i0:i1], md[i0:i1]
    keep = np.flatnonzero((st + du > s) | (st >= s)) + i0
    ls, ld = tr.l_start, tr.l_dur
    lk = np.flatnonzero((ls < e) & ((ls + ld > s) | (ls >= s)))
    m_start = ms[keep]
    n, k = len(keep), len(lk)
    if not k:
        return m_start, md[keep], tr.m_depth[keep], tr.m_name[keep]
    # long rows are at least as long as any main row, so on equal starts they come first
    pos = np.searchsorted(m_start, ls[lk], "left") + np.arange(k)
    is_long = np.zeros(n + k, bool)
    is_long[pos] = True
    out = []
    for m_col, l_col in ((ms, ls), (md, ld), (tr.m_depth, tr.l_depth), (tr.m_name, tr.l_name)):
        col = np.empty(n + k, m_col.dtype)
        col[is_long] = l_col[lk]
        col[~is_long] = m_col[keep]
        out.append(col)
    return tuple(out)


def self_times(start: np.ndarray, dur: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Self time of each row of one track (rows in track order): its duration minus the clipped
    durations of its direct children.  A row's parent is the last row one level up that comes
    before it in track order (nesting_depth's definition of depth)."""
    n = len(start)
    child = np.zeros(n, np.float64)
    if n:
        end = start + dur
        pos = np.arange(n)
        for d in range(1, int(depth.max()) + 1 if n else 1):
            up = pos[depth == d - 1]
            me = pos[depth == d]
            if not len(up) or not len(me):
                continue
            j = np.searchsorted(up, me, "left") - 1
            ok = j >= 0
            par, me = up[j[ok]], me[ok]
            part = np.clip(np.minimum(end[me], end[par]) - np.maximum(start[me], start[par]), 0, None)
            child += np.bincount(par, weights=part, minlength=n)
    return np.maximum(dur - child, 0).astype(np.int64)


def range_stats(profile, start_ns: int, end_ns: int, track_ids=None) -> dict:
    """Per-name statistics of the slices of ``track_ids`` (every slice track when None or empty)
    overlapping [start_ns, end_ns): count, total, self, avg, min, max (ns), longest total first.

    Returns ``{start_ns, end_ns, tracks, count, total_ns, names_total, names: [{name, count,
    total_ns, self_ns, avg_ns, min_ns, max_ns}]}`` (times absolute epoch ns)."""
    if end_ns <= start_ns:
        raise ProfileError(
            f"empty range: end ({end_ns}) must be after start ({start_ns})", fix="drag over a range of the timeline"
        )
    idx = index_of(profile)
    ids = list(dict.fromkeys(track_ids or [])) or list(idx.slice_tracks)
    bad = [t for t in ids if t not in idx.slice_tracks]
    if bad:
        raise ProfileError(f"unknown slice track(s): {', '.join(bad[:5])}", fix="track ids come from the tracks route")
    frames = []
    for t in ids:
        tr = idx.slice_tracks[t]
        st, du, dp, nm = _overlapping(tr, start_ns, end_ns)
        if not len(st):
            continue
        # self time needs the children of every slice that overlaps, wherever they lie
        lo, hi = int(st.min()), int((st + du).max())
        if lo < start_ns or hi > end_ns:
            wst, wdu, wdp, wnm = _overlapping(tr, lo, max(hi, lo + 1))
            sf = self_times(wst, wdu, wdp)
            inside = (wst < end_ns) & ((wst + wdu > start_ns) | (wst >= start_ns))
            st, du, nm, sf = wst[inside], wdu[inside], wnm[inside], sf[inside]
        else:
            sf = self_times(st, du, dp)
        frames.append(pd.DataFrame({"name": idx.names_of[t][nm], "dur": du, "self": sf}))
    names = _by_name(frames)
    return {
        "start_ns": int(start_ns),
        "end_ns": int(end_ns),
        "tracks": len(ids),
        "count": int(names["count"].sum()) if len(names) else 0,
        "total_ns": int(names["total_ns"].sum()) if len(names) else 0,
        "names_total": int(len(names)),
        "names": names.head(MAX_NAMES).to_dict("records"),
    }


def _by_name(frames: list[pd.DataFrame]) -> pd.DataFrame:
    cols = ["name", "count", "total_ns", "self_ns", "avg_ns", "min_ns", "max_ns"]
    if not frames:
        return pd.DataFrame(columns=cols)
    df = pd.concat(frames, ignore_index=True)
    g = df.groupby("name", sort=False).agg(
        count=("dur", "size"),
        total_ns=("dur", "sum"),
        self_ns=("self", "sum"),
        min_ns=("dur", "min"),
        max_ns=("dur", "max"),
    )
    g["avg_ns"] = g["total_ns"] / g["count"]
    g = g.reset_index().sort_values(["total_ns", "name"], ascending=[False, True], kind="stable")
    out = g[cols].astype({"count": "int64", "total_ns": "int64", "self_ns": "int64", "min_ns": "int64"})
    return out.astype({"max_ns": "int64", "avg_ns": "float64"})


def gaps(profile, start_ns: int, end_ns: int, width_px: int) -> dict:
    """The device idle gaps (the ``idle_gaps`` analysis, its default parameters) that overlap
    [start_ns, end_ns), per rank.  At most ``2 x width_px`` gaps come back — the longest, since
    shorter ones are below a pixel — and ``total`` counts every gap in the window.

    Returns ``{total, shown, ranks: {rank: {start_ns, end_ns, host_activity}}}`` (absolute ns)."""
    from .queries import check_window

    check_window(start_ns, end_ns, width_px)
    df = profile.idle_gaps()
    if not len(df):
        return {"total": 0, "shown": 0, "ranks": {}}
    s = df["start_ns"].astype("int64").to_numpy()
    e = df["end_ns"].astype("int64").to_numpy()
    sel = df[(s < end_ns) & (e > start_ns)]
    total = len(sel)
    cap = 2 * int(width_px)
    if total > cap:
        sel = sel.assign(_len=sel["end_ns"].astype("int64") - sel["start_ns"].astype("int64"))
        sel = sel.sort_values("_len", ascending=False, kind="stable").head(cap)
    sel = sel.sort_values(["rank", "start_ns"], kind="stable")
    ranks = {}
    for rank, part in sel.groupby("rank", sort=True):
        ranks[str(int(rank))] = {
            "start_ns": part["start_ns"].astype("int64").tolist(),
            "end_ns": part["end_ns"].astype("int64").tolist(),
            "host_activity": part["host_activity"].astype(str).tolist()
            if "host_activity" in part
            else [""] * len(part),
        }
    return {"total": int(total), "shown": int(len(sel)), "ranks": ranks}
