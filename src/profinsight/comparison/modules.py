"""Compare by module: which ``nn.Module``'s device time changed most between two runs.

Modules are matched by path and phase (``module_time``'s rows).  Each figure is a mean per
rank-step, like the rest of :class:`~.core.Comparison`: a module's inclusive device time summed
per (rank, step), averaged over the run's rank-steps (a rank-step where the module launched
nothing counts as 0).  The **noise band** of a change is what the steps themselves vary by:

    noise_us = max(min_change_us, min_change_ratio * from_us, 2 * sqrt(sd_from² / n_from + sd_to² / n_to))

(two standard errors of the difference of the two means, from the per-rank-step spread; 0 for a
run of one rank-step, where the floors decide).  A change beyond the band is ``slower`` /
``faster``; paths only in one run are ``added`` / ``removed``.

**Layer folding** (``fold_layers=True``): path names that differ only by their instance number
(``Qwen3DecoderLayer_0`` .. ``_27``, ``layers.0`` .. ``.27``) fold into one row (``…_*``) whose
time is their sum, with the per-layer spread of the changed run: how many layers, the mean and
the slowest layer, and ``layer_spread_ratio`` = (slowest - fastest) / mean (jitter; a single
outlier layer shows as a high ratio with ``slowest_layer`` naming it).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..analyses.attribution import module_steps

#: one path name with an instance number: ``Name_12`` or ``layers.12``
_INSTANCE = r"^(?P<stem>.*?[_.])(?P<n>\d+)$"


def fold_paths(paths: pd.Series) -> pd.Series:
    """Each path with instance numbers replaced by ``*`` where siblings share the stem:
    ``…/Layer_0`` .. ``…/Layer_N`` under one (folded) parent -> ``…/Layer_*``; a name without
    numbered siblings (``DistributedDataParallel_0``) keeps its number.  One pass per depth
    level over the distinct paths."""
    p = paths.astype(object)
    uniq = pd.Series(p.dropna().unique(), dtype=object)
    segs = uniq.str.split("/")
    folded = pd.Series([""] * len(uniq), dtype=object)
    for d in range(int(segs.str.len().max()) if len(uniq) else 0):
        has = segs.str.len() > d
        seg = segs[has].str[d]
        parent = folded[has]
        stem = seg.str.extract(_INSTANCE)["stem"]
        both = pd.DataFrame({"parent": parent, "stem": stem, "seg": seg})
        siblings = both.dropna(subset=["stem"]).groupby(["parent", "stem"])["seg"].transform("nunique")
        fold = pd.Series(False, index=both.index)
        fold[siblings.index] = siblings > 1
        name = np.where(fold, stem.fillna("") + "*", seg)
        folded[has] = np.where(parent == "", name, parent + "/" + name)
    return p.map(dict(zip(uniq, folded)))


def per_run(profile, fold_layers: bool) -> tuple[pd.DataFrame, int]:
    """Per (path, phase): mean and sd over rank-steps, plus the per-layer figures when folding."""
    if hasattr(profile, "remember_frame"):  # the attribution of every task: computed once per profile
        s = profile.remember_frame("module_steps", {}, lambda: module_steps(profile), module_steps)
    else:
        s = module_steps(profile)
    stepped = set(s.loc[s["step"].notna(), "rank"])
    s = s[s["step"].notna() | ~s["rank"].isin(stepped)]  # real steps; the whole capture where none
    n = int(s[["rank", "step"]].drop_duplicates().shape[0]) or 1
    s = s.assign(layer=s["path"], path=fold_paths(s["path"]) if fold_layers else s["path"])
    per_step = s.groupby(["path", "phase", "rank", "step"], dropna=False, sort=False)["inclusive_us"].sum()
    per_step = per_step.reset_index()
    g = per_step.groupby(["path", "phase"], sort=False)["inclusive_us"]
    total = g.sum()
    sq = per_step.assign(x2=per_step["inclusive_us"] ** 2).groupby(["path", "phase"], sort=False)["x2"].sum()
    mean = total / n
    var = ((sq / n) - mean**2).clip(lower=0) * (n / (n - 1) if n > 1 else 0.0)
    out = pd.DataFrame({"us": mean, "sd": np.sqrt(var)})
    if fold_layers:
        layers = s.groupby(["path", "phase", "layer"], sort=False)["inclusive_us"].sum().div(n).reset_index()
        lg = layers.groupby(["path", "phase"], sort=False)
        out["n_layers"] = lg.size()
        out["layer_mean_us"] = lg["inclusive_us"].mean()
        out["slowest_layer"] = layers.loc[lg["inclusive_us"].idxmax(), ["path", "phase", "layer"]].set_index(
            ["path", "phase"]
        )["layer"]
        spread = (lg["inclusive_us"].max() - lg["inclusive_us"].min()) / out["layer_mean_us"].where(
            out["layer_mean_us"] > 0
        )
        out["layer_spread_ratio"] = spread.where(out["n_layers"] > 1)
    return out, n


def module_changes(
    comparison, pair=None, fold_layers: bool = False, min_change_us: float = 0.5, min_change_ratio: float = 0.01
) -> pd.DataFrame:
    """Per pair and (path, phase): device time per rank-step in each run, the change, its noise
    band and status; sorted by |delta_us| within a pair, ``(unattributed)`` rows included."""
    cache = comparison.__dict__.setdefault("_modules", {})
    out = []
    for i, j in comparison._pair_index(pair):
        runs = []
        for k in (i, j):
            if (k, fold_layers) not in cache:
                cache[(k, fold_layers)] = per_run(comparison.profiles[k], fold_layers)
            runs.append(cache[(k, fold_layers)])
        (a, na), (b, nb) = runs
        m = a.merge(b, how="outer", left_index=True, right_index=True, suffixes=("_from", "_to")).reset_index()
        df = pd.DataFrame(
            {
                "pair": comparison.pair_label(i, j),
                "path": m["path"].astype(object),
                "phase": m["phase"].astype(object),
                "from_us": m["us_from"].fillna(0.0),
                "to_us": m["us_to"].fillna(0.0),
            }
        )
        df["delta_us"] = df["to_us"] - df["from_us"]
        se = np.sqrt(m["sd_from"].fillna(0.0) ** 2 / na + m["sd_to"].fillna(0.0) ** 2 / nb)
        df["noise_us"] = np.maximum.reduce([np.full(len(df), min_change_us), min_change_ratio * df["from_us"], 2 * se])
        status = pd.Series("unchanged", index=df.index, dtype=object)
        status[df["delta_us"] > df["noise_us"]] = "slower"
        status[df["delta_us"] < -df["noise_us"]] = "faster"
        status[m["us_from"].isna()] = "added"
        status[m["us_to"].isna()] = "removed"
        df.insert(3, "status", status)
        d_total = df["delta_us"].sum()
        df["share_of_delta_ratio"] = df["delta_us"] / d_total if d_total else np.nan
        if fold_layers:
            for c in ("n_layers", "layer_mean_us", "slowest_layer", "layer_spread_ratio"):
                df[c] = m[f"{c}_to"].where(m[f"{c}_to"].notna(), m[f"{c}_from"])
            df["n_layers"] = df["n_layers"].astype("Int64")
        df = df.reindex(df["delta_us"].abs().sort_values(ascending=False, kind="stable").index)
        out.append(df)
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()
