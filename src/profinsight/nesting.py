"""Nesting of host slices, vectorised: the parent of every slice and the innermost slice that
contains a point, per thread, with numpy sorts and pointer jumps (no loop per event).

Slices on one thread of a trace nest like a call tree (Python frames, ``nn.Module`` frames).
Sorted by (thread, start, -end) they come in pre-order: every parent before its children, and
the parent of a slice is an ancestor-or-self of the slice just before it.  :func:`parents`
starts each slice's guess at its predecessor and jumps ``guess <- guess(guess)`` while the
guess does not contain it; every guess stays at or after the true parent in that order (the
slices between a parent and its child all descend from the parent), so the first guess that
contains the slice is its parent.  :func:`innermost` takes, for each point, the last slice
started at or before it and walks up the parents until one still runs at that time.  Slices
that overlap without nesting (clock rounding) are never taken as parents of each other.
"""

from __future__ import annotations

import numpy as np


def _keys(group: np.ndarray, times: list[np.ndarray]) -> tuple[list[np.ndarray], int]:
    """Times made into sortable int64 offsets so that ``group * span + offset`` orders by (group,
    time) without overflow.  Offsets from the earliest time when ``groups x span`` fits in int64
    (one trace: a span of hours is ~1e13 ns); otherwise the times' dense ranks, which keep their
    order and equalities exactly (files of two collections can lie hours or years apart)."""
    t0 = min((int(t.min()) for t in times if len(t)), default=0)
    t1 = max((int(t.max()) for t in times if len(t)), default=0)
    span = t1 - t0 + 1
    g = int(group.max()) + 1 if len(group) else 1
    if g * span < 2**62:
        return [t.astype(np.int64) - t0 for t in times], span
    values, inverse = np.unique(np.concatenate([np.asarray(t, np.int64) for t in times]), return_inverse=True)
    cuts = np.cumsum([len(t) for t in times])[:-1]
    return [np.asarray(r, np.int64) for r in np.split(inverse, cuts)], len(values)


class Nesting:
    """Slices of one kind (e.g. the ``nn.Module`` frames), sorted in pre-order per group.

    ``order[i]`` is the input row of sorted position ``i``; :attr:`parent` holds, per sorted
    position, the sorted position of the innermost enclosing slice of the same group (-1 at a
    root); :attr:`depth` counts the ancestors."""

    def __init__(self, group: np.ndarray, start: np.ndarray, end: np.ndarray):
        group = np.asarray(group, np.int64)
        start = np.asarray(start, np.int64)
        end = np.asarray(end, np.int64)
        self.order = np.lexsort((-end, start, group))
        self.group = group[self.order]
        self.start = start[self.order]
        self.end = end[self.order]
        self.parent = self._parents()
        self.depth = self._depths()

    def __len__(self) -> int:
        return len(self.order)

    def _contains(self, outer: np.ndarray, inner: np.ndarray) -> np.ndarray:
        """Sorted position ``outer`` encloses ``inner`` (same group, inside its range)."""
        return (
            (self.group[outer] == self.group[inner])
            & (self.start[outer] <= self.start[inner])
            & (self.end[inner] <= self.end[outer])
        )

    def _parents(self) -> np.ndarray:
        n = len(self.order)
        guess = np.arange(n, dtype=np.int64) - 1
        if n:
            guess[np.r_[True, self.group[1:] != self.group[:-1]]] = -1  # first of its group
        todo = np.flatnonzero(guess >= 0)  # only slices whose guess is still unchecked
        while len(todo):
            bad = ~self._contains(guess[todo], todo)
            todo = todo[bad]
            guess[todo] = guess[guess[todo]]
            todo = todo[guess[todo] >= 0]
        return guess

    def _depths(self) -> np.ndarray:
        depth = np.zeros(len(self.order), np.int64)
        cur = self.parent.copy()
        while (live := cur >= 0).any():
            depth[live] += 1
            cur[live] = self.parent[cur[live]]
        return depth

    def innermost(self, group: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Sorted position of the innermost slice of ``group`` running at time ``t`` (start <= t
        <= end), -1 where none does."""
        group = np.asarray(group, np.int64)
        t = np.asarray(t, np.int64)
        if not len(self.order) or not len(t):
            return np.full(len(t), -1, np.int64)
        (s, p), span = _keys(np.r_[self.group, group], [self.start, t])
        # sorted positions are sorted by (group, start): one key per slice, searchsorted on it
        keyed = self.group * span + s
        at = np.searchsorted(keyed, group * span + p, side="right") - 1
        at[(at >= 0) & (self.group[np.maximum(at, 0)] != group)] = -1
        todo = np.flatnonzero(at >= 0)
        while len(todo):
            todo = todo[self.end[at[todo]] < t[todo]]  # ended before t: try the parent
            at[todo] = self.parent[at[todo]]
            todo = todo[at[todo] >= 0]
        return at

    def ancestors(self, at: np.ndarray):
        """Yield (row, position) pairs, one per slice on the chain from ``at`` up to its root
        (``row`` indexes ``at``; -1 entries yield nothing)."""
        rows = np.arange(len(at))
        cur = np.asarray(at, np.int64).copy()
        while (live := cur >= 0).any():
            yield rows[live], cur[live]
            cur = np.where(live, self.parent[np.maximum(cur, 0)], -1)
