"""``profinsight.collect``: profile a training loop in one cell and keep the record.

>>> with profinsight.collect("baseline", steps=3, notes="bs=32") as run:
...     for batch in loader:
...         train_step(batch)
...         run.step()
>>> run.profile.step_breakdown()

It wraps ``torch_npu.profiler.profile`` when ``torch_npu`` imports (Ascend) and
``torch.profiler.profile`` otherwise (CPU, plus CUDA when available).  Keyword options are the
profiler's own, passed through one-to-one (see ``docs/collect.md``).  torch is imported only
when a collection starts.
"""

from __future__ import annotations

import os
import re
import sys
import time
import warnings
from datetime import datetime
from pathlib import Path

from ..errors import ProfileError
from . import registry

#: keyword options of the profiler itself (torch.profiler.profile and torch_npu.profiler.profile)
PROFILER_OPTIONS = (
    "activities",
    "schedule",
    "on_trace_ready",
    "record_shapes",
    "profile_memory",
    "with_stack",
    "with_flops",
    "with_modules",
    "experimental_config",
    "execution_trace_observer",
    "acc_events",
    "use_cuda",
    "custom_trace_id_callback",
)
#: fields of torch_npu.profiler._ExperimentalConfig, accepted as top-level options for convenience
NPU_EXPERIMENTAL_OPTIONS = (
    "profiler_level",
    "aic_metrics",
    "l2_cache",
    "op_attr",
    "data_simplification",
    "record_op_args",
    "export_type",
    "msprof_tx",
    "mstx",
    "mstx_domain_include",
    "mstx_domain_exclude",
    "host_sys",
    "sys_io",
    "sys_interconnection",
    "gc_detect_threshold",
)
#: _ExperimentalConfig fields whose string values name a member of a torch_npu.profiler enum
_NPU_ENUMS = {"profiler_level": "ProfilerLevel", "aic_metrics": "AiCMetrics", "export_type": "ExportType"}
#: schedule keys (torch.profiler.schedule / torch_npu.profiler.schedule)
SCHEDULE_KEYS = ("wait", "warmup", "active", "repeat", "skip_first")
DEFAULT_SCHEDULE = {"wait": 1, "warmup": 1, "active": 3, "repeat": 1, "skip_first": 0}
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def schedule_spec(steps) -> dict:
    """``steps`` -> schedule keywords.  An int is the number of active (recorded) steps after one
    wait and one warm-up step; a dict (or a (wait, warmup, active) tuple) gives them directly."""
    spec = dict(DEFAULT_SCHEDULE)
    if steps is None:
        return spec
    if isinstance(steps, bool):
        raise ProfileError(f"steps must be an int, a dict or a tuple, not {steps!r}")
    if isinstance(steps, int):
        spec["active"] = steps
    elif isinstance(steps, dict):
        bad = set(steps) - set(SCHEDULE_KEYS)
        if bad:
            raise ProfileError(f"unknown schedule keys {sorted(bad)}", fix=f"use {', '.join(SCHEDULE_KEYS)}")
        spec.update(steps)
    elif isinstance(steps, (tuple, list)) and 1 <= len(steps) <= 5:
        spec.update(dict(zip(("wait", "warmup", "active", "repeat", "skip_first"), steps)))
    else:
        raise ProfileError(
            f"steps must be an int, a dict or a tuple, not {steps!r}",
            fix="steps=3, or steps=dict(wait=1, warmup=1, active=3)",
        )
    if any(not isinstance(v, int) or v < 0 for v in spec.values()) or spec["active"] < 1:
        raise ProfileError(f"bad schedule {spec}: counts are ints >= 0 and active >= 1")
    return spec


def total_steps(spec: dict) -> int:
    """Steps the loop must run for the schedule to finish (repeat 0 means forever: one cycle)."""
    return spec["skip_first"] + (spec["wait"] + spec["warmup"] + spec["active"]) * max(spec["repeat"], 1)


def _import_npu():
    try:
        import torch_npu  # noqa: F401
        import torch_npu.profiler as npu_profiler
    except ImportError:
        return None
    return npu_profiler


def npu_arguments(npu_profiler, out_dir: Path, spec: dict, options: dict) -> dict:
    """Keyword arguments for ``torch_npu.profiler.profile``: the tuning defaults, overridden
    one-to-one by ``options``.  Trace parsing is deferred (``analyse_flag=False``) and done
    offline when the collection ends."""
    options = dict(options)
    exp = {k: options.pop(k) for k in list(options) if k in NPU_EXPERIMENTAL_OPTIONS}
    if "experimental_config" not in options:
        exp.setdefault("profiler_level", "Level1")
    for key, enum_name in _NPU_ENUMS.items():
        value = exp.get(key)
        if isinstance(value, str):
            enum = getattr(npu_profiler, enum_name, None)
            if enum is None or not hasattr(enum, value):
                raise ProfileError(f"{key}={value!r} is not a torch_npu.profiler.{enum_name} member")
            exp[key] = getattr(enum, value)
    if "export_type" in exp and not isinstance(exp["export_type"], (list, tuple)):
        exp["export_type"] = [exp["export_type"]]
    act = npu_profiler.ProfilerActivity
    kw = {
        "activities": [act.CPU, act.NPU],
        "schedule": npu_profiler.schedule(**spec),
        "on_trace_ready": npu_profiler.tensorboard_trace_handler(str(out_dir), analyse_flag=False),
        "record_shapes": True,
        "profile_memory": True,
        "with_stack": True,
    }
    if "experimental_config" not in options:
        kw["experimental_config"] = npu_profiler._ExperimentalConfig(**exp)
    elif exp:
        raise ProfileError(f"pass {sorted(exp)} inside experimental_config, or drop experimental_config")
    kw.update(options)
    return kw


def torch_arguments(torch, out_dir: Path, spec: dict, options: dict, worker_name: str) -> dict:
    """Keyword arguments for ``torch.profiler.profile`` (CPU, plus CUDA when available)."""
    tp = torch.profiler
    bad = set(options) & set(NPU_EXPERIMENTAL_OPTIONS)
    if bad:
        raise ProfileError(f"{sorted(bad)} are torch_npu options and torch_npu is not installed")
    acts = [tp.ProfilerActivity.CPU]
    if torch.cuda.is_available():
        acts.append(tp.ProfilerActivity.CUDA)
    kw = {
        "activities": acts,
        "schedule": tp.schedule(**spec),
        "on_trace_ready": tp.tensorboard_trace_handler(str(out_dir), worker_name=worker_name),
        "record_shapes": True,
        "profile_memory": True,
        "with_stack": True,
    }
    kw.update(options)
    return kw


def offline_parse(npu_profiler, out_dir: Path) -> None:
    """torch_npu's offline parse of every ``*_ascend_pt`` folder under ``out_dir``."""
    analyse = None
    try:
        from importlib import import_module

        analyse = getattr(import_module(npu_profiler.__name__ + ".profiler"), "analyse", None)
    except ImportError:
        pass
    analyse = analyse or getattr(npu_profiler, "analyse", None)
    if analyse is None:
        raise ProfileError(
            "this torch_npu has no offline parser (torch_npu.profiler.profiler.analyse)",
            fix="upgrade torch_npu, or pass on_trace_ready=tensorboard_trace_handler(dir)",
        )
    analyse(profiler_path=str(out_dir))


def find_output(out_dir: Path) -> Path | None:
    """What the profiler wrote: the ``*_ascend_pt`` folder (or ``out_dir`` when it holds several,
    one per rank), else the Kineto ``*.pt.trace.json(.gz)`` file (the newest when there are
    several), else None."""
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        return None
    ascend = sorted(p for p in out_dir.rglob("*_ascend_pt") if p.is_dir())
    if len(ascend) == 1:
        return ascend[0]
    if ascend:
        return out_dir
    traces = sorted(
        (p for p in out_dir.rglob("*.pt.trace.json*") if p.is_file()), key=lambda p: (p.stat().st_mtime, p.name)
    )
    traces = [p for p in traces if p.name.endswith((".json", ".json.gz"))]
    return traces[-1] if traces else None


class Collection:
    """One profiling run (what ``collect`` returns).  Inside the ``with`` block call
    :meth:`step` once per training step and :meth:`note` to add notes; afterwards
    :attr:`path`, :attr:`record` (the registry row) and :attr:`profile` hold the result."""

    def __init__(
        self,
        name: str,
        steps=None,
        *,
        folder=None,
        notes=None,
        tags=(),
        params=None,
        register: bool = True,
        show: bool = True,
        backend: str = "auto",
        **profiler_options,
    ):
        if not name or _SAFE.sub("", str(name)) == "":
            raise ProfileError(f"bad experiment name {name!r}", fix='collect("baseline", ...)')
        unknown = set(profiler_options) - set(PROFILER_OPTIONS) - set(NPU_EXPERIMENTAL_OPTIONS)
        if unknown:
            raise ProfileError(
                f"unknown profiler option(s) {sorted(unknown)}",
                fix=f"options: {', '.join(PROFILER_OPTIONS + NPU_EXPERIMENTAL_OPTIONS)}",
            )
        if backend not in ("auto", "torch", "torch_npu"):
            raise ProfileError(f"backend must be 'auto', 'torch' or 'torch_npu', not {backend!r}")
        self.name = str(name)
        self.schedule = schedule_spec(steps)
        self.folder = registry.experiments_folder(folder)
        self.notes: list[str] = [notes] if notes else []
        self.tags = tuple(tags or ())
        self.params = dict(params or {})
        self.options = profiler_options
        self.register = register
        self.show = show
        self.backend = backend
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        self.dir = self.folder / f"{_SAFE.sub('_', self.name)}-{stamp}"
        n = 1
        while self.dir.exists():
            n += 1
            self.dir = self.folder / f"{_SAFE.sub('_', self.name)}-{stamp}-{n}"
        self.path: Path | None = None
        self.record: dict | None = None
        self.steps_run = 0
        self.profiler = None
        self.profiler_kwargs: dict = {}
        self._npu = None
        self._profile = None
        self._t0 = None

    # --- the with block ------------------------------------------------------------------
    def __enter__(self) -> Collection:
        self.dir.mkdir(parents=True, exist_ok=False)
        npu = _import_npu() if self.backend in ("auto", "torch_npu") else None
        if npu is None and self.backend == "torch_npu":
            raise ProfileError("torch_npu is not importable", fix="install torch_npu, or backend='auto'")
        if npu is not None:
            self._npu = npu
            self.backend = "torch_npu"
            self.profiler_kwargs = npu_arguments(npu, self.dir, self.schedule, self.options)
            self.profiler = npu.profile(**self.profiler_kwargs)
        else:
            try:
                import torch
                import torch.profiler  # noqa: F401
            except ImportError as exc:
                raise ProfileError("collect needs PyTorch", fix="pip install 'profinsight[torch]'") from exc
            self.backend = "torch"
            worker = f"{_SAFE.sub('_', self.name)}_{os.getpid()}"
            self.profiler_kwargs = torch_arguments(torch, self.dir, self.schedule, self.options, worker)
            self.profiler = torch.profiler.profile(**self.profiler_kwargs)
        self._t0 = time.perf_counter()
        self.profiler.__enter__()
        return self

    def step(self) -> None:
        """Mark the end of one training step (the profiler's ``step()``)."""
        self.steps_run += 1
        self.profiler.step()

    def note(self, text: str) -> None:
        """Add a note to this run's record (kept in the registry)."""
        self.notes.append(str(text))
        if self.record is not None:
            registry.update(self.record["id"], self.folder, notes="\n".join(self.notes))
            self.record["notes"] = "\n".join(self.notes)

    def __exit__(self, exc_type, exc, tb) -> bool:
        try:
            self.profiler.__exit__(exc_type, exc, tb)
        finally:
            self.elapsed_s = time.perf_counter() - (self._t0 or time.perf_counter())
        if exc_type is not None:
            return False  # the user's error propagates; an interrupted run is not registered
        need = total_steps(self.schedule)
        if self.steps_run < need:
            warnings.warn(
                f"profinsight.collect({self.name!r}): the loop ran {self.steps_run} step(s) but the "
                f"schedule {self.schedule} needs {need}; the trace may be partial or missing",
                stacklevel=2,
            )
        if self._npu is not None:
            offline_parse(self._npu, self.dir)
        self.path = find_output(self.dir)
        if self.path is None:
            raise ProfileError(
                f"the profiler wrote no trace under {self.dir}",
                fix=f"call run.step() once per step, at least {need} times (schedule {self.schedule})",
            )
        if self.register:
            self.record = _register(
                self.name,
                self.path,
                folder=self.folder,
                notes="\n".join(self.notes) or None,
                tags=self.tags,
                params=self.params,
                backend=self.backend,
                git_cwd=None,
                strict=False,
                steps=(self.schedule, self.steps_run),
            )
            self._profile = self.record.pop("_profile", None)
        if self.show:
            self._show()
        return False

    # --- results ---------------------------------------------------------------------------
    @property
    def profile(self):
        """The collected profile, loaded (``profinsight.load(run.path)``)."""
        if self._profile is None:
            if self.path is None:
                raise ProfileError("nothing collected yet")
            from ..api import load

            self._profile = load(self.path)
        return self._profile

    def summary(self) -> dict:
        rec = self.record or {}
        return {
            "name": self.name,
            "path": str(self.path) if self.path else None,
            "backend": self.backend,
            "steps_run": self.steps_run,
            "schedule": self.schedule,
            **{
                k: rec.get(k)
                for k in (
                    "id",
                    "step_us",
                    "step_source",
                    "busy_ratio",
                    "compute_ratio",
                    "top_op_type",
                    "top_finding",
                    "metrics_error",
                )
            },
        }

    def __repr__(self) -> str:
        s = self.summary()
        return "<profinsight collection " + " ".join(f"{k}={v}" for k, v in s.items() if v is not None) + ">"

    def _repr_html_(self) -> str:
        from ..render.record import collection_html

        return collection_html(self.summary())

    def _show(self) -> None:
        try:
            from IPython import get_ipython
            from IPython.display import HTML, display

            if get_ipython() is not None:
                display(HTML(self._repr_html_()))
                return
        except ImportError:
            pass
        s = self.summary()
        step = f"{s['step_us']:,.1f} us ({s['step_source']})" if s.get("step_us") is not None else "n/a"
        print(
            f"profinsight: collected {s['name']!r} -> {s['path']}\n  mean step {step}; top op type "
            f"{s.get('top_op_type') or 'n/a'}",
            file=sys.stderr,
        )


def step_problem(profile, path, schedule: dict, steps_run: int) -> ProfileError | None:
    """Why a collected profile must not be registered: it records no step (its "step time" would
    be the whole capture), with the schedule that would have captured one.  None when it has steps."""
    if len(profile.table("steps")):
        return None
    need = total_steps(schedule)
    if steps_run == 0:
        fix = "call run.step() once at the end of every training step inside the with block"
    elif steps_run < need:
        warm = 1 if steps_run >= 2 else 0
        fit = {"wait": 0, "warmup": warm, "active": max(steps_run - warm, 1)}
        fix = (
            f"the loop ran {steps_run} step(s) but the schedule {schedule} needs {need}: run {need} steps, "
            f"or collect with steps={fit}, which {steps_run} step(s) complete"
        )
    else:
        fix = "call run.step() at the end of every step (the profiler marks a step only there)"
    return ProfileError(
        f"{path} records no step, so it was not registered (its step time would be the capture)", fix=fix
    )


def _register(
    name,
    path,
    *,
    folder=None,
    notes=None,
    tags=(),
    params=None,
    backend=None,
    git_cwd=None,
    strict: bool = True,
    steps: tuple | None = None,
) -> dict:
    """Register ``path`` under ``name`` with its headline metrics; ``steps`` = (schedule, steps
    run) of a collection refuses a profile that records no step (:func:`step_problem`)."""
    from ..api import load

    metrics, prof, problem = None, None, None
    try:
        prof = load(path)
        problem = step_problem(prof, path, *steps) if steps is not None else None
        metrics = None if problem is not None else registry.headline(prof)
    except ProfileError as exc:
        if strict:
            raise
        metrics = {"metrics_error": f"load: {exc}"}
        warnings.warn(f"profinsight: registered {name!r} without metrics: {path} does not load: {exc}", stacklevel=3)
    if problem is not None:
        raise problem
    row = registry.add(
        name,
        path,
        folder=folder,
        notes=notes,
        tags=tags,
        params=params,
        backend=backend,
        metrics=metrics,
        git_cwd=git_cwd,
    )
    row["_profile"] = prof
    return row


def collect(name: str, steps=None, *, folder=None, notes=None, tags=(), params=None, **profiler_options) -> Collection:
    """Profile a training loop and register the run.

    ``steps``: how many steps to record (an int: after 1 wait and 1 warm-up step), or the schedule
    as ``dict(wait=, warmup=, active=, repeat=, skip_first=)``.  ``folder``: the experiments folder
    (default ``$PROFINSIGHT_EXPERIMENTS`` or ``./profinsight-experiments``).  Other keywords are the
    profiler's own options (``activities``, ``record_shapes``, ``profile_memory``, ``with_stack``,
    ``experimental_config``, ... and on Ascend the ``_ExperimentalConfig`` fields such as
    ``profiler_level="Level2"``), plus ``register=False``, ``show=False`` and
    ``backend="torch"|"torch_npu"``.
    """
    return Collection(name, steps, folder=folder, notes=notes, tags=tags, params=params, **profiler_options)


def register(name: str, path, *, notes=None, tags=(), params=None, folder=None) -> dict:
    """Register an existing profile (any path ``profinsight.load`` reads) under ``name``."""
    if not Path(path).exists():
        raise ProfileError(f"{path} does not exist", file=path)
    row = _register(name, path, folder=folder, notes=notes, tags=tags, params=params, backend="registered")
    row.pop("_profile", None)
    return row


def experiments(folder=None):
    """Registered runs as a pandas DataFrame, oldest first."""
    import pandas as pd

    data = registry.rows(folder)
    return pd.DataFrame(data, columns=list(registry.COLUMNS))
