"""Find the runs under a path: which ranks, of which format, belong together.

Detection follows speedscope's habit: the file name is a hint, the content decides.  This module
knows no format: it asks every registered importer (:func:`profinsight.importers.importers`)
what it recognises -- a folder an importer answers for is a rank folder and is not entered, a
file is a rank of its own -- and groups the ranks into runs.  A folder that mixes runs (duplicate
ranks, different levels or exports) is never merged silently: :func:`discover` returns each run,
and ``load`` refuses with a list.  :func:`scan` is the bounded, pruned walk behind a listing of
every run under a folder (the server's ``api/runs``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from . import diagnostics as dg
from .errors import NotAProfile, ProfileError
from .importers import Importer, RankSource, Recognised, importers
from .importers import formats as _formats
from .importers._looks import PART_OF, describe, looks_like

#: how deep below the given path a walk looks for rank folders and trace files
MAX_DEPTH = 4
#: folders a listing scan never enters (besides hidden ones and virtual environments)
SCAN_SKIP = frozenset({"node_modules", "__pycache__", "site-packages", "dist-packages", "bower_components"})
#: at most this many folders are listed per scan (a home folder as the root stays cheap)
SCAN_MAX_DIRS = 20_000


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
    runs, _walk = walk_runs(p, prefer)
    return runs


def walk_runs(path: str | Path, prefer: str | None = None) -> tuple[list[Run], _Walk]:
    """:func:`discover`'s runs of the existing ``path`` and the walk that found them (its
    ``listed`` folders, its start ``started_ns``: what a kept walk is witnessed by)."""
    p = Path(path).expanduser()
    walk = _Walk(prefer)
    walk.started_ns = time.time_ns()
    walk.visit(p.resolve(), 0)
    if not walk.units:
        if walk.problems:
            raise walk.problems[0]
        raise _nothing_found(p)
    return _group(walk.units), walk


#: at most this many entries of a folder are named in the "no profile found" message
SEEN_MAX = 12


def _nothing_found(p: Path) -> NotAProfile:
    """No importer read ``p``: say what was seen there (what each file looks like) and which
    layouts would work."""
    if p.is_file():
        what, instead = looks_like(p)
        home = _home(p) if instead == PART_OF else None
        if home is not None:
            instead = f"the folder it came from, {home} (it reads this file with the rest)"
        fix = (f"profinsight reads {instead} instead; " if instead else "") + _layouts()
        return NotAProfile(f"no profile found in {p}: it looks like {what}", file=p, fix=fix)
    try:
        entries = sorted((e for e in p.iterdir() if not e.name.startswith(".")), key=lambda e: e.name)
    except OSError:
        entries = []
    files = [e for e in entries if e.is_file()]
    folders = [e.name + "/" for e in entries if e.is_dir()]
    seen = [describe(f) for f in files[:SEEN_MAX]] + folders[: max(0, SEEN_MAX - len(files))]
    more = len(files) + len(folders) - len(seen)
    if not seen:
        said = "it is empty"
    else:
        said = "it holds " + "; ".join(seen) + (f"; and {more} more" if more > 0 else "")
    return NotAProfile(f"no profile found in {p}: {said}", file=p, fix=_layouts())


#: how many folders up a deliverable's profile is looked for (a rank folder is 1-3 levels up)
HOME_LEVELS = 3


def _home(p: Path) -> Path | None:
    """The nearest folder above the deliverable ``p`` that holds a profile, if any (recognition
    only: cheap)."""
    for folder in list(p.resolve().parents)[:HOME_LEVELS]:
        walk = _Walk(None)
        walk.visit(folder, 0)
        if walk.units:
            return folder
    return None


def _layouts() -> str:
    """What would work instead: every layout a registered importer reads, in its own words."""
    read = [f"{i.doc}" for i in importers() if i.loads]
    return (
        "point at one of the layouts profinsight reads (or a folder holding them): "
        + "; ".join(read)
        + " (docs/formats.md shows each with an example tree)"
    )


@dataclass(frozen=True)
class Scan:
    """What :func:`scan` found: the runs, the errors of paths an importer recognised but cannot
    read (each a :class:`ProfileError` naming its file), and whether the folder budget ran out."""

    runs: list[Run]
    problems: list[ProfileError]
    truncated: bool


def scan(
    top: str | Path,
    *,
    prefer: str | None = None,
    root: str | Path | None = None,
    max_depth: int = MAX_DEPTH,
    max_dirs: int = SCAN_MAX_DIRS,
) -> Scan:
    """Every run under ``top``, for a listing: never raises for what it finds, bounded in depth
    (``max_depth``) and folder count (``max_dirs``), and pruned: hidden folders, ``node_modules``
    and the other :data:`SCAN_SKIP` names, virtual environments (a ``pyvenv.cfg``), folders it
    cannot list, and symlinks that leave ``root`` (default ``top``) are not entered."""
    top = Path(top).expanduser()
    walk = _Walk(prefer, root=Path(root or top).expanduser().resolve(), budget=max_dirs, max_depth=max_depth)
    walk.visit(top, 0)
    return Scan(_group(walk.units) if walk.units else [], walk.problems, walk.truncated)


@dataclass
class _Unit:
    source: RankSource
    level: str | None
    world_size: int | None
    notes: list
    #: one of several ranks read from the same path: they form a run rooted at ``source.path``
    whole: bool = False


def _units(found: Recognised, notes: list) -> list[_Unit]:
    """The rank units of one recognised path: its source, or each of its ``sources``."""
    if found.sources:
        return [_Unit(s, found.level, found.world_size, list(notes), True) for s in found.sources]
    return [_Unit(found.source, found.level, found.world_size, notes)]


class _Walk:
    """One walk: ask the importers about each path, collect rank units and problems.

    Without ``root`` (``discover``) only hidden folders and ``*_op_args`` are skipped and a folder
    that cannot be listed is a problem; with it (``scan``) the listing's pruning applies."""

    def __init__(self, prefer, *, root: Path | None = None, budget: int | None = None, max_depth: int = MAX_DEPTH):
        self.prefer, self.root, self.budget, self.max_depth = prefer, root, budget, max_depth
        self.units: list[_Unit] = []
        self.problems: list[ProfileError] = []
        #: the folders listed (entered): their mtimes are part of a kept walk's witness
        self.listed: list[Path] = []
        self.started_ns = 0
        self.truncated = False
        self.folder_importers = [i for i in importers() if i.shape == "folder"]
        self.file_importers = [i for i in importers() if i.shape == "file"]

    def visit(self, p: Path, depth: int) -> None:
        if p.is_file():
            self._file(p)
            return
        if not p.is_dir() or depth > self.max_depth:
            return
        if self._folder(p):
            return
        if self.budget is not None:
            if self.budget <= 0:
                self.truncated = True
                return
            self.budget -= 1
        self.listed.append(p)
        try:
            children = sorted(p.iterdir())
        except OSError as exc:
            if self.root is None:
                self.problems.append(
                    NotAProfile(f"cannot list {p}: {exc.strerror}", file=p, fix="check the folder's permissions")
                )
            return
        for child in children:
            if not self._skipped(child):
                self.visit(child, depth + 1)

    def _skipped(self, c: Path) -> bool:
        name = c.name
        if name.startswith(".") or name.endswith("_op_args"):
            return True
        if self.root is None:
            return False
        if name in SCAN_SKIP:
            return True
        try:
            if c.is_symlink():
                c.resolve().relative_to(self.root)
            return c.is_dir() and (c / "pyvenv.cfg").exists() and not self._recognised(c)
        except (ValueError, OSError):
            return True

    def _recognised(self, p: Path) -> bool:
        return any(
            (imp.layout is None or _claims(imp, p)) and _ask(imp, p) is not None for imp in self.folder_importers
        )

    def _file(self, p: Path) -> None:
        for imp in _hinted_first(self.file_importers, p.name):
            found = _ask(imp, p)
            if found is not None and (found.source is not None or found.sources):
                self.units.extend(_units(found, []))
                return
            if found is not None and found.problem is not None:
                self.problems.append(found.problem)
                return

    def _folder(self, p: Path) -> bool:
        """Whether an importer answers for folder ``p`` (then it is a rank folder, not entered)."""
        claimed: dict[str, bool] = {}  # each shared layout is asked once per folder
        answers = []
        for imp in self.folder_importers:
            if imp.layout is not None:
                if imp.layout.name not in claimed:
                    claimed[imp.layout.name] = _claims(imp, p)
                if not claimed[imp.layout.name]:
                    continue
            if (f := _ask(imp, p)) is not None:
                answers.append((imp, f))
        if not answers:
            return False
        readable = [(imp, f) for imp, f in answers if f.source is not None or f.sources]
        if not readable:
            self.problems.append(next(f.problem for _, f in answers if f.problem is not None))
            return True
        chosen = next(((i, f) for i, f in readable if self.prefer and i.export == self.prefer), readable[0])
        notes = [_several_exports(p, chosen[0], [i for i, _ in readable])] if len(readable) > 1 else []
        self.units.extend(_units(chosen[1], notes))
        return True


def _claims(imp: Importer, p: Path) -> bool:
    try:
        return imp.layout.claims(p)
    except OSError:
        return False


def _ask(imp: Importer, p: Path) -> Recognised | None:
    """``imp``'s answer for ``p``; a path it cannot even look at is not its own."""
    try:
        found = imp.recognise(p)
    except OSError:
        return None
    if found is not None and found.source is None and found.problem is None and not found.sources:
        return None
    return found


def _hinted_first(imps: list[Importer], name: str) -> list[Importer]:
    """The importers whose ``hint`` matches ``name`` first (the name is a hint, the content decides)."""
    return sorted(imps, key=lambda i: not i.hint(name))


def _several_exports(p: Path, chosen: Importer, readable: list[Importer]) -> dg.Diagnostic:
    """The note that a rank folder holds several exports and which one is read."""
    label = {"db": "DB"}
    names = " and ".join(label.get(i.export, i.export) for i in readable if i.export)
    other = next((i.export for i in readable if i is not chosen and i.export), None)
    return dg.info(
        "both-exports",
        f"both {names} exports are present; using the {chosen.export} export",
        file=p,
        fix=f"pass prefer='{other}' (CLI: --prefer {other}) to read the other one",
    )


def _group(units: list[_Unit]) -> list[Run]:
    """Rank units that share a parent folder, format, level and world size, with distinct
    ranks, form one run; anything else stands alone.  The ranks read from one path (a cluster
    summary) group by that path instead of its parent."""
    buckets: dict[tuple, list[_Unit]] = {}
    for u in units:
        s = u.source
        parent = s.path if u.whole else s.path.parent
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
    """The names of the formats that load (see :func:`profinsight.importers.formats`)."""
    return list(_formats())
