"""The folder layout of a torch_npu profile, shared by its two exports (text and DB).

A rank folder (``*_ascend_pt`` by habit; the name is never required) is recognised by what it
holds: ``ASCEND_PROFILER_OUTPUT/`` (the parsed deliverables), ``FRAMEWORK/`` or ``PROF_*``
children (the raw data before the offline parse), or a ``profiler_info*.json``.  Which export
it holds is each importer's own question; this module answers what both need: is this the
layout, at which profiler level was it collected, and what to tell a user when neither export
can read it.  A MindSpore profile (``*_ascend_ms``) shares the layout but is not torch_npu's.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..errors import NotAProfile, ProfileError
from .base import Layout

OUTPUT = "ASCEND_PROFILER_OUTPUT"
PROF_RE = re.compile(r"^PROF_\d+_\d+_[0-9a-zA-Z]+$")


def is_rank_folder(p: Path) -> bool:
    """Whether ``p`` has the layout of a torch_npu rank folder (parsed or not); one listing."""
    if p.name.endswith("_ascend_ms"):
        return False
    prof_children = []
    try:
        with os.scandir(p) as it:
            for e in it:
                n = e.name
                if n in (OUTPUT, "FRAMEWORK") and e.is_dir():
                    return True
                if n.startswith("profiler_info") and n.endswith(".json"):
                    return True
                if PROF_RE.match(n):
                    prof_children.append(e.path)
    except OSError:
        return False
    # a PROF_* child alone is torch_npu's raw data only while it was never exported: an exported
    # CANN msprof collection (device_<n>/timeline) is a profile of its own, not an unparsed rank
    return any(not _exported_msprof(Path(c)) for c in prof_children)


def _exported_msprof(prof: Path) -> bool:
    """Whether a ``PROF_*`` folder holds a ``device_<n>/timeline`` that msprof exported."""
    try:
        with os.scandir(prof) as it:
            return any(e.name.startswith("device_") and (Path(e.path) / "timeline").is_dir() for e in it)
    except OSError:
        return False


LAYOUT = Layout("torch_npu rank folder", is_rank_folder)


def level(p: Path) -> str | None:
    """The profiler level recorded in the rank folder's ``profiler_info*.json``."""
    for info in sorted(p.glob("profiler_info*.json")):
        try:
            cfg = json.loads(info.read_text(encoding="utf-8", errors="replace"))
            return cfg.get("config", {}).get("experimental_config", {}).get("_profiler_level")
        except (OSError, ValueError, AttributeError):
            return None
    return None


def unreadable(p: Path) -> ProfileError:
    """Why a folder of this layout holds no export that an importer can read."""
    if (p / "FRAMEWORK").is_dir() or any(PROF_RE.match(c.name) for c in p.iterdir()):
        return NotAProfile(
            f"{p.name} holds raw profiler data that was never parsed (no ASCEND_PROFILER_OUTPUT)",
            file=p,
            fix='run the offline parse: python -c "from torch_npu.profiler.profiler import '
            f"analyse; analyse('{p}')\" (it writes ASCEND_PROFILER_OUTPUT)",
        )
    return NotAProfile(
        f"{p.name} looks like a torch_npu profile but ASCEND_PROFILER_OUTPUT has no readable "
        "files (was the collection interrupted?)",
        file=p,
        fix="re-run the offline parse (torch_npu.profiler.profiler.analyse) or collect again",
    )
