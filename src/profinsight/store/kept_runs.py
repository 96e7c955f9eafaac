"""Discovery's walk of a large folder, kept (in the report cache) while nothing it saw changed.

Why: recognising the 1,024 rank folders of a large job asks every importer about every folder --
seconds of file-system calls in Python on every open of the run in the viewer, before anything
is read.  A walk that found at least :data:`KEEP_MIN_SOURCES` rank sources is kept with a witness
(:mod:`.report_cache`): the mtime of every folder it listed and of every folder a rank lies in
(it changes when an entry is added, removed or renamed there -- a new rank folder, a new export)
and the size and mtime of every file of every rank source.  Re-checking them is about 7,000
``stat`` calls for 1,024 ranks (tens of ms).  A walk during which one of them changed is not kept
(what it saw may be half old), nor a walk that met a problem (its message must be seen again).
Smaller walks are not kept: they take milliseconds.
"""

from __future__ import annotations

from pathlib import Path

from .. import diagnostics as dg
from ..discovery import Run, discover, walk_runs
from ..importers import RankSource
from . import report_cache

#: a walk that found at least this many rank sources is kept
KEEP_MIN_SOURCES = 64
#: the layout of a kept walk
KEPT_VERSION = "1"


def discover_kept(path: str | Path, *, prefer: str | None = None) -> list[Run]:
    """:func:`profinsight.discovery.discover`, answered from the kept walk of ``path`` while every
    folder it listed and every rank file is unchanged."""
    p = Path(path).expanduser()
    if not p.exists():
        return discover(p, prefer=prefer)  # its message says what is wrong
    root = p.resolve()
    question = {"root": str(root), "prefer": prefer}
    stored = report_cache.lookup("discover", KEPT_VERSION, question)
    if isinstance(stored, list):
        try:
            return [_run_from(d) for d in stored]
        except (KeyError, TypeError, ValueError):
            pass
    runs, walk = walk_runs(root, prefer)
    if not walk.problems and sum(len(r.sources) for r in runs) >= KEEP_MIN_SOURCES:
        _keep(question, walk.listed, runs, walk.started_ns)
    return runs


def _keep(question: dict, listed: list[Path], runs: list[Run], started_ns: int) -> None:
    seen: dict[str, list] = {}
    for run in runs:
        for w in report_cache.witness(run):
            seen[w[0]] = w
    for folder in listed:
        st = report_cache._stat(folder)
        seen[str(folder)] = [str(folder), -1, st.st_mtime_ns if st else None]
    witness = sorted(seen.values())
    if any(w[2] is None or w[2] >= started_ns for w in witness):
        return
    report_cache.store("discover", KEPT_VERSION, question, witness, [_run_dict(r) for r in runs])


def _run_dict(run: Run) -> dict:
    return {
        "format": run.format,
        "root": str(run.root),
        "level": run.level,
        "notes": [d.to_dict() for d in run.notes],
        "sources": [
            [s.format, str(s.path), [str(f) for f in s.files], s.rank_hint, [list(o) for o in s.options]]
            for s in run.sources
        ],
    }


def _run_from(d: dict) -> Run:
    return Run(
        format=d["format"],
        root=Path(d["root"]),
        sources=tuple(
            RankSource(fmt, Path(path), tuple(Path(f) for f in files), hint, tuple(tuple(o) for o in options))
            for fmt, path, files, hint, options in d["sources"]
        ),
        notes=tuple(dg.Diagnostic.from_dict(n) for n in d["notes"]),
        level=d["level"],
    )
