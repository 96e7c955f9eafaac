"""Whether a step change is larger than run-to-run noise, and whether two runs can be compared.

A run's **step samples** are its steps, aligned by step id: for each step id the mean device step
(``step_us``) over the ranks that recorded it, so that ranks of one step are not counted as
independent repetitions.  Where no rank records a device step (a CPU-only capture) the samples
are the host steps (``host_step_us``, the ``ProfilerStep#N`` spans) and the verdict says so.

The **noise** of a difference of means is Welch's: ``noise_us = t95(df) · √(s_a²/n_a + s_b²/n_b)``
with the sample variances ``s²`` (ddof 1), the Welch–Satterthwaite degrees of freedom ``df`` and
the two-sided 95 % quantile of Student's t.  The kind is

- ``inconclusive`` where either run has fewer than two steps (nothing to estimate the noise
  from) or a comparability warning is blocking (the runs are not one program on one setup);
- ``neutral`` where ``|delta_us| ≤ noise_us`` ("within noise");
- ``regression`` (the step grew) or ``improvement`` (it shrank) otherwise.

The **comparability** checks compare what the two runs record: the device family and the device
name (hardware), the world size and the rank set, the model signature (the multiset of framework
op names, or of kernel types where a run has no framework ops: a weighted Jaccard similarity of
their per-run shares below ``MODEL_MIN_SIMILARITY`` is a different program) and the batch shapes
(the same ops with other input shapes).  Each warning has a ``code``, a ``message`` and whether it
is ``blocking``."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..analyses._sql import query
from ..i18n import t

#: two-sided 95 % quantiles of Student's t by degrees of freedom (rounded down to a key: conservative)
_T95 = {
    1: 12.706,
    2: 4.303,
    3: 3.182,
    4: 2.776,
    5: 2.571,
    6: 2.447,
    7: 2.365,
    8: 2.306,
    9: 2.262,
    10: 2.228,
    12: 2.179,
    15: 2.131,
    20: 2.086,
    30: 2.042,
    60: 2.000,
    120: 1.980,
}
#: below this weighted similarity of the op multisets two runs are different programs
MODEL_MIN_SIMILARITY = 0.4
#: below this ratio of shape-aware to name-only similarity the batch shapes differ
SHAPE_MIN_RATIO = 0.5


def t95(df: float) -> float:
    """The two-sided 95 % t quantile for ``df`` degrees of freedom (1.96 beyond the table)."""
    if not df or math.isnan(df) or df < 1:
        return _T95[1]
    keys = [k for k in _T95 if k <= df]
    return _T95[max(keys)] if df <= 120 else 1.96


def step_samples(breakdown: pd.DataFrame) -> dict:
    """``{"samples_us", "step_ids", "basis"}`` of one run from its step breakdown (module docstring)."""
    b = breakdown[breakdown["step"].notna()] if breakdown["step"].notna().any() else breakdown
    for col, basis in (("step_us", "device"), ("host_step_us", "host")):
        if col not in b.columns:
            continue
        v = b.assign(_v=pd.to_numeric(b[col], errors="coerce").astype("float64"))
        v = v[v["_v"].notna() & (v["_v"] > 0)]
        if not len(v):
            continue
        if v["step"].notna().any():
            per = v.groupby("step", sort=True)["_v"].mean()
            return {"samples_us": [float(x) for x in per], "step_ids": [int(s) for s in per.index], "basis": basis}
        return {"samples_us": [float(v["_v"].mean())], "step_ids": [], "basis": basis}
    return {"samples_us": [], "step_ids": [], "basis": None}


def _mean_var(x: list[float]) -> tuple[float, float]:
    a = np.asarray(x, dtype="float64")
    return float(a.mean()), (float(a.var(ddof=1)) if len(a) > 1 else float("nan"))


def noise_of(a: list[float], b: list[float]) -> tuple[float, float, float]:
    """(delta_us, noise_us, df) of mean(b) - mean(a); noise NaN with fewer than two samples a side."""
    if not a or not b:
        return float("nan"), float("nan"), float("nan")
    ma, va = _mean_var(a)
    mb, vb = _mean_var(b)
    delta = mb - ma
    if len(a) < 2 or len(b) < 2:
        return delta, float("nan"), float("nan")
    qa, qb = va / len(a), vb / len(b)
    se2 = qa + qb
    if se2 <= 0:
        return delta, 0.0, float("inf")
    df = se2**2 / ((qa**2 / (len(a) - 1) if qa else 0.0) + (qb**2 / (len(b) - 1) if qb else 0.0))
    return delta, t95(df) * math.sqrt(se2), df


# --- comparability --------------------------------------------------------------------------------
def signature(profile) -> dict:
    """What the comparability checks read of one run, computed once per run and kept beside its
    cached tables as plain data (``ops`` and ``shapes``: share per name, as Series here)."""

    def compute() -> dict:
        sig = _signature(profile)
        for k in ("ops", "shapes"):
            sig[k] = {str(name): float(share) for name, share in sig[k].items()}
        return sig

    plain = profile.remember("comparison.signature", {}, compute) if hasattr(profile, "remember") else compute()
    return {**plain, **{k: pd.Series(plain[k], dtype="float64") for k in ("ops", "shapes")}}


def _signature(profile) -> dict:
    ri = profile.table("run_info")

    def col(name):
        return sorted({str(v) for v in ri[name].dropna()}) if name in ri.columns else []

    # only the rows and columns read here (SQL over the cached Parquet): the whole host_ops
    # table of a 100 MB rank took 0.4 s to read into pandas, these two columns 0.15 s
    ops = query(profile, "SELECT name, input_shapes FROM host_ops WHERE category = 'op'")
    if len(ops):
        names = ops["name"].astype(str)
        shapes = names + "|" + ops["input_shapes"].astype(str)
        source = "ops"
    else:
        k = query(profile, "SELECT name, type, input_shapes FROM device_tasks WHERE kind = 'kernel'")
        names = k["type"].fillna(k["name"]).astype(str)
        shapes = names + "|" + k["input_shapes"].astype(str)
        source = "kernels"
    world = sorted({int(v) for v in ri["world_size"].dropna()}) if "world_size" in ri.columns else []
    return {
        "families": col("device_family"),
        "devices": col("device_name"),
        "world_size": world,
        "ranks": sorted(int(r) for r in profile.ranks),
        "ops": names.value_counts(normalize=True),
        "shapes": shapes.value_counts(normalize=True),
        "op_source": source,
    }


def similarity(a: pd.Series, b: pd.Series) -> float:
    """Weighted Jaccard of two share distributions: Σ min / Σ max (1 equal, 0 disjoint)."""
    if not len(a) or not len(b):
        return float("nan")
    idx = a.index.union(b.index)
    x, y = a.reindex(idx, fill_value=0.0).to_numpy(), b.reindex(idx, fill_value=0.0).to_numpy()
    return float(np.minimum(x, y).sum() / np.maximum(x, y).sum())


def comparability(a: dict, b: dict, lang: str | None = None) -> list[dict]:
    """Warnings about comparing run ``b`` with run ``a`` (signatures of :func:`signature`)."""
    out = []

    def warn(code, blocking, **values):
        out.append({"code": code, "message": t(f"compare.warn.{code}", lang, **values), "blocking": blocking})

    if a["families"] and b["families"] and a["families"] != b["families"]:
        warn("device_family", False, a="/".join(a["families"]), b="/".join(b["families"]))
    if a["devices"] and b["devices"] and a["devices"] != b["devices"]:
        warn("hardware", False, a=", ".join(a["devices"]), b=", ".join(b["devices"]))
    if a["world_size"] and b["world_size"] and a["world_size"] != b["world_size"]:
        warn("world_size", True, a="/".join(map(str, a["world_size"])), b="/".join(map(str, b["world_size"])))
    if a["ranks"] != b["ranks"]:
        warn("ranks", True, a=_ranks(a["ranks"]), b=_ranks(b["ranks"]))
    sim = similarity(a["ops"], b["ops"])
    if not math.isnan(sim) and sim < MODEL_MIN_SIMILARITY:
        warn("model", True, sim=sim, source=t(f"compare.source.{a['op_source']}", lang))
    elif not math.isnan(sim) and sim > 0:
        shape_sim = similarity(a["shapes"], b["shapes"])
        if not math.isnan(shape_sim) and shape_sim / sim < SHAPE_MIN_RATIO:
            warn("shapes", False, sim=shape_sim)
    return out


def _ranks(r: list[int]) -> str:
    return "{" + ", ".join(map(str, r)) + "}" if r else "{}"


# --- the verdict ----------------------------------------------------------------------------------
def noise_verdict(sa: dict, sb: dict, warnings: list[dict], names: tuple[str, str], lang: str | None = None) -> dict:
    """The verdict object of one pair: ``kind``, ``delta_us``, ``noise_us``, ``text``,
    ``comparability`` (the warnings), the step samples' basis and counts."""
    a, b = sa["samples_us"], sb["samples_us"]
    basis = sa["basis"] if sa["basis"] == sb["basis"] else "host" if "host" in (sa["basis"], sb["basis"]) else None
    if basis == "host" and (sa["basis"] != "host" or sb["basis"] != "host"):
        basis = None  # one run on device steps, the other on host steps: not one quantity
    delta, noise, df = noise_of(a, b) if basis else (float("nan"),) * 3
    blocking = [w for w in warnings if w["blocking"]]
    mean_a = float(np.mean(a)) if a else float("nan")
    if basis is None or math.isnan(delta):
        kind, why = "inconclusive", "no_steps"
    elif blocking:
        kind, why = "inconclusive", "not_comparable"
    elif math.isnan(noise):
        kind, why = "inconclusive", "one_step"
    elif abs(delta) <= noise:
        kind, why = "neutral", None
    else:
        kind, why = ("regression" if delta > 0 else "improvement"), None
    values = {
        "to": names[1],
        "base": names[0],
        "delta": delta,
        "adelta": abs(delta),
        "noise": noise,
        "pct": 100.0 * delta / mean_a if mean_a else float("nan"),
        "na": len(a),
        "nb": len(b),
        "basis": t(f"compare.basis.{basis or 'device'}", lang),
        "reasons": "; ".join(w["message"] for w in blocking),
    }
    key = f"compare.noise.{kind}" + (f".{why}" if why else "")
    text = t(key, lang, **values)
    nonblocking = [w["message"] for w in warnings if not w["blocking"]]
    if nonblocking:
        text += " " + t("compare.noise.caveats", lang, items="; ".join(nonblocking))
    return {
        "kind": kind,
        "delta_us": None if math.isnan(delta) else round(delta, 3),
        "noise_us": None if math.isnan(noise) else round(noise, 3),
        "df": None if math.isnan(df) or math.isinf(df) else round(df, 3),
        "basis": basis,
        "from_steps": len(a),
        "to_steps": len(b),
        "from_step_ids": sa["step_ids"],
        "to_step_ids": sb["step_ids"],
        "text": text,
        "comparability": [{"code": w["code"], "message": w["message"], "blocking": w["blocking"]} for w in warnings],
    }
