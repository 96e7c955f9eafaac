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
    before it in track order (nesting_depth's definition of depth).

    The rows are grouped by depth with one stable sort (a radix sort: depths are small), not a
    scan of every row per level, and the children's parts are summed in one bincount: a Python
    main thread is ~30 levels deep, and per-level scans and sums were most of a range's time."""
    n = len(start)
    top = int(depth.max()) if n else 0
    if top == 0:
        return dur.astype(np.int64, copy=True)  # one level: nothing nests
    end = start + dur
    key = depth.astype(np.uint8) if top < 256 else depth
    order = np.argsort(key, kind="stable")  # by depth, track order within a depth
    bounds = np.searchsorted(key[order], np.arange(top + 2))
    pars, parts = [], []
    for d in range(1, top + 1):
        up, me_all = order[bounds[d - 1] : bounds[d]], order[bounds[d] : bounds[d + 1]]
        if len(up) and len(me_all):
            j = np.searchsorted(up, me_all, "left") - 1
            ok = j >= 0
            par, me = up[j[ok]], me_all[ok]
            pars.append(par)
            parts.append(np.clip(np.minimum(end[me], end[par]) - np.maximum(start[me], start[par]), 0, None))
    if not pars:
        return dur.astype(np.int64, copy=True)
    child = np.bincount(np.concatenate(pars), weights=np.concatenate(parts), minlength=n)
    return np.maximum(dur - child, 0).astype(np.int64)


def range_stats(profile, start_ns: int, end_ns: int, track_ids=None, shift: dict | None = None) -> dict:
    """Per-name statistics of the slices of ``track_ids`` (every slice track when None or empty)
    overlapping [start_ns, end_ns): count, total, self, avg, min, max (ns), longest total first.

    Returns ``{start_ns, end_ns, tracks, count, total_ns, names_total, names: [{name, count,
    total_ns, self_ns, avg_ns, min_ns, max_ns}]}`` (times absolute epoch ns).

    ``shift`` ({rank: ns}, align.py): the range is in the shifted frame, so each rank's tracks are
    read over the range moved back by the rank's offset."""
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
        off = shift.get(idx.by_id[t]["rank"], 0) if shift else 0
        part = _track_part(tr, start_ns - off, end_ns - off)
        if part is not None:
            frames.append((idx.names_of[t], *part))
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


def _track_part(tr, start_ns: int, end_ns: int):
    """(name codes, durations, self times) of the rows of one track overlapping [start_ns,
    end_ns), or None when there are none."""
    st, du, dp, nm = _overlapping(tr, start_ns, end_ns)
    if not len(st):
        return None
    # self time needs the children of every slice that overlaps, wherever they lie
    lo, hi = int(st.min()), int((st + du).max())
    if lo < start_ns or hi > end_ns:
        wst, wdu, wdp, wnm = _overlapping(tr, lo, max(hi, lo + 1))
        sf = self_times(wst, wdu, wdp)
        inside = (wst < end_ns) & ((wst + wdu > start_ns) | (wst >= start_ns))
        return wnm[inside], wdu[inside], sf[inside]
    return nm, du, self_times(st, du, dp)


def _by_name(frames: list) -> pd.DataFrame:
    """Per-name sums over (names dictionary, name codes, durations, self times) parts: counted per
    code with bincount (a rank's tracks share one dictionary), then merged by name text."""
    cols = ["name", "count", "total_ns", "self_ns", "avg_ns", "min_ns", "max_ns"]
    per_dict: dict[int, tuple] = {}
    for names, codes, dur, self_ in frames:
        per_dict.setdefault(id(names), (names, []))[1].append((codes, dur, self_))
    parts = []
    for names, chunks in per_dict.values():
        codes = np.concatenate([c[0] for c in chunks]).astype(np.int64)
        dur = np.concatenate([c[1] for c in chunks]).astype(np.int64)
        self_ = np.concatenate([c[2] for c in chunks]).astype(np.int64)
        n = len(names)
        count = np.bincount(codes, minlength=n)
        used = np.flatnonzero(count)
        lo = np.full(n, np.iinfo(np.int64).max, np.int64)
        hi = np.full(n, np.iinfo(np.int64).min, np.int64)
        np.minimum.at(lo, codes, dur)
        np.maximum.at(hi, codes, dur)
        parts.append(
            pd.DataFrame(
                {
                    "name": names[used],
                    "count": count[used],
                    "total_ns": _int_sums(codes, dur, n)[used],
                    "self_ns": _int_sums(codes, self_, n)[used],
                    "min_ns": lo[used],
                    "max_ns": hi[used],
                }
            )
        )
    if not parts:
        return pd.DataFrame(columns=cols)
    df = pd.concat(parts, ignore_index=True)
    if len(parts) > 1:
        df = df.groupby("name", sort=False, as_index=False).agg(
            count=("count", "sum"),
            total_ns=("total_ns", "sum"),
            self_ns=("self_ns", "sum"),
            min_ns=("min_ns", "min"),
            max_ns=("max_ns", "max"),
        )
    df["avg_ns"] = df["total_ns"] / df["count"]
    df = df.sort_values(["total_ns", "name"], ascending=[False, True], kind="stable")
    return df[cols].astype(
        {"count": "int64", "total_ns": "int64", "self_ns": "int64", "min_ns": "int64", "max_ns": "int64"}
    )


def _int_sums(codes: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Exact integer sums per code.  bincount sums in float64, which is exact while every partial
    sum stays below 2^53 ns (104 days): checked on the total of the non-negative values; longer
    totals take the sort-based path."""
    if not len(values) or (values.min() >= 0 and int(values.sum()) < 2**53):
        return np.bincount(codes, weights=values, minlength=n).astype(np.int64)
    order = np.argsort(codes, kind="stable") if len(codes) > 0 else codes
    out = np.zeros(n, np.int64)
    if len(codes):
        sc = codes[order]
        starts = np.flatnonzero(np.r_[True, sc[1:] != sc[:-1]])
        out[sc[starts]] = np.add.reduceat(values[order], starts)
    return out


def gaps(profile, start_ns: int, end_ns: int, width_px: int, shift: dict | None = None) -> dict:
    """The device idle gaps (the ``idle_gaps`` analysis, its default parameters) that overlap
    [start_ns, end_ns), per rank.  At most ``2 x width_px`` gaps come back — the longest, since
    shorter ones are below a pixel — and ``total`` counts every gap in the window.

    Returns ``{total, shown, ranks: {rank: {start_ns, end_ns, host_activity}}}`` (absolute ns;
    with ``shift`` ({rank: ns}, align.py) each rank's gaps moved by its offset)."""
    from .queries import check_window

    check_window(start_ns, end_ns, width_px)
    df = profile.idle_gaps()
    if not len(df):
        return {"total": 0, "shown": 0, "ranks": {}}
    if shift:
        off = df["rank"].map(lambda r: shift.get(int(r), 0)).astype("int64")
        df = df.assign(start_ns=df["start_ns"].astype("int64") + off, end_ns=df["end_ns"].astype("int64") + off)
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
