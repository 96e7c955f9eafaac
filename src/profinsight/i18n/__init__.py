"""One message catalogue for every word a person reads (findings, verdict, report titles), in
English and Chinese.  ``t(key, lang, **values)`` formats a message; ``lang`` defaults from the
locale (``LC_ALL`` / ``LC_MESSAGES`` / ``LANG`` starting with ``zh`` -> Chinese)."""

from __future__ import annotations

import os

from .messages import MESSAGES

LANGS = ("en", "zh")


def default_lang() -> str:
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        v = os.environ.get(var)
        if v:
            return "zh" if v.lower().startswith("zh") else "en"
    return "en"


def resolve_lang(lang: str | None) -> str:
    if lang is None:
        return default_lang()
    lang = str(lang).lower()[:2]
    if lang not in LANGS:
        from ..errors import ProfileError

        raise ProfileError(f"language must be one of {', '.join(LANGS)}, not {lang!r}")
    return lang


def has(key: str) -> bool:
    return key in MESSAGES["en"]


def t(key: str, lang: str | None = None, **values) -> str:
    """The message ``key`` in ``lang``, formatted with ``values`` (English if a key is missing)."""
    lang = resolve_lang(lang)
    text = MESSAGES[lang].get(key) or MESSAGES["en"].get(key) or key
    try:
        return text.format(**values) if values else text
    except (KeyError, IndexError, ValueError):
        return text


def ui_messages(lang: str) -> dict[str, str]:
    """The viewer's labels (``ui.*``) and the glossary's terms (``term.<id>``, ``term.<id>.def``:
    labels and tooltips) in ``lang``; a key missing there falls back to English."""
    lang = resolve_lang(lang)
    return {k: MESSAGES[lang].get(k) or v for k, v in MESSAGES["en"].items() if k.startswith(("ui.", "term."))}
