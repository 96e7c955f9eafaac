"""The advisor: rules over the analyses' tables -> findings (evidence, recoverable time per step,
the change to make), a verdict (bottleneck type) and the guided report that ``analyze`` prints and
``report`` renders as HTML.

What the rules find is computed once per profile and thresholds by :mod:`profinsight.advisor.core`
and kept as plain data without words (rule ids, values, evidence) beside the profile's cached
tables (:meth:`profinsight.profile.Profile.remember`); this module words it in the language asked
for, every time.  So a warm ``analyze`` reads one small file and imports neither pandas nor
DuckDB: this module imports them only when something has to be computed.  Words come from
:mod:`profinsight.i18n`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..i18n import has, resolve_lang, t

if TYPE_CHECKING:
    import pandas as pd

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
    # what recoverable_us and share_of_step_ratio are of: "step" (the mean step), or "capture"
    # where the profile records no step; the same on every row, so it travels with the rows
    # (notebook cards, the viewer's findings, MCP answers) and needs no side channel
    "basis",
]


def thresholds_for(overrides: dict | None) -> dict[str, dict]:
    """Per rule its thresholds, defaults overridden by ``{"<rule>.<name>": value}``."""
    from .core import thresholds_for as _thresholds_for

    return _thresholds_for(overrides)


def _text(key: str, variant: str | None, lang: str, values: dict) -> str:
    k = f"{key}.{variant}" if variant and has(f"{key}.{variant}") else key
    return t(k, lang, **{n: _word(v, lang) for n, v in values.items()})


def _word(value, lang: str):
    """A rule's value, or — given as ``{"$t": key}`` — the catalogue's words for it in ``lang``
    (rules hold no words: a denominator such as "of the step" is named by its key)."""
    return t(value["$t"], lang) if isinstance(value, dict) and "$t" in value else value


def _hits(profile, thresholds: dict | None, ctx=None, only: tuple | None = None, warm: tuple = ()) -> dict:
    """The rules' plain findings, once per profile, thresholds and rule selection (``warm``:
    analyses the caller reads next, computed beside the rules; see :func:`.core.hits`)."""

    def compute():
        from .core import hits

        return hits(profile, thresholds, ctx, only, warm)

    params = {"thresholds": thresholds or {}, "only": sorted(only) if only is not None else None}
    if not hasattr(profile, "remember"):
        return compute()
    return profile.remember("advisor.hits", params, compute)


def worded(found: dict, lang: str) -> tuple[list[dict], list[dict]]:
    """Plain hits and notes -> (findings, notes) with titles, messages and changes in ``lang``."""
    findings = [
        {
            "rule": h["rule"],
            "severity": h["severity"],
            "category": h["category"],
            "title": t(f"{h['rule']}.title", lang),
            "message": _text(f"{h['rule']}.message", h["variant"], lang, h["values"]),
            "evidence": _evidence_words(h["evidence"], lang),
            "recoverable_us": h["recoverable_us"],
            "share_of_step_ratio": h["share_of_step_ratio"],
            "change": _text(f"{h['rule']}.change", h["variant"], lang, h["values"]),
        }
        for h in found["hits"]
    ]
    notes = [{"rule": n["rule"], "reason": t(n["reason"], lang, **n["values"])} for n in found["notes"]]
    return findings, notes


#: evidence lists whose rows carry a sentence (``evidence``) of :mod:`profinsight.i18n.evidence`,
#: and the function that words such a row
_SENTENCES = {"slow_ranks": "slow_rank", "groups": "group"}


def _evidence_words(ev, lang: str):
    """A finding's evidence with the rank sentences of its rows (slow ranks, parallel groups) in
    ``lang``: the rules keep the analyses' English sentence beside the figures it is made of, and
    the sentence is said again from those figures (a copy: the kept findings are not changed)."""
    if lang == "en" or not isinstance(ev, dict) or not any(k in ev for k in _SENTENCES):
        return ev
    from ..i18n import evidence

    out = dict(ev)
    for key, fn in _SENTENCES.items():
        rows = ev.get(key)
        if not isinstance(rows, list):
            continue
        words = getattr(evidence, fn)
        out[key] = []
        for r in rows:
            r = dict(r)
            try:
                r["evidence"] = words(r, lang)
            except (KeyError, TypeError, ValueError):
                pass  # a row kept without every figure of its sentence keeps the analysis' words
            out[key].append(r)
    return out


def evaluate(
    profile,
    lang: str | None = None,
    thresholds: dict | None = None,
    ctx=None,
    only: tuple | None = None,
):
    """Run every rule: (findings as dicts sorted by recoverable time, then severity, notes on
    rules not applicable)."""
    lang = resolve_lang(lang)
    return worded(_hits(profile, thresholds, ctx, only), lang)


def _worded_verdict(v: dict, lang: str) -> dict:
    if v["type"] == "unknown":
        return {"type": "unknown", "text": t("verdict.unknown", lang), "numbers": {}, "detail": ""}
    detail = t("verdict.memory_detail", lang, **v["detail_values"]) if v.get("detail_values") else ""
    return {
        "type": v["type"],
        "title": t(f"verdict.{v['type']}", lang),
        "text": t("verdict.numbers.capture" if v.get("stepless") else "verdict.numbers", lang, **v["text_values"]),
        "detail": detail,
        "numbers": v["numbers"],
    }


def verdict(profile, lang: str | None = None, ctx=None) -> dict:
    """Bottleneck type with the numbers behind it: the largest of compute, communication not
    overlapped and idle (free) time of the mean step; compute turns into memory bound when the
    AI Core's memory pipes (MTE2) are busier than its MAC unit."""
    from .core import verdict as _verdict

    return _worded_verdict(_verdict(profile, ctx), resolve_lang(lang))


def advise(profile, lang: str | None = None, thresholds: dict | None = None) -> pd.DataFrame:
    """Findings of every rule as a DataFrame (one row per finding); rules that do not apply to the
    profile follow as rows of severity ``not_applicable`` (their message says why)."""
    import pandas as pd

    lang = resolve_lang(lang)
    found = _hits(profile, thresholds)
    findings, notes = worded(found, lang)
    rows = findings + [
        {
            "rule": n["rule"],
            "severity": "not_applicable",
            "category": plain["category"],
            "title": t(f"{n['rule']}.title", lang),
            "message": n["reason"],
            "evidence": {},
            "recoverable_us": None,
            "share_of_step_ratio": None,
            "change": "",
        }
        for n, plain in zip(notes, found["notes"])
    ]
    df = pd.DataFrame(rows, columns=FINDING_COLUMNS)
    df["basis"] = found.get("basis", "step")
    df["recoverable_us"] = pd.to_numeric(df["recoverable_us"], errors="coerce").astype("Float64")
    df["share_of_step_ratio"] = pd.to_numeric(df["share_of_step_ratio"], errors="coerce").astype("Float64")
    return df


def guided_report(profile, lang: str | None = None, thresholds: dict | None = None, top: int = 10) -> dict:
    """Everything ``analyze`` prints, as plain JSON-able data (words in ``lang``)."""
    lang = resolve_lang(lang)

    def compute():
        from .core import report
        from .report_data import WARM

        return report(profile, _hits(profile, thresholds, warm=WARM), top)

    params = {"thresholds": thresholds or {}, "top": int(top)}
    core = profile.remember("advisor.report", params, compute) if hasattr(profile, "remember") else compute()
    findings, notes = worded(core, lang)
    actions = sorted([f for f in findings if f["recoverable_us"]], key=lambda f: -f["recoverable_us"])
    ov = core["overlaps"]
    pool_of = {r: g for g in ov["groups"] for r in g["rules"]}
    title = {f["rule"]: f["title"] for f in findings}
    basis = core.get("basis", "step")
    return {
        "profile": core["profile"],
        "lang": lang,
        "sections": core["sections"],
        # what every "per step" and share of the report is of: "step", or "capture" (no step recorded)
        "basis": basis,
        "verdict": _worded_verdict(core["verdict"], lang),
        "findings": findings,
        "actions": [
            {
                "rule": f["rule"],
                "title": f["title"],
                "recoverable_us": f["recoverable_us"],
                "share_of_step_ratio": f["share_of_step_ratio"],
                "change": f["change"],
                "overlaps_with": [r for r in pool_of[f["rule"]]["rules"] if r != f["rule"]],
                "note": _overlap_note(f["rule"], pool_of[f["rule"]], title, lang),
            }
            for f in actions
        ],
        "actions_total": _actions_total(ov, title, lang, basis),
        "not_applicable": notes,
    }


def _pool_words(pool: str, lang: str) -> str:
    return t(f"actions.pool.{pool}", lang)


def _overlap_note(rule: str, group: dict, title: dict, lang: str) -> str:
    """``overlaps with A, B: both take device idle time, do not add them up`` ("" when alone)."""
    others = [title[r] for r in group["rules"] if r != rule]
    if not others:
        return ""
    return t(
        "actions.overlap", lang, others=t("actions.join", lang).join(others), pool=_pool_words(group["pool"], lang)
    )


def _actions_total(ov: dict, title: dict, lang: str, basis: str = "step") -> dict:
    """What every action together can remove per step, as a range where actions overlap (the
    largest of each pool .. the pool counted once), never above the mean step.  Where no step was
    recorded (``basis`` "capture") the figures and their share are of the whole capture, and
    the words say so."""
    step = ov["step_us"]
    of = t(f"share_of.{basis}", lang)
    per = t(f"per.{basis}", lang)
    low, high = ov["low_us"], ov["total_us"]
    shared = [g for g in ov["groups"] if len(g["rules"]) > 1]
    if not ov["groups"]:
        text = ""
    elif not shared and low == high:
        share = t("actions.share", lang, share=high / step, of=of) if step > 0 else ""
        text = t("actions.total", lang, high_ms=high / 1e3, share=share, per=per)
    else:
        share = t("actions.share_range", lang, low=low / step, high=high / step, of=of) if step > 0 else ""
        pools = "; ".join(
            t(
                "actions.pool_once",
                lang,
                titles=t("actions.join", lang).join(title[r] for r in g["rules"]),
                pool=_pool_words(g["pool"], lang),
                low_ms=g["low_us"] / 1e3,
                high_ms=g["together_us"] / 1e3,
            )
            for g in shared
        )
        text = t(
            "actions.total.capped" if high < ov["sum_us"] else "actions.total.overlap",
            lang,
            low_ms=low / 1e3,
            high_ms=high / 1e3,
            sum_ms=ov["sum_us"] / 1e3,
            share=share,
            per=per,
            pools=pools,
        )
    return {
        "low_us": low,
        "high_us": high,
        "sum_us": ov["sum_us"],
        "share_of_step_low_ratio": round(low / step, 6) if step > 0 else None,
        "share_of_step_high_ratio": round(high / step, 6) if step > 0 else None,
        "text": text,
    }
