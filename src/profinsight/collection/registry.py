"""The experiment registry: one SQLite file, ``experiments.db``, in the experiments folder.

Each row is one run: its name, when, notes, tags, parameters, the git commit and dirty state,
software versions and profiling-relevant environment variables, the profile's path and headline
metrics (mean step time, busy / compute ratio, top operator type, top finding).  Names need not
be unique: looking a name up gives its latest run.

Nothing here imports torch; pandas is imported only by :func:`experiments`.
"""

from __future__ import annotations

import json
import os
import platform
import sqlite3
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from ..errors import ProfileError
from ..store.experiments import (  # noqa: F401 - the index is read here too: one name for the record
    DB_NAME,
    DEFAULT_FOLDER,
    ENV_FOLDER,
    experiments_folder,
    get,
    resolve_name,
    rows,
)
from ..store.experiments import connect as _open

#: environment variables that change what a profiler records or how a job runs
ENV_PREFIXES = ("ASCEND_", "HCCL_", "CUDA_", "NCCL_", "TORCH_NPU", "PYTORCH_CUDA_ALLOC_CONF")
ENV_NAMES = (
    "PYTORCH_NPU_ALLOC_CONF",
    "TASK_QUEUE_ENABLE",
    "COMBINED_ENABLE",
    "INF_NAN_MODE_ENABLE",
    "OMP_NUM_THREADS",
    "CPU_AFFINITY_CONF",
)

COLUMNS = (
    "id",
    "name",
    "created",
    "path",
    "backend",
    "notes",
    "tags",
    "params",
    "git_commit",
    "git_dirty",
    "versions",
    "env",
    "step_us",
    "step_source",
    "busy_ratio",
    "compute_ratio",
    "top_op_type",
    "top_op_share_of_compute_ratio",
    "top_finding",
    "metrics_error",
)
_SCHEMA = """
create table if not exists experiments (
    id integer primary key autoincrement,
    name text not null,
    created text not null,
    path text not null,
    backend text,
    notes text,
    tags text,
    params text,
    git_commit text,
    git_dirty integer,
    versions text,
    env text,
    step_us real,
    step_source text,
    busy_ratio real,
    compute_ratio real,
    top_op_type text,
    top_op_share_of_compute_ratio real,
    top_finding text,
    metrics_error text
);
create index if not exists experiments_name on experiments(name);
"""


def _connect(folder=None, *, create: bool) -> sqlite3.Connection | None:
    return _open(folder, create=create, schema=_SCHEMA)


# --- what the environment was ----------------------------------------------------------
def git_state(cwd=None) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the git work tree at ``cwd``; (None, None) without git or a repository."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10)
        if commit.returncode != 0:
            return None, None
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=10,
        )
        dirty = bool(status.stdout.strip()) if status.returncode == 0 else None
        return commit.stdout.strip() or None, dirty
    except (OSError, subprocess.SubprocessError):
        return None, None


def _cann_version() -> str | None:
    roots = [
        os.environ.get("ASCEND_HOME_PATH"),
        os.environ.get("ASCEND_TOOLKIT_HOME"),
        "/usr/local/Ascend/ascend-toolkit/latest",
    ]
    for root in filter(None, roots):
        for rel in ("version.cfg", "ascend_toolkit_install.info", "compiler/version.info", "runtime/version.info"):
            f = Path(root) / rel
            try:
                text = f.read_text(errors="replace")
            except OSError:
                continue
            for line in text.splitlines():
                key, _, value = line.partition("=")
                if key.strip().lower() in ("version", "toolkit_installed_version") and value.strip():
                    return value.strip().strip('"').split(":")[-1]
    return None


def versions() -> dict:
    """Versions of what shapes a profile; torch / torch_npu only if already imported or importable
    without side effects (they are looked up in ``sys.modules`` first)."""
    from .._version import __version__

    out = {"profinsight": __version__, "python": platform.python_version()}
    for mod in ("torch", "torch_npu"):
        m = sys.modules.get(mod)
        if m is None:
            try:
                from importlib.metadata import version

                out[mod] = version(mod)
            except Exception:  # noqa: BLE001 - not installed
                continue
        else:
            out[mod] = getattr(m, "__version__", None)
    cann = _cann_version()
    if cann:
        out["cann"] = cann
    return out


def profiling_env() -> dict:
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith(ENV_PREFIXES) or k in ENV_NAMES}


# --- headline metrics --------------------------------------------------------------------
def _mean(df, col):
    if df is None or col not in getattr(df, "columns", ()):
        return None
    import pandas as pd

    s = pd.to_numeric(df[col], errors="coerce").dropna()
    return float(s.mean()) if len(s) else None


def mean_step(profile) -> tuple[float | None, str | None]:
    """Mean device step time (``step_us``), else the host step (``host_step_us``) for CPU-only
    traces: (value, column used)."""
    sb = profile.step_breakdown()
    for col in ("step_us", "host_step_us"):
        v = _mean(sb, col)
        if v is not None:
            return v, col
    return None, None


def headline(profile) -> dict:
    """Headline metrics of a loaded profile; a metric that cannot be computed is None, and what
    went wrong is kept in ``metrics_error``."""
    out = {
        "step_us": None,
        "step_source": None,
        "busy_ratio": None,
        "compute_ratio": None,
        "top_op_type": None,
        "top_op_share_of_compute_ratio": None,
        "top_finding": None,
    }
    errors = []
    try:
        out["step_us"], out["step_source"] = mean_step(profile)
    except Exception as exc:  # noqa: BLE001 - a metric must not stop registration
        errors.append(f"step_breakdown: {exc}")
    try:
        u = profile.utilization()
        out["busy_ratio"], out["compute_ratio"] = _mean(u, "busy_ratio"), _mean(u, "compute_ratio")
    except Exception as exc:  # noqa: BLE001
        errors.append(f"utilization: {exc}")
    try:
        ops = profile.op_summary(by="type", top=1)
        if len(ops):
            out["top_op_type"] = str(ops["type"].iloc[0])
            share = _mean(ops.head(1), "share_of_compute_ratio")
            out["top_op_share_of_compute_ratio"] = share
    except Exception as exc:  # noqa: BLE001
        errors.append(f"op_summary: {exc}")
    try:
        out["top_finding"] = top_finding(profile)
    except Exception as exc:  # noqa: BLE001
        errors.append(f"advise: {exc}")
    out["metrics_error"] = "; ".join(errors) or None
    return out


def top_finding(profile) -> str | None:
    """The advisor's first finding, when the advisor is installed (``Profile.advise``)."""
    try:
        advise = profile.advise
    except AttributeError:
        try:  # the advisor module, before it is registered as an analysis
            from ..advisor import advise as _advise
        except ImportError:
            return None

        def advise():
            return _advise(profile)

    found = advise()
    if found is None:
        return None
    if hasattr(found, "iloc"):  # a DataFrame
        if "severity" in found.columns:  # only a finding that fired, never a rule that does not apply
            found = found[found["severity"] != "not_applicable"]
        if not len(found):
            return None
        row = found.iloc[0].to_dict()
    elif isinstance(found, (list, tuple)):
        if not found:
            return None
        row = found[0] if isinstance(found[0], dict) else getattr(found[0], "__dict__", {"title": str(found[0])})
    else:
        return str(found)
    for key in ("title", "message", "summary", "finding", "code"):
        if row.get(key):
            return str(row[key])
    return str(row)


# --- the registry --------------------------------------------------------------------------
def add(
    name: str,
    path,
    *,
    folder=None,
    notes=None,
    tags=(),
    params=None,
    backend: str | None = None,
    metrics: dict | None = None,
    git_cwd=None,
) -> dict:
    """Write one row; returns it (as :func:`get` would)."""
    if not name or not str(name).strip():
        raise ProfileError("an experiment needs a name", fix="profinsight.register('baseline', path)")
    commit, dirty = git_state(git_cwd)
    metrics = metrics or {}
    row = {
        "name": str(name),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "path": str(Path(path).resolve()),
        "backend": backend,
        "notes": notes,
        "tags": json.dumps(list(tags or ())),
        "params": json.dumps(params or {}, default=str, sort_keys=True),
        "git_commit": commit,
        "git_dirty": None if dirty is None else int(dirty),
        "versions": json.dumps(versions()),
        "env": json.dumps(profiling_env()),
        **{
            k: metrics.get(k)
            for k in (
                "step_us",
                "step_source",
                "busy_ratio",
                "compute_ratio",
                "top_op_type",
                "top_op_share_of_compute_ratio",
                "top_finding",
                "metrics_error",
            )
        },
    }
    con = _connect(folder, create=True)
    try:
        with con:
            cur = con.execute(
                f"insert into experiments ({', '.join(row)}) values ({', '.join('?' * len(row))})", list(row.values())
            )
            rid = cur.lastrowid
    finally:
        con.close()
    return get(rid, folder=folder)


def update(rid: int, folder=None, **fields) -> None:
    bad = set(fields) - set(COLUMNS[1:])
    if bad:
        raise ValueError(f"unknown columns {sorted(bad)}")
    con = _connect(folder, create=True)
    try:
        with con:
            con.execute(
                f"update experiments set {', '.join(f'{k} = ?' for k in fields)} where id = ?", [*fields.values(), rid]
            )
    finally:
        con.close()
