"""One registry drives every surface.

An analysis is a pure function ``(profile, **params) -> pandas.DataFrame`` registered once with
:func:`analysis`.  The registration gives it a notebook method (``p.op_summary(...)``), a CLI form
(``profinsight view op_summary PATH --by type``) and, later, an HTTP route — all from the same
parameter declarations, so the three can never disagree.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..errors import ProfileError, UnknownTable

#: modules that register analyses when imported (kept explicit: no import-time magic)
MODULES = (
    "profinsight.analyses.operators",
    "profinsight.analyses.steps",
    "profinsight.analyses.gaps",
    "profinsight.analyses.memory",
    "profinsight.analyses.communication",
    "profinsight.comparison.ranks",
    "profinsight.advisor.analysis",
)


@dataclass(frozen=True)
class Param:
    """One parameter of an analysis: name, Python type, default, allowed values, help."""

    name: str
    type: type = str
    default: Any = None
    choices: tuple | None = None
    help: str = ""

    def coerce(self, value):
        """Validate/convert a value given by a user (Python or CLI text)."""
        if value is None:
            return None
        if self.type is bool and isinstance(value, str):
            value = value.strip().lower() in ("1", "true", "yes", "on")
        elif not isinstance(value, self.type):
            try:
                value = self.type(value)
            except (TypeError, ValueError):
                raise ProfileError(f"{self.name} must be {self.type.__name__}, not {value!r}") from None
        if self.choices is not None and value not in self.choices:
            raise ProfileError(f"{self.name} must be one of {', '.join(map(str, self.choices))}, not {value!r}")
        return value


@dataclass(frozen=True)
class Chart:
    """How a result is best drawn: ``kind`` bar | stacked | line; ``x`` the label/time column,
    ``y`` the value column(s).  Rendering lives in :mod:`profinsight.display`."""

    kind: str
    x: str
    y: tuple[str, ...]
    top: int = 15
    title: str = ""
    #: line charts: one line per distinct value of these columns (e.g. rank, component)
    series: tuple[str, ...] = ()


@dataclass(frozen=True)
class Analysis:
    name: str
    func: Callable[..., pd.DataFrame]
    title: str
    doc: str
    params: tuple[Param, ...] = field(default_factory=tuple)
    chart: Chart | None = None
    #: columns and their meaning (units in the names: *_us, *_ratio, *_bytes)
    columns: dict[str, str] = field(default_factory=dict)

    def bind(self, **given) -> dict:
        """Full keyword arguments: defaults filled, values checked, unknown names refused."""
        known = {p.name: p for p in self.params}
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise ProfileError(
                f"{self.name}() has no parameter {', '.join(unknown)}", fix=f"parameters: {', '.join(known) or 'none'}"
            )
        return {n: p.coerce(given.get(n, p.default)) for n, p in known.items()}

    def run(self, profile, **given) -> pd.DataFrame:
        """Run on ``profile``.  A profile's tables never change, so results are kept per profile
        and parameters (the advisor, the report and the server ask for the same views); each
        caller gets its own copy to slice and modify."""
        from ..display import AnalysisFrame

        bound = self.bind(**given)
        cache = getattr(profile, "_results", None)
        try:
            key = (self.name, tuple(sorted(bound.items())))
            hash(key)
        except TypeError:  # unhashable parameter (a thresholds dict): not cached
            key = None
        if cache is not None and key is not None and key in cache:
            df = cache[key]
        else:
            df = self.func(profile, **bound)
            if cache is not None and key is not None:
                cache[key] = df
        return AnalysisFrame.wrap(pd.DataFrame(df).copy(), self, given)


ANALYSES: dict[str, Analysis] = {}


def analysis(
    name: str,
    *,
    title: str,
    params: tuple[Param, ...] = (),
    chart: Chart | None = None,
    columns: dict[str, str] | None = None,
):
    """Register ``func`` as analysis ``name`` (its docstring is the help text)."""

    def deco(func):
        if name in ANALYSES:
            raise RuntimeError(f"analysis {name!r} registered twice")
        ANALYSES[name] = Analysis(
            name, func, title, (func.__doc__ or "").strip(), tuple(params), chart, dict(columns or {})
        )
        return func

    return deco


_loaded = False


def all_analyses() -> dict[str, Analysis]:
    """Every registered analysis (importing the analysis modules once)."""
    global _loaded
    if not _loaded:
        for mod in MODULES:
            try:
                importlib.import_module(mod)
            except ModuleNotFoundError as exc:
                if exc.name != mod:
                    raise
        _loaded = True
    return ANALYSES


def get(name: str) -> Analysis:
    reg = all_analyses()
    if name not in reg:
        raise UnknownTable(f"no analysis named {name!r}", fix=f"analyses: {', '.join(sorted(reg))}")
    return reg[name]
