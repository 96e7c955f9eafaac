"""The advisor's engine: it runs the rules over the analyses' tables and says what each found, as
plain data without words — rule ids, the values their messages take, evidence, recoverable time,
the verdict's numbers and the report's section rows.  :mod:`profinsight.advisor` keeps this data
once per profile (beside its cached tables) and words it in the language asked for, so a warm
``analyze`` neither reads a table nor imports pandas.  Words come from :mod:`profinsight.i18n`."""

from __future__ import annotations

import pandas as pd

from ..errors import ProfileError
from .rules import POOLS, RULES, SEVERITIES, Context, col_sum, num


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


def hits(
    profile,
    thresholds: dict | None = None,
    ctx: Context | None = None,
    only: tuple | None = None,
    warm: tuple = (),
) -> dict:
    """Run every rule: ``{"hits": [...], "notes": [...], "basis": ...}``, hits sorted by
    recoverable time, then severity; ``basis`` is what every "per step" and share is of: "step",
    or "capture" where no step was recorded (every surface that words the hits names it).  A hit is ``{rule, severity, category, variant, values, evidence, recoverable_us,
    share_of_step_ratio}``; a note (a rule that does not apply) ``{rule, category, reason,
    reason_values}`` with ``reason`` a message key.  ``warm``: ``(analysis, params)`` that a caller
    reads next (the report's sections), computed on the rules' threads as they free up."""
    ths = thresholds_for(thresholds)
    ctx = ctx or Context(profile)
    found, notes = [], []
    # every rule that may apply runs at once, the clock check among them; where host and device
    # clocks are of different collections no rule may link host activity to the device (the
    # timestamp_sanity finding says why): those rules' results are dropped and listed as not
    # applicable, whatever they found (or raised)
    check_skew = only is None or "timestamp_sanity" in only
    run = [
        (rid, r)
        for rid, r in RULES.items()
        if (only is None or rid in only) and not (r.ascend_only and not ctx.is_ascend)
    ]
    if check_skew and "timestamp_sanity" not in dict(run):
        run.append(("timestamp_sanity", RULES["timestamp_sanity"]))
    outcome = dict(zip((rid for rid, _ in run), _run_rules(ctx, run, ths, warm)))
    skewed = check_skew and _value(outcome["timestamp_sanity"]) is not None
    denominator = ctx.denominator()
    for rid, r in RULES.items():
        if only is not None and rid not in only:
            continue
        if skewed and r.category == "data_host":
            notes.append({"rule": rid, "category": r.category, "reason": "not_applicable.timestamps", "values": {}})
            continue
        if r.ascend_only and not ctx.is_ascend:
            notes.append(
                {
                    "rule": rid,
                    "category": r.category,
                    "reason": "not_applicable.ascend_only",
                    "values": {"fmt": ctx.device_family or "unknown device"},
                }
            )
            continue
        hit = _value(outcome[rid])
        if hit is None:
            continue
        step_us = ctx.step_of(r.basis)  # the steps this rule's figures are of (rank source)
        rec = None if hit.recoverable_us is None else round(float(hit.recoverable_us), 3)
        if rec is not None and step_us > 0:
            rec = min(rec, round(step_us, 3))  # no change recovers more than the whole step
        # where the viewer shows the finding: every finding gets a time window on the timeline
        if isinstance(hit.evidence, dict) and "window" not in hit.evidence:
            hit.evidence["window"] = ctx.evidence_window(hit.evidence)
        found.append(
            {
                "rule": rid,
                "severity": hit.severity or r.severity,
                "category": r.category,
                "variant": hit.variant,
                # every message may name its denominator ({of}, {per}): the step, or the capture
                "values": {**denominator, **hit.values},
                "evidence": hit.evidence,
                "recoverable_us": rec,
                "share_of_step_ratio": None if rec is None or step_us <= 0 else round(rec / step_us, 6),
            }
        )
    # one order everywhere (findings, Actions, the report): recoverable time first, then severity;
    # findings whose recoverable time is not estimated follow, by severity
    found.sort(
        key=lambda f: (f["recoverable_us"] is None, -(f["recoverable_us"] or 0.0), SEVERITIES.index(f["severity"]))
    )
    return {"hits": found, "notes": notes, "basis": "capture" if ctx.per_capture else "step"}


#: threads the rules run on: each rule mostly waits for the analyses it reads (DuckDB, Arrow and
#: NumPy work without the GIL).  Two, one per core: the analyses the rules read are computed
#: first (:func:`reads_ahead`), so a rule seldom waits for another thread's analysis holding a
#: thread, and a third thread only added switches (Kineto 100 MB, the advisor phase alone:
#: 0.40-0.44 s against 0.43-0.50 s on three threads without the reads ahead, CPU 0.65-0.74 s
#: against 0.74-0.83 s; the eight analyses alone 0.31-0.34 s on two threads, 0.38-0.39 s on three)
RULE_THREADS = 2

#: analyses read ahead before the others, the longest first: ``idle_gaps`` is 0.2 s of the
#: advisor's 0.55 s of analyses on a 100 MB Kineto trace (0.1 of 0.5 s on an Ascend text
#: rank) and the others need less than it together; started after them it was the phase's
#: end (Kineto 100 MB: 0.45-0.49 s with it third against 0.40-0.44 s with it first)
LONGEST_FIRST = ("idle_gaps",)


def reads_ahead(run: list, ths: dict, warm: tuple = ()) -> list[tuple[str, dict]]:
    """The analyses the rules of ``run`` read whatever they find (:attr:`Rule.reads`), then
    ``warm``, each once: :data:`LONGEST_FIRST` first, the others in the rules' order."""
    seen, out = set(), []
    for name, params in [read for rid, r in run for read in r.reads_for(ths[rid])] + [(n, dict(p)) for n, p in warm]:
        key = (name, tuple(sorted(params.items())))
        if key not in seen:
            seen.add(key)
            out.append((name, params))
    return sorted(out, key=lambda read: read[0] not in LONGEST_FIRST)


def _run_rules(ctx: Context, run: list, ths: dict, warm: tuple = ()) -> list:
    """Each rule's outcome, ``(hit or None, exception or None)``, in the order of ``run``.  With a
    core to spare and a profile that can give each thread its own cursor, the rules run on
    :data:`RULE_THREADS` threads, behind the analyses they read (:func:`reads_ahead`): a cold
    ``analyze`` of a 100 MB profile computes ~10 analyses here, 0.5-0.6 s on one core.  The
    result is the same as one after the other: every rule is a function of the profile's tables
    and each analysis is computed once, whichever thread asks first.  An exception is kept, not
    raised: it is raised where the serial order would meet it (:func:`_value`), unless that
    rule's result is not used.

    ``warm`` analyses are the ones a caller reads next (the report's sections): read ahead with
    the rules' (Kineto 100 MB: ``op_summary`` by type, 36-41 ms after the rules when the report
    computed it itself).  Their results are kept by the profile like any analysis'; a failure
    while reading ahead is left for the rule's or the caller's own call to raise."""
    import os

    def one(rid, r):
        try:
            return r.func(ctx, ths[rid]), None
        except Exception as exc:  # noqa: BLE001 - raised again by _value, in rule order
            return None, exc

    parallel = getattr(ctx.profile, "parallel", None)
    if parallel is None or len(run) < 2 or RULE_THREADS < 2 or (os.cpu_count() or 1) < 2:
        return [one(rid, r) for rid, r in run]

    def read(name, params):
        try:
            ctx.view(name, **params)
        except Exception:  # noqa: BLE001 - the rule's or the caller's own call raises it, where it is read
            pass

    with parallel(RULE_THREADS) as pool:
        reading = [pool.submit(read, name, params) for name, params in reads_ahead(run, ths, warm)]
        futures = [pool.submit(one, rid, r) for rid, r in run]
        out = [f.result() for f in futures]
        for f in reading:
            f.result()
        return out


def _value(outcome: tuple):
    hit, exc = outcome
    if exc is not None:
        raise exc
    return hit


def verdict(profile, ctx: Context | None = None) -> dict:
    """Bottleneck type with the numbers behind it: the largest of compute, communication not
    overlapped and idle (free) time of the mean step; compute turns into memory bound when the
    AI Core's memory pipes (MTE2) are busier than its MAC unit.  Plain data: ``type``,
    ``numbers`` and the values its words take (``text_values``, ``detail_values``)."""
    ctx = ctx or Context(profile)
    sb = ctx.steps
    total = col_sum(sb, "step_us")
    if total <= 0:
        return {"type": "unknown", "numbers": {}, "text_values": None, "detail_values": None}
    shares = {
        "compute": col_sum(sb, "computing_us") / total,
        "communication": col_sum(sb, "comm_not_overlapped_us") / total,
        "data_host": col_sum(sb, "free_us") / total,
    }
    kind = max(shares, key=shares.get)
    detail = None
    u = ctx.view("utilization")
    if kind == "compute" and len(u) and "pmu_aic_mte2_ratio" in u.columns and "pmu_aic_mac_ratio" in u.columns:
        mte2 = num(pd.to_numeric(u["pmu_aic_mte2_ratio"], errors="coerce").mean())
        mac = num(pd.to_numeric(u["pmu_aic_mac_ratio"], errors="coerce").mean())
        if mte2 > mac:
            kind = "memory"
            detail = {"mte2": mte2, "mac": mac}
    numbers = {
        "rank_steps": len(sb),
        "step_us": round(ctx.step_us, 3),
        "share_of_step_compute_ratio": round(shares["compute"], 6),
        "share_of_step_comm_not_overlapped_ratio": round(shares["communication"], 6),
        "share_of_step_free_ratio": round(shares["data_host"], 6),
    }
    text_values = {
        "n": len(sb),
        "step_ms": ctx.step_us / 1e3,
        "compute": shares["compute"],
        "comm": shares["communication"],
        "free": shares["data_host"],
    }
    stepless = "step" in sb.columns and bool(sb["step"].isna().all())  # the one "step" is the capture
    return {"type": kind, "numbers": numbers, "text_values": text_values, "detail_values": detail, "stepless": stepless}


def overlaps(found: dict, ctx: Context) -> dict:
    """Which actions remove the same time, and how much all of them can remove together.

    Each rule's recoverable time comes out of one part of the mean step (its pool, :data:`POOLS`:
    device idle, communication not overlapped, compute).  Two actions of one pool overlap — fixing
    the dispatch and the data loading cannot both remove the same idle time — so a pool counts at
    most once.  How much its actions share is not measured (the gaps a compile stalls are among the
    idle gaps), so a pool is given as a range: at least its largest action (``low_us``), at most
    ``min(Σ its actions, the pool's mean per step)`` (``together_us``); the totals over the pools
    never exceed the mean step.  Plain data: per pool ``{pool, rules, sum_us, pool_us, low_us,
    together_us}`` (only pools with an action), ``sum_us`` (the actions added up), ``low_us`` and
    ``total_us`` (the range of all of them together)."""
    sb = ctx.steps
    n = max(len(sb), 1)
    groups: dict[str, dict] = {}
    for h in found["hits"]:
        rec = h["recoverable_us"]
        if not rec:
            continue
        pool = POOLS.get(h["rule"]) or h["rule"]  # no pool: its own, overlapping nothing
        g = groups.setdefault(pool, {"pool": pool, "rules": [], "sum_us": 0.0, "low_us": 0.0})
        g["rules"].append(h["rule"])
        g["sum_us"] += float(rec)
        g["low_us"] = max(g["low_us"], float(rec))
    for g in groups.values():
        size = col_sum(sb, g["pool"]) / n if g["pool"] in sb.columns else 0.0
        g["pool_us"] = round(size, 3) if size > 0 else None
        g["together_us"] = round(min(g["sum_us"], size) if size > 0 else g["sum_us"], 3)
        g["low_us"] = round(min(g["low_us"], g["together_us"]), 3)
        g["sum_us"] = round(g["sum_us"], 3)
    step = ctx.step_us

    def capped(v: float) -> float:
        return round(min(v, step) if step > 0 else v, 3)

    return {
        "groups": list(groups.values()),
        "sum_us": round(sum(g["sum_us"] for g in groups.values()), 3),
        "low_us": capped(sum(g["low_us"] for g in groups.values())),
        "total_us": capped(sum(g["together_us"] for g in groups.values())),
        "step_us": round(step, 3),
    }


def report(profile, found: dict, top: int = 10) -> dict:
    """Everything the guided report shows, as plain data without words; ``found`` is what
    :func:`hits` returned for the profile."""
    from .report_data import sections

    ctx = Context(profile)
    summary = profile.summary()
    return {
        "profile": {
            k: v for k, v in summary.items() if k in ("path", "format", "ranks", "level", "steps", "device_names")
        },
        "sections": sections(ctx, top),
        "verdict": verdict(profile, ctx),
        "hits": found["hits"],
        "notes": found["notes"],
        "overlaps": overlaps(found, ctx),
        # what "per step" and each share are of: the mean step, or the whole capture where no
        # step was recorded (the Actions heading, the recoverable shares and their total say it)
        "basis": "capture" if ctx.per_capture else "step",
    }
