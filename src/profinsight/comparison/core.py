"""Run comparison: a baseline and one or more changed runs as one :class:`Comparison`.

Every figure is a per-step mean: for each run, the mean over its (rank, step) rows of the step
breakdown (only real steps; the whole capture where a profile marks none).  The **waterfall** of
a pair of runs splits the change of ``step_us`` exactly:

    Δstep = Δcomputing + Δ(comm_not_overlapped − bubble) + Δfree          (identity of step_breakdown)

and Δcomputing (a change of the *union* of compute intervals) is attributed to the compute
categories (format_conversion, matmul, convolution, vector, ai_cpu, other) by their change of
summed kernel time Δsum_c, the difference between the two (overlap changes between kernels)
spread over the categories by the size of their change:

    attributed_c = Δsum_c + (Δcomputing − Σ Δsum_c) · |Δsum_c| / Σ |Δsum_c|

When every category moves the same way this is plain proportional scaling
(Δsum_c · Δcomputing / Σ Δsum_c); when no category moves the difference lands in "other".  The
rows therefore add up to Δstep (to float rounding).  ``preparing`` (host start to first device
task) is outside the device step; it is shown as an extra row with ``in_step`` False.
"""

from __future__ import annotations

import html
import json
import math
import os
from pathlib import Path

import pandas as pd

from .. import hooks
from ..analyses.steps import breakdown
from ..i18n import resolve_lang, t
from ..i18n.compare import COMPARE
from ..results import DisplayFrame
from .noise import comparability, noise_verdict, signature, step_samples

#: compute categories of the waterfall (kernel categories of analyses.categories)
COMPUTE_COMPONENTS = ("format_conversion", "matmul", "convolution", "vector", "ai_cpu", "other")
COMPONENTS = COMPUTE_COMPONENTS + ("comm_not_overlapped", "free", "preparing")
#: the waterfall's components in English (the words per language: ``compare.label.*``)
LABELS = {c: COMPARE["en"][f"compare.label.{c}"] for c in COMPONENTS}
_STEP_COLS = (
    "step_us",
    "computing_us",
    "comm_not_overlapped_us",
    "free_us",
    "bubble_us",
    "preparing_us",
    "host_step_us",
    "busy_us",
    "span_us",
    "comm_us",
)
_UTIL_COLS = ("busy_ratio", "compute_ratio", "cube_busy_ratio", "vector_busy_ratio")
MIB = float(1 << 20)


def default_name(profile, item, i) -> str:
    if isinstance(item, (str, Path)):
        name = Path(item).name
    else:
        name = str(profile.path.name) if not str(profile.path).startswith("<") else ""
    return name or f"run{i}"


def unique_names(names):
    out, seen = [], {}
    for n in names:
        if n in seen:
            seen[n] += 1
            n = f"{n}#{seen[n]}"
        else:
            seen[n] = 0
        out.append(n)
    return out


def _mean(s) -> float:
    v = pd.to_numeric(pd.Series(s), errors="coerce").astype("float64").dropna()
    return float(v.mean()) if len(v) else float("nan")


def run_stats(profile) -> dict:
    """Per-step means of one run (see the module docstring), computed once per run and kept
    beside its cached tables (plain numbers: a warm ``compare`` reads no table)."""
    if hasattr(profile, "remember"):
        return profile.remember("comparison.run_stats", {}, lambda: _run_stats(profile))
    return _run_stats(profile)


def _run_stats(profile) -> dict:
    b = breakdown(profile)
    rows = b[b["step"].notna()] if b["step"].notna().any() else b
    rows = rows[rows["span_us"].notna()]
    keys = rows[["rank", "step"]]
    out = {
        "samples": step_samples(b),
        "n_rank_steps": int(len(rows)),
        "ranks": sorted(int(r) for r in set(rows["rank"].dropna())),
        "steps": sorted(int(s) for s in set(rows["step"].dropna())),
    }
    for c in _STEP_COLS:
        out[c] = _mean(rows[c]) if c in rows else float("nan")
    u = pd.DataFrame(profile.utilization())
    u = keys.merge(u, on=["rank", "step"], how="left") if len(keys) else u.iloc[0:0]
    for c in _UTIL_COLS:
        out[c] = _mean(u[c]) if c in u else float("nan")
    for c in COMPUTE_COMPONENTS:
        out[f"{c}_sum_us"] = _mean(u[f"{c}_us"]) if f"{c}_us" in u and len(u) else 0.0
        if math.isnan(out[f"{c}_sum_us"]):
            out[f"{c}_sum_us"] = 0.0
    out.update(_memory_peak(profile))
    return out


def _memory_peak(profile) -> dict:
    m = profile.table("memory_samples")
    res = {"peak_allocated_bytes": float("nan"), "peak_reserved_bytes": float("nan"), "memory_component": None}
    if m.empty:
        return res
    comps = [c for c in m["component"].dropna().unique()]
    for pref in ("PTA+GE", "PTA", "CUDA", "GE"):
        if pref in comps:
            comp = pref
            break
    else:
        comp = next((c for c in comps if c not in ("APP", "CPU")), None)
    if comp is None:
        return res
    part = m[m["component"] == comp]
    res["memory_component"] = comp
    for c in ("allocated", "reserved"):
        v = pd.to_numeric(part[f"{c}_bytes"], errors="coerce").astype("float64")
        res[f"peak_{c}_bytes"] = float(v.max()) if v.notna().any() else float("nan")
    return res


def _each(func, profiles: list, items: list | None = None) -> list:
    """``func`` of every profile (or of every item of ``items``, one per profile), on a thread
    per profile where they are distinct objects: each has its own DuckDB connection, and their
    queries run without the GIL (two 100 MB runs: the step and utilisation figures of both in the
    time of one)."""
    items = profiles if items is None else items
    if len(profiles) < 2 or len({id(p) for p in profiles}) < len(profiles) or (os.cpu_count() or 1) < 2:
        return [func(x) for x in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(min(len(profiles), os.cpu_count() or 1)) as pool:
        return list(pool.map(func, items))


def _op_table(profile, by: str, n: int) -> pd.DataFrame:
    df = pd.DataFrame(profile.op_summary(by=by, kinds="all"))
    key = by
    if df.empty:
        return pd.DataFrame(columns=[key, "count", "total_us"])
    df[key] = df[key].astype("object").where(df[key].notna(), "?")
    g = df.groupby(key, dropna=False).agg(count=("count", "sum"), total_us=("total_us", "sum")).reset_index()
    g["count"] = g["count"].astype("float64") / max(n, 1)
    g["total_us"] = g["total_us"].astype("float64") / max(n, 1)
    return g


class Comparison:
    """A series of runs compared with each other: ``steps()``, ``waterfall()``, ``ops()``,
    ``op_changes()``, ``summary()``, ``verdicts()``, ``to_dict()`` and rich display."""

    def __init__(self, profiles, names, lang: str | None = None):
        self.profiles = list(profiles)
        self.names = list(names)
        self.lang = resolve_lang(lang)
        self.stats = _each(run_stats, self.profiles)
        self._ops: dict = {}
        self._signatures: dict = {}

    # --- pairs -----------------------------------------------------------------------
    @property
    def pairs(self) -> list[tuple[int, int]]:
        """Consecutive pairs, plus base -> last when there are more than two runs."""
        n = len(self.profiles)
        out = [(i, i + 1) for i in range(n - 1)]
        if n > 2:
            out.append((0, n - 1))
        return out

    def pair_label(self, i: int, j: int) -> str:
        return f"{self.names[i]} → {self.names[j]}"

    def _pair_index(self, pair) -> list[tuple[int, int]]:
        if pair is None:
            return self.pairs
        if isinstance(pair, str):
            for i, j in self.pairs:
                if self.pair_label(i, j) == pair:
                    return [(i, j)]
            raise KeyError(f"no pair {pair!r}; pairs: {[self.pair_label(*p) for p in self.pairs]}")
        i, j = (self.names.index(x) if isinstance(x, str) else int(x) for x in pair)
        return [(i, j)]

    # --- tables ----------------------------------------------------------------------
    def steps(self) -> pd.DataFrame:
        """One row per run: per-step means of the step breakdown, utilisation, memory peak, and
        the change against the baseline and the previous run."""
        rows = []
        base = self.stats[0]["step_us"]
        for k, (name, s) in enumerate(zip(self.names, self.stats)):
            prev = self.stats[k - 1]["step_us"] if k else s["step_us"]
            rows.append(
                {
                    "run": name,
                    "n_rank_steps": s["n_rank_steps"],
                    **{c: s[c] for c in _STEP_COLS},
                    **{c: s[c] for c in _UTIL_COLS},
                    "peak_allocated_bytes": s["peak_allocated_bytes"],
                    "peak_reserved_bytes": s["peak_reserved_bytes"],
                    "delta_vs_base_us": s["step_us"] - base,
                    "delta_vs_previous_us": s["step_us"] - prev,
                    "delta_share_of_base_step_ratio": (s["step_us"] - base) / base if base else float("nan"),
                    "speedup_vs_base_x": base / s["step_us"] if s["step_us"] else float("nan"),
                }
            )
        return pd.DataFrame(rows)

    def _waterfall_pair(self, i: int, j: int) -> pd.DataFrame:
        a, b = self.stats[i], self.stats[j]
        d_comp = b["computing_us"] - a["computing_us"]
        raw = {c: b[f"{c}_sum_us"] - a[f"{c}_sum_us"] for c in COMPUTE_COMPONENTS}
        resid = d_comp - sum(raw.values())
        mag = sum(abs(v) for v in raw.values())
        attr = {}
        for c in COMPUTE_COMPONENTS:
            if mag > 0:
                attr[c] = raw[c] + resid * abs(raw[c]) / mag
            else:
                attr[c] = resid if c == "other" else 0.0
        cno = lambda s: s["comm_not_overlapped_us"] - (0.0 if math.isnan(s["bubble_us"]) else s["bubble_us"])  # noqa: E731
        rows = []
        for c in COMPUTE_COMPONENTS:
            rows.append((c, a[f"{c}_sum_us"], b[f"{c}_sum_us"], raw[c], attr[c], True))
        rows.append(("comm_not_overlapped", cno(a), cno(b), cno(b) - cno(a), cno(b) - cno(a), True))
        rows.append(
            ("free", a["free_us"], b["free_us"], b["free_us"] - a["free_us"], b["free_us"] - a["free_us"], True)
        )
        dp = b["preparing_us"] - a["preparing_us"]
        rows.append(("preparing", a["preparing_us"], b["preparing_us"], dp, dp, False))
        df = pd.DataFrame(rows, columns=["component", "from_us", "to_us", "raw_delta_us", "delta_us", "in_step"])
        d_step = b["step_us"] - a["step_us"]
        df.insert(0, "pair", self.pair_label(i, j))
        df.insert(1, "from_run", self.names[i])
        df.insert(2, "to_run", self.names[j])
        df.insert(4, "label", [t(f"compare.label.{c}", self.lang) for c in df["component"]])
        df["share_of_step_delta_ratio"] = df["delta_us"] / d_step if d_step else float("nan")
        df.loc[~df["in_step"], "share_of_step_delta_ratio"] = float("nan")
        df["from_step_us"] = a["step_us"]
        df["to_step_us"] = b["step_us"]
        return df

    def waterfall(self, pair=None) -> pd.DataFrame:
        """Attribution of the step change of each pair (consecutive runs and base -> last) to
        categories; rows with ``in_step`` add up to ``to_step_us - from_step_us``.  ``from_us`` /
        ``to_us`` of compute categories are summed kernel times (not unions); ``raw_delta_us``
        their difference, ``delta_us`` the attributed change (module docstring)."""
        out = pd.concat([self._waterfall_pair(i, j) for i, j in self._pair_index(pair)], ignore_index=True)
        return DisplayFrame.wrap(out, "waterfall_html")  # a notebook draws it as its chart

    def _ops_of(self, k: int, by: str) -> pd.DataFrame:
        key = (k, by)
        if key not in self._ops:
            self._ops[key] = _op_table(self.profiles[k], by, self.stats[k]["n_rank_steps"])
        return self._ops[key]

    def _for_runs(self, func, pairs) -> None:
        """``func(k)`` for every run ``k`` of ``pairs``, the runs side by side as in ``__init__``
        (``func`` keeps its result itself): the op tables and signatures of two 100 MB runs in
        the time of one (0.03-0.06 s less for each of them in a cold ``compare``)."""
        ks = sorted({k for pair in pairs for k in pair})
        _each(func, [self.profiles[k] for k in ks], ks)

    def ops(
        self, by: str = "type", pair=None, min_change_us: float = 0.5, min_change_ratio: float = 0.01
    ) -> pd.DataFrame:
        """Per op ``type`` or ``name`` (device kernels and communication ops), for each pair:
        ``status`` added / removed / faster / slower / unchanged, counts, total and average time
        per rank-step and their deltas; sorted by |delta_total_us|.  An op is faster/slower when
        its total moved by more than ``min_change_us`` and ``min_change_ratio`` of its old total."""
        if by not in ("type", "name"):
            raise ValueError("by must be 'type' or 'name'")
        out = []
        self._for_runs(lambda k: self._ops_of(k, by), self._pair_index(pair))
        for i, j in self._pair_index(pair):
            a, b = self._ops_of(i, by), self._ops_of(j, by)
            m = a.merge(b, on=by, how="outer", suffixes=("_from", "_to"))
            df = pd.DataFrame(
                {
                    "pair": self.pair_label(i, j),
                    by: m[by],
                    "from_count": m["count_from"].astype("float64").fillna(0.0),
                    "to_count": m["count_to"].astype("float64").fillna(0.0),
                    "from_total_us": m["total_us_from"].astype("float64").fillna(0.0),
                    "to_total_us": m["total_us_to"].astype("float64").fillna(0.0),
                }
            )
            df["delta_count"] = df["to_count"] - df["from_count"]
            df["delta_total_us"] = df["to_total_us"] - df["from_total_us"]
            df["from_avg_us"] = (df["from_total_us"] / df["from_count"]).where(df["from_count"] > 0)
            df["to_avg_us"] = (df["to_total_us"] / df["to_count"]).where(df["to_count"] > 0)
            df["delta_avg_us"] = df["to_avg_us"] - df["from_avg_us"]
            tol = (df["from_total_us"].abs() * min_change_ratio).clip(lower=min_change_us)
            status = pd.Series("unchanged", index=df.index, dtype="object")
            status[df["delta_total_us"] < -tol] = "faster"
            status[df["delta_total_us"] > tol] = "slower"
            status[(df["from_count"] == 0) & (df["to_count"] > 0)] = "added"
            status[(df["to_count"] == 0) & (df["from_count"] > 0)] = "removed"
            df.insert(2, "status", status)
            df = df.reindex(df["delta_total_us"].abs().sort_values(ascending=False, kind="stable").index)
            out.append(df)
        return pd.concat(out, ignore_index=True)

    def modules(self, pair=None, fold_layers: bool = False, min_change_us: float = 0.5, min_change_ratio: float = 0.01):
        """Per ``nn.Module`` path and phase, for each pair: device time per rank-step, the change,
        its noise band (the runs' own step-to-step spread) and status; ``fold_layers`` folds
        repeated layers (``Layer_0..N``) into one row with the per-layer spread.  See
        :mod:`.modules`."""
        from .modules import module_changes

        return module_changes(self, pair, fold_layers, min_change_us, min_change_ratio)

    def op_changes(self, by: str = "type", pair=None) -> pd.DataFrame:
        """Counts and total / average deltas of the ops per status (added, removed, faster,
        slower, unchanged) for each pair."""
        o = self.ops(by=by, pair=pair)
        g = o.groupby(["pair", "status"], sort=False).agg(
            n_ops=(by, "size"), delta_total_us=("delta_total_us", "sum"), avg_delta_us=("delta_total_us", "mean")
        )
        return g.reset_index()

    def summary(self) -> pd.DataFrame:
        """One row per pair: step change, compute saved, how much of it the step gained,
        communication not overlapped / free changes, utilisation and memory peak change, verdict."""
        rows = []
        for i, j in self.pairs:
            a, b = self.stats[i], self.stats[j]
            w = self._waterfall_pair(i, j).set_index("component")["delta_us"]
            d_step = b["step_us"] - a["step_us"]
            d_comp = b["computing_us"] - a["computing_us"]
            saved = -d_comp
            rows.append(
                {
                    "pair": self.pair_label(i, j),
                    "from_run": self.names[i],
                    "to_run": self.names[j],
                    "from_step_us": a["step_us"],
                    "to_step_us": b["step_us"],
                    "delta_step_us": d_step,
                    "delta_step_share_of_from_step_ratio": d_step / a["step_us"] if a["step_us"] else float("nan"),
                    "delta_computing_us": d_comp,
                    "compute_saved_us": saved,
                    "step_gained_us": -d_step,
                    "gained_share_of_compute_saved_ratio": (-d_step / saved) if saved > 0 else float("nan"),
                    "delta_comm_not_overlapped_us": w["comm_not_overlapped"],
                    "delta_free_us": w["free"],
                    "delta_preparing_us": w["preparing"],
                    "top_component": _top_component(w),
                    "delta_busy_ratio": b["busy_ratio"] - a["busy_ratio"],
                    "delta_compute_ratio": b["compute_ratio"] - a["compute_ratio"],
                    "delta_peak_allocated_bytes": b["peak_allocated_bytes"] - a["peak_allocated_bytes"],
                    "verdict": self._verdict(i, j, w),
                }
            )
        return pd.DataFrame(rows)

    def verdicts(self) -> list[str]:
        """Per pair, in words: the noise verdict (regression / improvement / within noise /
        inconclusive, with the comparability caveats), then where the step change went."""
        out = []
        for v, (i, j) in zip(self.noise_verdicts(), self.pairs):
            w = self._waterfall_pair(i, j).set_index("component")["delta_us"]
            rest = self._verdict_parts(i, j, w)[1:]  # the step change itself is the noise verdict's
            out.append(" ".join([v["text"], *rest]).rstrip())
        return out

    def _signature(self, k: int) -> dict:
        if k not in self._signatures:
            self._signatures[k] = signature(self.profiles[k])
        return self._signatures[k]

    def comparability(self, i: int = 0, j: int = 1) -> list[dict]:
        """Warnings about comparing run ``j`` with run ``i`` (``code``, ``message``, ``blocking``):
        hardware, world size, ranks, model signature, batch shapes (comparison.noise)."""
        return comparability(self._signature(i), self._signature(j), self.lang)

    def noise_verdicts(self) -> list[dict]:
        """Per pair, the step change against run-to-run noise: ``kind`` (regression,
        improvement, neutral, inconclusive), ``delta_us``, ``noise_us`` (95 %), ``text``,
        ``comparability`` and the steps each side contributed (comparison.noise)."""
        out = []
        self._for_runs(self._signature, self.pairs)
        for i, j in self.pairs:
            v = noise_verdict(
                self.stats[i]["samples"],
                self.stats[j]["samples"],
                self.comparability(i, j),
                (self.names[i], self.names[j]),
                self.lang,
            )
            out.append({"pair": self.pair_label(i, j), "from_run": self.names[i], "to_run": self.names[j], **v})
        return out

    def _verdict(self, i, j, w) -> str:
        """Where the step change of pair (i, j) went, in the comparison's language."""
        return " ".join(self._verdict_parts(i, j, w))

    def _verdict_parts(self, i, j, w) -> list[str]:
        """The sentences of :meth:`_verdict`: the step change first, then where it went (compute,
        the component that moved most, communication not overlapped, device idle, host-side
        preparing, utilisation, memory peak).  Words from the catalogue (:mod:`..i18n.compare`)."""
        lang = self.lang

        def say(key: str, **values) -> str:
            return t(key, lang, **values)

        a, b = self.stats[i], self.stats[j]
        d_step = b["step_us"] - a["step_us"]
        d_comp = b["computing_us"] - a["computing_us"]
        which, sa, sb = "step", a["step_us"], b["step_us"]
        if math.isnan(sa) or math.isnan(sb):  # no device step on a side: the host step, named so
            which, sa, sb = "host", _host_mean(a), _host_mean(b)
        names = {"to": self.names[j], "frm": self.names[i]}
        if math.isnan(sa) or math.isnan(sb):
            return [say("compare.v.no_step", **names)]
        pct = 100.0 * (sb - sa) / sa if sa else float("nan")
        head = say("compare.v.head", **names, which=say(f"compare.v.which.{which}"), sa=sa, sb=sb, d=sb - sa, pct=pct)
        if which == "host":
            return [head, say("compare.v.host_only")]
        comp = w[list(COMPUTE_COMPONENTS)]
        top = comp.abs().idxmax() if comp.abs().max() > 0 else None
        lead = say("compare.v.lead", label=say(f"compare.label.{top}"), delta=comp[top]) if top else ""
        moved = {"comm": w["comm_not_overlapped"], "free": w["free"]}
        parts = [head]
        if d_comp < 0:
            saved = -d_comp
            gained = -d_step
            share = 100.0 * gained / saved
            if gained < 0:
                # compute fell but the step grew: a negative "gain" of it says nothing
                parts.append(say("compare.v.fell_grew", saved=saved, lead=lead, grew=-gained, **moved))
                gained = saved  # the sentence above already says where the time went
            elif gained > saved:
                # a tiny compute saving next to a large step gain: a percentage like 2922875% says
                # nothing; the next sentence names where the time came from
                of_it = say("compare.v.of_it", share=share) if share <= 1000 else ""
                parts.append(say("compare.v.fell_more", saved=saved, lead=lead, gained=gained, of_it=of_it))
            else:
                parts.append(say("compare.v.fell", saved=saved, lead=lead, gained=gained, share=share))
            rest = saved - gained  # = Δcomm_not_overlapped + Δfree
            if abs(rest) > 1e-6 * max(saved, 1.0):
                both = say("compare.v.both", **moved)
                key = "compare.v.absorbed" if rest > 0 else "compare.v.outside"
                parts.append(say(key, rest=abs(rest), both=both))
        elif d_comp > 0:
            parts.append(say("compare.v.grew", d=d_comp, lead=lead, **moved))
        else:
            parts.append(say("compare.v.same", **moved))
        dp = w["preparing"]
        if not math.isnan(dp) and abs(dp) > 0.01 * max(abs(d_step), 1.0):
            parts.append(say("compare.v.later" if dp > 0 else "compare.v.earlier", dp=abs(dp)))
        if not (math.isnan(a["busy_ratio"]) or math.isnan(b["busy_ratio"])):
            parts.append(
                say(
                    "compare.v.busy",
                    ba=100 * a["busy_ratio"],
                    bb=100 * b["busy_ratio"],
                    ca=100 * a["compute_ratio"],
                    cb=100 * b["compute_ratio"],
                )
            )
        pa_, pb = a["peak_allocated_bytes"], b["peak_allocated_bytes"]
        if not (math.isnan(pa_) or math.isnan(pb)):
            parts.append(say("compare.v.memory", ma=pa_ / MIB, mb=pb / MIB, dm=(pb - pa_) / MIB))
        return parts

    # --- output ----------------------------------------------------------------------
    def to_dict(self) -> dict:
        """Plain JSON-able data: runs, steps, waterfalls per pair, op changes, module changes
        (as they are and with layers folded), summary."""

        def rec(df):
            return json.loads(df.to_json(orient="records", default_handler=str))

        wf = self.waterfall()
        return {
            "runs": [
                {"name": n, "path": str(p.path), "format": p.format, "ranks": s["ranks"], "steps": s["steps"]}
                for n, p, s in zip(self.names, self.profiles, self.stats)
            ],
            "steps": rec(self.steps()),
            "waterfalls": {lab: rec(g) for lab, g in wf.groupby("pair", sort=False)},
            "op_changes": {"type": rec(self.op_changes("type")), "name": rec(self.op_changes("name"))},
            "ops_by_type": rec(self.ops("type")),
            "modules": rec(self.modules()),
            "modules_folded": rec(self.modules(fold_layers=True)),
            "summary": rec(self.summary()),
            "verdicts": self.noise_verdicts(),
        }

    def __repr__(self) -> str:
        lines = [f"<Comparison of {len(self.names)} runs: {' -> '.join(self.names)}>"]
        lines += [f"  {v}" for v in self.verdicts()]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        # drawn by the render layer (above this one), lent through the hooks table
        draw = hooks.get("comparison_html")
        return draw(self) if draw is not None else f"<pre>{html.escape(repr(self))}</pre>"

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {
            "text/html": self._repr_html_(),
            "text/plain": repr(self),
            "application/vnd.profinsight.comparison+json": self.to_dict(),
        }


def _host_mean(stats: dict) -> float:
    """Mean host step of a run: its breakdown's, else its step samples' where they are host steps."""
    if not math.isnan(stats["host_step_us"]):
        return stats["host_step_us"]
    sm = stats["samples"]
    return (
        float(sum(sm["samples_us"]) / len(sm["samples_us"]))
        if sm["basis"] == "host" and sm["samples_us"]
        else float("nan")
    )


def _top_component(w) -> str | None:
    inside = w.drop(labels=["preparing"]).dropna()  # a run without device steps has no components
    return None if not len(inside) or inside.abs().max() <= 0 else str(inside.abs().idxmax())
