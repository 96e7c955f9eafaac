"""Checks every rank gets after its import, whatever its format: what the troubleshooting table
(docs/troubleshooting.md) asks the load to say about one rank.

- the AI Core PMU metrics are all empty: not collected (``aic_metrics`` unset or Level0), or set
  but unreadable (no permission to the hardware counters);
- the collection did not finish (``profiler_info`` without ``end_info``, a trace cut short);
- the run was recorded with ``ASCEND_GLOBAL_EVENT_ENABLE`` on (``profiler_metadata.json``);
- the files of the rank agree with each other (:func:`consistency`): device tasks and host activity
  that do not overlap (files of different collections), tasks outside the capture window the rank
  records, device tasks that are exact copies of another, and kernel counts that differ from the
  vendor's own statistics (``op_statistic.csv``).  These judge converted times, after the import.

The words come from the message catalogue (:mod:`profinsight.i18n.diagnostics`)."""

from __future__ import annotations

import json
from pathlib import Path

from .. import diagnostics as dg
from ..i18n import t
from .base import RankData

#: bump when a check is added or changed: it is part of the cache key, so ranks imported before the
#: change are imported again and get the new diagnostics instead of the ones cached with them
CHECKS_VERSION = 2  # 2: the consistency checks
#: PMU columns of the AI Core metric sets (``pmu_aic_*``, ``pmu_aiv_*``, ``pmu_cube_*``); the L2
#: cache ratios are a separate switch (``l2_cache``) and do not count
PMU_METRIC_PREFIXES = ("pmu_aic_", "pmu_aiv_", "pmu_cube_")
#: ``aic_metrics`` values that record no PMU metric
NO_METRICS = (None, "", "ACL_AICORE_NONE", "None")
#: profiler levels that record no PMU metric whatever ``aic_metrics`` says
NO_PMU_LEVELS = ("Level_none", "Level0")
#: the torch_npu formats whose run_info comes from profiler_info_*.json
TORCH_NPU = ("ascend_text", "ascend_db")


def msg(code: str, variant: int = 1, **values) -> tuple[str, str]:
    """The English message and fix of ``code`` from the catalogue."""
    key = f"diag.{code}" + ("" if variant == 1 else f"#{variant}")
    return t(key, "en", **values), t(key + ".fix", "en", **values)


def rank_checks(data: RankData) -> list[dg.Diagnostic]:
    info = data.tables["run_info"].to_pylist()
    if not info:
        return []
    row = info[0]
    return _pmu(data, row) + _unfinished(data, row) + _recorded_env(row) + consistency(data, row)


def _pmu(data: RankData, row: dict) -> list[dg.Diagnostic]:
    if row.get("device_family") != "npu":
        return []
    dt = data.tables["device_tasks"]
    if not dt.num_rows:
        return []
    import pyarrow.compute as pc

    cols = [c for c in dt.column_names if c.startswith(PMU_METRIC_PREFIXES)]
    kernels = dt.select(cols).filter(pc.equal(dt["kind"], "kernel"))
    n = kernels.num_rows
    if not n or any(kernels[c].null_count < n for c in cols):
        return []
    aic, level = row.get("aic_metrics"), row.get("profiler_level")
    if row.get("source_format") not in TORCH_NPU and aic is None and level is None:
        return []  # nothing records how it was collected: no cause can be named
    folder = row.get("path")
    if aic in NO_METRICS or level in NO_PMU_LEVELS:
        m, fix = msg("pmu-not-collected", level=level or "(level unknown)", aic_metrics=aic or "(not set)")
        return [dg.info("pmu-not-collected", m, file=folder, fix=fix, rank=data.rank)]
    m, fix = msg("pmu-empty", aic_metrics=aic, level=level or "(level unknown)", kernels=n, user=_owner(folder))
    return [dg.warning("pmu-empty", m, file=folder, fix=fix, rank=data.rank)]


def _owner(path) -> str:
    """The user who owns ``path`` (the one the profiler ran as), or ``?`` where unknown."""
    try:
        import pwd

        uid = Path(path).stat().st_uid
        try:
            return pwd.getpwuid(uid).pw_name
        except KeyError:
            return f"uid {uid}"
    except (ImportError, OSError, TypeError):
        return "?"


def _unfinished(data: RankData, row: dict) -> list[dg.Diagnostic]:
    cut = [d for d in data.diagnostics if d.code == "trace-truncated"]
    if cut:
        name = Path(cut[0].file).name if cut[0].file else "the trace"
        m, fix = msg("collection-unfinished", 2, file=name)
        return [dg.warning("collection-unfinished", m, file=cut[0].file, fix=fix, rank=data.rank)]
    if row.get("source_format") not in TORCH_NPU or not row.get("profiler_level"):
        return []
    if row.get("collect_end_ns"):
        return _parse_unfinished(data, row)
    if any(d.code == "meta-field-invalid" and "end_info" in d.message for d in data.diagnostics):
        return []  # end_info is there but damaged: said already
    folder = Path(row["path"]) if row.get("path") else None
    infos = sorted(folder.glob("profiler_info*.json")) if folder and folder.is_dir() else []
    if not infos:
        return []
    m, fix = msg("collection-unfinished", file=infos[0].name)
    return [dg.warning("collection-unfinished", m, file=infos[0], fix=fix, rank=data.rank)]


#: the first torch_npu release that writes ASCEND_PROFILER_OUTPUT/analyse.done
PARSE_DONE_SINCE = (2, 5)


def _parse_unfinished(data: RankData, row: dict) -> list[dg.Diagnostic]:
    """Raw data beside a parse output without ``analyse.done``, from a release that writes it."""
    from ._torch_npu import PROF_RE

    try:
        versions = json.loads(row.get("versions") or "{}")
        extra = json.loads(row.get("extra") or "{}")
    except ValueError:
        return []
    version = str(versions.get("torch_npu_version", "")) if isinstance(versions, dict) else ""
    if not version or _release(version) < PARSE_DONE_SINCE or (isinstance(extra, dict) and extra.get("parse_finished")):
        return []
    folder = Path(row["path"]) if row.get("path") else None
    try:
        raw = folder is not None and (
            (folder / "FRAMEWORK").is_dir() or any(PROF_RE.match(c.name) for c in folder.iterdir())
        )
    except OSError:
        raw = False
    if not raw:
        return []  # a copy of the outputs alone: absence of analyse.done proves nothing
    m, fix = msg("collection-unfinished", 3, folder=folder, version=version)
    return [dg.warning("collection-unfinished", m, file=folder, fix=fix, rank=data.rank)]


def _recorded_env(row: dict) -> list[dg.Diagnostic]:
    try:
        env = json.loads(row.get("env") or "{}")
    except ValueError:
        return []
    value = str(env.get("ASCEND_GLOBAL_EVENT_ENABLE", "") if isinstance(env, dict) else "").strip()
    if value in ("", "0") or value.lower() == "false":
        return []
    m, fix = msg("global-event-recorded", value=value)
    meta = Path(row["path"]) / "profiler_metadata.json" if row.get("path") else None
    return [dg.warning("global-event-recorded", m, file=meta, fix=fix)]


# --- consistency of one rank's files ----------------------------------------------------------
#: device tasks and host activity further apart than this without overlapping come from different
#: collections (as the advisor's ``timestamp_sanity`` rule judges them)
APART_NS = 60 * 10**9
#: a task may start or end this close outside the recorded capture window (the window is written
#: by the host around the profiler's start and stop; the fixtures lie well inside it)
WINDOW_SLACK_NS = 10**9
#: the files each source format's device tasks and host activity come from, for the message
_SOURCES = {
    "ascend_text": ("kernel_details.csv", "trace_view.json"),
    "ascend_file": ("the file's device tasks", "the file's host events"),
}


def consistency(data: RankData, row: dict) -> list[dg.Diagnostic]:
    """What the rank's files say about each other (each check on its own: one that cannot run
    never stops the others)."""
    out: list[dg.Diagnostic] = []
    for check in (_apart, _outside, _duplicated, _vendor_counts):
        try:
            out += check(data, row)
        except Exception:  # noqa: BLE001 - a check that fails never costs the rank
            continue
    return out


def _span(table, mask=None) -> tuple[int, int] | None:
    import pyarrow.compute as pc

    # the two time columns only: filtering the whole table would copy (and, for a table mapped
    # from its file, read) every column, call stacks included
    table = table.select([c for c in ("start_ns", "dur_ns") if c in table.column_names])
    if mask is not None:
        table = table.filter(mask)
    start = table["start_ns"]
    if not table.num_rows or start.null_count == table.num_rows:
        return None
    end = pc.add(start, pc.fill_null(table["dur_ns"], 0)) if "dur_ns" in table.column_names else start
    return int(pc.min(start).as_py()), int(pc.max(end).as_py())


def _when(ns: int) -> str:
    import datetime as _dt

    try:
        return _dt.datetime.fromtimestamp(ns / 1e9, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return f"{ns} ns"


def _duration(ns: int) -> str:
    s = ns / 1e9
    if s >= 86400:
        return f"{s / 86400:.1f} days"
    if s >= 3600:
        return f"{s / 3600:.1f} hours"
    if s >= 60:
        return f"{s / 60:.1f} minutes"
    return f"{s:.1f} s"


def _apart(data: RankData, row: dict) -> list[dg.Diagnostic]:
    import pyarrow as pa
    import pyarrow.compute as pc

    dt = data.tables["device_tasks"]
    device = _span(dt, pc.is_in(dt["kind"], value_set=pa.array(["kernel", "communication"])))
    hosts = [_span(data.tables[t]) for t in ("host_ops", "api_calls")]
    hosts = [h for h in hosts if h is not None]
    if device is None or not hosts:
        return []
    host = (min(h[0] for h in hosts), max(h[1] for h in hosts))
    gap = max(device[0] - host[1], host[0] - device[1])
    if gap <= APART_NS:
        return []
    device_from, host_from = _SOURCES.get(row.get("source_format"), ("the device tasks' file", "the host ops' file"))
    m, fix = msg(
        "collections-apart", rank=data.rank, device_from=device_from, host_from=host_from, apart=_duration(gap)
    )
    return [dg.warning("collections-apart", m, file=row.get("path"), fix=fix, rank=data.rank)]


def _outside(data: RankData, row: dict) -> list[dg.Diagnostic]:
    import pyarrow.compute as pc

    lo, hi = row.get("collect_start_ns"), row.get("collect_end_ns")
    if lo is None or hi is None or hi <= lo:
        return []
    lo, hi = int(lo) - WINDOW_SLACK_NS, int(hi) + WINDOW_SLACK_NS
    out = []
    for table, what in (("device_tasks", "device task(s)"), ("host_ops", "host op(s)")):
        t = data.tables[table]
        if not t.num_rows:
            continue
        start = t["start_ns"]
        end = pc.add(start, pc.fill_null(t["dur_ns"], 0))
        mask = pc.fill_null(pc.or_(pc.less(start, lo), pc.greater(end, hi)), False)
        bad = t.select(["name", "start_ns"]).filter(mask)  # not the call stacks: only these are said
        if not bad.num_rows:
            continue
        i = pc.index(bad["start_ns"], pc.min(bad["start_ns"])).as_py()
        first = f"{bad['name'][i].as_py()!r} at {_when(bad['start_ns'][i].as_py())}"
        m, fix = msg(
            "tasks-outside-capture",
            count=bad.num_rows,
            what=what,
            rank=data.rank,
            window_from=_window_from(row),
            start=_when(lo + WINDOW_SLACK_NS),
            end=_when(hi - WINDOW_SLACK_NS),
            first=first,
        )
        out.append(dg.warning("tasks-outside-capture", m, file=row.get("path"), fix=fix, rank=data.rank))
    return out


def _window_from(row: dict) -> str:
    return {
        "ascend_text": "profiler_info (start_info / end_info)",
        "ascend_db": "the DB's session time",
        "msprof": "start_info / end_info",
        "msprof_db": "the DB's session time",
    }.get(row.get("source_format"), "the profile")


def _duplicated(data: RankData, row: dict) -> list[dg.Diagnostic]:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    dt = data.tables["device_tasks"]
    keys = ["kind", "stream", "name", "start_ns", "dur_ns"]
    # copies share their start: the start column alone is sorted (a few ms; hashing it, or
    # copying the five columns with their long kernel names first, cost 0.1 s on a 100 MB
    # trace), and only the tasks of a start seen twice are grouped (usually none, and the
    # five-key grouping then never runs); filtering keeps the groups' order
    starts = np.sort(pc.drop_null(dt["start_ns"]).to_numpy())
    shared = np.unique(starts[1:][starts[1:] == starts[:-1]])
    if not len(shared):
        return []
    dt = dt.select(keys).filter(pc.is_in(dt["start_ns"], value_set=pa.array(shared, pa.int64())))
    groups = dt.group_by(keys, use_threads=False).aggregate([([], "count_all")])
    dup = groups.filter(pc.greater(groups["count_all"], 1))
    if not dup.num_rows:
        return []
    extra = int(pc.sum(pc.subtract(dup["count_all"], 1)).as_py())
    i = pc.index(dup["start_ns"], pc.min(dup["start_ns"])).as_py()
    first = f"{dup['name'][i].as_py()!r} at {_when(dup['start_ns'][i].as_py())}"
    source = _SOURCES.get(row.get("source_format"), ("the device tasks' file",))[0]
    m, fix = msg("tasks-duplicated", count=extra, rank=data.rank, first=first, source=source)
    return [dg.warning("tasks-duplicated", m, file=row.get("path"), fix=fix, rank=data.rank)]


#: the vendor's own per-type kernel counts, where a format writes them beside the data
_STATISTIC = "op_statistic.csv"


def _vendor_counts(data: RankData, row: dict) -> list[dg.Diagnostic]:
    """op_statistic.csv's ``Count`` per ``OP Type`` against the kernels loaded, per type."""
    import csv

    import pyarrow.compute as pc

    if row.get("source_format") not in TORCH_NPU or not row.get("path"):
        return []
    path = Path(row["path"]) / "ASCEND_PROFILER_OUTPUT" / _STATISTIC
    if not path.is_file():
        return []
    vendor: dict[str, int] = {}
    with open(path, newline="", encoding="utf-8", errors="replace") as fh:
        for r in csv.DictReader(fh):
            op_type = str(r.get("OP Type") or "").strip()
            try:
                vendor[op_type] = vendor.get(op_type, 0) + int(float(r.get("Count") or ""))
            except (TypeError, ValueError):
                continue
    if not vendor:
        return []
    dt = data.tables["device_tasks"]
    kernels = dt.select(["type"]).filter(pc.equal(dt["kind"], "kernel"))
    loaded: dict[str, int] = {}
    for op_type in kernels["type"].to_pylist():
        key = "" if op_type is None else str(op_type)
        loaded[key] = loaded.get(key, 0) + 1
    differ = sorted(
        (k for k in set(vendor) | set(loaded) if vendor.get(k, 0) != loaded.get(k, 0)),
        key=lambda k: -abs(vendor.get(k, 0) - loaded.get(k, 0)),
    )
    if not differ:
        return []
    examples = ", ".join(f"{k or '(no type)'}: {loaded.get(k, 0)} vs {vendor.get(k, 0)}" for k in differ[:3])
    m, fix = msg(
        "rows-vs-vendor",
        rank=data.rank,
        loaded=kernels.num_rows,
        source=_SOURCES.get(row.get("source_format"), ("the device tasks' file",))[0],
        file=_STATISTIC,
        vendor=sum(vendor.values()),
        types=len(differ),
        examples=examples,
    )
    return [dg.warning("rows-vs-vendor", m, file=path, fix=fix, rank=data.rank)]


# --- checks across the ranks of one run -------------------------------------------------------
#: more profiled steps than this is a capture larger than needed (as the advisor's profile_quality)
MAX_STEPS = 5
#: the releases profinsight is tested with, by run_info.versions key: (name, oldest, newest)
TESTED_VERSIONS = {
    "torch_npu_version": ("torch_npu", "2.1", "2.7"),
    "cann_version": ("CANN", "8.0", "8.3"),
}


def run_checks(infos: dict[int, dict], steps: int, tasks: int, root) -> list[dg.Diagnostic]:
    """``infos``: each rank's run_info row; ``steps``: the run's distinct profiled steps; ``tasks``:
    its device tasks over all ranks."""
    out = []
    if steps > MAX_STEPS:
        m, fix = msg("capture-large", steps=steps, tasks=f"{tasks:,}")
        out.append(dg.info("capture-large", m, file=root, fix=fix))
    return out + _untested(infos, root)


def _release(v: str) -> tuple[int, ...]:
    import re

    return tuple(int(x) for x in re.findall(r"\d+", v)[:2])


def _untested(infos: dict[int, dict], root) -> list[dg.Diagnostic]:
    found: set[tuple[str, str]] = set()
    for row in infos.values():
        try:
            versions = json.loads(row.get("versions") or "{}")
        except ValueError:
            continue
        for key, value in versions.items() if isinstance(versions, dict) else ():
            if key in TESTED_VERSIONS:
                found.add((key, str(value)))
    out = []
    for key, value in sorted(found):
        name, low, high = TESTED_VERSIONS[key]
        have = _release(value)
        if not have or _release(low) <= have <= _release(high):
            continue
        side = "older" if have < _release(low) else "newer"
        m, fix = msg("version-untested", name=name, version=value, side=side, low=low, high=high)
        out.append(dg.info("version-untested", m, file=root, fix=fix))
    return out
