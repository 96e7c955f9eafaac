"""GPU run vs NPU run (or any two runs whose kernels differ): aligned at the framework-op level.

``profinsight.compare(gpu_run, npu_run, mode="framework")`` returns a :class:`FrameworkComparison`.

Kernels differ between a CUDA and an Ascend run of the same model, the framework ops do not.
Each device task (kinds ``kernel``, ``memcpy``, ``memset``, ``communication``) is attributed
through ``launches`` (the rows with a ``host_op_id``) to the host op that launched it, and from
there to that op's **top-level framework op**: the outermost ``host_ops`` row of category ``op``
that encloses it on the same thread (so ``aclnnConvolution`` / ``Conv2D`` fold under
``aten::conv2d``, ``aten::cudnn_convolution`` too).  The top-level name is then mapped through
the alias table (:data:`DEFAULT_ALIASES`, extended by ``aliases=``: a dict or a CSV file with
columns ``name,canonical``) to a canonical name; both runs are grouped by it.

Phase of a top-level op: ``backward`` (autograd ``evaluate_function`` / ``*Backward*`` ops, and
every op on a thread where those run), ``optimizer`` (``Optimizer.*``, ``optimizer.*``,
``aclnnForeach*``, ``*_foreach_*``, ``Optimizer.step``), ``communication`` (c10d / HCCL / NCCL /
DDP reducer ops), else ``forward``.  A run is ``training`` when it has backward or optimizer ops,
else ``inference``; :meth:`FrameworkComparison.mode_note` says when the two differ.
By default only ``forward`` ops are compared (``phases=``).

Figures per aligned op: calls, summed device time and the average per call of each run; the
change of the average (``delta_avg_us``), ``ratio_x`` (to / from), and ``lost_us`` =
``delta_avg_us`` x the calls of the second run per iteration — the time the second run loses on
this op per iteration (iterations: the number of steps where the run marks steps, else the
number of host annotations named ``*forward*`` that no other such annotation encloses, else 1).
"""

from __future__ import annotations

import csv
import html
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from .. import hooks

#: top-level op name -> canonical name (the user extends it with ``aliases=``)
DEFAULT_ALIASES: dict[str, str] = {
    "aten::convolution": "aten::conv2d",
    "aten::_convolution": "aten::conv2d",
    "aten::cudnn_convolution": "aten::conv2d",
    "aclnnConvolution": "aten::conv2d",
    "Conv2D": "aten::conv2d",
    "aten::relu": "aten::relu_",
    "aten::clamp_min_": "aten::relu_",
    "aclnnInplaceRelu": "aten::relu_",
    "aclnnRelu": "aten::relu_",
    "aten::max_pool2d_with_indices": "aten::max_pool2d",
    "aclnnMaxPool2dWithMask": "aten::max_pool2d",
    "aten::_adaptive_avg_pool2d": "aten::adaptive_avg_pool2d",
    "aclnnAdaptiveAvgPool2d": "aten::adaptive_avg_pool2d",
    "aten::addmm": "aten::linear",
    "aclnnAddmm": "aten::linear",
    "aclnnMm": "aten::mm",
    "aten::native_dropout": "aten::dropout",
    "npu::_npu_dropout": "aten::dropout",
    "aten::flatten": "aten::flatten",
}

#: host ops that only wrap others (never a top-level framework op)
CONTAINERS = r"ProfilerStep#|\[|Iteration#|## |.*\.forward$|Optimizer\.|enumerate\(DataLoader\)|nn\.Module"
DEVICE_KINDS = ("kernel", "memcpy", "memset", "communication")
_BACKWARD = re.compile(r"autograd::engine::evaluate_function|Backward\d*$|backward", re.I)
_OPTIM = re.compile(r"^Optimizer\.|^optimizer|aclnnForeach|_foreach_|^Optimizer", re.I)
_COMM = re.compile(r"c10d::|^Hccl|^hcom|nccl|reducer|ddp|distributed", re.I)


def load_aliases(aliases=None) -> dict[str, str]:
    """DEFAULT_ALIASES updated with ``aliases``: a dict, or a path to a CSV with a header
    ``name,canonical`` (one alias per row)."""
    out = dict(DEFAULT_ALIASES)
    if aliases is None:
        return out
    if isinstance(aliases, (str, Path)):
        with open(aliases, newline="", encoding="utf-8") as f:
            aliases = {r["name"].strip(): r["canonical"].strip() for r in csv.DictReader(f) if r.get("name")}
    out.update(dict(aliases))
    return out


def phase_of(name: str, wrappers: str = "") -> str:
    """Phase of a top-level op from its name, else from the wrappers around it (an op inside
    ``Optimizer.step#...`` is an optimizer op)."""
    for w in filter(None, wrappers.split(" / ")):
        if _OPTIM.search(w):
            return "optimizer"
        if _BACKWARD.search(w):
            return "backward"
    if _BACKWARD.search(name):
        return "backward"
    if _OPTIM.search(name):
        return "optimizer"
    if _COMM.search(name):
        return "communication"
    return "forward"


def top_level_ops(host_ops: pd.DataFrame) -> pd.DataFrame:
    """For every ``op`` row of host_ops that is not a :data:`CONTAINERS` wrapper (``ProfilerStep#N``,
    ``*.forward`` module records, ``Optimizer.step#...``): ``top_op_id`` and ``top_name`` of its
    outermost enclosing non-wrapper ``op`` on the same (rank, thread), and ``wrappers``: the
    names of the wrappers around that top-level op (joined by " / ")."""
    ops = host_ops[host_ops["category"] == "op"][["rank", "op_id", "thread", "name", "start_ns", "dur_ns"]]
    ops = ops.dropna(subset=["start_ns", "dur_ns"]).copy()
    ops["name"] = ops["name"].astype(str)
    is_wrap = ops["name"].str.match(CONTAINERS).to_numpy(dtype=bool)
    ops["_wrap"] = is_wrap
    res = {}
    for _, g in ops.groupby(["rank", "thread"], dropna=False, sort=False):
        s = g["start_ns"].to_numpy(dtype="int64")
        e = s + g["dur_ns"].to_numpy(dtype="int64")
        ids, names, wrap = g["op_id"].to_numpy(), g["name"].to_numpy(), g["_wrap"].to_numpy()
        rank = g["rank"].iloc[0]
        stack: list[int] = []
        for k in np.lexsort((-e, s)):  # by start, the longer (enclosing) first
            while stack and s[k] >= e[stack[-1]]:
                stack.pop()
            if not wrap[k]:
                top = next((a for a in stack if not wrap[a]), k)
                wr = " / ".join(names[a] for a in stack if wrap[a] and a != top)
                res[(rank, ids[k])] = (ids[top], names[top], wr)
            stack.append(k)
    ops = ops[~ops["_wrap"]].drop(columns="_wrap")
    vals = [res[(r, i)] for r, i in zip(ops["rank"], ops["op_id"])]
    ops["top_op_id"] = [v[0] for v in vals]
    ops["top_name"] = [v[1] for v in vals]
    ops["wrappers"] = [v[2] for v in vals]
    return ops


def framework_ops(profile, aliases=None) -> pd.DataFrame:
    """One row per top-level framework op call of the run: ``rank``, ``top_op_id``, ``name``
    (top-level), ``canonical``, ``phase``, ``thread``, ``device_us`` (device time it launched),
    ``n_tasks``."""
    al = load_aliases(aliases)
    h = profile.table("host_ops")
    cols = ["rank", "top_op_id", "name", "canonical", "phase", "thread", "wrappers", "device_us", "n_tasks"]
    if h.empty:
        return pd.DataFrame(columns=cols)
    top = top_level_ops(h)
    launches = profile.table("launches")
    launches = launches[launches["host_op_id"].notna()][["rank", "host_op_id", "task_uid"]].drop_duplicates()
    d = profile.table("device_tasks")
    d = d[d["kind"].isin(DEVICE_KINDS)][["rank", "task_uid", "dur_ns"]]
    x = launches.merge(d, on=["rank", "task_uid"]).merge(
        top[["rank", "op_id", "top_op_id"]], left_on=["rank", "host_op_id"], right_on=["rank", "op_id"]
    )
    x = x.drop_duplicates(["rank", "task_uid"])
    dev = x.groupby(["rank", "top_op_id"]).agg(device_ns=("dur_ns", "sum"), n_tasks=("task_uid", "size")).reset_index()
    calls = top[top["op_id"] == top["top_op_id"]][["rank", "op_id", "name", "thread", "wrappers"]].rename(
        columns={"op_id": "top_op_id"}
    )
    out = calls.merge(dev, on=["rank", "top_op_id"], how="left")
    out["device_us"] = out["device_ns"].astype("float64").fillna(0.0) / 1e3
    out["n_tasks"] = out["n_tasks"].astype("float64").fillna(0).astype("int64")
    out["name"] = out["name"].astype(str)
    out["phase"] = [phase_of(n, w) for n, w in zip(out["name"], out["wrappers"])]
    bw_threads = set(out.loc[out["phase"] == "backward", ["rank", "thread"]].itertuples(index=False, name=None))
    on_bw = [(r, t) in bw_threads for r, t in zip(out["rank"], out["thread"])]
    out.loc[np.array(on_bw, dtype=bool) & (out["phase"] == "forward").to_numpy(), "phase"] = "backward"
    out["canonical"] = [al.get(n, n) for n in out["name"]]
    return out[cols]


def iterations(profile) -> int:
    """Steps where marked; else outermost host annotations named like ``*forward*``; else 1."""
    st = profile.table("steps")
    if not st.empty and st["step"].notna().any():
        return int(st[["rank", "step"]].drop_duplicates().groupby("rank").size().max())
    h = profile.table("host_ops")
    a = h[(h["category"] == "annotation") & h["name"].astype(str).str.contains("forward", case=False)]
    if a.empty:
        return 1
    s = a["start_ns"].to_numpy(dtype="int64")
    e = s + a["dur_ns"].to_numpy(dtype="int64")
    outer = [not any((s[j] <= s[i] and e[i] <= e[j] and j != i) for j in range(len(s))) for i in range(len(s))]
    return max(int(sum(outer)), 1)


def run_mode(ops: pd.DataFrame) -> str:
    return "training" if ops["phase"].isin(["backward", "optimizer"]).any() else "inference"


class FrameworkComparison:
    """Two runs aligned at the framework-op level: ``ops()``, ``modes()``, ``mode_note()``,
    ``top()``, ``verdict()``, ``to_dict()``, rich display (module docstring)."""

    def __init__(self, profiles, names, aliases=None, phases=("forward",)):
        if len(profiles) != 2:
            from ..errors import ProfileError

            raise ProfileError(
                "mode='framework' compares exactly two runs", fix="compare(gpu_run, npu_run, mode='framework')"
            )
        self.profiles, self.names = list(profiles), list(names)
        self.aliases = load_aliases(aliases)
        self.phases = tuple(phases) if phases else None
        self.calls = [framework_ops(p, self.aliases) for p in self.profiles]
        self.iterations = [iterations(p) for p in self.profiles]

    def modes(self) -> pd.DataFrame:
        rows = []
        for name, c, it in zip(self.names, self.calls, self.iterations):
            ph = c["phase"].value_counts()
            rows.append(
                {
                    "run": name,
                    "mode": run_mode(c),
                    "iterations": it,
                    **{f"n_{p}_ops": int(ph.get(p, 0)) for p in ("forward", "backward", "optimizer", "communication")},
                }
            )
        return pd.DataFrame(rows)

    def mode_note(self) -> str | None:
        m = self.modes()
        if m["mode"].nunique() == 1:
            return None
        parts = [
            f"{r['run']} is {'an' if r['mode'] == 'inference' else 'a'} {r['mode']} run ({r['n_backward_ops']} backward, {r['n_optimizer_ops']} "
            f"optimizer ops)"
            for _, r in m.iterrows()
        ]
        scope = "/".join(self.phases) if self.phases else "all"
        return "The two runs differ in mode: " + "; ".join(parts) + f". Compared on {scope} framework ops only."

    def ops(self) -> pd.DataFrame:
        """One row per canonical framework op: calls, device time (total and per call) in each
        run, ``delta_avg_us``, ``ratio_x``, ``lost_us`` (module docstring), ``status``
        (both / only_from / only_to), the top-level names seen; sorted by ``lost_us``."""
        parts = []
        for k, c in enumerate(self.calls):
            if self.phases:
                c = c[c["phase"].isin(self.phases)]
            g = (
                c.groupby("canonical")
                .agg(
                    count=("device_us", "size"),
                    total_us=("device_us", "sum"),
                    names=("name", lambda s: ", ".join(sorted(set(s)))),
                )
                .reset_index()
            )
            g["calls_per_iteration"] = g["count"] / self.iterations[k]
            parts.append(g)
        m = parts[0].merge(parts[1], on="canonical", how="outer", suffixes=("_from", "_to"))
        df = pd.DataFrame({"op": m["canonical"]})
        for side in ("from", "to"):
            df[f"{side}_count"] = m[f"count_{side}"].astype("float64").fillna(0.0)
            df[f"{side}_total_us"] = m[f"total_us_{side}"].astype("float64").fillna(0.0)
            df[f"{side}_avg_us"] = (df[f"{side}_total_us"] / df[f"{side}_count"]).where(df[f"{side}_count"] > 0)
            df[f"{side}_calls_per_iteration"] = m[f"calls_per_iteration_{side}"].astype("float64").fillna(0.0)
        df["delta_avg_us"] = df["to_avg_us"] - df["from_avg_us"]
        df["ratio_x"] = (df["to_avg_us"] / df["from_avg_us"]).where(df["from_avg_us"] > 0)
        df["lost_us"] = df["delta_avg_us"] * df["to_calls_per_iteration"]
        status = pd.Series("both", index=df.index, dtype="object")
        status[df["from_count"] == 0] = "only_" + "to"
        status[df["to_count"] == 0] = "only_" + "from"
        df["status"] = status
        df["from_names"] = m["names_from"].fillna("")
        df["to_names"] = m["names_to"].fillna("")
        key = df["lost_us"].abs().fillna(-1.0)
        return df.loc[key.sort_values(ascending=False, kind="stable").index].reset_index(drop=True)

    def top(self, n: int = 5) -> pd.DataFrame:
        """The aligned ops (in both runs) that differ most, by |lost_us|."""
        o = self.ops()
        return o[o["status"] == "both"].head(n).reset_index(drop=True)

    def verdict(self) -> str:
        a, b = self.names
        parts = []
        note = self.mode_note()
        if note:
            parts.append(note)
        t = self.top(3)
        both = self.ops()
        both = both[both["status"] == "both"]
        if t.empty:
            parts.append("No framework op is common to both runs (extend the aliases).")
            return " ".join(parts)
        tot_a = float((both["from_avg_us"] * both["to_calls_per_iteration"]).sum())
        tot_b = float((both["to_avg_us"] * both["to_calls_per_iteration"]).sum())
        parts.append(
            f"On the {len(both)} aligned ops, {b} spends {tot_b:,.1f} us of device time per iteration "
            f"where {a} would spend {tot_a:,.1f} us ({tot_b - tot_a:+,.1f} us)."
        )
        words = [
            f"{r['op']} ({r['from_avg_us']:,.1f} -> {r['to_avg_us']:,.1f} us per call, {r['ratio_x']:.2f}x, "
            f"{r['lost_us']:+,.1f} us per iteration)"
            for _, r in t.iterrows()
        ]
        parts.append(
            "The forward ops that differ most: " + "; ".join(words) + "."
            if self.phases == ("forward",)
            else "The ops that differ most: " + "; ".join(words) + "."
        )
        return " ".join(parts)

    def verdicts(self) -> list[str]:
        return [self.verdict()]

    def to_dict(self) -> dict:
        rec = lambda df: json.loads(df.to_json(orient="records", default_handler=str))  # noqa: E731
        return {
            "mode": "framework",
            "runs": [{"name": n, "path": str(p.path), "format": p.format} for n, p in zip(self.names, self.profiles)],
            "modes": rec(self.modes()),
            "mode_note": self.mode_note(),
            "phases": list(self.phases or []),
            "ops": rec(self.ops()),
            "verdict": self.verdict(),
        }

    def __repr__(self) -> str:
        return f"<FrameworkComparison {self.names[0]} vs {self.names[1]}>\n  {self.verdict()}"

    def _repr_html_(self) -> str:
        # drawn by the render layer (above this one), lent through the hooks table
        draw = hooks.get("framework_html")
        return draw(self) if draw is not None else f"<pre>{html.escape(repr(self))}</pre>"

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {
            "text/html": self._repr_html_(),
            "text/plain": repr(self),
            "application/vnd.profinsight.comparison+json": self.to_dict(),
        }
