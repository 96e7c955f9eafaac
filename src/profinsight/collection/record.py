"""The experiment record: the page a team reviews after a series of tuning rounds.

``build(names)`` turns registered experiments (in the order given: one round each) into plain,
JSON-able data — what was run (name, time, notes, parameters, git commit, path), headline numbers
(step time, utilisation, top operator, top finding), the step breakdown and top-10 operators, the
advisor's findings, and the before/after table against the previous round (``profinsight.compare``
when both profiles load).  ``render_html`` and ``render_markdown`` (from the render layer,
:mod:`profinsight.render.record`, re-exported here for callers of this module) only draw that
data: the HTML page is self-contained (inline CSS and SVG, no script, no external URL); the
Markdown form shows the charts' data as tables.  Words come from :mod:`profinsight.i18n`
(``record.*``).
"""

from __future__ import annotations

import json
import math

import pandas as pd

from ..errors import ProfileError
from ..i18n import resolve_lang
from ..render.record import render_html, render_markdown
from . import registry

__all__ = ["build", "render_html", "render_markdown"]

STEP_COLUMNS = [
    "rank",
    "step",
    "step_us",
    "computing_us",
    "comm_not_overlapped_us",
    "free_us",
    "preparing_us",
    "host_step_us",
    "label",
]
OP_COLUMNS = ["type", "core", "count", "total_us", "avg_us", "share_of_compute_ratio", "share_of_step_ratio", "label"]
FINDING_KEYS = ("rule", "severity", "title", "message", "recoverable_us", "share_of_step_ratio", "change")
#: (stat key, label key, kind) of the before/after table
COMPARED = (
    ("step_us", "us"),
    ("computing_us", "us"),
    ("comm_not_overlapped_us", "us"),
    ("free_us", "us"),
    ("preparing_us", "us"),
    ("busy_ratio", "ratio"),
    ("compute_ratio", "ratio"),
    ("peak_allocated_bytes", "bytes"),
)


def _records(df, cols) -> list[dict]:
    if df is None or not len(df):
        return []
    df = pd.DataFrame(df)[[c for c in cols if c in df.columns]]
    return json.loads(df.to_json(orient="records", default_handler=str))


def _f(v):
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _round(name: str, i: int, folder, lang: str, top: int) -> tuple[dict, object]:
    row = registry.get(name, folder)
    if row is None:
        raise ProfileError(f"no experiment named {name!r}", fix="profinsight experiments lists the registered runs")
    r = {
        "round": i + 1,
        "name": row["name"],
        "id": row["id"],
        "created": row["created"],
        "notes": row.get("notes"),
        "tags": row.get("tags") or [],
        "params": row.get("params") or {},
        "git_commit": row.get("git_commit"),
        "git_dirty": row.get("git_dirty"),
        "path": row["path"],
        "backend": row.get("backend"),
        "headline": {
            k: row.get(k)
            for k in (
                "step_us",
                "step_source",
                "busy_ratio",
                "compute_ratio",
                "top_op_type",
                "top_op_share_of_compute_ratio",
                "top_finding",
            )
        },
        "steps": [],
        "ops": [],
        "findings": [],
        "load_error": None,
    }
    try:
        from ..api import load

        profile = load(row["path"])
    except Exception as exc:  # noqa: BLE001 - a round that cannot load still shows what was run
        r["load_error"] = str(exc)
        return r, None
    h = r["headline"]
    sb = profile.step_breakdown()
    r["steps"] = _records(sb, STEP_COLUMNS)
    h["step_us"], h["step_source"] = registry.mean_step(profile)
    u = profile.utilization()
    h["busy_ratio"], h["compute_ratio"] = registry._mean(u, "busy_ratio"), registry._mean(u, "compute_ratio")
    ops = profile.op_summary(by="type", top=top)
    r["ops"] = _records(ops, OP_COLUMNS)
    if r["ops"]:
        h["top_op_type"] = r["ops"][0]["type"]
        h["top_op_share_of_compute_ratio"] = r["ops"][0].get("share_of_compute_ratio")
    try:
        from ..advisor import evaluate

        findings, _ = evaluate(profile, lang)
        r["findings"] = [{k: f.get(k) for k in FINDING_KEYS} for f in findings]
        h["top_finding"] = findings[0]["title"] if findings else None
    except Exception as exc:  # noqa: BLE001
        r["findings_error"] = str(exc)
    return r, profile


def _before_after(prev: dict, cur: dict, prev_p, cur_p, lang: str | None = None) -> dict:
    out = {"from": prev["name"], "to": cur["name"], "rows": [], "verdict": None, "error": None}
    if prev_p is None or cur_p is None:
        out["error"] = "profile not loaded"
        rows_from = {
            "step_us": prev["headline"].get("step_us"),
            "busy_ratio": prev["headline"].get("busy_ratio"),
            "compute_ratio": prev["headline"].get("compute_ratio"),
        }
        rows_to = {
            "step_us": cur["headline"].get("step_us"),
            "busy_ratio": cur["headline"].get("busy_ratio"),
            "compute_ratio": cur["headline"].get("compute_ratio"),
        }
    else:
        try:
            from ..api import compare

            cmp = compare(
                prev_p, cur_p, names=[f"{prev['round']}:{prev['name']}", f"{cur['round']}:{cur['name']}"], lang=lang
            )
            rows_from, rows_to = cmp.stats[0], cmp.stats[1]
            # the verdict that knows the runs' noise (regression / improvement / within noise /
            # inconclusive), then where the step change went
            out["verdict"] = cmp.verdicts()[0] if cmp.pairs else None
            out["verdict_kind"] = cmp.noise_verdicts()[0]["kind"] if cmp.pairs else None
        except Exception as exc:  # noqa: BLE001
            out["error"] = str(exc)
            return out
    for key, kind in COMPARED:
        a, b = _f(rows_from.get(key)), _f(rows_to.get(key))
        if a is None and b is None:
            continue
        d = None if a is None or b is None else b - a
        out["rows"].append(
            {
                "metric": key,
                "kind": kind,
                "before": a,
                "after": b,
                "delta": d,
                "delta_ratio": (d / a) if d is not None and a else None,
            }
        )
    return out


def build(names, folder=None, lang: str | None = None, top: int = 10) -> dict:
    """The record of the registered experiments ``names`` (one round each, in order) as plain data."""
    names = list(names)
    if not names:
        raise ProfileError(
            "record needs at least one experiment name", fix="profinsight record baseline tuned -o record.html"
        )
    lang = resolve_lang(lang)
    rounds, profiles = [], []
    for i, name in enumerate(names):
        r, p = _round(name, i, folder, lang, top)
        if rounds:
            r["before_after"] = _before_after(rounds[-1], r, profiles[-1], p, lang)
        rounds.append(r)
        profiles.append(p)
    return {"lang": lang, "folder": str(registry.experiments_folder(folder)), "rounds": rounds}
