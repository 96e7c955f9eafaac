"""The advisor's rule machinery: :class:`Rule`, :class:`Hit`, the :func:`rule` decorator, the
registry :data:`RULES`, small numeric helpers and :class:`Context` (the tables a rule reads).

The rules themselves live in the area modules of this package."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import pandas as pd

from ... import capabilities

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
    #: which steps its per-step figures are of: ``"steps"`` (every rank-step of step_breakdown) or
    #: ``"tasks"`` (only the rank-steps derived from device tasks: the rule reads tasks, gaps or
    #: host tables, which ranks that carry only the vendor's per-step figures do not have)
    basis: str = "steps"
    #: the analyses the rule reads whatever it finds, ``(name, params)``; a parameter given as
    #: :class:`Th` takes the rule's threshold of that name.  The advisor computes them on its
    #: threads before the rules run (:func:`~profinsight.advisor.core.reads_ahead`): a rule
    #: thread that waits for an analysis another thread computes holds no core.  A read the rule
    #: makes only sometimes is not listed (it would be computed for nothing);
    #: ``tests/advisor/test_reads_ahead.py`` checks each listed read is made
    reads: tuple = ()

    def reads_for(self, th: dict) -> list[tuple[str, dict]]:
        """:attr:`reads` with the thresholds ``th`` put in."""
        return [
            (name, {k: float(th[v.name]) if isinstance(v, Th) else v for k, v in params.items()})
            for name, params in self.reads
        ]


@dataclass(frozen=True)
class Th:
    """A parameter of a rule's read (:attr:`Rule.reads`) that is the rule's threshold ``name``,
    as a float, the way the rule passes it."""

    name: str


RULES: dict[str, Rule] = {}


def rule(
    id: str,
    *,
    severity: str,
    category: str,
    thresholds: dict | None = None,
    ascend_only: bool = False,
    basis: str = "steps",
    reads: tuple = (),
):
    def deco(func):
        RULES[id] = Rule(id, func, severity, category, dict(thresholds or {}), ascend_only, basis, tuple(reads))
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
        from ...store.results import KeyLocks

        self.profile = profile
        self._cache: dict = {}
        self._locks = KeyLocks()  # rules run on several threads: each table is read once

    def view(self, name: str, **params) -> pd.DataFrame:
        key = (name, tuple(sorted(params.items())))
        with self._locks(key):
            if key not in self._cache:
                self._cache[key] = pd.DataFrame(self.profile.view(name, **params))
            return self._cache[key]

    def table(self, name: str, columns: tuple[str, ...] | None = None, where: str | None = None) -> pd.DataFrame:
        """A canonical table, only ``columns`` (and rows matching the SQL ``where``) when given:
        DuckDB then reads just those Parquet columns (host_ops' call stacks alone are hundreds
        of MB on a GB-scale profile) and filters before anything reaches pandas."""
        key = ("table", name, columns, where)
        with self._locks(key):
            if key not in self._cache:
                if columns:
                    from ...analyses._sql import query

                    present = set(self.profile.arrow(name).schema.names) if name not in _BIG else None
                    cols = [c for c in columns if present is None or c in present]
                    cond = f" WHERE {where}" if where else ""
                    self._cache[key] = query(self.profile, f"SELECT {', '.join(cols)} FROM {name}{cond}")
                else:
                    self._cache[key] = self.profile.table(name)
            return self._cache[key]

    @cached_property
    def device_family(self) -> str | None:
        """``NPU`` | ``GPU`` | ``CPU`` as run_info records it (None when it says nothing); read
        once per context, as the analyses are (the rules ask it a dozen times)."""
        fam = capabilities.device_family(self.profile)
        return fam.upper() if fam else None

    @cached_property
    def is_ascend(self) -> bool:
        """Whether the profile records an Ascend NPU (read from run_info, never from the format name)."""
        return capabilities.is_npu(self.profile)

    def _derived(self, key: str, compute):
        """A value derived from the analyses, computed once per context like them: the rules
        ask for the steps and their means hundreds of times, each time pandas work under the
        GIL the rule threads share (the advisor phase of a cold 100 MB Kineto ``analyze``
        0.574 -> 0.564 s)."""
        with self._locks(("derived", key)):
            if key not in self._cache:
                self._cache[key] = compute()
            return self._cache[key]

    @property
    def steps(self) -> pd.DataFrame:
        """The (rank, step) rows of the step breakdown with a device step.  Shared by every
        rule, like the analyses' frames: read it, never modify it."""

        def compute():
            sb = self.view("step_breakdown")
            return sb[pd.to_numeric(sb["step_us"], errors="coerce").fillna(0) > 0] if len(sb) else sb

        return self._derived("steps", compute)

    @property
    def n_steps(self) -> int:
        return max(len(self.steps), 1)

    @property
    def step_us(self) -> float:
        """Mean device step (us) over the (rank, step) rows."""
        return self._derived("step_us", lambda: col_sum(self.steps, "step_us") / self.n_steps)

    def per_step(self, total: float) -> float:
        return total / self.n_steps

    @property
    def task_steps(self) -> pd.DataFrame:
        """The rank-steps whose figures come from device tasks (``source = 'tasks'``): the
        denominator of anything summed over tasks, gaps or host tables.  A rank that carries only
        the vendor's per-step figures (a partial export) has none of those, so counting its steps
        would understate every per-step figure.  All steps where no row says where it comes from."""

        def compute():
            sb = self.steps
            if not len(sb) or "source" not in sb.columns:
                return sb
            t = sb[sb["source"].astype("string").fillna("tasks") == "tasks"]
            return t if len(t) else sb

        return self._derived("task_steps", compute)

    @property
    def stepless(self) -> bool:
        """Whether no step was recorded: the one "step" is then the whole capture, and shares
        are said to be of the capture."""
        sb = self.task_steps
        return bool(len(sb)) and "step" in sb.columns and bool(sb["step"].isna().all())

    @property
    def per_capture(self) -> bool:
        """Whether a figure "per step" is of the whole capture: no step was recorded, neither on
        the device (:attr:`stepless`) nor on the host (no ProfilerStep in the ``steps`` table).
        Every share and per-step figure then names the capture as its denominator."""
        if self.stepless:
            return True
        return not self.profile.steps

    def denominator(self) -> dict:
        """The words a rule's message takes for its denominator, by catalogue key: ``of`` (the
        step / the capture) and ``per`` (per step / in the capture)."""
        cap = self.per_capture
        return {
            "of": {"$t": "share_of.capture" if cap else "share_of.step"},
            "per": {"$t": "per.capture" if cap else "per.step"},
        }

    @property
    def n_task_steps(self) -> int:
        return max(len(self.task_steps), 1)

    @property
    def task_step_us(self) -> float:
        """Mean device step (us) over the rank-steps derived from tasks."""
        return self._derived("task_step_us", lambda: col_sum(self.task_steps, "step_us") / self.n_task_steps)

    def per_task_step(self, total: float) -> float:
        """A total over tasks / gaps / host tables per task-derived rank-step."""
        return total / self.n_task_steps

    def step_of(self, basis: str) -> float:
        """The mean step a rule of ``basis`` (``steps`` | ``tasks``) takes its shares of."""
        return self.task_step_us if basis == "tasks" else self.step_us

    @property
    def host_ranks(self) -> set[int]:
        """Ranks that record any host activity (framework ops or runtime / CANN / CUDA API calls):
        where a rank has none, no rule can say what its host was doing."""
        out: set[int] = set()
        for name in ("host_ops", "api_calls"):
            t = self.table(name, ("rank",))
            if len(t):
                out |= {int(r) for r in pd.unique(t["rank"].dropna())}
        return out

    def step_window(self, rank=None, step=None) -> dict | None:
        """``{rank, step, start_ns, end_ns}`` (absolute ns) of one step on the device, by default
        the longest (rank, step) of the step breakdown: where the viewer jumps to show a finding
        whose evidence names no narrower time.  Without step markers: the rank's device span."""
        sb = self.steps
        if rank is None and len(sb):
            r = sb.loc[pd.to_numeric(sb["step_us"], errors="coerce").fillna(0).idxmax()]
            rank, step = int(r["rank"]), (None if pd.isna(r["step"]) else int(r["step"]))
        st = self.table("steps")
        if rank is not None and step is not None and len(st):
            row = st[(st["rank"] == rank) & (st["step"] == step)]
            if len(row):
                row = row.iloc[0]
                s = row["device_start_ns"] if pd.notna(row["device_start_ns"]) else row["host_start_ns"]
                e = row["device_end_ns"] if pd.notna(row["device_end_ns"]) else row["host_end_ns"]
                if pd.notna(s) and pd.notna(e):
                    return {"rank": int(rank), "step": int(step), "start_ns": int(s), "end_ns": int(e)}
        from ...analyses._sql import query

        cond = "" if rank is None else f" WHERE rank = {int(rank)}"
        span = query(
            self.profile,
            f"SELECT min(rank) AS rank, min(start_ns) AS s, max(start_ns + dur_ns) AS e FROM device_tasks{cond}",
        )
        if not len(span) or pd.isna(span["s"].iloc[0]):
            return None
        return {
            "rank": int(span["rank"].iloc[0]) if rank is None else int(rank),
            "step": None,
            "start_ns": int(span["s"].iloc[0]),
            "end_ns": int(span["e"].iloc[0]),
        }

    def evidence_window(self, evidence: dict) -> dict | None:
        """The time window that shows a finding on the timeline: its longest gap when it lists
        gaps, else the (rank, step) its per-step evidence ranks worst, else the longest step."""
        gaps = evidence.get("longest_gaps") or []
        if gaps and gaps[0].get("start_ns") is not None:
            g = gaps[0]
            return {
                "rank": int(g["rank"]),
                "step": g.get("step"),
                "start_ns": int(g["start_ns"]),
                "end_ns": int(g["end_ns"]),
            }
        rows = [r for r in evidence.get("per_rank_step") or [] if r.get("step") is not None]
        if rows:
            key = next((k for k in ("comm_not_overlapped_us", "dispatch_us", "step_us") if k in rows[0]), None)
            worst = max(rows, key=lambda r: num(r.get(key))) if key else rows[0]
            w = self.step_window(int(worst["rank"]), int(worst["step"]))
            if w is not None:
                return w
        return self.step_window()

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


def where_in_code(ctx: Context, kernel_type: str) -> dict | None:
    """Where the device time of tasks of ``kernel_type`` sits in the model, from ``module_time``
    and ``code_time(user_only=True)``: the module group with the most of it (the last two path
    names, instance numbers folded: ``Sequential_0/Conv2d_*``), its phase and share, and the
    model source line (``file:line``) with the most of it in that phase.  None when the profile
    has no module frames for those tasks."""
    m = ctx.view("module_time", kernel_type=kernel_type)
    if not len(m):
        return None
    total = float(m["self_us"].sum())
    named = m[(m["path"] != "(unattributed)") & (m["self_us"] > 0)]
    if total <= 0 or not len(named):
        return None
    tail = named["path"].str.split("/").str[-2:].str.join("/")
    folded = tail.str.replace(r"_\d+(?=/|$)", "_*", regex=True)
    groups = named.assign(group=folded).groupby(["group", "phase"], sort=False)["self_us"].sum()
    (group, phase), us = groups.idxmax(), float(groups.max())
    c = ctx.view("code_time", kernel_type=kernel_type, user_only=True)
    lines = c[(c["phase"] == phase) & (c["frame"] != "(unattributed)") & (c["self_us"] > 0) & c["line"].notna()]
    line = None
    if len(lines):
        best = lines.loc[lines["self_us"].idxmax()]
        line = f"{best['file']}:{int(best['line'])}"
    return {"module": group, "phase": phase, "share": us / total, "line": line}
