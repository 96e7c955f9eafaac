"""Where the window that says how busy the cores are begins (standard library only).

An import picks its DuckDB threads by how many cores other programs keep busy
(:func:`profinsight.importers._common.rank_threads`), sampled over at least 0.1 s of
``/proc/stat``.  The window is best begun as early as the command starts: its own module imports
(0.15-0.2 s before a cold ``analyze`` reaches the import) then fill it, and no one waits for it.
Begun where the profile starts to load -- after ``analyze`` had imported the advisor and the
renderers -- it was 37-44 ms old when a Kineto import asked, and the import slept for the rest
(32-63 ms measured) on every machine whose load average read 1 or more.  This module imports
nothing of the package, so the command line can mark the window before anything heavy is
imported.
"""

from __future__ import annotations

import threading
import time

#: BUSY_REUSE_S of :mod:`profinsight.importers._common`: how long a mark stays the window's start
REUSE_S = 5.0
#: where the window of the next sample began: (monotonic s, all jiffies, idle jiffies, CPU s of
#: the marking thread, that thread's id), or None
MARK: list = [None]


def jiffies() -> tuple[int, int]:
    """(all, idle + iowait) clock ticks of every core since boot, from ``/proc/stat``."""
    with open("/proc/stat", "rb") as f:
        vals = [int(x) for x in f.readline().split()[1:]]
    return sum(vals), vals[3] + (vals[4] if len(vals) > 4 else 0)


def mark(read=jiffies) -> None:
    """Begin the window now, unless this thread began one within :data:`REUSE_S` (the earliest
    mark of a command stays).  ``read``: where the ticks come from."""
    current = MARK[0]
    if current is not None and current[4] == threading.get_ident() and time.monotonic() - current[0] <= REUSE_S:
        return
    try:
        total, idle = read()
    except (OSError, ValueError, IndexError):
        return
    MARK[0] = (time.monotonic(), total, idle, time.thread_time(), threading.get_ident())
