"""Keep every event of an event array that parses, when the array is malformed in the middle
(not merely cut short: the readers recover a cut file themselves)."""

from __future__ import annotations

from pathlib import Path

import orjson

from ._bytes import separators


def salvage(events_path: Path, out_path: Path) -> tuple[int, int, int]:
    """Rewrite an event array that DuckDB rejects, keeping every event that parses.

    Used only when the array is malformed in the middle (not merely cut short), so the
    per-event Python work here is acceptable.  Pieces between ``} , {`` boundaries, and before
    a bare ``, {`` (the event before it lost its end), are glued until they parse (either can lie
    inside an event's args); a piece that never parses is dropped.  Returns (events kept, events
    dropped, bytes dropped).
    """
    data = Path(events_path).read_bytes()
    body = data.strip()[1:-1]
    cuts = [end for end, _, _ in separators(body)]
    bounds = [0, *cuts, len(body)]
    kept = dropped = lost = 0
    with open(out_path, "wb") as out:
        out.write(b"[")
        i = 0
        while i < len(bounds) - 1:
            for j in range(i + 1, min(i + 33, len(bounds))):
                piece = body[bounds[i] : bounds[j]].strip().strip(b",").strip()
                try:
                    obj = orjson.loads(piece)
                except orjson.JSONDecodeError:
                    continue
                if isinstance(obj, dict):
                    out.write((b"," if kept else b"") + piece)
                    kept += 1
                    i = j
                    break
            else:
                dropped += 1
                lost += bounds[i + 1] - bounds[i]
                i += 1
        out.write(b"]")
    return kept, dropped, lost
