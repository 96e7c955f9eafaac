"""The advisor: rules over the analyses' tables -> findings (evidence, recoverable time per step,
the change to make), a verdict (bottleneck type) and the guided report that ``analyze`` prints and
``report`` renders as HTML.  Words come from :mod:`profinsight.i18n`."""

from __future__ import annotations

import pandas as pd

from ..errors import ProfileError
from ..i18n import has, resolve_lang, t
from .rules import RULES, SEVERITIES, Context, col_sum, num

FINDING_COLUMNS = [
    "rule",
    "severity",
    "category",
    "title",
    "message",
    "evidence",
    "recoverable_us",
    "share_of_step_ratio",
    "change",
]


def thresholds_for(overrides: dict | None) -> dict[str, dict]:
    """Per rule its thresholds, defaults overridden by ``{"<rule>.<name>": value}``."""
    out = {rid: dict(r.thresholds) for rid, r in RULES.items()}
    for key, value in (overrides or {}).items():
        rid, _, name = str(key).partition(".")
        if rid not in out or name not in out[rid]:
            known = ", ".join(f"{r}.{n}" for r, th in out.items() for n in th)
            raise ProfileError(f"unknown threshold {key!r}", fix=f"thresholds: {known}")
        out[rid][name] = value
    return out


def _text(key: str, variant: str | None, lang: str, values: dict) -> str:
    k = f"{key}.{variant}" if variant and has(f"{key}.{variant}") else key
    return t(k, lang, **values)


def evaluate(
    profile,
    lang: str | None = None,
    thresholds: dict | None = None,
    ctx: Context | None = None,
    only: tuple | None = None,
):
    """Run every rule: (findings as dicts sorted by recoverable time, then severity, notes on
    rules not applicable)."""
    lang = resolve_lang(lang)
    ths = thresholds_for(thresholds)
    ctx = ctx or Context(profile)
    findings, notes = [], []
    # host and device clocks of different collections: no rule may link host activity to the
    # device (the timestamp_sanity finding says why); those rules are listed as not applicable
    skewed = (only is None or "timestamp_sanity" in only) and RULES["timestamp_sanity"].func(
        ctx, ths["timestamp_sanity"]
    ) is not None
    for rid, r in RULES.items():
        if only is not None and rid not in only:
            continue
        if skewed and r.category == "data_host":
            notes.append({"rule": rid, "reason": t("not_applicable.timestamps", lang)})
            continue
        if r.ascend_only and not ctx.is_ascend:
            notes.append(
                {
                    "rule": rid,
                    "reason": t("not_applicable.ascend_only", lang, fmt=ctx.device_family or "unknown device"),
                }
            )
            continue
        hit = r.func(ctx, ths[rid])
        if hit is None:
            continue
        step_us = ctx.step_of(r.basis)  # the steps this rule's figures are of (rank source)
        rec = None if hit.recoverable_us is None else round(float(hit.recoverable_us), 3)
        if rec is not None and step_us > 0:
            rec = min(rec, round(step_us, 3))  # no change recovers more than the whole step
        # where the viewer shows the finding: every finding gets a time window on the timeline
        if isinstance(hit.evidence, dict) and "window" not in hit.evidence:
            hit.evidence["window"] = ctx.evidence_window(hit.evidence)
        findings.append(
            {
                "rule": rid,
                "severity": hit.severity or r.severity,
                "category": r.category,
                "title": t(f"{rid}.title", lang),
                "message": _text(f"{rid}.message", hit.variant, lang, hit.values),
                "evidence": hit.evidence,
                "recoverable_us": rec,
                "share_of_step_ratio": None if rec is None or step_us <= 0 else round(rec / step_us, 6),
                "change": _text(f"{rid}.change", hit.variant, lang, hit.values),
            }
        )
    # one order everywhere (findings, Actions, the report): recoverable time first, then severity;
    # findings whose recoverable time is not estimated follow, by severity
    findings.sort(
        key=lambda f: (f["recoverable_us"] is None, -(f["recoverable_us"] or 0.0), SEVERITIES.index(f["severity"]))
    )
    return findings, notes


def verdict(profile, lang: str | None = None, ctx: Context | None = None) -> dict:
    """Bottleneck type with the numbers behind it: the largest of compute, communication not
    overlapped and idle (free) time of the mean step; compute turns into memory bound when the
    AI Core's memory pipes (MTE2) are busier than its MAC unit."""
    lang = resolve_lang(lang)
    ctx = ctx or Context(profile)
    sb = ctx.steps
    total = col_sum(sb, "step_us")
    if total <= 0:
        return {"type": "unknown", "text": t("verdict.unknown", lang), "numbers": {}, "detail": ""}
    shares = {
        "compute": col_sum(sb, "computing_us") / total,
        "communication": col_sum(sb, "comm_not_overlapped_us") / total,
        "data_host": col_sum(sb, "free_us") / total,
    }
    kind = max(shares, key=shares.get)
    detail = ""
    u = ctx.view("utilization")
    mte2 = mac = None
    if kind == "compute" and len(u) and "pmu_aic_mte2_ratio" in u.columns and "pmu_aic_mac_ratio" in u.columns:
        mte2 = num(pd.to_numeric(u["pmu_aic_mte2_ratio"], errors="coerce").mean())
        mac = num(pd.to_numeric(u["pmu_aic_mac_ratio"], errors="coerce").mean())
        if mte2 > mac:
            kind = "memory"
            detail = t("verdict.memory_detail", lang, mte2=mte2, mac=mac)
    numbers = {
        "rank_steps": len(sb),
        "step_us": round(ctx.step_us, 3),
        "share_of_step_compute_ratio": round(shares["compute"], 6),
        "share_of_step_comm_not_overlapped_ratio": round(shares["communication"], 6),
        "share_of_step_free_ratio": round(shares["data_host"], 6),
    }
    text = t(
        "verdict.numbers",
        lang,
        n=len(sb),
        step_ms=ctx.step_us / 1e3,
        compute=shares["compute"],
        comm=shares["communication"],
        free=shares["data_host"],
    )
    return {"type": kind, "title": t(f"verdict.{kind}", lang), "text": text, "detail": detail, "numbers": numbers}


def advise(profile, lang: str | None = None, thresholds: dict | None = None) -> pd.DataFrame:
    """Findings of every rule as a DataFrame (one row per finding); rules that do not apply to the
    profile follow as rows of severity ``not_applicable`` (their message says why)."""
    findings, notes = evaluate(profile, lang, thresholds)
    rows = findings + [
        {
            "rule": n["rule"],
            "severity": "not_applicable",
            "category": RULES[n["rule"]].category,
            "title": t(f"{n['rule']}.title", lang),
            "message": n["reason"],
            "evidence": {},
            "recoverable_us": None,
            "share_of_step_ratio": None,
            "change": "",
        }
        for n in notes
    ]
    df = pd.DataFrame(rows, columns=FINDING_COLUMNS)
    df["recoverable_us"] = pd.to_numeric(df["recoverable_us"], errors="coerce").astype("Float64")
    df["share_of_step_ratio"] = pd.to_numeric(df["share_of_step_ratio"], errors="coerce").astype("Float64")
    return df


def guided_report(profile, lang: str | None = None, thresholds: dict | None = None, top: int = 10) -> dict:
    """Everything ``analyze`` prints, as plain JSON-able data."""
    from .report_data import sections

    lang = resolve_lang(lang)
    ctx = Context(profile)
    findings, notes = evaluate(profile, lang, thresholds, ctx)
    actions = sorted([f for f in findings if f["recoverable_us"]], key=lambda f: -f["recoverable_us"])
    return {
        "profile": {
            k: v
            for k, v in profile.summary().items()
            if k in ("path", "format", "ranks", "level", "steps", "device_names")
        },
        "lang": lang,
        "sections": sections(ctx, top),
        "verdict": verdict(profile, lang, ctx),
        "findings": findings,
        "actions": [
            {
                "rule": f["rule"],
                "title": f["title"],
                "recoverable_us": f["recoverable_us"],
                "share_of_step_ratio": f["share_of_step_ratio"],
                "change": f["change"],
            }
            for f in actions
        ],
        "not_applicable": notes,
    }
