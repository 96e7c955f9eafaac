"""Importers: one package per format, each turning one rank into canonical tables.

An importer is a function ``load_rank(source: RankSource) -> RankData``.  Detection and the
grouping of ranks into runs live in :mod:`profinsight.discovery`; nothing downstream of this
package knows which format a table came from.
"""

from __future__ import annotations

import importlib

from .base import RankData, RankSource

#: format name -> module that defines ``load_rank`` and ``VERSION`` (bumped when output changes,
#: which invalidates cached tables)
FORMATS = {
    "ascend_text": "profinsight.importers.ascend_text",
    "ascend_db": "profinsight.importers.ascend_db",
    "kineto": "profinsight.importers.kineto",
}


def importer(fmt: str):
    """The module implementing format ``fmt``."""
    return importlib.import_module(FORMATS[fmt])


def load_rank(source: RankSource) -> RankData:
    """Import one rank with the importer of its format; tables conformed to the schema."""
    return importer(source.format).load_rank(source).finish()


__all__ = ["FORMATS", "RankData", "RankSource", "importer", "load_rank"]
