"""Where things are in a CANN ``msprof`` collection, and what each device folder says about itself.

A collection (``PROF_<id>_<time>_<hash>/``) holds one ``device_<n>/`` folder per device (a rank
each) and a ``host/`` folder.  A device folder holds ``info.json.<n>`` (machine, device, rank),
``start_info.<n>`` / ``end_info.<n>`` (each a pair of wall clock and ``CLOCK_MONOTONIC_RAW`` at
the collection's start and end) and ``data/`` (raw records).  ``msprof --export=on`` adds
``timeline/``: Chrome-trace JSON arrays, one set per model and iteration --

- ``msprof_<dev>_<model>_<iter>.json``: every event of the iteration (hardware tasks, HCCL lanes,
  CANN API, step trace, overlap analysis);
- ``task_time_*`` and ``hccl_*``: the hardware and the HCCL lanes of the same iteration, again (views
  of ``msprof_*``: never read, so nothing is counted twice);
- ``step_trace_*``: the model's iteration trace (in the real files every one of them lists every
  iteration).

Everything here is cheap (listings and small JSON files): discovery calls it.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

PROF_RE = re.compile(r"^PROF_\d+_\d+_[0-9a-zA-Z]+$")
DEVICE_RE = re.compile(r"^device_(\d+)$")
PART_RE = re.compile(r"^(device_\d+|host)$")
MARKER_RE = re.compile(r"^(info\.json|start_info|end_info)(\.\d+)?$")
#: the per-iteration timeline (``msprof_0_2_1.json``), or a later CANN's one file (``msprof_<time>.json``,
#: sliced as ``msprof_slice_<k>_<time>.json``)
TIMELINE_RE = re.compile(r"^msprof(_slice_\d+)?(_\d+)*\.json$")
STEP_TRACE_RE = re.compile(r"^step_trace(_\d+)*\.json$")
ITER_RE = re.compile(r"^msprof_(\d+)_(\d+)_(\d+)\.json$")
#: the exported views of a timeline this importer never reads (they repeat ``msprof_*``)
VIEW_RE = re.compile(r"^(task_time|hccl)(_\d+)*\.json$")


def export_command(prof: Path) -> str:
    """The call that exports a collection's raw data (``timeline/`` and ``summary/``)."""
    return f"msprof --export=on --output={prof}"


def _listing(path: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(path) as it:
            return list(it)
    except OSError:
        return []


def is_device_folder(path: Path) -> bool:
    """A ``device_<n>`` folder with msprof's own files (info / start / end, or ``data/``)."""
    if not DEVICE_RE.match(path.name):
        return False
    return any(MARKER_RE.match(e.name) or (e.name == "data" and e.is_dir()) for e in _listing(path))


def holds_collection(path: Path) -> bool:
    """Whether ``path`` has a ``device_<n>`` or ``host`` folder with msprof's own files."""
    for e in _listing(path):
        if PART_RE.match(e.name) and e.is_dir():
            if any(MARKER_RE.match(c.name) or (c.name == "data" and c.is_dir()) for c in _listing(Path(e.path))):
                return True
    return False


def device_folders(prof: Path) -> list[Path]:
    """The ``device_<n>`` folders of a collection, by device number."""
    found = [Path(e.path) for e in _listing(prof) if e.is_dir() and DEVICE_RE.match(e.name)]
    return sorted(found, key=lambda p: int(DEVICE_RE.match(p.name).group(1)))


def timeline_files(device: Path) -> list[Path]:
    """The ``msprof_*.json`` files of ``device/timeline``, iterations in numeric order."""
    files = [Path(e.path) for e in _listing(device / "timeline") if e.is_file() and TIMELINE_RE.match(e.name)]
    return sorted(files, key=_numeric_key)


def step_trace_files(device: Path) -> list[Path]:
    files = [Path(e.path) for e in _listing(device / "timeline") if e.is_file() and STEP_TRACE_RE.match(e.name)]
    return sorted(files, key=_numeric_key)


def _numeric_key(p: Path):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p.name)]


def device_number(device: Path) -> int:
    return int(DEVICE_RE.match(device.name).group(1))


def _suffixed(device: Path, stem: str) -> Path | None:
    n = device_number(device)
    for name in (f"{stem}.{n}", stem):
        if (device / name).is_file():
            return device / name
    for e in _listing(device):
        if e.name.startswith(stem + ".") and e.name[len(stem) + 1 :].isdigit():
            return Path(e.path)
    return None


def read_json(path: Path | None) -> dict:
    if path is None:
        return {}
    try:
        got = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return {}
    return got if isinstance(got, dict) else {}


def info_file(device: Path) -> Path | None:
    return _suffixed(device, "info.json")


def start_file(device: Path) -> Path | None:
    return _suffixed(device, "start_info")


def end_file(device: Path) -> Path | None:
    return _suffixed(device, "end_info")


def recorded_rank(device: Path) -> int | None:
    """``rank_id`` of ``info.json.<n>``; None when absent or -1 (not distributed)."""
    rank = read_json(info_file(device)).get("rank_id")
    return rank if isinstance(rank, int) and rank >= 0 else None


def rank_of(device: Path) -> int:
    """The rank a device folder stands for: its recorded ``rank_id`` where every device of the
    collection records a distinct one, else the device number (one process driving several
    devices writes one rank id, or none, for all of them)."""
    parent = device.parent
    siblings = device_folders(parent) if holds_collection(parent) else [device]
    ranks = [recorded_rank(d) for d in siblings]
    if None not in ranks and len(set(ranks)) == len(ranks):
        return recorded_rank(device)
    return device_number(device)


@dataclass(frozen=True)
class Clock:
    """``wall_ns = monotonic_ns + offset_ns``, from the clock pair of ``start_info`` (else ``end_info``)."""

    offset_ns: int | None
    source: str | None
    begin_ns: int | None = None
    end_ns: int | None = None
    drift_ns: int | None = None


def _pair(d: dict, wall_key: str) -> tuple[int, int] | None:
    try:
        return int(d[wall_key]) * 1000, int(d["clockMonotonicRaw"])
    except (KeyError, TypeError, ValueError):
        return None


def clock(device: Path) -> Clock:
    """The offset that puts the device's monotonic timestamps on the wall clock (epoch ns).

    ``collectionTimeBegin`` / ``collectionTimeEnd`` are wall-clock microseconds and
    ``clockMonotonicRaw`` the monotonic clock in ns at the same moment; the start pair is used,
    the end pair where the start is missing (on the fixture the two offsets differ by 1.17 us
    over 58 s of collection)."""
    sp = start_file(device)
    ep = end_file(device)
    start = _pair(read_json(sp), "collectionTimeBegin")
    end = _pair(read_json(ep), "collectionTimeEnd")
    offsets = [w - m for w, m in (start, end)] if start and end else []
    drift = offsets[1] - offsets[0] if offsets else None
    if start:
        return Clock(start[0] - start[1], sp.name, start[0], end[0] if end else None, drift)
    if end:
        return Clock(end[0] - end[1], ep.name, None, end[0], None)
    return Clock(None, None)
