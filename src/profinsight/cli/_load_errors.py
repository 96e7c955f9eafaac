"""Load errors first, for every command that shows a profile's results (``view``, ``report``;
``analyze`` says them in its own forms): where a rank failed to import (an ``error``
diagnostic), the errors are written to stderr before any result, a result is made only from
what loaded (none at all when nothing did: an empty table or report would read as "nothing
stands out"), and the command exits 1."""

from __future__ import annotations

import sys

from .. import diagnostics as dg
from ..i18n import resolve_lang, t


def errors(prof) -> list[dg.Diagnostic]:
    return [d for d in prof.diagnostics if d.severity == "error"]


def loaded(prof) -> bool:
    """Whether any table of the profile has a row."""
    return any(prof.row_counts().values())


def say(prof, lang: str | None = None, stream=None) -> bool:
    """Write the load errors of ``prof`` (if any) to ``stream`` (stderr); whether there were any."""
    errs = errors(prof)
    if not errs:
        return False
    out = stream or sys.stderr
    lang = resolve_lang(lang)
    print(t("report.import_failed", lang), file=out)
    for d in errs:
        rank = f" rank {d.rank}" if d.rank is not None else ""
        print(f"ERROR {d.code}{rank}: {d.message}", file=out)
        if d.file:
            print(f"      file: {d.file}", file=out)
        if d.fix:
            print(f"      fix:  {d.fix}", file=out)
    key = "report.import_failed.partial" if loaded(prof) else "report.import_failed.nothing"
    print(t(key, lang), file=out)
    return True
