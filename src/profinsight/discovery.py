"""Find the runs under a path: which ranks, of which format, belong together.

Detection follows speedscope's habit: the file name is a hint, the content decides (each
importer's ``sniff``).  A folder that mixes runs (duplicate ranks, different levels or exports)
is never merged silently: :func:`discover` returns each run, and ``load`` refuses with a list.
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import diagnostics as dg
from .errors import NotAProfile, UnsupportedFormat
from .importers import FORMATS, RankSource, importer

_MAX_DEPTH = 4
_PROF_RE = re.compile(r"^PROF_\d+_\d+_[0-9a-zA-Z]+$")
_ASCEND_FORMATS = ("ascend_db", "ascend_text")


@dataclass(frozen=True)
class Run:
    """One collection: its rank sources (one per rank) and notes made while choosing them."""

    format: str
    root: Path
    sources: tuple[RankSource, ...]
    notes: tuple[dg.Diagnostic, ...] = field(default_factory=tuple)
    level: str | None = None

    @property
    def ranks(self) -> list[int | None]:
        return [s.rank_hint for s in self.sources]

    @property
    def label(self) -> str:
        lvl = f" {self.level}" if self.level else ""
        ranks = ",".join("?" if r is None else str(r) for r in self.ranks)
        return f"{self.root} ({self.format}{lvl}, ranks {ranks})"

    def __repr__(self) -> str:
        return f"Run({self.label})"


def discover(path: str | Path, *, prefer: str | None = None) -> list[Run]:
    """Every run found under ``path`` (a rank folder, a run folder, a trace file, or a folder
    holding several of them).  ``prefer`` ("db" | "text") picks the export when a rank folder
    has both.  Raises :class:`NotAProfile` / :class:`UnsupportedFormat` with a fix when nothing
    readable is there."""
    p = Path(path).expanduser()
    if not p.exists():
        raise NotAProfile(
            f"no such file or folder: {p}",
            file=p,
            fix="check the path; a profile is a *_ascend_pt folder, a folder of them, or a Kineto .json/.json.gz trace",
        )
    units, unsupported = [], []
    _walk(p.resolve(), 0, prefer, units, unsupported)
    if not units:
        if unsupported:
            raise unsupported[0]
        raise NotAProfile(
            f"no profile found in {p}",
            file=p,
            fix="point at a torch_npu *_ascend_pt folder (or the folder holding the rank folders), "
            "or at a PyTorch Kineto trace (.json / .json.gz)",
        )
    return _group(units)


@dataclass
class _Unit:
    source: RankSource
    level: str | None
    world_size: int | None
    notes: list


def _walk(p: Path, depth: int, prefer, units: list, unsupported: list) -> None:
    if p.is_file():
        unit = _sniff_file(p)
        if unit:
            units.append(unit)
        return
    if not p.is_dir() or depth > _MAX_DEPTH:
        return
    if _is_ascend_folder(p):
        unit = _sniff_ascend(p, prefer, unsupported)
        if unit:
            units.append(unit)
        return
    if p.name.endswith("_ascend_ms"):
        unsupported.append(
            UnsupportedFormat(
                f"{p.name} is a MindSpore profile: not supported yet",
                file=p,
                fix="profinsight reads torch_npu (*_ascend_pt) and Kineto traces today",
            )
        )
        return
    if _PROF_RE.match(p.name):
        unsupported.append(
            UnsupportedFormat(
                f"{p.name} is raw CANN msprof output (PROF_*): not supported yet",
                file=p,
                fix="profile with torch_npu.profiler (it writes a *_ascend_pt folder), or wait for the msprof importer",
            )
        )
        return
    try:
        children = sorted(p.iterdir())
    except OSError as exc:
        unsupported.append(
            NotAProfile(f"cannot list {p}: {exc.strerror}", file=p, fix="check the folder's permissions")
        )
        return
    for child in children:
        if child.name.startswith(".") or child.name.endswith("_op_args"):
            continue
        _walk(child, depth + 1, prefer, units, unsupported)


def _is_ascend_folder(p: Path) -> bool:
    if p.name.endswith("_ascend_ms"):
        return False
    if (p / "ASCEND_PROFILER_OUTPUT").is_dir() or (p / "FRAMEWORK").is_dir():
        return True
    try:
        names = [c.name for c in p.iterdir()]
    except OSError:
        return False
    return any(n.startswith("profiler_info") and n.endswith(".json") for n in names) or any(
        _PROF_RE.match(n) for n in names
    )


def _sniff_ascend(p: Path, prefer, unsupported: list) -> _Unit | None:
    found = {}
    for fmt in _ASCEND_FORMATS:
        src = importer(fmt).sniff(p)
        if src is not None:
            found[fmt] = src
    notes = []
    if not found:
        if (p / "FRAMEWORK").is_dir() or any(_PROF_RE.match(c.name) for c in p.iterdir()):
            unsupported.append(
                NotAProfile(
                    f"{p.name} holds raw profiler data that was never parsed (no ASCEND_PROFILER_OUTPUT)",
                    file=p,
                    fix='run the offline parse: python -c "from torch_npu.profiler.profiler import '
                    f"analyse; analyse('{p}')\" (it writes ASCEND_PROFILER_OUTPUT)",
                )
            )
        else:
            unsupported.append(
                NotAProfile(
                    f"{p.name} looks like a torch_npu profile but ASCEND_PROFILER_OUTPUT has no readable "
                    "files (was the collection interrupted?)",
                    file=p,
                    fix="re-run the offline parse (torch_npu.profiler.profiler.analyse) or collect again",
                )
            )
        return None
    if len(found) == 2:
        want = "ascend_text" if prefer == "text" else "ascend_db"
        other = "text" if want == "ascend_db" else "DB"
        notes.append(
            dg.info(
                "both-exports",
                f"both DB and text exports are present; using the {want.split('_')[1]} export",
                file=p,
                fix=f"pass prefer='{other.lower()}' (CLI: --prefer {other.lower()}) to read the other one",
            )
        )
        src = found[want]
    else:
        src = next(iter(found.values()))
    return _Unit(src, _ascend_level(p), None, notes)


def _ascend_level(p: Path) -> str | None:
    for info in sorted(p.glob("profiler_info*.json")):
        try:
            cfg = json.loads(info.read_text(encoding="utf-8", errors="replace"))
            return cfg.get("config", {}).get("experimental_config", {}).get("_profiler_level")
        except (OSError, ValueError, AttributeError):
            return None
    return None


def _sniff_file(p: Path) -> _Unit | None:
    if not (p.name.endswith(".json") or p.name.endswith(".json.gz")):
        return None
    if p.name in ("trace_view.json",) or p.name.startswith(("profiler_info", "profiler_metadata")):
        return None
    src = importer("kineto").sniff(p)
    if src is None:
        return None
    return _Unit(src, None, _peek_world_size(p), [])


_WORLD_RE = re.compile(rb'"world_size"\s*:\s*(\d+)')


def _peek_world_size(p: Path) -> int | None:
    try:
        opener = gzip.open if p.name.endswith(".gz") else open
        with opener(p, "rb") as fh:
            head = fh.read(65536)
    except (OSError, EOFError):
        return None
    m = _WORLD_RE.search(head)
    return int(m.group(1)) if m else None


def _group(units: list[_Unit]) -> list[Run]:
    """Rank units that share a parent folder, format, level and world size, with distinct
    ranks, form one run; anything else stands alone."""
    buckets: dict[tuple, list[_Unit]] = {}
    for u in units:
        s = u.source
        parent = s.path.parent
        key = (parent, s.format, u.level, u.world_size)
        buckets.setdefault(key, []).append(u)
    runs = []
    for (parent, fmt, level, _ws), group in buckets.items():
        ranks = [u.source.rank_hint for u in group]
        distinct = None not in ranks and len(set(ranks)) == len(ranks)
        if len(group) == 1 or not distinct:
            for u in group:
                root = u.source.path
                runs.append(Run(fmt, root, (u.source,), tuple(u.notes), level))
        else:
            group.sort(key=lambda u: u.source.rank_hint)
            notes = tuple(n for u in group for n in u.notes)
            runs.append(Run(fmt, parent, tuple(u.source for u in group), notes, level))
    runs.sort(key=lambda r: str(r.root))
    return runs


def formats() -> list[str]:
    return list(FORMATS)
