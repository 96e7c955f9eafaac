"""``run_info`` and the doctor's notes about how the rank was collected.

Why here: the collection switches (level, record_shapes, with_stack, profile_memory) live in
``profiler_info_{rank}.json`` next to the DB, and they explain empty views better than the data
can ("no call stacks" because ``with_stack`` was off, not because parsing failed).  The parse of
that JSON is plain and shared-shaped: :func:`parse_profiler_info` returns ``run_info`` columns,
so the text importer can use the same function and both exports agree.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

from ... import diagnostics as dg
from .. import _torch_npu
from ..base import RankData
from .reader import Db

LEVEL1_FIX = (
    "collect with experimental_config=torch_npu.profiler._ExperimentalConfig("
    "profiler_level=torch_npu.profiler.ProfilerLevel.Level1)"
)


def parse_profiler_info(path: Path | None) -> dict:
    """``run_info`` columns from a ``profiler_info*.json`` (empty dict when missing/unreadable)."""
    if path is None:
        return {}
    try:
        cfg = json.loads(Path(path).read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return {}
    config = cfg.get("config") or {}
    common = config.get("common_config") or {}
    exp = config.get("experimental_config") or {}
    acts = common.get("activities") or []
    out = {
        "profiler_level": exp.get("_profiler_level"),
        "activities": ",".join(str(a).split(".")[-1] for a in acts) if acts else None,
        "record_shapes": common.get("record_shapes"),
        "profile_memory": common.get("profile_memory"),
        "with_stack": common.get("with_stack"),
        "with_modules": common.get("with_modules"),
        "aic_metrics": exp.get("_aic_metrics"),
        "schedule": json.dumps(common["schedule"], sort_keys=True) if common.get("schedule") is not None else None,
        "rank_id": _torch_npu.rank_id(cfg),
        "versions": _torch_npu.versions(cfg),
    }
    extra = {
        "experimental_config": exp,
        "with_flops": common.get("with_flops"),
        "start_info": cfg.get("start_info"),
        "end_info": cfg.get("end_info"),
    }
    out["extra"] = {k: v for k, v in extra.items() if v is not None}
    return out


def read_metadata(path: Path | None) -> dict:
    """``profiler_metadata.json`` as a dict (empty when missing/unreadable)."""
    if path is None:
        return {}
    try:
        meta = json.loads(Path(path).read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def load_run_info(
    db: Db, data: RankData, folder: Path, info: dict, metadata: dict, rank: int | None, device: int | None
) -> None:
    """Fill ``run_info`` (one row)."""
    meta = dict(db.rows("SELECT name, value FROM META_DATA")) if db.has("META_DATA") else {}
    env = {}
    env.update(metadata.get("ENV_VARIABLES") or {})
    try:
        env.update(json.loads(meta.get("ENV_VARIABLES") or "{}"))
    except ValueError:
        pass
    versions = dict(info.get("versions") or {})
    if meta.get("SCHEMA_VERSION"):
        versions["db_schema"] = meta["SCHEMA_VERSION"]
    npu = dict(db.rows("SELECT id, name FROM NPU_INFO")) if db.has("NPU_INFO") else {}
    host = db.rows("SELECT hostName FROM HOST_INFO") if db.has("HOST_INFO") else []
    session = db.rows("SELECT startTimeNs, endTimeNs FROM SESSION_TIME_INFO") if db.has("SESSION_TIME_INFO") else []
    world = None
    if db.col("COMMUNICATION_OP", "rankSize"):
        world = db.rows("SELECT max(rankSize) FROM COMMUNICATION_OP")[0][0]
    extra = dict(info.get("extra") or {})
    user_meta = {k: v for k, v in metadata.items() if k != "ENV_VARIABLES"}
    if user_meta:
        extra["metadata"] = user_meta
    if _torch_npu.parse_finished(folder):
        extra["parse_finished"] = True
    row = {
        "device": device,
        "source_format": "ascend_db",
        "device_family": "npu",
        "export_kind": "db",
        "path": str(folder),
        "profiler_level": info.get("profiler_level"),
        "activities": info.get("activities"),
        "record_shapes": info.get("record_shapes"),
        "profile_memory": info.get("profile_memory"),
        "with_stack": info.get("with_stack"),
        "with_modules": info.get("with_modules"),
        "aic_metrics": info.get("aic_metrics"),
        "schedule": info.get("schedule"),
        "env": json.dumps(env, sort_keys=True),
        "versions": json.dumps(versions, sort_keys=True),
        "device_name": npu.get(device, next(iter(npu.values()), None)) if npu else None,
        "host": host[0][0] if host else None,
        "world_size": world,
        "collect_start_ns": session[0][0] if session else None,
        "collect_end_ns": session[0][1] if session else None,
        "extra": json.dumps(extra, sort_keys=True, default=str),
    }
    types = {
        "device": pa.int32(),
        "world_size": pa.int64(),
        "collect_start_ns": pa.int64(),
        "collect_end_ns": pa.int64(),
    }
    for b in ("record_shapes", "profile_memory", "with_stack", "with_modules"):
        types[b] = pa.bool_()
    data.tables["run_info"] = pa.table({k: pa.array([v], types.get(k, pa.string())) for k, v in row.items()})


#: tables whose absence disables a view: table -> (what is lost, severity)
_NEEDED = {
    "TASK": ("device kernels, step breakdown, utilisation and idle gaps", "warning"),
    "STRING_IDS": ("every name in the DB", "error"),
    "PYTORCH_API": ("framework ops, launch statistics and the host timeline", "warning"),
    "CANN_API": ("CANN API statistics and the launch-to-device links used for steps", "warning"),
}


#: tables that may simply not have been collected, but whose absence is damage where the rest of
#: the DB shows they were: table -> (what is lost, the evidence it was collected, the test of it)
_IMPLIED = {
    "COMMUNICATION_OP": (
        "collectives (comm_ops, the communication views)",
        "COMMUNICATION_TASK_INFO records their tasks",
        lambda db, info: db.count("COMMUNICATION_TASK_INFO") > 0,
    ),
    "CONNECTION_IDS": (
        "links from framework ops to the device tasks they launched (launches)",
        "PYTORCH_API and TASK have rows",
        lambda db, info: db.count("PYTORCH_API") > 0 and db.count("TASK") > 0,
    ),
    "MEMORY_RECORD": ("memory curve", "profile_memory was on", lambda db, info: info.get("profile_memory") is True),
    "OP_MEMORY": ("per-op allocations", "profile_memory was on", lambda db, info: info.get("profile_memory") is True),
    "NPU_MODULE_MEM": (
        "memory per CANN component",
        "profile_memory was on",
        lambda db, info: info.get("profile_memory") is True,
    ),
}


def diagnose(db: Db, data: RankData, info: dict, adb_tables: set[str], has_info_file: bool, rank: int | None) -> None:
    """The doctor's notes: missing tables and what they disable, collection switches that were
    off, Level0 limits."""
    out = data.diagnostics
    for table, (lost, evidence, collected) in _IMPLIED.items():
        if not db.count(table) and collected(db, info):
            state = "empty" if db.has(table) else "missing"
            out.append(
                dg.warning(
                    "table-missing",
                    f"table {table} is {state} though {evidence}: no {lost}",
                    file=db.path,
                    fix="the DB was damaged or cut after the export: export the profile again (offline parse: "
                    "torch_npu.profiler.profiler.analyse)",
                    rank=rank,
                )
            )
    for table, (lost, sev) in _NEEDED.items():
        if not db.count(table):
            make = getattr(dg, sev)
            out.append(
                make(
                    "table-missing",
                    f"table {table} is {'empty' if db.has(table) else 'missing'}: no {lost}",
                    file=db.path,
                    fix="re-export the profile with a current torch_npu (offline parse: "
                    "torch_npu.profiler.profiler.analyse) if this is unexpected",
                    rank=rank,
                )
            )
    steps = data.tables.get("steps")
    if steps is None or steps.num_rows == 0:
        out.append(
            dg.info(
                "no-steps",
                "no ProfilerStep#N marks (STEP_TIME is empty or missing): per-step views "
                "fall back to the whole capture",
                file=db.path,
                fix="call prof.step() once per training iteration inside the profiler context",
                rank=rank,
            )
        )
    if not has_info_file:
        out.append(
            dg.info(
                "no-profiler-info",
                "profiler_info*.json is missing: collection switches unknown",
                file=db.path.parent.parent,
                fix="keep profiler_info_<rank>.json next to ASCEND_PROFILER_OUTPUT",
                rank=rank,
            )
        )
    level = info.get("profiler_level")
    if level in ("Level0", "Level_none"):
        out.append(
            dg.warning(
                "level0-limits",
                f"collected at {level}: no operator types, shapes or PMU metrics, and no "
                "communication analysis (transit/wait split, bandwidth, communication matrix)",
                file=db.path,
                fix=LEVEL1_FIX,
                rank=rank,
            )
        )
    elif db.count("COMMUNICATION_OP") and "CommAnalyzerTime" not in adb_tables:
        out.append(
            dg.warning(
                "no-comm-analysis",
                "communication ops were recorded but analysis.db has no communication "
                "analysis: transit/wait split, bandwidth and the communication matrix are unavailable",
                file=db.path.parent / "analysis.db",
                fix="re-run the offline parse (torch_npu.profiler.profiler.analyse) on all ranks",
                rank=rank,
            )
        )
    switches = (
        ("with_stack", "no-call-stacks", "Python call stacks", "with_stack=True"),
        ("record_shapes", "no-shapes", "input shapes and dtypes of framework ops", "record_shapes=True"),
        ("profile_memory", "no-memory-profile", "the memory curve and per-op allocations", "profile_memory=True"),
    )
    for key, code, what, fix in switches:
        if info.get(key) is False:
            out.append(
                dg.info(
                    code,
                    f"{key} was off: no {what}",
                    file=db.path,
                    fix=f"pass {fix} to torch_npu.profiler.profile",
                    rank=rank,
                )
            )
