"""What a profile can show, read from its ``run_info`` capability columns.

Analyses, advisor rules and the timeline ask these questions instead of which format a profile
came from (``format == "kineto"``): the importers state the answers in ``run_info``
(``device_family``, ``export_kind``, ``has_host_ops``, ``has_memory``, ``has_pmu``, ``has_stack``;
see docs/tables.md), so a new importer that fills them is understood everywhere at once.

A bottom-floor module: it imports nothing of profinsight, and the profile is passed in (anything
with ``table(name) -> DataFrame``), never imported.
"""

from __future__ import annotations

#: the capability columns of run_info (a flag is true when any rank has it)
FLAGS = ("has_host_ops", "has_memory", "has_pmu", "has_stack")
FAMILIES = ("npu", "gpu", "cpu")


def _info(profile):
    return profile.table("run_info")


def device_family(profile) -> str | None:
    """``npu`` | ``gpu`` | ``cpu`` -- the first accelerator kind any rank records (a device beats
    ``cpu``); None when run_info says nothing."""
    info = _info(profile)
    if "device_family" not in info.columns:
        return None
    seen = {str(v) for v in info["device_family"].dropna()}
    return next((f for f in FAMILIES if f in seen), None)


def is_npu(profile) -> bool:
    """Whether the profile records an Ascend NPU (rules about CANN, AI Core, HCCL apply)."""
    return device_family(profile) == "npu"


def has(profile, flag: str) -> bool:
    """Whether any rank recorded ``flag`` (one of :data:`FLAGS`)."""
    if flag not in FLAGS:
        raise ValueError(f"unknown capability {flag!r}; one of {', '.join(FLAGS)}")
    info = _info(profile)
    return flag in info.columns and bool(info[flag].fillna(False).astype(bool).any())


def export_kind(profile) -> str | None:
    """``text`` | ``db`` | ``trace`` of the first rank, None when unknown."""
    info = _info(profile)
    vals = info["export_kind"].dropna() if "export_kind" in info.columns else []
    return str(vals.iloc[0]) if len(vals) else None


__all__ = ["FAMILIES", "FLAGS", "device_family", "export_kind", "has", "is_npu"]
