"""The parallel layout of a multi-rank run and what each parallel group does.

Current torch_npu writes the job's layout into every rank's ``profiler_metadata.json``:
``distributed_args`` (tensor / pipeline / data / context / expert parallel sizes) and
``parallel_group_info`` (each group the rank is in: its name -- ``dp``, ``tp``, ``pp``, ``mp``,
``embd``, ``dp_cp``, ``default_group``, ... -- and its global ranks).  The importers keep it in
``run_info.extra`` (``metadata``).  The collectives, on the other side, name their group only by
the HCCL group hash (``comm_ops.group``).

**Matching a hash to a group** is done by the ranks that report it: the set of ranks with an op of
that hash is compared with the rank sets of the declared groups, and every declared group with
exactly that rank set is named.  Several groups often share their ranks (on a TP1/PP2/DP2 job
``mp``, ``pp`` and ``embd`` are all ranks [0, 2]); all of them are shown, none is picked, because
nothing in the profile says which of them the collective was issued on.  A hash whose ranks match
no declared group keeps an empty ``names`` (a partial export, where some ranks of the group are
missing, looks so too).

**Who waits for whom.**  In a collective every rank waits (``comm_ops.wait_ns``, the vendor's
Wait Time) for the last one to arrive; the rank that waits least arrived last and is the one the
others waited for.  Per collective (same group, step and op name on every rank) the chain is:
each other rank waited ``wait - wait_of_last`` for the last.  This uses durations only, so it
holds where the ranks' clocks disagree.  A group's **slow rank** is the rank its peers waited for
longest in total, named where that wait is at least ``min_share`` of the group's median step.
"""

from __future__ import annotations

import json

import pandas as pd

from ..i18n import evidence
from ..registry import Chart, Param, analysis
from .ranks import memo, rank_summary, step_figures

#: declared group names -> the parallel dimension they are (the layout's words)
DIMENSIONS = {
    "tp": "tensor",
    "pp": "pipeline",
    "dp": "data",
    "cp": "context",
    "ep": "expert",
    "dp_cp": "data x context",
    "mp": "model (tensor x pipeline)",
    "embd": "embedding (first and last stage)",
    "default_group": "world",
}
_ARGS = {
    "tensor_model_parallel_size": "tp",
    "pipeline_model_parallel_size": "pp",
    "data_parallel_size": "dp",
    "context_parallel_size": "cp",
    "expert_model_parallel_size": "ep",
}


def _ranks_text(ranks) -> str:
    return ", ".join(str(int(r)) for r in ranks)


def layout(profile) -> tuple[dict, list[dict]]:
    """``(sizes, groups)``: the parallel sizes of ``distributed_args`` (``{"tp": 1, "pp": 2, ...}``,
    the first rank that records them) and the declared groups, one dict per distinct (name, ranks):
    ``name``, ``ranks`` (tuple, in the declared order: for ``pp`` the stage order), ``ids``
    (the ``group_name_N`` keys).  Both empty where no rank records its layout.  Read once per
    profile (every rank's metadata is parsed: on 1,024 ranks that is worth not repeating)."""
    sizes, groups = memo(profile, "_parallel_layout", _layout)
    return dict(sizes), [dict(g, ids=list(g["ids"])) for g in groups]


def _layout(profile) -> tuple[dict, list[dict]]:
    info = profile.table("run_info")
    sizes: dict = {}
    groups: dict[tuple, dict] = {}
    if "extra" not in info:
        return sizes, []
    for text in info["extra"].dropna():
        try:
            meta = (json.loads(text) or {}).get("metadata") or {}
        except (TypeError, ValueError):
            continue
        dist = meta.get("distributed_args")
        if isinstance(dist, dict) and not sizes:
            sizes = {short: dist[k] for k, short in _ARGS.items() if isinstance(dist.get(k), int)}
        pgi = meta.get("parallel_group_info")
        for gid, g in pgi.items() if isinstance(pgi, dict) else ():
            if not isinstance(g, dict) or not isinstance(g.get("global_ranks"), list):
                continue
            key = (str(g.get("group_name") or gid), tuple(int(r) for r in g["global_ranks"]))
            entry = groups.setdefault(key, {"name": key[0], "ranks": key[1], "ids": []})
            if gid not in entry["ids"]:
                entry["ids"].append(str(gid))
    return sizes, sorted(groups.values(), key=lambda g: (len(g["ranks"]), g["ranks"], g["name"]))


def _ops(profile) -> pd.DataFrame:
    c = profile.table("comm_ops")
    if c.empty or "group" not in c:
        return pd.DataFrame(columns=["rank", "step", "name", "type", "group", "dur_ns", "wait_ns", "bytes"])
    c = c[c["group"].notna()].copy()
    c["group"] = c["group"].astype(str)
    return c


def _names_by_ranks(groups: list[dict]) -> dict[tuple, list[str]]:
    out: dict[tuple, list[str]] = {}
    for g in groups:
        out.setdefault(tuple(sorted(g["ranks"])), []).append(g["name"])
    return {k: sorted(set(v)) for k, v in out.items()}


_CHAIN_COLS = {
    "group": "HCCL group hash (comm_ops.group)",
    "names": "the declared groups with exactly these ranks (all of them where several share the ranks)",
    "step": "step",
    "name": "the collective (its op name, the same on every rank)",
    "type": "op type",
    "n_ranks": "ranks that report the op",
    "last_rank": "the rank that waited least: it arrived last and the others waited for it",
    "last_wait_us": "its own wait",
    "max_wait_rank": "the rank that waited longest",
    "max_wait_us": "its wait",
    "waited_for_us": "mean over the other ranks of (their wait - last_rank's wait)",
    "chain": "who waited how long for last_rank, in words",
}


@analysis(
    "wait_chain",
    title="Who waits for whom",
    chart=Chart("bar", "name", ("waited_for_us",), title="Mean wait of the others for the last rank (us)"),
    columns=_CHAIN_COLS,
)
def wait_chain(profile) -> pd.DataFrame:
    """Per collective (group, step, op) reported by at least two ranks: the rank the others waited
    for (the one that waited least: it came last), how long each other rank waited for it, and the
    longest waiter.  From the vendor's per-op wait times (``comm_ops.wait_ns``), so clock offsets
    between ranks do not matter."""
    return memo(profile, "_wait_chain", _wait_chain).copy()  # parallel_groups starts from it too


def _wait_chain(profile) -> pd.DataFrame:
    c = _ops(profile)
    if c.empty or "wait_ns" not in c or c["wait_ns"].isna().all():
        return pd.DataFrame(columns=list(_CHAIN_COLS))
    _, groups = layout(profile)
    names = _names_by_ranks(groups)
    c = c[c["wait_ns"].notna()].copy()
    c["wait_us"] = c["wait_ns"].astype("float64") / 1e3
    c["step"] = c["step"].astype("Int64")
    keys = ["group", "step", "name"]
    g = c.groupby(keys, dropna=False)
    n = g["rank"].nunique().rename("n_ranks")
    c = c.join(n, on=keys)
    c = c[c["n_ranks"] >= 2]
    if c.empty:
        return pd.DataFrame(columns=list(_CHAIN_COLS))
    c = c.sort_values([*keys, "wait_us", "rank"], kind="stable")
    first = c.groupby(keys, dropna=False, sort=False).head(1).set_index(keys)
    longest = c.groupby(keys, dropna=False, sort=False).tail(1).set_index(keys)
    c = c.join(first[["rank", "wait_us"]].rename(columns={"rank": "last_rank", "wait_us": "last_wait_us"}), on=keys)
    others = c[c["rank"] != c["last_rank"]].copy()
    others["for_us"] = others["wait_us"] - others["last_wait_us"]
    others["part"] = others["rank"].astype(str) + " " + others["for_us"].map("{:,.1f} us".format)
    og = others.groupby(keys, dropna=False, sort=False)
    out = first[["type", "n_ranks", "rank", "wait_us"]].rename(columns={"rank": "last_rank", "wait_us": "last_wait_us"})
    out["max_wait_rank"] = longest["rank"]
    out["max_wait_us"] = longest["wait_us"]
    out["waited_for_us"] = og["for_us"].mean()
    out["chain"] = og["part"].agg("; ".join) + " waited for rank " + out["last_rank"].astype(str)
    out.loc[out["max_wait_us"] <= out["last_wait_us"], "chain"] = "no rank waited longer than another"
    out = out.reset_index()
    out["names"] = [", ".join(names.get(tuple(sorted(r)), [])) for r in _group_ranks(c, out["group"])]
    out = out.sort_values(["step", "group", "name"], kind="stable").reset_index(drop=True)
    out["last_rank"] = out["last_rank"].astype(int)
    out["max_wait_rank"] = out["max_wait_rank"].astype(int)
    return out[list(_CHAIN_COLS)]


def _group_ranks(c: pd.DataFrame, groups: pd.Series) -> list[tuple]:
    by = c.groupby("group")["rank"].agg(lambda v: tuple(sorted(set(int(x) for x in v))))
    return [by.get(g, ()) for g in groups]


_GROUP_COLS = {
    "group": "HCCL group hash (comm_ops.group)",
    "ranks": "the ranks that report ops of the hash",
    "n_ranks": "how many",
    "names": "the declared groups (profiler_metadata.json parallel_group_info) with exactly these ranks; "
    "all of them where several share the ranks, empty where none does",
    "dimensions": "the parallel dimension of each name",
    "op_types": "op types of the group",
    "n_ops": "ops per rank (mean over its ranks)",
    "bytes": "bytes per rank (mean over its ranks)",
    "comm_us": "time in the group's ops per rank and step (mean)",
    "wait_us": "wait in the group's ops per rank and step (mean)",
    "slow_rank": "the rank the others waited for longest in the group's collectives (wait_chain), where "
    "that wait is at least min_share of the group's median step; empty otherwise",
    "waited_for_us": "per step, the others' mean wait for slow_rank (or for the rank they waited for most)",
    "waited_for_share_of_step_ratio": "waited_for_us / the median step of the group's ranks",
    "computing_spread_us": "max - min over the group's ranks of computing per step (data-parallel imbalance "
    "for a dp group)",
    "max_computing_rank": "the rank with the most computing",
    "imbalance_share_of_step_ratio": "(max - mean) computing over the group's ranks / their mean step",
    "evidence": "the finding in words",
}


@analysis(
    "parallel_groups",
    title="Parallel groups",
    params=(
        Param("min_share", float, 0.02, help="name a slow rank when the others wait this share of the step"),
        Param("lang", str, "en", ("en", "zh"), "language of the evidence sentence (the figures are the same)"),
    ),
    chart=Chart("bar", "group", ("waited_for_us",), title="Wait for the slowest rank of the group per step (us)"),
    columns=_GROUP_COLS,
)
def parallel_groups(profile, min_share: float = 0.02, lang: str = "en") -> pd.DataFrame:
    """One row per HCCL communication group: its ranks, the declared parallel groups it is (by its
    ranks; all names where several groups share them, never a guess), its traffic, the rank its
    peers wait for (the slow rank of the group, from ``wait_chain``) and the computing imbalance
    over its ranks (data-parallel imbalance for a ``dp`` group).  ``lang`` words the evidence."""
    c = _ops(profile)
    if c.empty:
        return pd.DataFrame(columns=list(_GROUP_COLS))
    _, groups = layout(profile)
    names = _names_by_ranks(groups)
    b = step_figures(profile)
    b = b[b["step"].notna()] if b["step"].notna().any() else b
    step_of = pd.to_numeric(b.groupby("rank")["step_us"].mean(), errors="coerce").astype("float64")
    n_steps = max(int(b["step"].nunique()), 1) if b["step"].notna().any() else 1
    summ = rank_summary(profile).set_index("rank")
    chain = wait_chain(profile)
    rows = []
    for gid, part in c.groupby("group", sort=False):
        ranks = tuple(sorted(int(r) for r in part["rank"].unique()))
        nm = names.get(ranks, [])
        per_rank = part.groupby("rank")
        row = {
            "group": gid,
            "ranks": _ranks_text(ranks),
            "n_ranks": len(ranks),
            "names": ", ".join(nm),
            "dimensions": ", ".join(DIMENSIONS.get(n, n) for n in nm),
            "op_types": ", ".join(sorted({str(t) for t in part["type"].dropna()})),
            "n_ops": float(per_rank.size().mean()),
            "bytes": float(per_rank["bytes"].sum().mean()) if "bytes" in part else float("nan"),
            "comm_us": float(per_rank["dur_ns"].sum().mean()) / 1e3 / n_steps,
            "wait_us": float(per_rank["wait_ns"].sum().mean()) / 1e3 / n_steps if "wait_ns" in part else float("nan"),
        }
        row.update(_slow_in_group(chain[chain["group"] == gid], ranks, step_of, n_steps, min_share))
        row.update(_imbalance(summ, ranks))
        row["evidence"] = evidence.group(row, lang)
        rows.append(row)
    out = pd.DataFrame(rows, columns=list(_GROUP_COLS))
    for col in ("slow_rank", "max_computing_rank"):
        out[col] = pd.array([None if v is None or v != v else int(v) for v in out[col]], dtype="Int64")
    return out.sort_values(["n_ranks", "ranks", "group"], kind="stable").reset_index(drop=True)


def _slow_in_group(ch: pd.DataFrame, ranks, step_of: pd.Series, n_steps: int, min_share: float) -> dict:
    med_step = float(step_of.reindex(list(ranks)).median()) if len(ranks) else float("nan")
    if ch.empty:
        return {"slow_rank": None, "waited_for_us": float("nan"), "waited_for_share_of_step_ratio": float("nan")}
    by_last = ch.groupby("last_rank")["waited_for_us"].sum() / n_steps
    top = int(by_last.idxmax())
    wait = float(by_last.max())
    share = wait / med_step if med_step and med_step == med_step else float("nan")
    return {
        "slow_rank": top if share == share and share >= min_share else None,
        "waited_for_us": wait,
        "waited_for_share_of_step_ratio": share,
    }


def _imbalance(summ: pd.DataFrame, ranks) -> dict:
    s = summ.reindex(list(ranks))
    comp = pd.to_numeric(s["computing_us"], errors="coerce").dropna() if "computing_us" in s else pd.Series()
    if len(comp) < 2:
        return {"computing_spread_us": float("nan"), "max_computing_rank": None, "imbalance_share_of_step_ratio": None}
    mean_step = float(s["step_us"].mean())
    return {
        "computing_spread_us": float(comp.max() - comp.min()),
        "max_computing_rank": int(comp.idxmax()),
        "imbalance_share_of_step_ratio": float((comp.max() - comp.mean()) / mean_step) if mean_step else None,
    }


_BUBBLE_COLS = {
    "stage": "pipeline stage (the rank's position in its pp group, as parallel_group_info lists it)",
    "ranks": "the ranks of the stage",
    "bubble_us": "mean over the stage's ranks of the per-step bubble (step_breakdown.bubble_us: pipeline "
    "receive time, the vendor's Bubble)",
    "max_bubble_us": "the largest per-step bubble of a rank of the stage",
    "max_bubble_rank": "that rank",
    "step_us": "mean step of the stage's ranks",
    "bubble_share_of_step_ratio": "bubble_us / (step_us + bubble_us): the share of the stage's span spent "
    "waiting to receive",
    "source": "where the figures come from: tasks or vendor_summary (step_breakdown.source)",
}


@analysis(
    "pipeline_bubbles",
    title="Pipeline bubble per stage",
    chart=Chart("bar", "stage", ("bubble_us",), title="Bubble per stage (us, mean per step)"),
    columns=_BUBBLE_COLS,
)
def pipeline_bubbles(profile) -> pd.DataFrame:
    """Per pipeline stage (from the ``pp`` groups of ``parallel_group_info``): the bubble -- the
    time spent in pipeline receive ops, which the vendor takes out of the step as ``Bubble`` -- per
    step, mean and max over the stage's ranks, and its share of the stage's span.  Empty where the
    profile records no ``pp`` group of two or more ranks."""
    _, groups = layout(profile)
    stage_of: dict[int, int] = {}
    for g in groups:
        if g["name"] == "pp" and len(g["ranks"]) >= 2:
            for i, r in enumerate(g["ranks"]):
                stage_of.setdefault(int(r), i)
    b = step_figures(profile)
    b = b[b["step"].notna() & b["rank"].isin(list(stage_of))]
    if b.empty:
        return pd.DataFrame(columns=list(_BUBBLE_COLS))
    per_rank = b.groupby("rank").agg(
        bubble_us=("bubble_us", "mean"),
        step_us=("step_us", "mean"),
        source=("source", lambda v: ", ".join(sorted(set(map(str, v))))),
    )
    per_rank["stage"] = [stage_of[int(r)] for r in per_rank.index]
    rows = []
    for stage, part in per_rank.groupby("stage"):
        bub = part["bubble_us"].fillna(0.0)
        mean_bubble, mean_step = float(bub.mean()), float(part["step_us"].mean())
        rows.append(
            {
                "stage": int(stage),
                "ranks": _ranks_text(sorted(part.index)),
                "bubble_us": mean_bubble,
                "max_bubble_us": float(bub.max()),
                "max_bubble_rank": int(bub.idxmax()),
                "step_us": mean_step,
                "bubble_share_of_step_ratio": mean_bubble / (mean_step + mean_bubble) if mean_step else None,
                "source": ", ".join(sorted(set(", ".join(part["source"]).split(", ")))),
            }
        )
    return pd.DataFrame(rows, columns=list(_BUBBLE_COLS))


def parallel_layout(profile) -> pd.DataFrame:
    """The declared layout: one row per declared group (name, dimension, ranks, ids) with the HCCL
    group hashes whose ranks are exactly its ranks (``hashes``; empty where none of its ops was
    recorded).  Not registered: the Ranks surfaces show it beside ``parallel_groups``."""
    _, groups = layout(profile)
    c = _ops(profile)
    by_ranks: dict[tuple, list[str]] = {}
    for gid, part in c.groupby("group", sort=False):
        by_ranks.setdefault(tuple(sorted(int(r) for r in part["rank"].unique())), []).append(str(gid))
    rows = [
        {
            "name": g["name"],
            "dimension": DIMENSIONS.get(g["name"], g["name"]),
            "ranks": _ranks_text(g["ranks"]),
            "ids": ", ".join(g["ids"]),
            "hashes": ", ".join(sorted(by_ranks.get(tuple(sorted(g["ranks"])), []))),
        }
        for g in groups
    ]
    return pd.DataFrame(rows, columns=["name", "dimension", "ranks", "ids", "hashes"])
