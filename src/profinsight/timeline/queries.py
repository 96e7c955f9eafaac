"""Timeline queries by window and resolution (STYLE habit 6): never "send me everything".

Every function takes absolute epoch nanoseconds and returns plain data (dicts, Arrow tables);
the HTTP layer decides the wire format.  The answer of :func:`slices` and :func:`counters` is
bounded by tracks x depth x pixels whatever the size of the profile.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa

from ..errors import ProfileError, UnknownTable
from .index import SOURCES, SYNTHETIC_ORDER, index_of

MAX_WIDTH = 20_000
MAX_TRACKS = 2_000


def tracks(profile) -> dict:
    """The track tree: rank -> unit -> track (id, name, kind, rows, start_ns, end_ns, depth)."""
    idx = index_of(profile)
    ranks: dict[int, dict[str, dict]] = {}
    for t in idx.tracks:
        units = ranks.setdefault(t["rank"], {})
        unit = units.setdefault(t["unit"], {"name": t["unit"], "kind": t["unit_kind"], "tracks": []})
        unit["tracks"].append(
            {k: t[k] for k in ("id", "name", "kind", "source", "rows", "start_ns", "end_ns", "depth", "value_unit")}
        )
    order = {"host": 0, "api": 1, "device": 2, "communication": 3, "slices": 4, "counter": 5, "memory": 6}
    out = []
    for rank in sorted(ranks):
        units = sorted(ranks[rank].values(), key=lambda u: (order.get(u["kind"], 9), u["name"]))
        for u in units:
            u["tracks"].sort(key=lambda t: _natural(t["name"]))
        out.append({"rank": rank, "units": units})
    ends = [t["end_ns"] for t in idx.tracks if t["end_ns"] is not None]
    return {
        "origin_ns": idx.origin_ns,
        "start_ns": idx.origin_ns,
        "end_ns": max(ends, default=idx.origin_ns),
        "ranks": out,
    }


def _natural(name: str):
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in _split_digits(name or "")]


def _split_digits(s: str) -> list[str]:
    out, cur = [], ""
    for ch in s:
        if cur and ch.isdigit() != cur[-1].isdigit():
            out.append(cur)
            cur = ""
        cur += ch
    return out + [cur] if cur else out


def check_window(start_ns: int, end_ns: int, width_px: int) -> float:
    if end_ns <= start_ns:
        raise ProfileError(
            f"empty window: end ({end_ns}) must be after start ({start_ns})", fix="pass start < end, in nanoseconds"
        )
    if not 1 <= width_px <= MAX_WIDTH:
        raise ProfileError(f"width must be 1..{MAX_WIDTH} pixels, not {width_px}")
    return (end_ns - start_ns) / width_px


def _check_tracks(idx, track_ids, kind: str) -> list[str]:
    ids = list(dict.fromkeys(track_ids))
    if not ids:
        raise ProfileError("no track given", fix="pass tracks=ID,ID,... (ids from the tracks route)")
    if len(ids) > MAX_TRACKS:
        raise ProfileError(f"at most {MAX_TRACKS} tracks per request, not {len(ids)}")
    bad = [t for t in ids if t not in idx.by_id or idx.by_id[t]["kind"] != kind]
    if bad:
        raise ProfileError(f"unknown {kind} track(s): {', '.join(bad[:5])}", fix="track ids come from the tracks route")
    return ids


def slice_columns(
    profile,
    start_ns: int,
    end_ns: int,
    track_ids,
    width_px: int,
    codes: bool = False,
    shift: dict | None = None,
    lanes: dict | None = None,
) -> dict[str, dict]:
    """Slices of ``track_ids`` overlapping [start_ns, end_ns), per track as numpy columns
    (depth, source, id, name, start_ns, dur_ns, count, total_ns, merged), sorted by start then
    depth.  With ``codes`` the ``name`` column holds int32 codes into ``names`` (the track's
    name dictionary, an object array, also in the dict): the HTTP layer sends codes, not text.  Slices at least one pixel long (``(end-start)/width_px`` ns) come one per row; shorter
    ones are merged per track, depth and pixel into rows with ``merged`` true, ``count`` slices,
    ``total_ns`` summed duration, the name of the longest, and the extent of the merged slices
    as start_ns/dur_ns.  ``id`` is -1 on merged rows.  Answered from the level-of-detail tables
    (lod.py), so the work is bounded by tracks x depth x pixels.

    ``shift`` ({rank: ns}, see align.py) moves each rank's slices by its offset: the window is
    read in the shifted frame and the answer's times are shifted.  ``lanes`` ({track: N}) keeps
    only the first N nesting levels of those tracks (the page draws a deep host thread's first
    levels until asked for all; the levels below were half of a zoomed-out answer)."""
    px = check_window(start_ns, end_ns, width_px)
    idx = index_of(profile)
    ids = _check_tracks(idx, track_ids, "slice")
    out = {}
    for t in ids:
        off = shift.get(idx.by_id[t]["rank"], 0) if shift else 0
        cols = idx.slice_tracks[t].query(start_ns - off, end_ns - off, px, width_px)
        if off:
            cols["start_ns"] = cols["start_ns"] + off
        if lanes and t in lanes:
            keep = cols["depth"] < lanes[t]
            if not keep.all():
                cols = {
                    k: (v[keep] if isinstance(v, np.ndarray) and len(v) == len(keep) else v) for k, v in cols.items()
                }
        if len(cols["start_ns"]):
            if codes:
                cols["names"] = idx.names_of[t]
            else:
                cols["name"] = idx.names_of[t][cols["name"]]
            cols["source"] = idx.by_id[t]["source"]
            out[t] = cols
    return out


def slices(profile, start_ns: int, end_ns: int, track_ids, width_px: int) -> pa.Table:
    """:func:`slice_columns` as one Arrow table sorted by (track, start_ns, depth), source and id
    null on merged rows.

    Columns: track, depth, source, id, name, start_ns, dur_ns, count, total_ns, merged."""
    per = slice_columns(profile, start_ns, end_ns, track_ids, width_px)
    order = sorted(per)
    parts = {
        k: [] for k in ("track", "depth", "source", "id", "name", "start_ns", "dur_ns", "count", "total_ns", "merged")
    }
    for t in order:
        c = per[t]
        n = len(c["start_ns"])
        parts["track"].append(pa.array([t] * n, pa.string()))
        parts["source"].append(pa.array(np.where(c["merged"], None, c["source"]).tolist(), pa.string()))
        parts["id"].append(pa.array(c["id"], pa.int64(), mask=c["merged"]))
        parts["name"].append(pa.array(c["name"].tolist(), pa.string()))
        for k, typ in (
            ("depth", pa.int32()),
            ("start_ns", pa.int64()),
            ("dur_ns", pa.int64()),
            ("count", pa.int64()),
            ("total_ns", pa.int64()),
            ("merged", pa.bool_()),
        ):
            parts[k].append(pa.array(c[k], typ))
    types = {
        "track": pa.string(),
        "depth": pa.int32(),
        "source": pa.string(),
        "id": pa.int64(),
        "name": pa.string(),
        "start_ns": pa.int64(),
        "dur_ns": pa.int64(),
        "count": pa.int64(),
        "total_ns": pa.int64(),
        "merged": pa.bool_(),
    }
    return pa.table({k: pa.chunked_array(v, types[k]) for k, v in parts.items()})


def counter_columns(
    profile, start_ns: int, end_ns: int, track_ids, width_px: int, shift: dict | None = None
) -> dict[str, dict]:
    """Counter samples of ``track_ids`` in [start_ns, end_ns) down-sampled to one bucket per track
    and pixel (numpy columns start_ns/end_ns = first/last sample time, min, max, last, count; min
    and max over every sample, so peaks are never lost), plus ``before``: (ts_ns, value) of the
    last sample before the window or None.  ``shift`` as in :func:`slice_columns`."""
    px = check_window(start_ns, end_ns, width_px)
    idx = index_of(profile)
    ids = _check_tracks(idx, track_ids, "counter")
    out = {}
    for t in ids:
        tr = idx.counter_tracks[t]
        off = shift.get(idx.by_id[t]["rank"], 0) if shift else 0
        cols = tr.query(start_ns - off, end_ns - off, px, width_px)
        cols["before"] = tr.before(start_ns - off)
        if off:
            cols["start_ns"] = cols["start_ns"] + off
            cols["end_ns"] = cols["end_ns"] + off
            if cols["before"] is not None:
                cols["before"] = (cols["before"][0] + off, cols["before"][1])
        out[t] = cols
    return out


def counters(profile, start_ns: int, end_ns: int, track_ids, width_px: int) -> tuple[pa.Table, pa.Table]:
    """:func:`counter_columns` as Arrow tables.

    Returns (buckets: track, start_ns, end_ns, min, max, last, count;  before: track, ts_ns, value)."""
    per = counter_columns(profile, start_ns, end_ns, track_ids, width_px)
    cols = {k: [] for k in ("track", "start_ns", "end_ns", "min", "max", "last", "count")}
    before = {"track": [], "ts_ns": [], "value": []}
    for t in sorted(per):
        c = per[t]
        cols["track"] += [t] * len(c["start_ns"])
        for k in ("start_ns", "end_ns", "min", "max", "last", "count"):
            cols[k].append(c[k])
        if c["before"] is not None:
            before["track"].append(t)
            before["ts_ns"].append(c["before"][0])
            before["value"].append(c["before"][1])
    buckets = pa.table(
        {
            "track": pa.array(cols["track"], pa.string()),
            **{
                k: pa.array(np.concatenate(cols[k]) if cols[k] else [], typ)
                for k, typ in (
                    ("start_ns", pa.int64()),
                    ("end_ns", pa.int64()),
                    ("min", pa.float64()),
                    ("max", pa.float64()),
                    ("last", pa.float64()),
                    ("count", pa.int64()),
                )
            },
        }
    )
    return buckets, pa.table(
        {
            "track": pa.array(before["track"], pa.string()),
            "ts_ns": pa.array(before["ts_ns"], pa.int64()),
            "value": pa.array(before["value"], pa.float64()),
        }
    )


def _run(profile, sql: str, ids: list[str], named: dict) -> pa.Table:
    # DuckDB does not mix ? and $name parameters: number them all
    values = list(ids)
    for name, value in named.items():
        values.append(value)
        sql = sql.replace(f"${name}", f"${len(values)}")
    n = 0
    while "?" in sql:
        n += 1
        sql = sql.replace("?", f"${n}", 1)
    return _arrow(profile.connection(), sql, values)


def _arrow(con, sql: str, params: list) -> pa.Table:
    return con.sql(sql, params=params).to_arrow_table()


def _locate(profile, kind: str, rank: int, id_: int) -> dict | None:
    if kind not in SOURCES:
        raise ProfileError(f"unknown kind {kind!r}", fix=f"kinds: {', '.join(SOURCES)}")
    table = index_of(profile).slice_table()
    rows = _arrow(
        profile.connection(),
        f"SELECT track, source AS kind, rank, id, name, start_ns, dur_ns, depth FROM {table} "
        "WHERE source = ? AND rank = ? AND id = ?",
        [kind, int(rank), int(id_)],
    ).to_pylist()
    return rows[0] if rows else None


def flows(profile, kind: str, rank: int, id_: int) -> dict:
    """Launch arrows of a selection: a host op or API call -> the device tasks it launched; a
    device task -> the host op and API call that launched it.  Each arrow names both ends
    (kind, rank, id, track, start_ns, dur_ns, depth, name)."""
    me = _locate(profile, kind, rank, id_)
    if me is None:
        raise UnknownTable(f"no {kind} with id {id_} on rank {rank}")
    con = profile.connection()
    table = index_of(profile).slice_table()
    out = []
    if kind in ("host_op", "api_call"):
        col = "host_op_id" if kind == "host_op" else "api_call_id"
        # a launched collective drawn on its group's track (index.py): the arrow ends there
        rows = _arrow(
            con,
            f"""SELECT DISTINCT s.track, s.source AS kind, s.rank, s.id, s.name, s.start_ns,
                s.dur_ns, s.depth, l.link FROM launches l JOIN {table} s
                ON s.source = 'device_task' AND s.rank = l.rank AND s.id = l.task_uid
                WHERE l.rank = ? AND l.{col} = ?
                UNION SELECT DISTINCT s.track, s.source, s.rank, s.id, s.name, s.start_ns, s.dur_ns, s.depth,
                l.link FROM launches l JOIN device_tasks d ON d.rank = l.rank AND d.task_uid = l.task_uid
                JOIN {table} s ON s.source = 'comm_op' AND s.rank = d.rank AND s.start_ns = d.start_ns
                AND s.dur_ns = coalesce(d.dur_ns, 0)
                WHERE l.rank = ? AND l.{col} = ? AND d.kind = 'communication' AND d.stream IS NULL
                ORDER BY start_ns""",
            [rank, id_, rank, id_],
        ).to_pylist()
        out = [
            {"from": dict(me), "to": r, "link": r.pop("link")} for r in rows
        ]  # own copies: callers edit times in place
    elif kind == "device_task":
        rows = _arrow(
            con,
            f"""SELECT DISTINCT s.track, s.source AS kind, s.rank, s.id, s.name, s.start_ns,
                s.dur_ns, s.depth, l.link FROM launches l JOIN {table} s ON s.rank = l.rank AND
                ((s.source = 'host_op' AND s.id = l.host_op_id) OR (s.source = 'api_call' AND s.id = l.api_call_id))
                WHERE l.rank = ? AND l.task_uid = ? ORDER BY s.source, s.start_ns""",
            [rank, id_],
        ).to_pylist()
        out = [{"from": r, "to": dict(me), "link": r.pop("link")} for r in rows]
    elif kind == "comm_op":
        # the host op / API call that launched the device task this collective was recorded as
        rows = _arrow(
            con,
            f"""SELECT DISTINCT s.track, s.source AS kind, s.rank, s.id, s.name, s.start_ns,
                s.dur_ns, s.depth, l.link FROM device_tasks d JOIN launches l ON l.rank = d.rank
                AND l.task_uid = d.task_uid JOIN {table} s ON s.rank = l.rank AND
                ((s.source = 'host_op' AND s.id = l.host_op_id) OR (s.source = 'api_call' AND s.id = l.api_call_id))
                WHERE d.rank = ? AND d.kind = 'communication' AND d.stream IS NULL AND d.start_ns = ?
                AND coalesce(d.dur_ns, 0) = ? ORDER BY s.source, s.start_ns""",
            [rank, int(me["start_ns"]), int(me["dur_ns"])],
        ).to_pylist()
        out = [{"from": r, "to": dict(me), "link": r.pop("link")} for r in rows]
    return {"selection": me, "flows": out}


def search(profile, text: str, limit: int = 100) -> dict:
    """Slices whose name contains ``text`` (case-insensitive), in time order, with their track,
    for jump-to-hit; ``total`` counts every match.

    The text is matched against the index's name dictionaries (a few thousand names), and the
    rows are then selected by name with their total counted in the same query: lower-casing
    and scanning every row's name twice (count, then rows) took ~250 ms on 1.9 M slices."""
    text = (text or "").strip()
    if not text:
        raise ProfileError("empty search text", fix="pass q=TEXT")
    limit = max(1, min(int(limit), 10_000))
    idx = index_of(profile)
    needle = text.lower()
    names = {n for part in idx.parts for n in part.names.tolist() if n and needle in n.lower()}
    if not names:
        return {"query": text, "total": 0, "hits": []}
    rows = _arrow(
        profile.connection(),
        f"""SELECT track, source AS kind, rank, id, name, start_ns, dur_ns, depth, count(*) OVER () AS _total
            FROM {idx.slice_table()} WHERE name IN (SELECT unnest(?::VARCHAR[]))
            ORDER BY start_ns, track LIMIT ?""",
        [sorted(names), limit],
    ).to_pylist()
    total = rows[0].pop("_total") if rows else 0
    for r in rows[1:]:
        r.pop("_total")
    return {"query": text, "total": int(total), "hits": rows}


def details(profile, kind: str, rank: int, id_: int) -> dict:
    """Every column of one row of its canonical table (shapes, dtypes, formats, args ...), plus
    where it sits on the timeline."""
    me = _locate(profile, kind, rank, id_)
    if me is None:
        raise UnknownTable(f"no {kind} with id {id_} on rank {rank}")
    table, id_col = SOURCES[kind]
    con = profile.connection()
    if id_col:
        rel = _arrow(con, f"SELECT * FROM {table} WHERE rank = ? AND {id_col} = ?", [rank, id_])
    else:
        rel = _arrow(
            con,
            f"""SELECT * EXCLUDE (_row) FROM (SELECT *, row_number() OVER
            (PARTITION BY rank ORDER BY {SYNTHETIC_ORDER[table]}) - 1 AS _row FROM {table}
            WHERE start_ns IS NOT NULL) WHERE rank = ? AND _row = ?""",
            [rank, id_],
        )
    rows = rel.to_pylist()
    row = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in rows[0].items()} if rows else {}
    return {"kind": kind, "table": table, "track": me["track"], "row": row}
