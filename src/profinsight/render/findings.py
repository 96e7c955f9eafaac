"""``p.advise()`` in a notebook: the advisor's findings as the viewer shows them -- one card per
finding (severity, title, what was seen, what it costs per step -- or over the capture where
no step was recorded -- and what to change), the evidence
folded under it as readable lists, the rules that did not apply in one line at the end.

Static HTML with inline styles only (no script, no stylesheet): a saved notebook, GitHub and VS
Code show the same cards.  Every text goes through ``html.escape``; a rule's evidence is shown
whole (nested lists as small tables), never as a truncated Python dict.
"""

from __future__ import annotations

import html
import math

import pandas as pd

from ..i18n import t

#: severity -> (border colour, badge background, badge text)
SEVERITY = {
    "high": ("#e15759", "#fde8e8", "#b3261e"),
    "medium": ("#f28e2b", "#fff1e0", "#8a4b00"),
    "low": ("#4e79a7", "#e8eff8", "#2c4f78"),
    "info": ("#bab0ac", "#f2f0ef", "#555555"),
}
#: the longest list shown of one evidence field (the DataFrame keeps all of it)
_MAX_ITEMS = 12


def _clean(v):
    """A cell value as plain Python (NaN -> None), for the evidence lists."""
    if isinstance(v, float) and math.isnan(v):
        return None
    try:
        if pd.isna(v):
            return None
    except (TypeError, ValueError):
        pass
    return v


def _value(v, key: str = "") -> str:
    """One evidence value as text: times with units, ratios as %, big integers (epoch ns) whole."""
    e = html.escape
    v = _clean(v)
    if v is None:
        return "<span style='color:#888'>–</span>"
    if isinstance(v, bool):
        return e(str(v))
    if isinstance(v, int | float):
        if key.endswith("_us"):
            return e(f"{v / 1e3:,.3f} ms" if abs(v) >= 1e3 else f"{v:,.3f} us")
        if key.endswith("_ratio") or key in ("share", "ratio"):
            return e(f"{v:.1%}")
        if key.endswith("_bytes"):
            return e(f"{v / 2**20:,.1f} MiB")
        if isinstance(v, int) or float(v).is_integer():
            return e(str(int(v)) if key.endswith("_ns") else f"{int(v):,}")
        return e(f"{v:,.3f}")
    return e(str(v))


def _evidence(ev, depth: int = 0) -> str:
    """Evidence (dicts, lists of dicts, scalars) as nested HTML lists and small tables."""
    e = html.escape
    ev = _clean(ev)
    if isinstance(ev, dict):
        if not ev:
            return ""
        items = "".join(
            f"<li><b>{e(str(k))}</b>: {_evidence(v, depth + 1) if isinstance(v, dict | list) else _value(v, str(k))}</li>"
            for k, v in ev.items()
        )
        return f"<ul style='margin:2px 0 2px 16px;padding:0'>{items}</ul>"
    if isinstance(ev, list):
        if not ev:
            return "<span style='color:#888'>–</span>"
        shown = ev[:_MAX_ITEMS]
        more = f"<div style='color:#666'>… {len(ev) - len(shown)} more</div>" if len(ev) > len(shown) else ""
        if all(isinstance(x, dict) for x in shown):
            cols = list(dict.fromkeys(k for x in shown for k in x))
            head = "".join(f"<th style='text-align:left;padding:1px 6px'>{e(c)}</th>" for c in cols)
            rows = "".join(
                "<tr>"
                + "".join(f"<td style='padding:1px 6px;white-space:nowrap'>{_value(x.get(c), c)}</td>" for c in cols)
                + "</tr>"
                for x in shown
            )
            return (
                f"<div style='overflow-x:auto'><table style='border-collapse:collapse;font-size:11px;margin:2px 0'>"
                f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>{more}"
            )
        return ", ".join(_value(x) for x in shown) + more
    return _value(ev)


def basis_of(f: dict) -> str:
    """What a finding's recoverable time is of: "step", or "capture" where the profile records no
    step (the ``basis`` column of ``advise()``); a row without it (saved by an earlier version)
    is of the step, as every finding was then."""
    basis = _clean(f.get("basis"))
    return basis if basis in ("step", "capture") else "step"


def recoverable_time(f: dict, lang=None) -> str:
    """A card's recoverable time with its denominator named: ``1.23 ms per step (4.5% of the
    step)``, ``11,952.40 ms in the capture (93.1% of the capture)`` where no step was recorded
    (the share is then of the whole capture, never of a step), the time alone with its "per"
    where no share could be taken, "not estimated" where the rule could not estimate it."""
    rec, share = _clean(f.get("recoverable_us")), _clean(f.get("share_of_step_ratio"))
    if rec is None:
        return t("label.not_estimated", lang)
    key = f"label.recoverable_time.{basis_of(f)}"
    ms = f"{float(rec) / 1e3:,.2f} ms"
    if share is None:
        return t(f"{key}.no_share", lang, ms=ms)
    return t(key, lang, ms=ms, share=float(share))


def finding_card(f: dict, lang=None) -> str:
    """One finding as a card (inline styles)."""
    e = html.escape
    sev = str(f.get("severity") or "info")
    border, badge_bg, badge_fg = SEVERITY.get(sev, SEVERITY["info"])
    rec_def = f"{t('term.recoverable', lang)}: {t('term.recoverable.def', lang)}"
    rec = recoverable_time(f, lang)
    evidence = _evidence(f.get("evidence"))
    change = _clean(f.get("change"))
    return (
        f"<div class='profinsight-finding' data-rule='{e(str(f.get('rule', '')))}' style='border:1px solid #ddd;"
        f"border-left:4px solid {border};border-radius:4px;padding:6px 10px;margin:8px 0;max-width:980px'>"
        f"<div><span style='background:{badge_bg};color:{badge_fg};border-radius:8px;padding:1px 8px;"
        f"font-size:11px;font-weight:600'>{e(t('severity.' + sev, lang))}</span> "
        f"<b>{e(str(f.get('title', '')))}</b> <span style='color:#666;font-size:12px'>· "
        f"{e(t('category.' + str(f.get('category', '')), lang))}</span></div>"
        f"<div style='margin:4px 0'>{e(str(f.get('message', '')))}</div>"
        f"<div style='font-size:12px'><span title='{e(rec_def)}' style='text-decoration:underline dotted'>"
        f"{e(t('label.recoverable', lang))}</span>: <b>{e(rec)}</b></div>"
        + (f"<div style='margin-top:4px'><b>{e(t('label.change', lang))}:</b> {e(str(change))}</div>" if change else "")
        + (
            f"<details style='margin-top:4px;font-size:12px'><summary style='cursor:pointer'>"
            f"{e(t('label.evidence', lang))}</summary>{evidence}</details>"
            if evidence
            else ""
        )
        + "</div>"
    )


def findings_html(df: pd.DataFrame, lang=None) -> str:
    """The findings of ``advise()`` as cards in their order (recoverable time, largest first);
    the rules that did not apply, with why, in one line at the end."""
    e = html.escape
    if "severity" not in df.columns:
        return ""
    fired = df[df["severity"] != "not_applicable"]
    na = df[df["severity"] == "not_applicable"]
    cards = "".join(finding_card(r, lang) for r in fired.to_dict("records"))
    if not cards:
        cards = f"<div style='color:#666'>{e(t('label.no_findings', lang))}</div>"
    footer = ""
    if len(na):
        reasons = "; ".join(dict.fromkeys(str(m) for m in na["message"]))
        text = f"{t('section.not_applicable', lang)}: {', '.join(str(r) for r in na['rule'])} ({reasons})"
        footer = f"<div class='profinsight-footer' style='color:#666;margin-top:4px'>{e(text)}</div>"
    return f"<div class='profinsight-findings' style='font-family:system-ui,sans-serif;font-size:13px'>{cards}{footer}</div>"
