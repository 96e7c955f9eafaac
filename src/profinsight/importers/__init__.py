"""Importers: one package per format, each turning one rank into canonical tables.

Every importer package declares itself in ``IMPORTER`` (:class:`~.base.Importer`: its name, what
it recognises by content, its docs entry) and defines ``load_rank(source) -> RankData`` and
``VERSION`` (bumped when its output changes, which invalidates cached tables).  The list below
is the one place that names them: :mod:`profinsight.discovery` asks each registered importer
what it recognises, and nothing downstream of this package knows which format a table came from.
Adding a format: its package, one line here, its section in docs/formats.md.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Importer, RankData, RankSource, Recognised

#: the names this package gives from :mod:`.base`, loaded when first asked for: ``base`` loads
#: pyarrow, which a command that begins reading its trace ahead of its imports
#: (:func:`.chrome_trace.scan_ahead`) must not wait for
_FROM_BASE = ("Importer", "RankData", "RankSource", "Recognised")

#: every importer, one line each, in the order discovery asks them: where several read the same
#: folder (the two torch_npu exports), the first wins unless ``prefer`` names another
REGISTERED = (
    "ascend_db",
    "ascend_text",
    "kineto",
    "ascend_file",
    "msprof",
    "msprof_db",
    "mindspore",
    "cluster",
)


@cache
def importers() -> tuple[Importer, ...]:
    """The declarations of every registered importer, in registration order."""
    return tuple(importlib.import_module(f"{__name__}.{pkg}").IMPORTER for pkg in REGISTERED)


def formats() -> dict[str, str]:
    """Format name -> module that defines ``load_rank`` and ``VERSION``, for every importer
    that reads its format (those that only recognise one to say it is not supported are left out)."""
    return {imp.name: f"{__name__}.{pkg}" for pkg, imp in zip(REGISTERED, importers()) if imp.loads}


def importer(fmt: str):
    """The module implementing format ``fmt``."""
    return importlib.import_module(formats()[fmt])


def load_rank(source: RankSource) -> RankData:
    """Import one rank with the importer of its format; tables conformed to the schema, and the
    checks every rank gets (:mod:`.checks`) added to its diagnostics."""
    from ._common import mark_busy
    from .checks import rank_checks

    mark_busy()  # how busy the cores are is read over the import's first steps, not waited for
    data = importer(source.format).load_rank(source).finish()
    try:
        data.diagnostics.extend(rank_checks(data))
    except Exception:  # noqa: BLE001 - a check that fails never costs the user the rank's tables
        pass
    return data


def cacheable(fmt: str) -> bool:
    """Whether the ranks of format ``fmt`` go to the Parquet cache (an importer whose ranks are
    cheaper to read again than to cache says ``CACHE = False``)."""
    return getattr(importer(fmt), "CACHE", True)


def load_ranks(sources) -> list[RankData]:
    """Import several ranks of one format in this process, as :func:`load_rank` does each, through
    the importer's ``load_ranks`` where it has one (it reads a file that holds many ranks once)."""
    from .checks import rank_checks

    sources = list(sources)
    if not sources:
        return []
    mod = importer(sources[0].format)
    many = getattr(mod, "load_ranks", None)
    out = [d.finish() for d in (many(sources) if many else [mod.load_rank(s) for s in sources])]
    for data in out:
        try:
            data.diagnostics.extend(rank_checks(data))
        except Exception:  # noqa: BLE001 - a check that fails never costs the user the rank's tables
            pass
    return out


def __getattr__(name: str):
    if name == "FORMATS":  # the format -> module map, built on first use
        return formats()
    if name in _FROM_BASE:
        from . import base

        return getattr(base, name)
    raise AttributeError(name)


__all__ = [
    "FORMATS",
    "Importer",
    "RankData",
    "RankSource",
    "Recognised",
    "formats",
    "importer",
    "cacheable",
    "importers",
    "load_rank",
    "load_ranks",
]
