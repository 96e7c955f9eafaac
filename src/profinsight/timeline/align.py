"""Aligning the ranks of a multi-rank timeline: per-rank time offsets taken from the data.

Ranks are recorded by different hosts whose clocks drift apart, and even with one clock the
ranks start a step or enter a collective at different moments.  To compare them side by side the
viewer shifts each rank's times by an offset so that one chosen moment lines up on every rank:

* ``by="step"``: the start of step N on each rank (the ``steps`` table's ``host_start_ns``, or
  ``device_start_ns`` where the host time is missing);
* ``by="collective"``: one collective, chosen on one rank, and the same collective on every other
  rank -- the k-th call of the same name in the same communication group (``comm_ops``, in start
  order), k being the chosen call's place on its own rank; ``edge="end"`` lines up the ends
  (a collective finishes together on all ranks, so its end is the better clock reference; its
  start shows who arrived late).

The offset of rank r is ``anchor(reference) - anchor(r)``: added to every time of rank r it puts
r's anchor on the reference rank's.  The reference is the chosen collective's rank, or for steps
the one the caller names (default: the lowest rank).  A rank without the anchor keeps offset 0
and is listed in ``missing``.

The window routes take the offsets as ``shift`` (docs/server.md) and answer in the shifted
frame, so the page draws, hit-tests and selects ranges with no arithmetic of its own.
"""

from __future__ import annotations

from ..errors import ProfileError, UnknownTable
from .index import SYNTHETIC_ORDER, index_of

EDGES = ("start", "end")


def _steps(profile) -> dict[int, dict[int, int]]:
    """{step: {rank: start ns}} from the steps table."""
    try:
        df = profile.sql(
            "SELECT rank, step, coalesce(host_start_ns, device_start_ns) AS t FROM steps "
            "WHERE step IS NOT NULL AND coalesce(host_start_ns, device_start_ns) IS NOT NULL ORDER BY step, rank"
        )
    except ProfileError:
        return {}
    out: dict[int, dict[int, int]] = {}
    for rank, step, t in zip(df["rank"].tolist(), df["step"].tolist(), df["t"].tolist()):
        out.setdefault(int(step), {}).setdefault(int(rank), int(t))
    return out


def _ranks(profile) -> list[int]:
    return sorted({int(t["rank"]) for t in index_of(profile).tracks})


#: comm_ops with their timeline id (row order of index.py), group key, and the call's place k
#: among the calls of the same name and group on its rank
_COLLECTIVES = f"""SELECT rank, id, name, grp, start_ns, dur_ns,
        row_number() OVER (PARTITION BY rank, grp, name ORDER BY start_ns, id) - 1 AS k
    FROM (SELECT rank, name, coalesce("group", '') AS grp, start_ns, coalesce(dur_ns, 0) AS dur_ns,
            row_number() OVER (PARTITION BY rank ORDER BY {SYNTHETIC_ORDER["comm_ops"]}) - 1 AS id
          FROM comm_ops WHERE start_ns IS NOT NULL)"""


def _chosen(profile, kind: str, rank: int, id_: int):
    """(name, group, k) of the collective the timeline draws as ``kind``/``rank``/``id_``."""
    con = profile.connection()
    if kind == "comm_op":
        where, params = "rank = ? AND id = ?", [rank, id_]
    elif kind == "device_task":
        task = con.execute(
            "SELECT start_ns, coalesce(dur_ns, 0) FROM device_tasks WHERE rank = ? AND task_uid = ?", [rank, id_]
        ).fetchall()
        if not task:
            raise UnknownTable(f"no device_task {id_} on rank {rank}")
        where, params = "rank = ? AND start_ns = ? AND dur_ns = ?", [rank, int(task[0][0]), int(task[0][1])]
    else:
        raise ProfileError(f"a {kind} is not a collective", fix="choose a slice on a Communication or stream track")
    rows = con.execute(
        f"SELECT name, grp, k FROM ({_COLLECTIVES}) WHERE {where} ORDER BY id LIMIT 1", params
    ).fetchall()
    if not rows:
        raise UnknownTable(
            f"{kind} {id_} on rank {rank} is not a collective", fix="choose a collective (the comm_ops table)"
        )
    return rows[0]


def _drawn(profile, rank: int, start_ns: int, dur_ns: int) -> dict | None:
    """The timeline slice a collective is drawn as: its comm_op row, or the device task on a
    stream that stands for it (index.py draws a collective once)."""
    table = index_of(profile).slice_table()
    rows = (
        profile.connection()
        .sql(
            f"""SELECT track, source AS kind, rank, id, name, start_ns, dur_ns, depth FROM {table}
                WHERE rank = ? AND start_ns = ? AND dur_ns = ? AND source IN ('comm_op', 'device_task')
                ORDER BY source = 'comm_op' DESC, track LIMIT 1""",
            params=[rank, start_ns, dur_ns],
        )
        .to_arrow_table()
        .to_pylist()
    )
    return rows[0] if rows else None


def alignment(
    profile,
    by: str = "step",
    *,
    step: int | None = None,
    kind: str = "comm_op",
    rank: int | None = None,
    id_: int | None = None,
    edge: str = "start",
    reference: int | None = None,
) -> dict:
    """Per-rank offsets that line up one moment on every rank (module docstring).

    ``by="step"``: ``step`` (default: the first step every rank recorded), ``reference`` rank
    (default: the lowest).  ``by="collective"``: the collective ``kind``/``rank``/``id_`` as the
    timeline names it (``comm_op``, or the ``device_task`` a stream kernel is drawn as), lined up
    at its ``edge``.

    Returns ``{by, edge, step, reference, name, steps, missing, ranks: [{rank, anchor_ns,
    offset_ns, slice}]}`` with absolute ns; ``slice`` is the anchor as drawn on that rank (the
    collective to highlight; None for steps); ``steps`` lists the steps every rank recorded."""
    if edge not in EDGES:
        raise ProfileError(f"edge must be one of {', '.join(EDGES)}, not {edge!r}")
    ranks = _ranks(profile)
    steps = _steps(profile)
    common = sorted(s for s, per in steps.items() if all(r in per for r in ranks))
    anchors: dict[int, int] = {}
    slices: dict[int, dict | None] = {}
    name = None
    if by == "step":
        if step is None:
            if not common:
                raise ProfileError("no step is recorded on every rank", fix="align by a collective instead")
            step = common[0]
        if step not in steps:
            raise ProfileError(f"no step {step} in this profile", fix=f"steps: {', '.join(map(str, sorted(steps)))}")
        anchors = dict(steps[step])
        ref = reference if reference is not None else min(anchors)
        if ref not in anchors:
            raise ProfileError(f"rank {ref} did not record step {step}", fix="choose another reference rank")
        name = f"step {step}"
    elif by == "collective":
        if rank is None or id_ is None:
            raise ProfileError("which collective?", fix="pass kind, rank and id of a collective slice")
        name, grp, k = _chosen(profile, kind, int(rank), int(id_))
        matched = (
            profile.connection()
            .execute(
                f"SELECT rank, start_ns, dur_ns FROM ({_COLLECTIVES}) WHERE name = ? AND grp = ? AND k = ? ORDER BY rank",
                [name, grp, int(k)],
            )
            .fetchall()
        )
        for r, s, d in matched:
            anchors[int(r)] = int(s) + (int(d) if edge == "end" else 0)
            slices[int(r)] = _drawn(profile, int(r), int(s), int(d))
        ref = int(rank)
        step = None
    else:
        raise ProfileError(f"align by step or collective, not {by!r}")
    out = []
    for r in ranks:
        a = anchors.get(r)
        out.append(
            {
                "rank": r,
                "anchor_ns": a,
                "offset_ns": 0 if a is None else anchors[ref] - a,
                "slice": slices.get(r),
            }
        )
    return {
        "by": by,
        "edge": edge,
        "step": step,
        "reference": ref,
        "name": name,
        "steps": common,
        "missing": [r for r in ranks if r not in anchors],
        "ranks": out,
    }
