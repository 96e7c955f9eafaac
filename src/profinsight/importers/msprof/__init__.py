"""CANN ``msprof`` collections (``PROF_<id>_<time>_<hash>/``): recognised, not read yet.

A collection holds ``device_<n>/`` and ``host/`` folders, each with ``info.json.<n>``,
``start_info.<n>`` / ``end_info.<n>`` or a ``data/`` folder of raw records.  Recognising it lets
discovery say what it is and what to do instead of "no profile found"; the importer that reads
its exported timeline (Chrome-trace JSON) and SQLite files is still to come.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ...errors import UnsupportedFormat
from ..base import Importer, Recognised

PROF_RE = re.compile(r"^PROF_\d+_\d+_[0-9a-zA-Z]+$")
_PART = re.compile(r"^(device_\d+|host)$")
_MARKER = re.compile(r"^(info\.json|start_info|end_info)(\.\d+)?$")


def _holds_collection(path: Path) -> bool:
    """Whether ``path`` has a ``device_<n>`` or ``host`` folder with msprof's own files."""
    with os.scandir(path) as it:
        parts = [e.path for e in it if _PART.match(e.name) and e.is_dir()]
    for part in parts:
        with os.scandir(part) as it:
            if any(_MARKER.match(e.name) or (e.name == "data" and e.is_dir()) for e in it):
                return True
    return False


def _recognise(path: Path) -> Recognised | None:
    if not (PROF_RE.match(path.name) or _holds_collection(path)):
        return None
    return Recognised(
        problem=UnsupportedFormat(
            f"{path.name} is raw CANN msprof output (PROF_*): not supported yet",
            file=path,
            fix="profile with torch_npu.profiler (it writes a *_ascend_pt folder), or wait for the msprof importer",
        )
    )


IMPORTER = Importer(
    name="msprof",
    shape="folder",
    recognise=_recognise,
    doc="CANN msprof collection (PROF_*): recognised, not supported yet",
    hint=lambda name: bool(PROF_RE.match(name)),
    loads=False,
)
