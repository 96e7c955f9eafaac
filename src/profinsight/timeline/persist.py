"""The timeline index of one rank on disk, inside the rank's Parquet cache entry.

Why: building the index of a 5 M-event rank takes about 12 s (sorting, nesting depth,
level-of-detail tables); a new server process on a cached profile must paint its first timeline
in well under 2 s.  So the index is written once, next to the Parquet files it was built from,
and later processes memory-map it: opening costs a JSON read and a few thousand array views,
and the operating system pages in only what the queries touch.

Layout of ``<entry>/timeline-v<TIMELINE_VERSION>/`` (``lod.TIMELINE_VERSION``):

* ``index.json``: version, the unit names it was built with, the track list, the slice-name
  dictionary, and per track its scalars and where each of its arrays lies in ``arrays.bin``;
* ``arrays.bin``: every array of every track (lod.py ``state()``), raw, 64-byte aligned;
* ``slices.parquet``: the slice rows (rank, track, source, id, name, start_ns, dur_ns, depth)
  that search, flows and details read through a DuckDB view.

The folder is written under a temporary name and renamed into place (store/cache.py
``store_beside``), so it is complete or absent.  It sits inside the cache entry, so it shares
its key: a changed source, importer or schema makes a new entry and so a new index.
``TIMELINE_VERSION`` covers changes to what the index holds.
"""

from __future__ import annotations

import json
import mmap
from pathlib import Path

import numpy as np

from . import lod
from .lod import CounterTrack, RankPart, SliceTrack

ALIGN = 64
PREFIX = "timeline-v"


def folder_name() -> str:
    return f"{PREFIX}{lod.TIMELINE_VERSION}"


def save(entry: Path, units: tuple[str, str], part):
    """Write ``part`` into cache entry ``entry``; the part read back (memory-mapped), or None
    when the entry is not writable."""
    from ..store.cache import store_beside

    def write(tmp: Path) -> None:
        import pyarrow.parquet as pq

        manifest = {"slices": {}, "counters": {}}
        offset = 0
        with open(tmp / "arrays.bin", "wb") as f:
            for kind, tracks in (("slices", part.slice_tracks), ("counters", part.counter_tracks)):
                for tid, tr in tracks.items():
                    scalars, arrays = tr.state()
                    where = {}
                    for name, a in arrays.items():
                        a = np.ascontiguousarray(a)
                        pad = -offset % ALIGN
                        f.write(b"\0" * pad)
                        offset += pad
                        where[name] = [a.dtype.str, offset, int(a.size)]
                        f.write(a.tobytes())
                        offset += a.nbytes
                    manifest[kind][tid] = {"scalars": scalars, "arrays": where}
        pq.write_table(part.rows, tmp / "slices.parquet", compression="zstd")
        meta = {
            "version": lod.TIMELINE_VERSION,
            "units": list(units),
            "tracks": part.tracks,
            "names": part.names.tolist(),
            **manifest,
        }
        (tmp / "index.json").write_text(json.dumps(meta), encoding="utf-8")

    final = store_beside(Path(entry), folder_name(), write, keep_prefix=PREFIX)
    return None if final is None else load(entry, units)


def load(entry: Path, units: tuple[str, str]):
    """The persisted part of cache entry ``entry``, or None when there is no current copy."""
    folder = Path(entry) / folder_name()
    try:
        meta = json.loads((folder / "index.json").read_text(encoding="utf-8"))
        if meta.get("version") != lod.TIMELINE_VERSION or meta.get("units") != list(units):
            return None
        with open(folder / "arrays.bin", "rb") as f:
            buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if f.seek(0, 2) else b""
    except (OSError, ValueError):
        return None

    def arrays(where: dict) -> dict:
        return {
            name: np.frombuffer(buf, dtype=np.dtype(dt), count=n, offset=off) if n else np.zeros(0, dt)
            for name, (dt, off, n) in where.items()
        }

    slices = {tid: SliceTrack.from_state(m["scalars"], arrays(m["arrays"])) for tid, m in meta["slices"].items()}
    counters = {tid: CounterTrack.from_state(m["scalars"], arrays(m["arrays"])) for tid, m in meta["counters"].items()}
    return RankPart(
        meta["tracks"], slices, counters, np.array(meta["names"], dtype=object), rows_file=folder / "slices.parquet"
    )
