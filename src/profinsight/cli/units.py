"""Sizes in words for the terminal.  A leaf module: the load line (:mod:`.loading`) and the cache
listing (:mod:`.cache`) share it, and the listing is imported when the CLI starts, so nothing here
may import the engine (``profinsight --help`` stays free of pyarrow and numpy)."""

from __future__ import annotations


def fmt_bytes(n: int, gib_digits: int = 2) -> str:
    """Bytes in binary units (``1.22 GiB``, ``320.0 MiB``, ``1.5 KiB``, ``12 B``); the viewer
    writes GiB with two decimals, the cache's listing with one (``gib_digits``)."""
    for unit, size, digits in (("GiB", 2**30, gib_digits), ("MiB", 2**20, 1), ("KiB", 2**10, 1)):
        if abs(n) >= size:
            return f"{n / size:.{digits}f} {unit}"
    return f"{n} B"
