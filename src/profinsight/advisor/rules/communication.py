"""Communication: overlap with compute, link bandwidth, packet size, slow ranks and links.

See :mod:`profinsight.advisor.rules.base` for how a rule is declared; the conditions are
documented in docs/advisor.md."""

from __future__ import annotations

import math

import pandas as pd

from .base import Context, Hit, by_share, col_sum, num, r3, rule


# --- communication ---------------------------------------------------------------------------
@rule(
    "communication_overlap",
    severity="high",
    category="communication",
    thresholds={"min_share_of_step": 0.10, "wait_dominant_ratio": 0.5, "high_share_of_step": 0.30},
    reads=(("step_breakdown", {}),),
)
def communication_overlap(ctx: Context, th: dict):
    """Communication that compute does not hide takes a large share of the step.  States how the
    collectives spend their time (transit / wait / idle); when they mostly wait, the cause is a
    slower peer.  Recoverable: at most the compute not yet overlapped (better overlap can hide
    communication only behind compute that exists)."""
    sb = ctx.steps
    if not len(sb):
        return None
    nov = col_sum(sb, "comm_not_overlapped_us")
    share = nov / max(col_sum(sb, "step_us"), 1e-9)
    if share < th["min_share_of_step"]:
        return None
    computing, overlapped = col_sum(sb, "computing_us"), col_sum(sb, "overlapped_us")
    recoverable = ctx.per_step(min(nov, max(computing - overlapped, 0.0)))
    cs = ctx.view("comm_summary")
    elapse = col_sum(cs, "elapse_us")
    transit, wait, idle = col_sum(cs, "transit_us"), col_sum(cs, "wait_us"), col_sum(cs, "idle_us")
    has_split = (
        len(cs) and "transit_us" in cs.columns and pd.to_numeric(cs["transit_us"], errors="coerce").notna().any()
    )
    loaded = [int(r) for r in ctx.profile.ranks]
    peers: set[int] = set()
    links = ctx.table("comm_links")
    for c in ("src_rank", "dst_rank"):
        if c in links.columns:
            peers |= {int(v) for v in links[c].dropna().unique()}
    missing = sorted(peers - set(loaded))
    evidence = {
        "per_rank_step": [
            {
                "rank": int(r["rank"]),
                "step": None if pd.isna(r["step"]) else int(r["step"]),
                "step_us": r3(r["step_us"]),
                "computing_us": r3(r["computing_us"]),
                "comm_us": r3(r["comm_us"]),
                "overlapped_us": r3(r["overlapped_us"]),
                "comm_not_overlapped_us": r3(r["comm_not_overlapped_us"]),
            }
            for _, r in sb.iterrows()
        ],
        "loaded_ranks": loaded,
        "peer_ranks_not_loaded": missing,
    }
    values = {
        "share": share,
        "nov_ms": ctx.per_step(nov) / 1e3,
        "step_ms": ctx.step_us / 1e3,
        "bound_ms": recoverable / 1e3,
        "loaded": ", ".join(map(str, loaded)),
        "missing": ", ".join(map(str, missing)) or "-",
        "n_missing": len(missing),
    }
    variant = None
    if has_split and elapse > 0:
        per_rank = []
        for _, r in cs.iterrows():
            per_rank.append(
                {
                    "rank": int(r["rank"]),
                    "type": str(r["type"]),
                    "count": int(num(r["count"])),
                    "elapse_us": r3(r["elapse_us"]),
                    "transit_us": r3(r["transit_us"]),
                    "wait_us": r3(r["wait_us"]),
                    "sync_us": r3(r["sync_us"]),
                    "idle_us": r3(r["idle_us"]),
                    "wait_ratio": round(num(r["wait_ratio"]), 6),
                }
            )
        evidence["split"] = {
            "elapse_us": r3(elapse),
            "transit_us": r3(transit),
            "wait_us": r3(wait),
            "idle_us": r3(idle),
            "transit_ratio": round(transit / elapse, 6),
            "wait_ratio": round(wait / elapse, 6),
            "idle_ratio": round(idle / elapse, 6),
            "per_rank": per_rank,
        }
        values.update(
            transit_ms=ctx.per_step(transit) / 1e3,
            wait_ms=ctx.per_step(wait) / 1e3,
            idle_ms=ctx.per_step(idle) / 1e3,
            transit_share=transit / elapse,
            wait_share=wait / elapse,
            idle_share=idle / elapse,
        )
        waiting = (wait + idle) / elapse
        variant = "waiting" if waiting >= th["wait_dominant_ratio"] else "transit"
        if variant == "waiting":
            variant = "waiting_missing" if missing else "waiting"
    sev = "high" if share >= th["high_share_of_step"] else "medium"
    return Hit(values, evidence, recoverable, variant, sev)


# --- communication: bandwidth, packet size, slow ranks and links ---------------------------------
#: nominal per-link bandwidth (decimal GB/s) assumed for Ascend 910B: HCCS ~30 GB/s per link
#: (the vendor quotes 56 GB/s bidirectional per HCCS link; 30 is a conservative unidirectional
#: figure), RDMA 200 Gb/s RoCE = 25 GB/s, PCIe 4.0 x16 ~ 25 GB/s.  Override for other chips.
NOMINAL_LINKS = ("hccs", "rdma", "pcie")


def _comm_ops(ctx: Context) -> pd.DataFrame:
    c = ctx.table("comm_ops")
    if not len(c):
        return c
    return c[c["step"].notna()] if "step" in c.columns and c["step"].notna().any() else c


def _nov_per_step(ctx: Context) -> float:
    return ctx.per_step(col_sum(ctx.steps, "comm_not_overlapped_us"))


@rule(
    "collective_bandwidth",
    severity="medium",
    category="communication",
    ascend_only=True,
    thresholds={
        "hccs_nominal_gbps": 30.0,
        "rdma_nominal_gbps": 25.0,
        "pcie_nominal_gbps": 25.0,
        "min_bandwidth_ratio": 0.3,
        "min_op_bytes": 1_000_000,
    },
)
def collective_bandwidth(ctx: Context, th: dict):
    """Collectives move their data over a link type (HCCS / RDMA / PCIe) at far below the link's
    nominal bandwidth: Σ bytes / Σ transit time of the ops with at least ``min_op_bytes`` on that
    link (small ops never reach the peak: that is ``collective_small_packets``) below
    ``min_bandwidth_ratio`` × ``<link>_nominal_gbps``.  Recoverable: the transit time above what the
    nominal bandwidth needs (Σ transit − bytes / nominal), at most the communication not overlapped."""
    c = _comm_ops(ctx)
    if not len(c):
        return None
    links, excess_ns = [], 0.0
    for t in NOMINAL_LINKS:
        b, tr = f"{t}_bytes", f"{t}_transit_ns"
        if b not in c.columns or tr not in c.columns:
            continue
        part = c[
            (pd.to_numeric(c[b], errors="coerce").fillna(0) >= th["min_op_bytes"])
            & (pd.to_numeric(c[tr], errors="coerce").fillna(0) > 0)
        ]
        if not len(part):
            continue
        nbytes, transit = col_sum(part, b), col_sum(part, tr)
        gbps = nbytes / transit
        nominal = float(th[f"{t}_nominal_gbps"])
        if gbps >= th["min_bandwidth_ratio"] * nominal:
            continue
        excess_ns += max(transit - nbytes / nominal, 0.0)
        links.append(
            {
                "link": t.upper(),
                "ops": int(len(part)),
                "bytes": int(nbytes),
                "transit_us": r3(transit / 1e3),
                "bandwidth_gbps": round(gbps, 3),
                "nominal_gbps": nominal,
                "ratio": round(gbps / nominal, 6),
            }
        )
    if not links:
        return None
    worst = min(links, key=lambda x: x["ratio"])
    recoverable = min(ctx.per_step(excess_ns / 1e3), _nov_per_step(ctx))
    values = {
        "link": worst["link"],
        "gbps": worst["bandwidth_gbps"],
        "nominal": worst["nominal_gbps"],
        "ratio": worst["ratio"],
        "ops": worst["ops"],
        "ms": recoverable / 1e3,
    }
    sev = by_share(recoverable / max(ctx.step_us, 1e-9), 0.2, 0.05)
    return Hit(
        values,
        {"links": links, "nominal_gbps": {t: th[f"{t}_nominal_gbps"] for t in NOMINAL_LINKS}},
        recoverable,
        None,
        sev,
    )


@rule(
    "collective_small_packets",
    severity="medium",
    category="communication",
    thresholds={
        "small_bytes": 1_048_576,
        "min_ops_per_step": 20,
        "min_small_ratio": 0.5,
        "bucket_bytes": 25 * 1_048_576,
    },
)
def collective_small_packets(ctx: Context, th: dict):
    """Many collectives per step each move little data (< ``small_bytes``): every op pays the fixed
    latency of a collective.  Fires when at least ``min_ops_per_step`` ops per step and a share
    ``min_small_ratio`` of them are small.  Recoverable: fusing the small ops into buckets of
    ``bucket_bytes`` removes all but ceil(bytes / bucket) of them, each saving the median small op's
    transit (elapse where no transit is recorded), at most the communication not overlapped."""
    c = _comm_ops(ctx)
    if not len(c) or "bytes" not in c.columns:
        return None
    size = pd.to_numeric(c["bytes"], errors="coerce")
    c = c[size.notna() & (size > 0)]
    if not len(c):
        return None
    size = pd.to_numeric(c["bytes"], errors="coerce")
    small = c[size < th["small_bytes"]]
    per_step = len(c) / ctx.n_steps
    ratio = len(small) / len(c)
    if per_step < th["min_ops_per_step"] or ratio < th["min_small_ratio"]:
        return None
    has_transit = "transit_ns" in small.columns and pd.to_numeric(small["transit_ns"], errors="coerce").notna().any()
    cost = pd.to_numeric(small["transit_ns" if has_transit else "dur_ns"], errors="coerce").dropna()
    median_us = float(cost.median()) / 1e3 if len(cost) else 0.0
    small_bytes = col_sum(small, "bytes")
    kept = math.ceil(small_bytes / float(th["bucket_bytes"]) / ctx.n_steps) if small_bytes > 0 else 0
    n_small = len(small) / ctx.n_steps
    recoverable = min(max(n_small - kept, 0) * median_us, _nov_per_step(ctx))
    types = small["type"].astype(str).value_counts().head(5) if "type" in small.columns else pd.Series(dtype=int)
    values = {
        "n_small": round(n_small),
        "n": round(per_step),
        "ratio": ratio,
        "kb": small_bytes / max(len(small), 1) / 1024,
        "median_us": median_us,
        "ms": recoverable / 1e3,
        "types": ", ".join(types.index) or "-",
    }
    evidence = {
        "ops_per_step": round(per_step, 3),
        "small_ops_per_step": round(n_small, 3),
        "small_ratio": round(ratio, 6),
        "small_bytes_total": int(small_bytes),
        "median_small_op_us": r3(median_us),
        "cost_column": "transit_ns" if has_transit else "dur_ns",
        "types": {k: int(v) for k, v in types.items()},
    }
    return Hit(values, evidence, recoverable, None, by_share(recoverable / max(ctx.step_us, 1e-9), 0.2, 0.05))


@rule("slow_rank", severity="high", category="communication", thresholds={"threshold": 3.0, "min_share": 0.02})
def slow_rank(ctx: Context, th: dict):
    """With several ranks loaded, a rank whose computing / free / preparing time per step is far
    above the median over ranks (the ``slow_ranks`` analysis: ``threshold`` robust
    deviations and ``min_share`` of the median step).  Its peers wait for it in the collectives.
    Recoverable: its largest deviation per step (the others' wait).  Silent with fewer than three
    ranks (no median to compare with)."""
    if len(ctx.profile.ranks) < 3:
        return None
    sr = ctx.view("slow_ranks", threshold=float(th["threshold"]), min_share=float(th["min_share"]))
    if not len(sr):
        return None
    top = sr.iloc[0]
    rows = [
        {
            "rank": int(r["rank"]),
            "component": str(r["component"]),
            "value_us": r3(r["value_us"]),
            "median_us": r3(r["median_us"]),
            "deviation_us": r3(r["deviation_us"]),
            "mads": round(num(r["mads"]), 3),
            "deviation_share_of_step_ratio": round(num(r["deviation_share_of_step_ratio"]), 6),
            "steps": str(r["steps"]),
            "comm_wait_vs_median_us": r3(r["comm_wait_vs_median_us"]),
            "evidence": str(r["evidence"]),
        }
        for _, r in sr.iterrows()
    ]
    recoverable = num(top["deviation_us"])
    values = {
        "rank": int(top["rank"]),
        # the glossary's word for the component (compute, device idle, host-side preparing) in
        # the report's language, not the column name
        "component": {"$t": f"ranks.component.{top['component']}"},
        "dev_ms": recoverable / 1e3,
        "median_ms": num(top["median_us"]) / 1e3,
        "value_ms": num(top["value_us"]) / 1e3,
        "wait_ms": abs(num(top["comm_wait_vs_median_us"])) / 1e3,
        "ranks": ", ".join(str(r) for r in dict.fromkeys(int(x) for x in sr["rank"])),
    }
    held = _groups_held_back(ctx, int(top["rank"]), 0.0)
    if held:
        values.update(held[0]["values"])
    return Hit(
        values,
        {"slow_ranks": rows, "loaded_ranks": [int(r) for r in ctx.profile.ranks], "groups": [h["row"] for h in held]},
        recoverable,
        "group" if held else None,
        by_share(recoverable / max(ctx.step_us, 1e-9), 0.05, 0.02),
    )


def _groups_held_back(ctx: Context, rank: int | None, min_share: float) -> list[dict]:
    """The parallel groups (``parallel_groups``) whose peers wait for ``rank`` (any rank where
    None) at least ``min_share`` of the step, longest wait first: the message values and the
    evidence row of each."""
    g = ctx.view("parallel_groups")
    if not len(g):
        return []
    g = g[g["slow_rank"].notna()]
    if rank is not None:
        g = g[g["slow_rank"].astype(int) == rank]
    g = g[pd.to_numeric(g["waited_for_share_of_step_ratio"], errors="coerce") >= min_share]
    out = []
    for _, r in g.sort_values("waited_for_us", ascending=False, kind="stable").iterrows():
        row = {
            "group": str(r["group"]),
            "names": str(r["names"]),
            "ranks": str(r["ranks"]),
            "slow_rank": int(r["slow_rank"]),
            "waited_for_us": r3(r["waited_for_us"]),
            "waited_for_share_of_step_ratio": round(num(r["waited_for_share_of_step_ratio"]), 6),
            # the figures of the group's compute spread, so the evidence can be worded again in
            # the report's language (advisor.worded)
            "max_computing_rank": None if pd.isna(r["max_computing_rank"]) else int(r["max_computing_rank"]),
            "computing_spread_us": r3(r["computing_spread_us"]),
            "imbalance_share_of_step_ratio": round(num(r["imbalance_share_of_step_ratio"]), 6),
            "evidence": str(r["evidence"]),
        }
        values = {
            "group": row["group"],
            "group_names": row["names"] or "-",
            "group_ranks": row["ranks"],
            "group_wait_ms": num(r["waited_for_us"]) / 1e3,
        }
        out.append({"row": row, "values": values})
    return out


@rule("group_slow_rank", severity="high", category="communication", thresholds={"min_share": 0.05})
def group_slow_rank(ctx: Context, th: dict):
    """With several ranks loaded, a rank its peers of one parallel group (an HCCL group, named by
    the declared groups of profiler_metadata.json with its ranks) wait for at least ``min_share``
    of the step per step in the group's collectives (``parallel_groups``: the rank that waits
    least in each collective arrived last).  Works with two ranks per group, where ``slow_rank``
    has no median.  Recoverable: that wait per step, at most the step."""
    if len(ctx.profile.ranks) < 2:
        return None
    held = _groups_held_back(ctx, None, float(th["min_share"]))
    if not held:
        return None
    top = held[0]
    recoverable = min(num(top["row"]["waited_for_us"]), ctx.step_us)
    values = {"rank": top["row"]["slow_rank"], "n": len(held), **top["values"]}
    values["ranks_held"] = ", ".join(dict.fromkeys(str(h["row"]["slow_rank"]) for h in held))
    return Hit(
        values,
        {"groups": [h["row"] for h in held]},
        recoverable,
        None,
        by_share(recoverable / max(ctx.step_us, 1e-9), 0.1, 0.05),
    )


@rule(
    "slow_link",
    severity="medium",
    category="communication",
    thresholds={"max_ratio_to_median": 0.5, "min_bytes": 1_000_000, "min_links": 3},
)
def slow_link(ctx: Context, th: dict):
    """With several ranks loaded, a rank-to-rank link (``comm_matrix``, summary ``total``) whose
    bandwidth is below ``max_ratio_to_median`` × the median bandwidth of the links of the same
    transport (at least ``min_links`` links of ``min_bytes`` or more).  Recoverable: its transit
    time above what the median bandwidth needs, per step, at most the communication not overlapped.
    Silent with one rank."""
    if len(ctx.profile.ranks) < 2:
        return None
    m = ctx.view("comm_matrix", summary="total")
    if not len(m):
        return None
    m = m.assign(
        bytes=pd.to_numeric(m["bytes"], errors="coerce"), transit_us=pd.to_numeric(m["transit_us"], errors="coerce")
    )
    m = m[(m["transport"].astype(str).str.upper() != "LOCAL") & (m["bytes"] >= th["min_bytes"]) & (m["transit_us"] > 0)]
    if not len(m):
        return None
    g = m.groupby(["transport", "src_rank", "dst_rank"], as_index=False)[["bytes", "transit_us"]].sum()
    g["bandwidth_gbps"] = g["bytes"] / (g["transit_us"] * 1e3)
    slow, excess_us = [], 0.0
    for transport, part in g.groupby("transport"):
        if len(part) < th["min_links"]:
            continue
        med = float(part["bandwidth_gbps"].median())
        for _, r in part[part["bandwidth_gbps"] < th["max_ratio_to_median"] * med].iterrows():
            ex = max(float(r["transit_us"]) - float(r["bytes"]) / (med * 1e3), 0.0)
            excess_us += ex
            slow.append(
                {
                    "transport": str(transport),
                    "src_rank": int(r["src_rank"]),
                    "dst_rank": int(r["dst_rank"]),
                    "bytes": int(r["bytes"]),
                    "transit_us": r3(r["transit_us"]),
                    "bandwidth_gbps": round(float(r["bandwidth_gbps"]), 3),
                    "median_gbps": round(med, 3),
                    "ratio_to_median": round(float(r["bandwidth_gbps"]) / med, 6),
                    "excess_us": r3(ex),
                }
            )
    if not slow:
        return None
    slow.sort(key=lambda x: x["ratio_to_median"])
    w = slow[0]
    recoverable = min(ctx.per_step(excess_us), _nov_per_step(ctx))
    values = {
        "src": w["src_rank"],
        "dst": w["dst_rank"],
        "transport": w["transport"],
        "gbps": w["bandwidth_gbps"],
        "median": w["median_gbps"],
        "ratio": w["ratio_to_median"],
        "n": len(slow),
        "ms": recoverable / 1e3,
    }
    return Hit(
        values, {"slow_links": slow}, recoverable, None, by_share(recoverable / max(ctx.step_us, 1e-9), 0.2, 0.05)
    )
