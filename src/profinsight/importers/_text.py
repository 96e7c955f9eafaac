"""Text normalisation shared by the Ascend text and DB importers.

Why this module exists: the same framework-op attributes reach us in three spellings. The trace
(`trace_view.json`) and the DB (`PYTORCH_API`) separate list items with `;\\r\\n`, the CSV
(`operator_details.csv`) with `;\\n`.  The contract says a text and a DB export of the same run
produce equal tables, so both importers must reduce these to one canonical form, and they do it
here, with pure functions, so there is exactly one definition.

Canonical forms:

* lists (input shapes, input dtypes, kernel formats): entries joined by `;`, no line breaks.
  Empty entries (non-tensor inputs) are kept, so `"32,3;\\r\\n;\\r\\n"` and `"32,3;\\n;\\n"`
  both become `"32,3;;"` and the entry count (the number of inputs) survives.  Kernel shape
  cells keep literal quotes in the sources (`"32,3,224,224"`); those quotes are removed.
* call stacks: frames joined by `"\\n"` (:data:`STACK_SEP`), innermost frame first.
"""

from __future__ import annotations

import re

#: separator between the frames of a canonical call stack
STACK_SEP = "\n"

# an item separator: `;` followed by one line break (`\r\n` or `\n`)
_ITEM_SEP = re.compile(r";[ \t]*\r?\n")
_BREAK = re.compile(r"\r?\n")


def normalise_list(text) -> str | None:
    """Canonical `;`-separated list from a shapes/dtypes/formats cell; None for empty/N/A.

    A trailing `;` is an empty last entry, not a terminator: the DB's `0;\\r\\n;\\r\\n` pairs
    with three dtypes `float;\\r\\nScalar;\\r\\nNone`, so it is kept (`0;;`)."""
    if text is None:
        return None
    s = str(text).replace('"', "")
    if s.strip() in ("", "N/A"):
        return None
    s = _ITEM_SEP.sub(";", s)
    return _BREAK.sub(";", s).strip()


def normalise_stack(text) -> str | None:
    """Canonical call stack (frames joined by :data:`STACK_SEP`) from a `;`+line-break text."""
    if text is None:
        return None
    frames = [f.strip() for f in _ITEM_SEP.split(str(text))]
    frames = [f[:-1] if f.endswith(";") else f for f in frames]
    frames = [f for f in frames if f]
    return STACK_SEP.join(frames) if frames else None


def join_stack(frames) -> str | None:
    """Canonical call stack from frames already ordered innermost first (DB callchains)."""
    frames = [str(f).strip() for f in frames if f is not None and str(f).strip()]
    return STACK_SEP.join(frames) if frames else None
