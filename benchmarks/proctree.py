"""The resident memory of a measured process and of every process below it, read cheaply enough
to poll every 20 ms without slowing what is measured.

Why not ``psutil.Process.children(recursive=True)``: it finds the children by reading the status
of every process on the machine, 1.1 ms per poll here -- 5-6% of a core at 50 polls a second,
taken from the two cores the measured command shares with the poller (a single-threaded peer
leaves a core idle for it; our commands run two threads).  Linux lists each thread's children in
``/proc/PID/task/TID/children`` and each process's resident pages in ``/proc/PID/statm``: the same
tree and the same RSS as psutil's, in 0.03 ms.  (On a whole cold Kineto 100 MB ``analyze`` the
difference is below this machine's noise: 6-8 alternating runs each way moved by 0.1 s in either
direction.)  Where those files are missing (a kernel built without ``CONFIG_PROC_CHILDREN``, not
Linux) psutil answers.
"""

from __future__ import annotations

import os

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def children(pid: int) -> list[int] | None:
    """Every process below ``pid`` (children, theirs, ...), or None where ``/proc`` does not list
    children; a process gone meanwhile is left out."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return [] if os.path.isdir("/proc/self/task") else None
    except OSError:
        return None
    found: list[int] = []
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids = [int(c) for c in f.read().split()]
        except FileNotFoundError:
            if not os.path.exists(f"/proc/{pid}/task/{tid}"):
                continue  # the thread ended meanwhile
            return None  # the kernel does not list children
        except OSError:
            continue
        for kid in kids:
            found.append(kid)
            below = children(kid)
            found.extend(below or [])
    return found


def rss(pid: int) -> int:
    """Resident bytes of ``pid`` (0 once it has ended)."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def tree_rss(pid: int, ps=None) -> int:
    """Resident bytes of ``pid`` and every process below it; ``ps`` (its ``psutil.Process``)
    answers where ``/proc`` cannot."""
    below = children(pid)
    if below is not None:
        return rss(pid) + sum(rss(k) for k in below)
    total = 0
    try:
        if ps is None:
            import psutil

            ps = psutil.Process(pid)
        procs = [ps] + ps.children(recursive=True)
    except Exception:  # noqa: BLE001 - the process ended
        return 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except Exception:  # noqa: BLE001 - the process ended
            pass
    return total
