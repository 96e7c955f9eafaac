"""The advisor's rules: small pure functions over the analyses' tables.

Each rule is declared with :func:`rule` — an id, a severity, the bottleneck type it points at,
its thresholds (overridable as ``"<rule id>.<name>"``) and whether it needs Ascend data — and
returns ``None`` (silent) or a :class:`Hit`: the values its messages need, the evidence, the
recoverable time per step and, optionally, a message variant and a severity.  Words live in
:mod:`profinsight.i18n` under ``<rule id>.title`` / ``.message[.variant]`` /
``.change[.variant]``; rules never hold user-facing text.

Per-step figures are means over the (rank, step) rows of ``step_breakdown``: a total over all
ranks and steps divided by their number.  The conditions are documented in docs/advisor.md.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Callable

import pandas as pd

SEVERITIES = ("high", "medium", "low", "info")


@dataclass
class Hit:
    values: dict
    evidence: dict
    recoverable_us: float | None
    variant: str | None = None
    severity: str | None = None


@dataclass(frozen=True)
class Rule:
    id: str
    func: Callable
    severity: str
    category: str
    thresholds: dict = field(default_factory=dict)
    ascend_only: bool = False


RULES: dict[str, Rule] = {}


def rule(id: str, *, severity: str, category: str, thresholds: dict | None = None, ascend_only: bool = False):
    def deco(func):
        RULES[id] = Rule(id, func, severity, category, dict(thresholds or {}), ascend_only)
        return func
    return deco


# --- helpers --------------------------------------------------------------------------------
def num(v, default: float = 0.0) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return default
    return default if math.isnan(f) else f


def col_sum(df: pd.DataFrame, col: str) -> float:
    if df is None or not len(df) or col not in df.columns:
        return 0.0
    return float(pd.to_numeric(df[col], errors="coerce").fillna(0).sum())


def by_share(share: float, high: float, medium: float) -> str:
    return "high" if share >= high else "medium" if share >= medium else "low"


def r3(v) -> float:
    return round(num(v), 3)


#: tables whose declared columns are always present (schema.conform), so no need to read the
#: table to learn its columns
_BIG = ("device_tasks", "host_ops", "api_calls", "trace_slices", "memory_blocks")


class Context:
    """What the rules read: the profile's analyses, computed once each (never the files)."""

    def __init__(self, profile):
        self.profile = profile
        self._cache: dict = {}

    def view(self, name: str, **params) -> pd.DataFrame:
        key = (name, tuple(sorted(params.items())))
        if key not in self._cache:
            self._cache[key] = pd.DataFrame(self.profile.view(name, **params))
        return self._cache[key]

    def table(self, name: str, columns: tuple[str, ...] | None = None, where: str | None = None) -> pd.DataFrame:
        """A canonical table, only ``columns`` (and rows matching the SQL ``where``) when given:
        DuckDB then reads just those Parquet columns (host_ops' call stacks alone are hundreds
        of MB on a GB-scale profile) and filters before anything reaches pandas."""
        key = ("table", name, columns, where)
        if key not in self._cache:
            if columns:
                from ..analyses._sql import query
                present = set(self.profile.arrow(name).schema.names) if name not in _BIG else None
                cols = [c for c in columns if present is None or c in present]
                cond = f" WHERE {where}" if where else ""
                self._cache[key] = query(self.profile, f"SELECT {', '.join(cols)} FROM {name}{cond}")
            else:
                self._cache[key] = self.profile.table(name)
        return self._cache[key]

    @property
    def is_ascend(self) -> bool:
        return str(self.profile.format).startswith("ascend")

    @property
    def steps(self) -> pd.DataFrame:
        sb = self.view("step_breakdown")
        return sb[pd.to_numeric(sb["step_us"], errors="coerce").fillna(0) > 0] if len(sb) else sb

    @property
    def n_steps(self) -> int:
        return max(len(self.steps), 1)

    @property
    def step_us(self) -> float:
        """Mean device step (us) over the (rank, step) rows."""
        return col_sum(self.steps, "step_us") / self.n_steps

    def per_step(self, total: float) -> float:
        return total / self.n_steps

    def env(self) -> dict:
        out = {}
        ri = self.table("run_info")
        for _, r in ri.iterrows():
            try:
                env = json.loads(r.get("env") or "{}")
            except (TypeError, ValueError):
                env = {}
            for k, v in (env or {}).items():
                if v not in (None, ""):
                    out.setdefault(k, {})[int(r["rank"])] = str(v)
        return out


# --- communication ---------------------------------------------------------------------------
@rule("communication_overlap", severity="high", category="communication",
      thresholds={"min_share_of_step": 0.10, "wait_dominant_ratio": 0.5, "high_share_of_step": 0.30})
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
    has_split = len(cs) and "transit_us" in cs.columns and pd.to_numeric(cs["transit_us"], errors="coerce").notna().any()
    loaded = [int(r) for r in ctx.profile.ranks]
    peers: set[int] = set()
    links = ctx.table("comm_links")
    for c in ("src_rank", "dst_rank"):
        if c in links.columns:
            peers |= {int(v) for v in links[c].dropna().unique()}
    missing = sorted(peers - set(loaded))
    evidence = {
        "per_rank_step": [
            {"rank": int(r["rank"]), "step": None if pd.isna(r["step"]) else int(r["step"]),
             "step_us": r3(r["step_us"]), "computing_us": r3(r["computing_us"]),
             "comm_us": r3(r["comm_us"]), "overlapped_us": r3(r["overlapped_us"]),
             "comm_not_overlapped_us": r3(r["comm_not_overlapped_us"])} for _, r in sb.iterrows()],
        "loaded_ranks": loaded, "peer_ranks_not_loaded": missing,
    }
    values = {"share": share, "nov_ms": ctx.per_step(nov) / 1e3, "step_ms": ctx.step_us / 1e3,
              "bound_ms": recoverable / 1e3, "loaded": ", ".join(map(str, loaded)),
              "missing": ", ".join(map(str, missing)) or "-", "n_missing": len(missing)}
    variant = None
    if has_split and elapse > 0:
        per_rank = []
        for _, r in cs.iterrows():
            per_rank.append({"rank": int(r["rank"]), "type": str(r["type"]), "count": int(num(r["count"])),
                             "elapse_us": r3(r["elapse_us"]), "transit_us": r3(r["transit_us"]),
                             "wait_us": r3(r["wait_us"]), "sync_us": r3(r["sync_us"]), "idle_us": r3(r["idle_us"]),
                             "wait_ratio": round(num(r["wait_ratio"]), 6)})
        evidence["split"] = {"elapse_us": r3(elapse), "transit_us": r3(transit), "wait_us": r3(wait),
                             "idle_us": r3(idle), "transit_ratio": round(transit / elapse, 6),
                             "wait_ratio": round(wait / elapse, 6), "idle_ratio": round(idle / elapse, 6),
                             "per_rank": per_rank}
        values.update(transit_ms=ctx.per_step(transit) / 1e3, wait_ms=ctx.per_step(wait) / 1e3,
                      idle_ms=ctx.per_step(idle) / 1e3, transit_share=transit / elapse,
                      wait_share=wait / elapse, idle_share=idle / elapse)
        waiting = (wait + idle) / elapse
        variant = "waiting" if waiting >= th["wait_dominant_ratio"] else "transit"
        if variant == "waiting":
            variant = "waiting_missing" if missing else "waiting"
    sev = "high" if share >= th["high_share_of_step"] else "medium"
    return Hit(values, evidence, recoverable, variant, sev)


# --- compute ---------------------------------------------------------------------------------
@rule("format_conversion", severity="medium", category="compute",
      thresholds={"min_share_of_compute": 0.05}, ascend_only=True)
def format_conversion(ctx: Context, th: dict):
    """Layout-conversion kernels (TransData, TransposeD, Cast-for-format ...) take a notable share
    of compute.  Recoverable: their device time (removing a conversion removes its kernel)."""
    fc = ctx.view("format_conversions")
    if not len(fc):
        return None
    share_c = col_sum(fc, "share_of_compute_ratio")
    ranks = max(len(ctx.profile.ranks), 1)
    if share_c < th["min_share_of_compute"]:
        return None
    total = col_sum(fc, "total_us")
    by_type = {}
    for typ, g in fc.groupby("type", sort=False):
        by_type[str(typ)] = {"count": int(col_sum(g, "count")), "total_us": r3(col_sum(g, "total_us")),
                             "share_of_compute_ratio": round(col_sum(g, "share_of_compute_ratio"), 6),
                             "share_of_step_ratio": round(col_sum(g, "share_of_step_ratio"), 6)}
    top_type = max(by_type, key=lambda k: by_type[k]["total_us"])
    rows = [{k: (r3(v) if isinstance(v, float) else (None if pd.isna(v) else (int(v) if k == "count" else str(v))))
             for k, v in r.items() if k in ("type", "input_formats", "output_formats", "count", "total_us", "host_op")}
            for _, r in fc.head(5).iterrows()]
    host_ops = sorted({str(h) for h in fc["host_op"].dropna()} if "host_op" in fc.columns else set())[:8]
    recoverable = ctx.per_step(total)
    share_s = col_sum(fc, "share_of_step_ratio")
    evidence = {"by_type": by_type, "top_groups": rows, "host_ops": host_ops, "ranks": ranks,
                "share_of_compute_ratio": round(share_c, 6), "share_of_step_ratio": round(share_s, 6)}
    values = {"share_compute": share_c, "share_step": share_s, "top_type": top_type,
              "top_share": by_type[top_type]["share_of_compute_ratio"], "ms": recoverable / 1e3,
              "host_ops": ", ".join(host_ops[:4]) or "-"}
    return Hit(values, evidence, recoverable, None, by_share(share_s, 0.2, 0.05))


@rule("ai_cpu", severity="medium", category="compute", thresholds={"min_share_of_compute": 0.05},
      ascend_only=True)
def ai_cpu(ctx: Context, th: dict):
    """Operators running on the AI CPU (often int64 / double fallbacks) take a notable share of
    compute.  Recoverable: their device time (upper bound: the AI Core version is not free)."""
    dt = ctx.table("device_tasks", ("kind", "core", "dur_ns", "type", "input_dtypes"))
    k = dt[(dt["kind"] == "kernel")]
    total = float(pd.to_numeric(k["dur_ns"], errors="coerce").fillna(0).sum())
    cpu = k[k["core"].fillna("") == "AI_CPU"]
    if total <= 0 or not len(cpu):
        return None
    cpu_ns = float(pd.to_numeric(cpu["dur_ns"], errors="coerce").fillna(0).sum())
    share = cpu_ns / total
    if share < th["min_share_of_compute"]:
        return None
    g = cpu.assign(dur=pd.to_numeric(cpu["dur_ns"], errors="coerce").fillna(0)).groupby("type", dropna=False)
    ops = []
    for typ, part in sorted(g, key=lambda kv: -kv[1]["dur"].sum())[:8]:
        dtypes = sorted({str(x) for x in part["input_dtypes"].dropna()} if "input_dtypes" in part.columns else set())
        ops.append({"type": str(typ), "count": int(len(part)), "total_us": r3(part["dur"].sum() / 1e3),
                    "input_dtypes": dtypes[:4]})
    wide = sum(1 for o in ops if any(("INT64" in d.upper() or "DOUBLE" in d.upper() or "FLOAT64" in d.upper())
                                     for d in o["input_dtypes"]))
    recoverable = ctx.per_step(cpu_ns / 1e3)
    values = {"share": share, "ms": recoverable / 1e3, "ops": ", ".join(o["type"] for o in ops[:4]),
              "n_wide": wide}
    return Hit(values, {"ops": ops, "share_of_compute_ratio": round(share, 6)}, recoverable,
               "dtype" if wide else None, by_share(recoverable / max(ctx.step_us, 1e-9), 0.2, 0.05))


@rule("online_compile", severity="medium", category="data_host",
      thresholds={"min_share_of_step": 0.02}, ascend_only=True)
def online_compile(ctx: Context, th: dict):
    """Operators compiled online during the measured steps (``opCompile`` inside
    ``aclopCompileAndExecute``), often because of dynamic shapes.  Recoverable: the compile time."""
    api = ctx.table("api_calls", ("name", "dur_ns"))
    if not len(api):
        return None
    names = api["name"].fillna("")
    comp = api[names == "opCompile"]
    if not len(comp):
        comp = api[names == "aclopCompileAndExecute"]
    if not len(comp):
        return None
    comp_us = float(pd.to_numeric(comp["dur_ns"], errors="coerce").fillna(0).sum()) / 1e3
    per = ctx.per_step(comp_us)
    share = per / max(ctx.step_us, 1e-9)
    if share < th["min_share_of_step"]:
        return None
    dt = ctx.table("device_tasks", ("op_state",))
    dyn = int((dt.get("op_state", pd.Series(dtype=str)).fillna("") == "dynamic").sum())
    calls = int((names == "aclopCompileAndExecute").sum())
    values = {"ms": per / 1e3, "share": share, "calls": calls, "dynamic": dyn}
    return Hit(values, {"compile_us": r3(comp_us), "aclopCompileAndExecute_calls": calls,
                        "dynamic_kernels": dyn}, per, None, by_share(share, 0.2, 0.05))


@rule("compute_bound", severity="medium", category="compute",
      thresholds={"min_busy_ratio": 0.9, "min_compute_ratio": 0.7, "top_kernels_share": 0.5})
def compute_bound(ctx: Context, th: dict):
    """The device is busy computing almost all the step and a few kernels dominate: tune those
    kernels.  Recoverable time is not estimated (it depends on the kernel's attainable speed)."""
    u = ctx.view("utilization")
    if not len(u):
        return None
    span = col_sum(u, "span_us")
    busy, comp = col_sum(u, "busy_us") / max(span, 1e-9), col_sum(u, "computing_us") / max(span, 1e-9)
    if busy < th["min_busy_ratio"] or comp < th["min_compute_ratio"]:
        return None
    ops = ctx.view("op_summary", by="type")
    top = ops.head(5)
    top_share = col_sum(top, "share_of_compute_ratio")
    if top_share < th["top_kernels_share"]:
        return None
    kernels = [{"type": str(r["type"]), "count": int(num(r["count"])), "total_us": r3(r["total_us"]),
                "share_of_compute_ratio": round(num(r["share_of_compute_ratio"]), 6)} for _, r in top.iterrows()]
    values = {"busy": busy, "compute": comp, "top_share": top_share,
              "kernels": ", ".join(k["type"] for k in kernels[:3])}
    return Hit(values, {"busy_ratio": round(busy, 6), "compute_ratio": round(comp, 6), "top_kernels": kernels}, None)


# --- host / data ------------------------------------------------------------------------------
HOST_BOUND = ("launch", "python", "idle")


@rule("idle_gaps", severity="medium", category="data_host",
      thresholds={"min_share_of_step": 0.10, "min_gap_us": 50.0, "high_share_of_step": 0.30})
def idle_gaps(ctx: Context, th: dict):
    """The device sits idle in long gaps for a notable share of the step (low utilisation).  The
    gaps are split by what the host did: loading data (data-starved) or dispatching / Python /
    nothing (launch or host bound); synchronisation gaps are the ``stream_sync`` rule.
    Recoverable: the gap time of the dominant class."""
    g = ctx.view("idle_gaps", min_us=float(th["min_gap_us"]))
    if not len(g):
        return None
    split = {k: r3(v) for k, v in g.groupby("host_activity")["dur_us"].sum().items()}
    data = split.get("data_loading", 0.0)
    host = sum(split.get(k, 0.0) for k in HOST_BOUND)
    total = data + host
    share = ctx.per_step(total) / max(ctx.step_us, 1e-9)
    if share < th["min_share_of_step"]:
        return None
    variant = "data" if data >= host else "launch"
    recoverable = ctx.per_step(data if variant == "data" else host)
    top = [{"rank": int(r["rank"]), "step": None if pd.isna(r["step"]) else int(r["step"]),
            "start_ns": int(r["start_ns"]), "end_ns": int(r["end_ns"]), "dur_us": r3(r["dur_us"]),
            "host_activity": str(r["host_activity"]), "host_op": None if pd.isna(r["host_op"]) else str(r["host_op"]),
            "next_task": None if pd.isna(r["next_task"]) else str(r["next_task"])} for _, r in g.head(5).iterrows()]
    ops = [t["host_op"] for t in top if t["host_op"]]
    values = {"share": share, "gap_ms": ctx.per_step(total) / 1e3, "data_ms": ctx.per_step(data) / 1e3,
              "host_ms": ctx.per_step(host) / 1e3, "n": round(len(g) / ctx.n_steps), "ops": ", ".join(dict.fromkeys(ops[:3])) or "-",
              "ascend": ctx.is_ascend}
    if not ctx.is_ascend:
        variant += "_gpu"
    sev = "high" if share >= th["high_share_of_step"] else "medium"
    return Hit(values, {"split_us": split, "longest_gaps": top, "gaps": int(len(g))}, recoverable, variant, sev)


@rule("stream_sync", severity="medium", category="data_host",
      thresholds={"min_share_of_step": 0.05, "min_gap_us": 50.0})
def stream_sync(ctx: Context, th: dict):
    """The device idles while the host waits for it (``aten::item``, ``.cpu()``, stream or device
    synchronize) right after launching work.  Recoverable: those gaps."""
    g = ctx.view("idle_gaps", min_us=float(th["min_gap_us"]))
    if not len(g):
        return None
    s = g[g["host_activity"] == "synchronization"]
    per = ctx.per_step(col_sum(s, "dur_us"))
    share = per / max(ctx.step_us, 1e-9)
    if not len(s) or share < th["min_share_of_step"]:
        return None
    ops = s["host_op"].dropna().astype(str).value_counts().head(5)
    values = {"ms": per / 1e3, "share": share, "n": int(len(s)), "ops": ", ".join(ops.index)}
    return Hit(values, {"gaps": int(len(s)), "host_ops": {k: int(v) for k, v in ops.items()}}, per, None,
               by_share(share, 0.2, 0.05))


@rule("tiny_kernels", severity="medium", category="data_host",
      thresholds={"min_short_ratio": 0.5, "min_kernels": 100})
def tiny_kernels(ctx: Context, th: dict):
    """Many kernels are shorter than the host call that launches them: the device finishes work
    faster than the host issues it (dispatch bound).  Recoverable: short kernels × median launch
    time (the launches fusion or graph mode removes), at most the step's free time."""
    ls = ctx.view("launch_stats")
    if not len(ls):
        return None
    kernels, short = col_sum(ls, "kernels"), col_sum(ls, "short_kernels")
    n = max(len(ls), 1)
    if kernels / n < th["min_kernels"] or short / max(kernels, 1) < th["min_short_ratio"]:
        return None
    launch = float(pd.to_numeric(ls["median_launch_us"], errors="coerce").median())
    free = col_sum(ctx.steps, "free_us")
    recoverable = min(short * num(launch), free) / n
    values = {"short": int(short / n), "kernels": int(kernels / n), "ratio": short / max(kernels, 1),
              "launch_us": num(launch), "kernel_us": num(pd.to_numeric(ls["median_kernel_us"], errors="coerce").median())}
    return Hit(values, {"per_rank_step": ls.drop(columns=["label"], errors="ignore").to_dict(orient="records")},
               recoverable, "gpu" if not ctx.is_ascend else None)


@rule("dataloader", severity="medium", category="data_host", thresholds={"min_share_of_step": 0.05})
def dataloader(ctx: Context, th: dict):
    """The training thread waits for the DataLoader while the device is idle.  Recoverable: the
    device-idle part of data loading."""
    d = ctx.view("dataloader")
    if not len(d):
        return None
    idle = col_sum(d, "device_idle_during_us")
    per = idle / max(len(d), 1)
    share = per / max(ctx.step_us, 1e-9)
    if share < th["min_share_of_step"]:
        return None
    values = {"ms": per / 1e3, "share": share}
    return Hit(values, {"per_rank_step": d.drop(columns=["label"], errors="ignore").to_dict(orient="records")},
               per, None, by_share(share, 0.2, 0.05))


# --- memory ------------------------------------------------------------------------------------
@rule("memory_pressure", severity="medium", category="memory",
      thresholds={"capacity_bytes": None, "min_share_of_capacity": 0.9, "min_fragmentation": 1.5})
def memory_pressure(ctx: Context, th: dict):
    """Reserved memory near the device capacity (needs ``capacity_bytes``), or reserved well above
    allocated (fragmentation).  No time is recoverable directly: the gain is headroom (bigger
    batch, no OOM / re-allocation)."""
    pk = ctx.view("memory_peaks", top=1)
    if not len(pk):
        return None
    main = pk[pk["component"].isin(["PTA", "CUDA"])]
    if not len(main):
        return None
    res = main[main["kind"] == "peak_reserved"]
    alloc = main[main["kind"] == "peak_allocated"]
    reserved = float(pd.to_numeric(res["reserved_bytes"], errors="coerce").max()) if len(res) else 0.0
    allocated = float(pd.to_numeric(alloc["allocated_bytes"], errors="coerce").max()) if len(alloc) else 0.0
    cap = th.get("capacity_bytes")
    near = bool(cap) and reserved / float(cap) >= th["min_share_of_capacity"]
    frag = allocated > 0 and reserved / allocated >= th["min_fragmentation"]
    if not (near or frag):
        return None
    values = {"reserved_gib": reserved / 2**30, "allocated_gib": allocated / 2**30,
              "capacity_gib": (float(cap) / 2**30) if cap else 0.0, "frag": reserved / max(allocated, 1)}
    ops = alloc["ops"].dropna().astype(str).head(2).tolist() if "ops" in alloc.columns else []
    return Hit(values, {"peak_reserved_bytes": int(reserved), "peak_allocated_bytes": int(allocated),
                        "capacity_bytes": cap, "ops_at_peak": ops}, None, "capacity" if near else "fragmentation",
               "high" if near else "low")


# --- configuration -----------------------------------------------------------------------------
@rule("env_launch_blocking", severity="high", category="data_host", ascend_only=True)
def env_launch_blocking(ctx: Context, th: dict):
    """``ASCEND_LAUNCH_BLOCKING=1`` makes every launch synchronous: the host waits for each kernel."""
    v = ctx.env().get("ASCEND_LAUNCH_BLOCKING", {})
    ranks = sorted(r for r, x in v.items() if x.strip() == "1")
    if not ranks:
        return None
    return Hit({"ranks": ", ".join(map(str, ranks))}, {"env": {"ASCEND_LAUNCH_BLOCKING": "1"}, "ranks": ranks}, None)


@rule("env_log_level", severity="medium", category="data_host", thresholds={"max_verbose_level": 1},
      ascend_only=True)
def env_log_level(ctx: Context, th: dict):
    """``ASCEND_GLOBAL_LOG_LEVEL`` at debug (0) or info (1) writes logs on the hot path."""
    v = ctx.env().get("ASCEND_GLOBAL_LOG_LEVEL", {})
    bad = {r: x for r, x in v.items() if x.strip().isdigit() and int(x) <= th["max_verbose_level"]}
    if not bad:
        return None
    level = sorted(set(bad.values()))[0]
    return Hit({"level": level, "ranks": ", ".join(map(str, sorted(bad)))},
               {"env": {"ASCEND_GLOBAL_LOG_LEVEL": level}, "ranks": sorted(bad)}, None)


@rule("env_alloc_conf", severity="low", category="memory", ascend_only=True)
def env_alloc_conf(ctx: Context, th: dict):
    """``PYTORCH_NPU_ALLOC_CONF`` is set without ``expandable_segments:True``."""
    v = ctx.env().get("PYTORCH_NPU_ALLOC_CONF", {})
    bad = {r: x for r, x in v.items() if "expandable_segments:true" not in x.replace(" ", "").lower()}
    if not bad:
        return None
    val = sorted(set(bad.values()))[0]
    return Hit({"value": val}, {"env": {"PYTORCH_NPU_ALLOC_CONF": val}, "ranks": sorted(bad)}, None)


# --- profile quality ----------------------------------------------------------------------------
QUALITY_CODES = ("no-call-stacks", "no-shapes", "no-steps", "no-comm-analysis", "partial-ranks",
                 "no-memory-profile", "trace-truncated")


@rule("profile_quality", severity="info", category="profile", thresholds={"max_steps": 5})
def profile_quality(ctx: Context, th: dict):
    """What the doctor found that limits the advice (no call stacks, no shapes, no steps, ...),
    and too many profiled steps (large traces, slow tools)."""
    codes = sorted({d.code for d in ctx.profile.diagnostics if d.code in QUALITY_CODES})
    n_steps = len(ctx.profile.steps)
    too_many = n_steps > th["max_steps"]
    if not codes and not too_many:
        return None
    items = codes + (["too-many-steps"] if too_many else [])
    return Hit({"items": ", ".join(items), "steps": n_steps}, {"codes": items, "steps": n_steps}, None)


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


@rule("collective_bandwidth", severity="medium", category="communication", ascend_only=True,
      thresholds={"hccs_nominal_gbps": 30.0, "rdma_nominal_gbps": 25.0, "pcie_nominal_gbps": 25.0,
                  "min_bandwidth_ratio": 0.3, "min_op_bytes": 1_000_000})
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
        part = c[(pd.to_numeric(c[b], errors="coerce").fillna(0) >= th["min_op_bytes"])
                 & (pd.to_numeric(c[tr], errors="coerce").fillna(0) > 0)]
        if not len(part):
            continue
        nbytes, transit = col_sum(part, b), col_sum(part, tr)
        gbps = nbytes / transit
        nominal = float(th[f"{t}_nominal_gbps"])
        if gbps >= th["min_bandwidth_ratio"] * nominal:
            continue
        excess_ns += max(transit - nbytes / nominal, 0.0)
        links.append({"link": t.upper(), "ops": int(len(part)), "bytes": int(nbytes), "transit_us": r3(transit / 1e3),
                      "bandwidth_gbps": round(gbps, 3), "nominal_gbps": nominal, "ratio": round(gbps / nominal, 6)})
    if not links:
        return None
    worst = min(links, key=lambda x: x["ratio"])
    recoverable = min(ctx.per_step(excess_ns / 1e3), _nov_per_step(ctx))
    values = {"link": worst["link"], "gbps": worst["bandwidth_gbps"], "nominal": worst["nominal_gbps"],
              "ratio": worst["ratio"], "ops": worst["ops"], "ms": recoverable / 1e3}
    sev = by_share(recoverable / max(ctx.step_us, 1e-9), 0.2, 0.05)
    return Hit(values, {"links": links, "nominal_gbps": {t: th[f"{t}_nominal_gbps"] for t in NOMINAL_LINKS}},
               recoverable, None, sev)


@rule("collective_small_packets", severity="medium", category="communication",
      thresholds={"small_bytes": 1_048_576, "min_ops_per_step": 20, "min_small_ratio": 0.5,
                  "bucket_bytes": 25 * 1_048_576})
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
    values = {"n_small": round(n_small), "n": round(per_step), "ratio": ratio,
              "kb": small_bytes / max(len(small), 1) / 1024, "median_us": median_us, "ms": recoverable / 1e3,
              "types": ", ".join(types.index) or "-"}
    evidence = {"ops_per_step": round(per_step, 3), "small_ops_per_step": round(n_small, 3),
                "small_ratio": round(ratio, 6), "small_bytes_total": int(small_bytes),
                "median_small_op_us": r3(median_us), "cost_column": "transit_ns" if has_transit else "dur_ns",
                "types": {k: int(v) for k, v in types.items()}}
    return Hit(values, evidence, recoverable, None, by_share(recoverable / max(ctx.step_us, 1e-9), 0.2, 0.05))


@rule("slow_rank", severity="high", category="communication", thresholds={"threshold": 3.0, "min_share": 0.02})
def slow_rank(ctx: Context, th: dict):
    """With several ranks loaded, a rank whose computing / free / preparing time per step is far
    above the median over ranks (``profinsight.comparison.ranks.slow_ranks``: ``threshold`` robust
    deviations and ``min_share`` of the median step).  Its peers wait for it in the collectives.
    Recoverable: its largest deviation per step (the others' wait).  Silent with fewer than three
    ranks (no median to compare with)."""
    if len(ctx.profile.ranks) < 3:
        return None
    from ..comparison.ranks import slow_ranks
    sr = slow_ranks(ctx.profile, threshold=float(th["threshold"]), min_share=float(th["min_share"]))
    if not len(sr):
        return None
    top = sr.iloc[0]
    rows = [{"rank": int(r["rank"]), "component": str(r["component"]), "value_us": r3(r["value_us"]),
             "median_us": r3(r["median_us"]), "deviation_us": r3(r["deviation_us"]), "mads": round(num(r["mads"]), 3),
             "steps": str(r["steps"]), "comm_wait_vs_median_us": r3(r["comm_wait_vs_median_us"]),
             "evidence": str(r["evidence"])} for _, r in sr.iterrows()]
    recoverable = num(top["deviation_us"])
    values = {"rank": int(top["rank"]), "component": str(top["component"]).removesuffix("_us"),
              "dev_ms": recoverable / 1e3, "median_ms": num(top["median_us"]) / 1e3,
              "value_ms": num(top["value_us"]) / 1e3, "wait_ms": abs(num(top["comm_wait_vs_median_us"])) / 1e3,
              "ranks": ", ".join(str(r) for r in dict.fromkeys(int(x) for x in sr["rank"]))}
    return Hit(values, {"slow_ranks": rows, "loaded_ranks": [int(r) for r in ctx.profile.ranks]}, recoverable,
               None, by_share(recoverable / max(ctx.step_us, 1e-9), 0.05, 0.02))


@rule("slow_link", severity="medium", category="communication",
      thresholds={"max_ratio_to_median": 0.5, "min_bytes": 1_000_000, "min_links": 3})
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
    m = m.assign(bytes=pd.to_numeric(m["bytes"], errors="coerce"), transit_us=pd.to_numeric(m["transit_us"], errors="coerce"))
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
            slow.append({"transport": str(transport), "src_rank": int(r["src_rank"]), "dst_rank": int(r["dst_rank"]),
                         "bytes": int(r["bytes"]), "transit_us": r3(r["transit_us"]),
                         "bandwidth_gbps": round(float(r["bandwidth_gbps"]), 3), "median_gbps": round(med, 3),
                         "ratio_to_median": round(float(r["bandwidth_gbps"]) / med, 6), "excess_us": r3(ex)})
    if not slow:
        return None
    slow.sort(key=lambda x: x["ratio_to_median"])
    w = slow[0]
    recoverable = min(ctx.per_step(excess_us), _nov_per_step(ctx))
    values = {"src": w["src_rank"], "dst": w["dst_rank"], "transport": w["transport"], "gbps": w["bandwidth_gbps"],
              "median": w["median_gbps"], "ratio": w["ratio_to_median"], "n": len(slow), "ms": recoverable / 1e3}
    return Hit(values, {"slow_links": slow}, recoverable, None,
               by_share(recoverable / max(ctx.step_us, 1e-9), 0.2, 0.05))


# --- memory: allocator churn, empty_cache ---------------------------------------------------------
DEVICE_MALLOC = r"^(?:aclrt(?:Malloc|Free)(?!Host)|cuda(?:Malloc|Free)(?!Host)|hip(?:Malloc|Free)(?!Host)|cuMem(?:Alloc|Free)(?!Host))"
EMPTY_CACHE = r"empty_?cache|emptyCache"
#: the same prefixes without the look-ahead (DuckDB's RE2 has none): a SQL pre-filter, so that
#: only candidate rows of api_calls / host_ops reach pandas; DEVICE_MALLOC then decides
_MALLOC_PREFIX = r"^(?:aclrt(?:Malloc|Free)|cuda(?:Malloc|Free)|hip(?:Malloc|Free)|cuMem(?:Alloc|Free))"
#: EMPTY_CACHE as plain substring tests (a regex over a million host op names costs more)
_EMPTY_CACHE_SQL = ("(contains(name, 'empty_cache') OR contains(name, 'emptycache') "
                    "OR contains(name, 'emptyCache'))")


@rule("memory_churn", severity="medium", category="memory",
      thresholds={"min_device_mallocs_per_step": 10, "min_empty_cache_per_step": 1, "min_blocks_per_step": 20000})
def memory_churn(ctx: Context, th: dict):
    """The caching allocator gives memory back and takes it again inside the steps: device
    malloc/free API calls (``aclrtMalloc``/``aclrtFree``, ``cudaMalloc``/``cudaFree``) at least
    ``min_device_mallocs_per_step`` per step, or ``empty_cache`` calls (host ops / API calls)
    at least ``min_empty_cache_per_step`` per step; or, weaker, very many tensor allocations
    (``memory_blocks`` ≥ ``min_blocks_per_step`` per step).  Recoverable: the host time of those
    malloc / free / empty_cache calls (not estimated for the allocation count alone)."""
    api = ctx.table("api_calls", ("name", "dur_ns"),
                    where=f"regexp_matches(name, '{_MALLOC_PREFIX}') OR {_EMPTY_CACHE_SQL}")
    host = ctx.table("host_ops", ("name", "category", "dur_ns"), where=_EMPTY_CACHE_SQL)
    names = api["name"].fillna("").astype(str) if len(api) else pd.Series(dtype=str)
    mallocs = api[names.str.contains(DEVICE_MALLOC, regex=True)] if len(api) else api
    ec_api = api[names.str.contains(EMPTY_CACHE, regex=True)] if len(api) else api
    hn = host["name"].fillna("").astype(str) if len(host) else pd.Series(dtype=str)
    ec_host = host[hn.str.contains(EMPTY_CACHE, regex=True)] if len(host) else host
    if len(ec_host) and "category" in ec_host.columns:  # a python frame and its op both record one call
        ops = ec_host[ec_host["category"] != "python"]
        ec_host = ops if len(ops) else ec_host
    n_malloc = len(mallocs) / ctx.n_steps
    n_ec = (len(ec_host) + len(ec_api)) / ctx.n_steps
    blocks = ctx.table("memory_blocks", ("alloc_ns",))
    n_blocks = (int(pd.to_numeric(blocks["alloc_ns"], errors="coerce").notna().sum()) if len(blocks)
                and "alloc_ns" in blocks.columns else 0) / ctx.n_steps
    hit_malloc = n_malloc >= th["min_device_mallocs_per_step"]
    hit_ec = n_ec > 0 and n_ec >= th["min_empty_cache_per_step"]
    hit_blocks = n_blocks >= th["min_blocks_per_step"]
    if not (hit_malloc or hit_ec or hit_blocks):
        return None
    call_ns = col_sum(mallocs, "dur_ns") + col_sum(ec_host, "dur_ns") + col_sum(ec_api, "dur_ns")
    recoverable = ctx.per_step(call_ns / 1e3) if (hit_malloc or hit_ec) else None
    variant = "empty_cache" if hit_ec else "malloc" if hit_malloc else "blocks"
    top = names[names.str.contains(DEVICE_MALLOC, regex=True)].value_counts().head(4) if len(api) else pd.Series(dtype=int)
    values = {"mallocs": round(n_malloc, 1), "empty_cache": round(n_ec, 1), "blocks": round(n_blocks),
              "ms": (recoverable or 0.0) / 1e3, "apis": ", ".join(top.index) or "-"}
    evidence = {"device_malloc_free_per_step": round(n_malloc, 3), "empty_cache_per_step": round(n_ec, 3),
                "allocations_per_step": round(n_blocks, 3), "malloc_apis": {k: int(v) for k, v in top.items()},
                "call_time_us": r3(call_ns / 1e3)}
    sev = "low" if variant == "blocks" else by_share((recoverable or 0) / max(ctx.step_us, 1e-9), 0.2, 0.02)
    return Hit(values, evidence, recoverable, variant, sev)


# --- host: Python garbage collection -------------------------------------------------------------
@rule("python_gc", severity="medium", category="data_host",
      thresholds={"min_share_of_step": 0.02, "min_pause_us": 10000.0})
def python_gc(ctx: Context, th: dict):
    """Python's garbage collector stops the training thread: GC pauses recorded in the profile
    (``trace_slices`` of the ``Python GC`` process / ``GC_RECORD``, category ``gc``) take at least
    ``min_share_of_step`` of the step, or one pause lasts ``min_pause_us`` or more.  Recoverable:
    the GC time per step, at most the step's free time (a pause costs only where the device starves)."""
    ts = ctx.table("trace_slices", ("process", "cat", "name", "start_ns", "dur_ns", "rank"))
    if not len(ts):
        return None
    proc = ts["process"].fillna("").astype(str) if "process" in ts.columns else pd.Series("", index=ts.index)
    cat = ts["cat"].fillna("").astype(str) if "cat" in ts.columns else pd.Series("", index=ts.index)
    gc = ts[proc.str.contains("Python GC", case=False) | (cat.str.lower() == "gc")]
    dur = pd.to_numeric(gc["dur_ns"], errors="coerce").fillna(0) if len(gc) else pd.Series(dtype=float)
    if not len(gc) or dur.sum() <= 0:
        return None
    total_us = float(dur.sum()) / 1e3
    per = ctx.per_step(total_us)
    share = per / max(ctx.step_us, 1e-9)
    longest = float(dur.max()) / 1e3
    if share < th["min_share_of_step"] and longest < th["min_pause_us"]:
        return None
    recoverable = min(per, ctx.per_step(col_sum(ctx.steps, "free_us")))
    values = {"n": round(len(gc) / ctx.n_steps, 1), "ms": per / 1e3, "share": share, "longest_ms": longest / 1e3,
              "rec_ms": recoverable / 1e3}
    return Hit(values, {"pauses": int(len(gc)), "gc_us": r3(total_us), "longest_us": r3(longest),
                        "share_of_step_ratio": round(share, 6)}, recoverable, None,
               by_share(share, 0.1, 0.02))
