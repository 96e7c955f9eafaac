"""The rank x step grid the Ranks view draws as a heat map: per rank and step the step time,
computing and communication wait, each rank placed in its parallel group.

The group a rank is drawn in is its data-parallel group where ``profiler_metadata.json`` declares
one (``dp``, else ``dp_cp``), else its pipeline group (``pp``), else none: the ranks of a group
run the same collectives, so a slow rank shows as the odd cell of its group's block.  Where
several declared groups have the same ranks, ``group`` names all of them.
"""

from __future__ import annotations

import pandas as pd

from ..registry import Chart, analysis
from .parallel import layout
from .ranks import _rows, step_figures

#: declared group names tried in turn for the rank's place in the heat map
GROUPING = ("dp", "dp_cp", "pp")

_COLS = {
    "rank": "rank id",
    "step": "step",
    "step_us": "device step (step_breakdown.step_us)",
    "computing_us": "computing (step_breakdown.computing_us)",
    "comm_wait_us": "the collectives' wait in the step (Σ comm_ops.wait_ns; where the profile has no wait "
    "times, communication not overlapped)",
    "group": "the rank's parallel group for the heat map: '<names> [ranks]' (module doc); empty without a layout",
    "group_order": "the group's position (groups by their first rank)",
    "source": "where the step figures come from: tasks or vendor_summary (step_breakdown.source)",
    "start_ns": "the step's device start (steps.device_start_ns), absolute ns: where the Ranks view's cell "
    "opens the timeline; null where only the vendor's summary gives the step",
    "end_ns": "the step's device end (steps.device_end_ns), absolute ns; null with start_ns",
}


def rank_groups(profile) -> dict[int, tuple[str, int]]:
    """rank -> (group label, order) for the heat map: per rank the first of ``GROUPING`` that it
    is declared in (two or more ranks), labelled with every declared name of those ranks."""
    _, groups = layout(profile)
    same: dict[tuple, list[str]] = {}
    for g in groups:
        same.setdefault(tuple(sorted(g["ranks"])), []).append(g["name"])
    of_rank: dict[int, tuple] = {}
    for name in GROUPING:
        for g in groups:
            if g["name"] == name and len(g["ranks"]) >= 2:
                for r in g["ranks"]:
                    of_rank.setdefault(int(r), tuple(sorted(g["ranks"])))
    order = {k: i for i, k in enumerate(sorted(set(of_rank.values())))}
    return {r: (f"{', '.join(sorted(set(same[k])))} [{', '.join(map(str, k))}]", order[k]) for r, k in of_rank.items()}


@analysis(
    "rank_steps",
    title="Ranks x steps",
    chart=Chart("bar", "label", ("step_us",), title="Step time per rank and step (us)"),
    columns={**_COLS, "label": "'r<rank> s<step>'"},
)
def rank_steps(profile) -> pd.DataFrame:
    """One row per rank and step: step time, computing and communication wait, with the rank's
    parallel group (data-parallel where declared) — the grid of the Ranks view's heat map."""
    r = _rows(profile)
    cols = [*_COLS, "label"]
    if r.empty:
        return pd.DataFrame(columns=cols)
    src = step_figures(profile)[["rank", "step", "source"]]
    r = r.merge(src, on=["rank", "step"], how="left")
    win = profile.table("steps")[["rank", "step", "device_start_ns", "device_end_ns"]]
    win = win.rename(columns={"device_start_ns": "start_ns", "device_end_ns": "end_ns"})
    win = win.drop_duplicates(["rank", "step"]).astype({"rank": r["rank"].dtype, "step": r["step"].dtype})
    r = r.merge(win, on=["rank", "step"], how="left")
    groups = rank_groups(profile)
    r["group"] = [groups.get(int(k), ("", 0))[0] for k in r["rank"]]
    last = len(set(groups.values()))
    r["group_order"] = [groups.get(int(k), ("", last))[1] for k in r["rank"]]
    r["label"] = "r" + r["rank"].astype(str) + " s" + r["step"].astype("string").fillna("-")
    r = r.sort_values(["group_order", "rank", "step"], kind="stable").reset_index(drop=True)
    return r[cols]
