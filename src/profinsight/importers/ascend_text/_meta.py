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
    #: (file, field, value) of every field ignored for its type or range
    ignored: list = field(default_factory=list)


#: the largest rank, world size and device id taken as real (int32: no cluster comes near it)
MAX_RANK = (1 << 31) - 1
_INT64 = 1 << 63


def rank_from_name(path: Path | None) -> int | None:
    m = re.match(r"profiler_info_(\d{1,10})\.json$", path.name) if path else None
    return int(m.group(1)) if m and int(m.group(1)) <= MAX_RANK else None


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
        _apply_info(cfg, _Fields(cfg, info_path.name, info))
    elif info is not None:
        cfg.ignored.append((info_path.name, "(top level)", info))
    if cfg.rank is None:
        cfg.rank = rank_from_name(info_path)
    meta = _load_json(folder / "profiler_metadata.json", inputs)
    if isinstance(meta, dict):
        cfg.env = _Fields(cfg, "profiler_metadata.json", meta).obj("ENV_VARIABLES")
        cfg.extra["metadata"] = {k: v for k, v in meta.items() if k != "ENV_VARIABLES"}
    elif meta is not None:
        cfg.ignored.append(("profiler_metadata.json", "(top level)", meta))
    if inputs is not None:
        _report_ignored(cfg, inputs, folder)
    return cfg


class _Fields:
    """Typed reads of one JSON object: a field of the wrong type or range reads as absent and
    is recorded in ``cfg.ignored`` (a malformed file never raises)."""

    def __init__(self, cfg: Config, file: str, data: dict, prefix: str = ""):
        self.cfg, self.file, self.data, self.prefix = cfg, file, data, prefix

    def _bad(self, key: str, value) -> None:
        self.cfg.ignored.append((self.file, self.prefix + key, value))

    def obj(self, key: str) -> dict:
        value = self.data.get(key)
        if value is None or isinstance(value, dict):
            return value or {}
        self._bad(key, value)
        return {}

    def sub(self, key: str) -> _Fields:
        return _Fields(self.cfg, self.file, self.obj(key), f"{self.prefix}{key}.")

    def text(self, key: str) -> str | None:
        value = self.data.get(key)
        if value is None or isinstance(value, str):
            return value
        self._bad(key, value)
        return None

    def flag(self, key: str) -> bool | None:
        value = self.data.get(key)
        if value is None or isinstance(value, bool):
            return value
        self._bad(key, value)
        return None

    def int(self, key: str, low: int = -_INT64, high: int = _INT64 - 1) -> int | None:
        """An integer within [low, high] (a number written as text is accepted)."""
        value = self.data.get(key)
        if value is None:
            return None
        if isinstance(value, str) and value.strip().lstrip("-").isdigit() and len(value.strip()) <= 20:
            number = int(value)
        elif isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            number = None
        if number is None or not low <= number <= high:
            self._bad(key, value)
            return None
        return number

    def list(self, key: str) -> list:
        value = self.data.get(key)
        if value is None or isinstance(value, list):
            return value or []
        self._bad(key, value)
        return []


def _report_ignored(cfg: Config, inputs: F.Inputs, folder: Path) -> None:
    """One warning per field ignored for its type or range, naming it."""
    for file, key, value in cfg.ignored:
        text = repr(value)
        shown = text if len(text) <= 40 else text[:37] + "..."
        inputs.add(
            "warning",
            "meta-field-invalid",
            f"{file}: field {key!r} = {shown} is not of the expected type or range; ignored.",
            folder / file,
            "The file was damaged or edited; copy the whole *_ascend_pt folder again.",
        )


def _load_json(path: Path, inputs: F.Inputs | None):
    if not path or not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except ValueError as exc:
        if inputs is not None:
            inputs.add("warning", "json-invalid", f"{path.name} is not valid JSON ({exc}); ignored.", path)
        return None


def _apply_info(cfg: Config, info: _Fields) -> None:
    config = info.sub("config")
    common, exp = config.sub("common_config"), config.sub("experimental_config")
    # a single card writes rank_id -1 (no rank): not damage; torch_npu 2.7 writes it as text
    single = info.data.get("rank_id") in (-1, "-1")
    cfg.rank = None if single else info.int("rank_id", 0, MAX_RANK)
    cfg.versions = _torch_npu.versions(info.data)
    cfg.known = True
    cfg.level = exp.text("_profiler_level")
    cfg.activities = [str(a).split(".")[-1] for a in common.list("activities")]
    cfg.switches = {
        k: common.flag(k) for k in ("record_shapes", "profile_memory", "with_stack", "with_modules", "with_flops")
    }
    cfg.aic_metrics = exp.text("_aic_metrics")
    cfg.schedule = common.obj("schedule") if common.data.get("schedule") is not None else None
    start, end = info.sub("start_info"), info.sub("end_info")
    cfg.collect_end_ns = end.int("collectionTimeEnd", 0)
    # wall clock at start = monotonic start + (wall - monotonic) offset at the end
    parts = (start.int("start_monotonic"), cfg.collect_end_ns, end.int("MonotonicTimeEnd"))
    wall = parts[0] + parts[1] - parts[2] if None not in parts else None
    cfg.collect_start_ns = wall if wall is not None and 0 <= wall < _INT64 else None
    cfg.extra["experimental_config"] = {
        k: v for k, v in exp.data.items() if k not in ("_profiler_level", "_aic_metrics")
    }
    cfg.extra["with_flops"] = cfg.switches.get("with_flops")


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
    dist = (cfg.extra.get("metadata") or {}).get("distributed_args")
    ws = dist.get("world_size") if isinstance(dist, dict) else None
    ok = isinstance(ws, int) and not isinstance(ws, bool) and 0 < ws <= MAX_RANK
    return ws if ok else None


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
