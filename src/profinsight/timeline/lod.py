"""Per-track level-of-detail tables, so that a window query costs what the answer costs, not
what the profile costs.

A window query must return every slice at least one pixel long as itself and merge the shorter
ones per (depth, pixel).  Scanning every row of the window does that exactly but takes ~0.1 s
per million rows, and a zoomed-out view of a large profile covers millions.  So each track keeps,
in numpy arrays built once:

* its rows in time order, split into *main* rows and the few *long* rows (the longest ~0.2 %,
  at least the ones that would otherwise force a scan from far before the window: a window
  only has to look ``D`` = the shortest long duration back for main rows that reach into it);
* summary levels: level ``k`` groups the main rows shorter than ``B_k = LEVEL0_NS * 4**k`` by
  (time bucket of width ``B_k``, depth) into count, summed duration, extent and longest name,
  and lists the main rows at least ``B_k`` long individually.  A level is only kept when it is
  at most half the size of the finer one kept before it, so all levels together stay below the
  size of the track.

A query whose window holds few rows scans them.  Otherwise it takes the coarsest level whose
bucket is at most one pixel: the buckets that lie wholly inside the window stand for their rows,
and the rows in the partial buckets at both edges are scanned.  Every slice is therefore counted
exactly once, merged rows still span exactly the slices they hold, and the work is bounded by
about 4 x width x depth per track.

Counters use the same scheme with (min, max, last) buckets, so peaks survive every level.
"""

from __future__ import annotations

import numpy as np

#: bump when what the persisted index holds or how it is laid out changes: older copies are
#: then rebuilt (the Parquet cache key covers the data itself)
TIMELINE_VERSION = 4  # 3: HCCL plane tracks; collectives drawn once; 4: stream kernels' comm_ops once


class RankPart:
    """One rank's share of the timeline index: what index.py builds and persist.py writes and
    reads back (declared here, below both, so neither imports the other's module)."""

    def __init__(self, tracks, slice_tracks, counter_tracks, names, rows=None, rows_file=None):
        self.tracks, self.slice_tracks, self.counter_tracks = tracks, slice_tracks, counter_tracks
        self.names, self.rows, self.rows_file = names, rows, rows_file


LEVEL0_NS = 4096
FACTOR = 4
SMALL_TRACK = 2048  # a track this small is always scanned
RAW_ROWS = 4096  # a window holding at most max(RAW_ROWS, 2 x width) rows is scanned


def _levels_for(span: int):
    b = LEVEL0_NS
    while b <= max(span, 1):
        yield b
        b *= FACTOR


def _group_bounds(sorted_keys: np.ndarray) -> np.ndarray:
    """Start index of each run of equal keys (keys sorted)."""
    if not len(sorted_keys):
        return np.zeros(0, np.int64)
    return np.concatenate(([0], np.flatnonzero(sorted_keys[1:] != sorted_keys[:-1]) + 1))


def _first_max(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Index of the first maximum of each group (groups are [starts[i], starts[i+1]))."""
    gmax = np.maximum.reduceat(values, starts)
    sizes = np.diff(np.append(starts, len(values)))
    pos = np.flatnonzero(values == np.repeat(gmax, sizes))
    return pos[np.searchsorted(pos, starts)]


class Items:
    """Slices or buckets on their way to a merged row: depth, group key, count, total, extent,
    and the name and duration of the longest member."""

    __slots__ = ("depth", "key", "count", "total", "smin", "emax", "name", "ldur")

    def __init__(self, depth, key, count, total, smin, emax, name, ldur):
        self.depth, self.key, self.count, self.total = depth, key, count, total
        self.smin, self.emax, self.name, self.ldur = smin, emax, name, ldur

    @staticmethod
    def concat(parts: list[Items]) -> Items:
        parts = [p for p in parts if len(p.depth)]
        if len(parts) == 1:
            return parts[0]
        if not parts:
            z = np.zeros(0, np.int64)
            return Items(z.astype(np.int32), z, z, z, z, z, z.astype(np.int32), z)
        return Items(*(np.concatenate([getattr(p, f) for p in parts]) for f in Items.__slots__))

    def reduce(self) -> Items:
        """One item per (key, depth), sorted by key then depth."""
        if not len(self.depth):
            return self
        mult = int(self.depth.max()) + 1
        comp = self.key * mult + self.depth
        order = np.argsort(comp, kind="stable")
        comp = comp[order]
        starts = _group_bounds(comp)
        ldur = self.ldur[order]
        best = order[_first_max(ldur, starts)]
        return Items(
            self.depth[order][starts],
            self.key[order][starts],
            np.add.reduceat(self.count[order], starts),
            np.add.reduceat(self.total[order], starts),
            np.minimum.reduceat(self.smin[order], starts),
            np.maximum.reduceat(self.emax[order], starts),
            self.name[best],
            self.ldur[best],
        )


class SliceLevel:
    __slots__ = ("b", "buckets", "big", "big_start")

    def __init__(self, b: int, buckets: Items, big: np.ndarray, big_start: np.ndarray):
        self.b, self.buckets, self.big, self.big_start = b, buckets, big, big_start

    @property
    def size(self) -> int:
        return len(self.buckets.key) + len(self.big)


class SliceTrack:
    """The rows of one slice track (sorted by start) with its long rows and summary levels."""

    _ROWS = ("m_start", "m_dur", "m_depth", "m_id", "m_name", "l_start", "l_dur", "l_depth", "l_id", "l_name")

    def __init__(self, start, dur, depth, ids, names, t0: int):
        if start is None:  # from_state fills the fields
            return
        n = len(start)
        self.t0 = int(t0)
        long = np.zeros(n, bool)
        if n > SMALL_TRACK:
            n_long = max(64, n // 512)
            d = np.partition(dur, n - n_long)[n - n_long]
            long = dur >= d
            if long.sum() > 4 * n_long:
                long = dur > d
        main = ~long
        self.m_start, self.m_dur, self.m_depth = start[main], dur[main], depth[main]
        self.m_id, self.m_name = ids[main], names[main]
        self.l_start, self.l_dur, self.l_depth = start[long], dur[long], depth[long]
        self.l_id, self.l_name = ids[long], names[long]
        self.lookback = int(self.m_dur.max()) + 1 if len(self.m_dur) else 1
        self.levels: list[SliceLevel] = []
        if n > SMALL_TRACK:
            self._build_levels()

    def _rows_as_items(self, sel, b: int) -> Items:
        s, d = self.m_start[sel], self.m_dur[sel]
        return Items(self.m_depth[sel], (s - self.t0) // b, np.ones(len(s), np.int64), d, s, s + d, self.m_name[sel], d)

    def _build_levels(self) -> None:
        dur = self.m_dur
        span = int(self.m_start[-1] - self.m_start[0] + self.lookback) if len(dur) else 0
        prev_items: Items | None = None
        prev_b = 0
        kept = len(dur)
        for b in _levels_for(span):
            newly = np.flatnonzero((dur >= prev_b) & (dur < b))
            fresh = self._rows_as_items(newly, b)
            if prev_items is not None:
                up = Items(
                    prev_items.depth,
                    prev_items.key // FACTOR,
                    prev_items.count,
                    prev_items.total,
                    prev_items.smin,
                    prev_items.emax,
                    prev_items.name,
                    prev_items.ldur,
                )
                items = Items.concat([up, fresh]).reduce()
            else:
                items = fresh.reduce()
            prev_items, prev_b = items, b
            big = np.flatnonzero(dur >= b).astype(np.int32)
            level = SliceLevel(b, items, big, self.m_start[big])
            if level.size * 2 <= kept:
                self.levels.append(level)
                kept = level.size

    # --- persistence (timeline/store.py writes these arrays next to the Parquet cache) -------
    def state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """(scalars, arrays) that :meth:`from_state` turns back into this track."""
        arrays = {f: getattr(self, f) for f in self._ROWS}
        for i, lv in enumerate(self.levels):
            for f in Items.__slots__:
                arrays[f"L{i}.{f}"] = getattr(lv.buckets, f)
            arrays[f"L{i}.big"], arrays[f"L{i}.big_start"] = lv.big, lv.big_start
        return {"t0": self.t0, "lookback": self.lookback, "levels": [lv.b for lv in self.levels]}, arrays

    @classmethod
    def from_state(cls, scalars: dict, arrays: dict[str, np.ndarray]) -> SliceTrack:
        tr = cls(None, None, None, None, None, 0)
        tr.t0, tr.lookback = int(scalars["t0"]), int(scalars["lookback"])
        for f in cls._ROWS:
            setattr(tr, f, arrays[f])
        tr.levels = [
            SliceLevel(
                int(b),
                Items(*(arrays[f"L{i}.{f}"] for f in Items.__slots__)),
                arrays[f"L{i}.big"],
                arrays[f"L{i}.big_start"],
            )
            for i, b in enumerate(scalars["levels"])
        ]
        return tr

    # --- queries ------------------------------------------------------------------------
    def _rows(self, lo: int, hi: int, s: int) -> np.ndarray:
        """Indices of main rows in [lo, hi) that end after ``s``."""
        idx = np.arange(lo, hi)
        return idx[self.m_start[lo:hi] + self.m_dur[lo:hi] > s]

    def query(self, s: int, e: int, px: float, width: int) -> dict:
        """Rows of the window [s, e) at ``px`` ns per pixel: a dict of numpy columns."""
        ms = self.m_start
        i0 = int(np.searchsorted(ms, s - self.lookback, "left"))
        i1 = int(np.searchsorted(ms, e, "left"))
        level = None
        if i1 - i0 > max(RAW_ROWS, 2 * width):
            for lv in self.levels:
                if lv.b <= px:
                    level = lv
        buckets = None
        big = np.zeros(0, np.int64)
        if level is None:
            rows = self._rows(i0, i1, s)
        else:
            b = level.b
            ka = -(-(s - self.t0) // b)
            kb = (e - self.t0) // b
            a, bb = self.t0 + ka * b, self.t0 + kb * b
            if ka >= kb:
                rows = self._rows(i0, i1, s)
            else:
                ia = int(np.searchsorted(ms, a, "left"))
                ib = int(np.searchsorted(ms, bb, "left"))
                rows = np.concatenate([self._rows(i0, ia, s), np.arange(ib, i1)])
                bk = level.buckets
                j0, j1 = np.searchsorted(bk.key, [ka, kb], "left")
                buckets = Items(*(getattr(bk, f)[j0:j1] for f in Items.__slots__))
                g0, g1 = np.searchsorted(level.big_start, [a, bb], "left")
                big = level.big[g0:g1].astype(np.int64)
        rows = np.concatenate([rows, big]) if len(big) else rows
        # long rows overlapping the window
        lsel = np.flatnonzero((self.l_start < e) & (self.l_start + self.l_dur > s))
        start = np.concatenate([ms[rows], self.l_start[lsel]])
        dur = np.concatenate([self.m_dur[rows], self.l_dur[lsel]])
        depth = np.concatenate([self.m_depth[rows], self.l_depth[lsel]])
        ids = np.concatenate([self.m_id[rows], self.l_id[lsel]])
        name = np.concatenate([self.m_name[rows], self.l_name[lsel]])
        whole = dur >= px
        short = ~whole
        parts = [
            Items(
                depth[short],
                np.floor((start[short] - s) / px).astype(np.int64),
                np.ones(int(short.sum()), np.int64),
                dur[short],
                start[short],
                start[short] + dur[short],
                name[short],
                dur[short],
            )
        ]
        if buckets is not None and len(buckets.key):
            parts.append(
                Items(
                    buckets.depth,
                    np.floor((buckets.smin - s) / px).astype(np.int64),
                    buckets.count,
                    buckets.total,
                    buckets.smin,
                    buckets.emax,
                    buckets.name,
                    buckets.ldur,
                )
            )
        merged = Items.concat(parts).reduce()
        nw, nm = int(whole.sum()), len(merged.key)
        out = {
            "depth": np.concatenate([depth[whole], merged.depth]).astype(np.int32),
            "id": np.concatenate([ids[whole], np.full(nm, -1, np.int64)]),
            "name": np.concatenate([name[whole], merged.name]).astype(np.int32),
            "start_ns": np.concatenate([start[whole], merged.smin]).astype(np.int64),
            "dur_ns": np.concatenate([dur[whole], merged.emax - merged.smin]).astype(np.int64),
            "count": np.concatenate([np.ones(nw, np.int64), merged.count]).astype(np.int64),
            "total_ns": np.concatenate([dur[whole], merged.total]).astype(np.int64),
            "merged": np.concatenate([np.zeros(nw, bool), np.ones(nm, bool)]),
        }
        order = np.lexsort((out["depth"], out["start_ns"]))
        return {k: v[order] for k, v in out.items()}


class CounterTrack:
    """Samples of one counter track (sorted by time) with (min, max, last) summary levels."""

    _LEVEL = ("key", "first", "last_ts", "min", "max", "last", "count")

    def __init__(self, ts: np.ndarray, value: np.ndarray, t0: int, build: bool = True):
        self.ts, self.value, self.t0 = ts, value, int(t0)
        self.levels: list[tuple[int, dict]] = []
        n = len(ts)
        if not build:
            return
        if n <= SMALL_TRACK:
            return
        prev = None
        kept = n
        for b in _levels_for(int(ts[-1] - ts[0]) + 1):
            if prev is None:
                key = (ts - self.t0) // b
                st = _group_bounds(key)
                lv = {
                    "key": key[st],
                    "first": ts[st],
                    "last_ts": np.maximum.reduceat(ts, st),
                    "min": np.minimum.reduceat(value, st),
                    "max": np.maximum.reduceat(value, st),
                    "last": value[np.r_[st[1:], n] - 1],
                    "count": np.diff(np.r_[st, n]),
                }
            else:
                key = prev["key"] // FACTOR
                st = _group_bounds(key)
                m = len(key)
                lv = {
                    "key": key[st],
                    "first": prev["first"][st],
                    "last_ts": np.maximum.reduceat(prev["last_ts"], st),
                    "min": np.minimum.reduceat(prev["min"], st),
                    "max": np.maximum.reduceat(prev["max"], st),
                    "last": prev["last"][np.r_[st[1:], m] - 1],
                    "count": np.add.reduceat(prev["count"], st),
                }
            prev = lv
            if len(lv["key"]) * 2 <= kept:
                self.levels.append((b, lv))
                kept = len(lv["key"])

    def state(self) -> tuple[dict, dict[str, np.ndarray]]:
        arrays = {"ts": self.ts, "value": self.value}
        for i, (_, lv) in enumerate(self.levels):
            arrays.update({f"L{i}.{k}": lv[k] for k in self._LEVEL})
        return {"t0": self.t0, "levels": [b for b, _ in self.levels]}, arrays

    @classmethod
    def from_state(cls, scalars: dict, arrays: dict[str, np.ndarray]) -> CounterTrack:
        tr = cls(arrays["ts"], arrays["value"], scalars["t0"], build=False)
        tr.levels = [(int(b), {k: arrays[f"L{i}.{k}"] for k in cls._LEVEL}) for i, b in enumerate(scalars["levels"])]
        return tr

    def before(self, s: int):
        i = int(np.searchsorted(self.ts, s, "left")) - 1
        return (int(self.ts[i]), float(self.value[i])) if i >= 0 else None

    def query(self, s: int, e: int, px: float, width: int) -> dict:
        """One bucket per pixel with data: start_ns/end_ns (first/last sample), min, max, last, count."""
        ts, val = self.ts, self.value
        i0, i1 = (int(x) for x in np.searchsorted(ts, [s, e], "left"))
        level = None
        if i1 - i0 > max(RAW_ROWS, 2 * width):
            for b, lv in self.levels:
                if b <= px:
                    level = (b, lv)
        first, last_ts, vmin, vmax, last, count = [], [], [], [], [], []

        def raw(lo, hi):
            first.append(ts[lo:hi]), last_ts.append(ts[lo:hi]), vmin.append(val[lo:hi])
            vmax.append(val[lo:hi]), last.append(val[lo:hi]), count.append(np.ones(hi - lo, np.int64))

        if level is None:
            raw(i0, i1)
        else:
            b, lv = level
            ka = -(-(s - self.t0) // b)
            kb = (e - self.t0) // b
            a, bb = self.t0 + ka * b, self.t0 + kb * b
            if ka >= kb:
                raw(i0, i1)
            else:
                ia, ib = (int(x) for x in np.searchsorted(ts, [a, bb], "left"))
                raw(i0, ia)
                j0, j1 = np.searchsorted(lv["key"], [ka, kb], "left")
                first.append(lv["first"][j0:j1]), last_ts.append(lv["last_ts"][j0:j1])
                vmin.append(lv["min"][j0:j1]), vmax.append(lv["max"][j0:j1])
                last.append(lv["last"][j0:j1]), count.append(lv["count"][j0:j1])
                raw(ib, i1)
        first, last_ts, vmin, vmax, last, count = (np.concatenate(x) for x in (first, last_ts, vmin, vmax, last, count))
        if not len(first):
            z = np.zeros(0, np.int64)
            return {
                "start_ns": z,
                "end_ns": z,
                "min": z.astype(float),
                "max": z.astype(float),
                "last": z.astype(float),
                "count": z,
            }
        pix = np.floor((first - s) / px).astype(np.int64)  # time order: pix never decreases
        st = _group_bounds(pix)
        n = len(pix)
        return {
            "start_ns": first[st],
            "end_ns": np.maximum.reduceat(last_ts, st),
            "min": np.minimum.reduceat(vmin, st),
            "max": np.maximum.reduceat(vmax, st),
            "last": last[np.r_[st[1:], n] - 1],
            "count": np.add.reduceat(count, st),
        }
