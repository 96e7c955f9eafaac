"""Memory: pressure near capacity, allocator churn and empty_cache.

See :mod:`profinsight.advisor.rules.base` for how a rule is declared; the conditions are
documented in docs/advisor.md."""

from __future__ import annotations

import pandas as pd

from .base import Context, Hit, by_share, col_sum, r3, rule


# --- memory ------------------------------------------------------------------------------------
@rule(
    "memory_pressure",
    severity="medium",
    category="memory",
    thresholds={"capacity_bytes": None, "min_share_of_capacity": 0.9, "min_fragmentation": 1.5},
    reads=(("memory_peaks", {"top": 1}),),
)
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
    values = {
        "reserved_gib": reserved / 2**30,
        "allocated_gib": allocated / 2**30,
        "capacity_gib": (float(cap) / 2**30) if cap else 0.0,
        "frag": reserved / max(allocated, 1),
    }
    ops = alloc["ops"].dropna().astype(str).head(2).tolist() if "ops" in alloc.columns else []
    return Hit(
        values,
        {
            "peak_reserved_bytes": int(reserved),
            "peak_allocated_bytes": int(allocated),
            "capacity_bytes": cap,
            "ops_at_peak": ops,
        },
        None,
        "capacity" if near else "fragmentation",
        "high" if near else "low",
    )


# --- memory: allocator churn, empty_cache ---------------------------------------------------------
DEVICE_MALLOC = r"^(?:aclrt(?:Malloc|Free)(?!Host)|cuda(?:Malloc|Free)(?!Host)|hip(?:Malloc|Free)(?!Host)|cuMem(?:Alloc|Free)(?!Host))"
EMPTY_CACHE = r"empty_?cache|emptyCache"
#: the same prefixes without the look-ahead (DuckDB's RE2 has none): a SQL pre-filter, so that
#: only candidate rows of api_calls / host_ops reach pandas; DEVICE_MALLOC then decides
_MALLOC_PREFIX = r"^(?:aclrt(?:Malloc|Free)|cuda(?:Malloc|Free)|hip(?:Malloc|Free)|cuMem(?:Alloc|Free))"
#: EMPTY_CACHE as plain substring tests (a regex over a million host op names costs more)
_EMPTY_CACHE_SQL = "(contains(name, 'empty_cache') OR contains(name, 'emptycache') OR contains(name, 'emptyCache'))"


@rule(
    "memory_churn",
    severity="medium",
    category="memory",
    thresholds={"min_device_mallocs_per_step": 10, "min_empty_cache_per_step": 1, "min_blocks_per_step": 20000},
)
def memory_churn(ctx: Context, th: dict):
    """The caching allocator gives memory back and takes it again inside the steps: device
    malloc/free API calls (``aclrtMalloc``/``aclrtFree``, ``cudaMalloc``/``cudaFree``) at least
    ``min_device_mallocs_per_step`` per step, or ``empty_cache`` calls (host ops / API calls)
    at least ``min_empty_cache_per_step`` per step; or, weaker, very many tensor allocations
    (``memory_blocks`` ≥ ``min_blocks_per_step`` per step).  Recoverable: the host time of those
    malloc / free / empty_cache calls (not estimated for the allocation count alone)."""
    api = ctx.table(
        "api_calls", ("name", "dur_ns"), where=f"regexp_matches(name, '{_MALLOC_PREFIX}') OR {_EMPTY_CACHE_SQL}"
    )
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
    n_blocks = (
        int(pd.to_numeric(blocks["alloc_ns"], errors="coerce").notna().sum())
        if len(blocks) and "alloc_ns" in blocks.columns
        else 0
    ) / ctx.n_steps
    hit_malloc = n_malloc >= th["min_device_mallocs_per_step"]
    hit_ec = n_ec > 0 and n_ec >= th["min_empty_cache_per_step"]
    hit_blocks = n_blocks >= th["min_blocks_per_step"]
    if not (hit_malloc or hit_ec or hit_blocks):
        return None
    call_ns = col_sum(mallocs, "dur_ns") + col_sum(ec_host, "dur_ns") + col_sum(ec_api, "dur_ns")
    recoverable = ctx.per_step(call_ns / 1e3) if (hit_malloc or hit_ec) else None
    variant = "empty_cache" if hit_ec else "malloc" if hit_malloc else "blocks"
    top = (
        names[names.str.contains(DEVICE_MALLOC, regex=True)].value_counts().head(4)
        if len(api)
        else pd.Series(dtype=int)
    )
    values = {
        "mallocs": _count(n_malloc),
        "empty_cache": _count(n_ec),
        "blocks": round(n_blocks),
        "ms": (recoverable or 0.0) / 1e3,
        "apis": ", ".join(top.index) or "-",
    }
    evidence = {
        "device_malloc_free_per_step": round(n_malloc, 3),
        "empty_cache_per_step": round(n_ec, 3),
        "allocations_per_step": round(n_blocks, 3),
        "malloc_apis": {k: int(v) for k, v in top.items()},
        "call_time_us": r3(call_ns / 1e3),
    }
    sev = "low" if variant == "blocks" else by_share((recoverable or 0) / max(ctx.step_us, 1e-9), 0.2, 0.02)
    return Hit(values, evidence, recoverable, variant, sev)


def _count(v: float) -> float | int:
    """A count for the words: a mean per step keeps one decimal (12.5 calls per step), a whole
    number reads as one (39 calls in the capture, not 39.0)."""
    r = round(v, 1)
    return int(r) if r.is_integer() else r
