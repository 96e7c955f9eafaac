"""How the rank was collected: ``profiler_info_{rank}.json`` + ``profiler_metadata.json`` ->
``run_info``, and the doctor's checks that depend on it (switches that were off, files a view
needs that are missing).

Why here: the same configuration decides which missing file is a problem (no
``communication.json`` is normal at Level0 and on one card, a loss at Level1 with collectives)
and which fix to print, so both live next to the parsing of the configuration.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from .. import _torch_npu
from . import _files as F

_LEVEL1_FIX = (
    "experimental_config=torch_npu.profiler._ExperimentalConfig(profiler_level=torch_npu.profiler.ProfilerLevel.Level1)"
)
_SWITCHES = {  # flag -> (diagnostic code, what is missing without it); codes as the other importers
    "record_shapes": ("no-shapes", "host ops have no input shapes or dtypes"),
    "with_stack": ("no-call-stacks", "host ops have no Python call stacks"),
    "profile_memory": ("no-memory-profile", "memory views (memory_samples, memory_blocks, module_memory) are empty"),
}


@dataclass
class Config:
    """The parts of profiler_info / profiler_metadata the importer uses."""

    rank: int | None = None
    level: str | None = None
    activities: list[str] = field(default_factory=list)
    switches: dict = field(default_factory=dict)
    aic_metrics: str | None = None
    schedule: dict | None = None
    collect_start_ns: int | None = None
    collect_end_ns: int | None = None
    env: dict = field(default_factory=dict)
    versions: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)
    known: bool = False  # profiler_info was found and parsed


def rank_from_name(path: Path | None) -> int | None:
    m = re.match(r"profiler_info_(\d+)\.json$", path.name) if path else None
    return int(m.group(1)) if m else None


def read_config(folder: Path, inputs: F.Inputs | None = None) -> Config:
    """Parse the two JSON files; unreadable ones give a diagnostic and an empty config."""
    cfg = Config()
    info_path = F.info_file(folder)
    info = _load_json(info_path, inputs) if info_path else None
    if info_path is None and inputs is not None:
        inputs.add(
            "info",
            "missing-file",
            "profiler_info_*.json is missing: rank, level and capture switches are unknown.",
            folder,
            "Copy the whole *_ascend_pt folder, not only its outputs.",
        )
    if isinstance(info, dict):
        _apply_info(cfg, info)
    if cfg.rank is None:
        cfg.rank = rank_from_name(info_path)
    meta = _load_json(folder / "profiler_metadata.json", inputs)
    if isinstance(meta, dict):
        cfg.env = meta.get("ENV_VARIABLES") or {}
        cfg.extra["metadata"] = {k: v for k, v in meta.items() if k != "ENV_VARIABLES"}
    return cfg


def _load_json(path: Path, inputs: F.Inputs | None):
    if not path or not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except ValueError as exc:
        if inputs is not None:
            inputs.add("warning", "json-invalid", f"{path.name} is not valid JSON ({exc}); ignored.", path)
        return None


def _apply_info(cfg: Config, info: dict) -> None:
    common = (info.get("config") or {}).get("common_config") or {}
    exp = (info.get("config") or {}).get("experimental_config") or {}
    cfg.rank = _torch_npu.rank_id(info)
    cfg.versions = _torch_npu.versions(info)
    cfg.known = True
    cfg.level = exp.get("_profiler_level")
    cfg.activities = [str(a).split(".")[-1] for a in common.get("activities") or []]
    cfg.switches = {
        k: common.get(k) for k in ("record_shapes", "profile_memory", "with_stack", "with_modules", "with_flops")
    }
    cfg.aic_metrics = exp.get("_aic_metrics")
    cfg.schedule = common.get("schedule")
    start, end = info.get("start_info") or {}, info.get("end_info") or {}
    cfg.collect_end_ns = end.get("collectionTimeEnd")
    try:  # wall clock at start = monotonic start + (wall - monotonic) offset at the end
        cfg.collect_start_ns = (
            int(start["start_monotonic"]) + int(end["collectionTimeEnd"]) - int(end["MonotonicTimeEnd"])
        )
    except (KeyError, TypeError, ValueError):
        cfg.collect_start_ns = None
    cfg.extra["experimental_config"] = {k: v for k, v in exp.items() if k not in ("_profiler_level", "_aic_metrics")}
    cfg.extra["with_flops"] = common.get("with_flops")


def run_info(cfg: Config, folder: Path, device: int | None) -> pa.Table:
    """The one ``run_info`` row of this rank."""
    sw = cfg.switches
    row = {
        "device": device,
        "source_format": "ascend_text",
        "device_family": "npu",
        "export_kind": "text",
        "path": str(folder),
        "profiler_level": cfg.level,
        "activities": ",".join(cfg.activities) or None,
        "record_shapes": sw.get("record_shapes"),
        "profile_memory": sw.get("profile_memory"),
        "with_stack": sw.get("with_stack"),
        "with_modules": sw.get("with_modules"),
        "aic_metrics": cfg.aic_metrics,
        "schedule": json.dumps(cfg.schedule, sort_keys=True) if cfg.schedule is not None else None,
        "env": json.dumps(cfg.env, sort_keys=True),
        "versions": json.dumps(cfg.versions, sort_keys=True),
        "device_name": None,
        "host": None,
        "world_size": _world_size(cfg),
        "collect_start_ns": cfg.collect_start_ns,
        "collect_end_ns": cfg.collect_end_ns,
        "extra": json.dumps(_with_parse_marker(cfg.extra, folder), sort_keys=True, default=str),
    }
    types = {
        "device": pa.int32(),
        "world_size": pa.int64(),
        "collect_start_ns": pa.int64(),
        "collect_end_ns": pa.int64(),
        "record_shapes": pa.bool_(),
        "profile_memory": pa.bool_(),
        "with_stack": pa.bool_(),
        "with_modules": pa.bool_(),
    }
    return pa.table({k: pa.array([v], types.get(k, pa.string())) for k, v in row.items()})


def _with_parse_marker(extra: dict, folder: Path) -> dict:
    """``parse_finished: true`` where ``analyse.done`` says the offline parse finished."""
    done = _torch_npu.parse_finished(folder)
    return {**extra, "parse_finished": True} if done else extra


def _world_size(cfg: Config) -> int | None:
    dist = (cfg.extra.get("metadata") or {}).get("distributed_args") or {}
    ws = dist.get("world_size")
    return int(ws) if isinstance(ws, int) else None


def check_switches(cfg: Config, inputs: F.Inputs) -> None:
    """Say which capture switches were off and the exact flag that turns each on."""
    if not cfg.known:
        return
    for flag, (code, loss) in _SWITCHES.items():
        if cfg.switches.get(flag) is False:
            inputs.add(
                "info",
                code,
                f"Collected without {flag}: {loss}.",
                F.info_file(inputs.folder),
                f"Pass {flag}=True to torch_npu.profiler.profile(...).",
            )


def check_missing(cfg: Config, inputs: F.Inputs, has_collectives: bool) -> None:
    """One diagnostic per expected file that is missing, naming the views it disables."""
    level = cfg.level or ""
    memory_on = cfg.switches.get("profile_memory") is not False
    expected = [
        (
            F.TRACE,
            "warning",
            "host ops, launches, API calls, counters and timeline slices are empty",
            "Re-run the offline parse: torch_npu.profiler.profiler.analyse(<rank folder>).",
        ),
        (
            F.KERNELS,
            "warning",
            "device kernels come from trace_view.json only, without op types, shapes or PMU",
            "Collect with ProfilerActivity.NPU and re-run torch_npu.profiler.profiler.analyse(<rank folder>).",
        ),
        (
            F.OPERATORS,
            "info",
            "host ops lack host/device self times",
            "Collect with ProfilerActivity.CPU and re-run torch_npu.profiler.profiler.analyse(<rank folder>).",
        ),
    ]
    if memory_on:
        expected += [
            (
                n,
                "warning",
                "memory views from this file are empty",
                "Collect with profile_memory=True and keep the whole ASCEND_PROFILER_OUTPUT folder.",
            )
            for n in (F.MEMORY_RECORD, F.OPERATOR_MEMORY, F.MODULE_MEMORY)
        ]
    if has_collectives and level in ("Level0", "Level_none"):
        if not inputs.path(F.COMMUNICATION).is_file():
            inputs.add(
                "info",
                "level0-no-comm-analysis",
                f"No communication.json at {level}: communication analysis (transit/wait split, "
                "bandwidth, link matrix) needs profiler Level1; comm_ops come from kernel_details.csv.",
                inputs.path(F.COMMUNICATION),
                f"Set {_LEVEL1_FIX}.",
            )
    elif has_collectives:
        expected += [
            (
                F.COMMUNICATION,
                "warning",
                "comm_ops have no transit/wait split or bandwidth",
                "Re-run torch_npu.profiler.profiler.analyse(<rank folder>) on the whole run.",
            ),
            (
                F.COMM_MATRIX,
                "warning",
                "comm_links (the rank-to-rank matrix) is empty",
                "Re-run torch_npu.profiler.profiler.analyse(<rank folder>) on the whole run.",
            ),
        ]
    for name, severity, loss, fix in expected:
        if not inputs.path(name).is_file():
            inputs.add(severity, "missing-file", f"{name} is missing: {loss}.", inputs.path(name), fix)
