"""One registry drives every surface.

An analysis is a pure function ``(profile, **params) -> pandas.DataFrame`` registered once with
:func:`analysis`.  The registration gives it a notebook method (``p.op_summary(...)``), a CLI form
(``profinsight view op_summary PATH --by type``) and an HTTP route — all from the same parameter
declarations, so the three can never disagree.

This table sits on the bottom floor: :class:`~profinsight.profile.Profile` consults it without
importing any analysis module.  The modules register themselves when imported; the package root
fills the ``register_analyses`` slot of :mod:`profinsight.hooks` with a function that imports
them, so the table fills the first time anyone asks for it, whichever surface asks.  Results come back as
:class:`~profinsight.results.ResultFrame`, whose notebook display is drawn by the render layer through
:mod:`profinsight.hooks`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import hooks
from .errors import ProfileError, UnknownTable
from .schema.wire import Chart  # declared once, with the wire shape the viewer reads

if TYPE_CHECKING:  # pandas loads when an analysis runs: a warm re-open needs none
    import pandas as pd


@dataclass(frozen=True)
class Param:
    """One parameter of an analysis: name, Python type, default, allowed values, help."""

    name: str
    type: type = str
    default: Any = None
    choices: tuple | None = None
    help: str = ""
    #: pairs with other parameters that have no answer, declared so that a form (the viewer's
    #: Analyses view) never offers them: ``((value, other, allowed), ...)`` -- with this
    #: parameter at ``value``, ``other`` must be one of ``allowed``
    requires: tuple = ()

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
        import pandas as pd

        from .results import ResultFrame

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
            try:
                df = self.func(profile, **bound)
            except ProfileError:
                raise
            except Exception as exc:  # noqa: BLE001 - an engine's exception is never shown raw
                raise _cannot_run(self, profile, exc) from exc
            if cache is not None and key is not None:
                cache[key] = df
        return ResultFrame.wrap(pd.DataFrame(df).copy(), self, given)


def _cannot_run(a: Analysis, profile, exc: Exception) -> ProfileError:
    """Why analysis ``a`` could not run on ``profile``, and which of the data it reads is
    missing or damaged there -- instead of the query engine's own exception (``--debug`` and
    the exception's ``__cause__`` keep it)."""
    import inspect

    first = (str(exc).strip().splitlines() or [""])[0][:300]
    try:
        counts = dict(profile.row_counts())
    except Exception:  # noqa: BLE001 - the message must not fail too
        counts = {}
    try:
        source = inspect.getsource(a.func)
    except (OSError, TypeError):
        source = ""
    reads = [t for t in counts if t in source] or list(counts)
    empty = [t for t in reads if not counts.get(t)]
    needs = f"it reads {', '.join(reads)}" if reads else "it reads the profile's tables"
    needs += f" ({', '.join(empty)} empty here)" if empty else ""
    said = sorted({d.code for d in getattr(profile, "diagnostics", []) if d.severity in ("warning", "error")})
    return ProfileError(
        f"{a.name} cannot run on this profile: {type(exc).__name__}: {first}",
        fix=f"{needs}; "
        + (
            f"the load said: {', '.join(said)} (profinsight doctor PATH)"
            if said
            else "profinsight doctor PATH checks it"
        )
        + "; report it with --debug if the data looks complete",
    )


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


_filled = False
#: one thread fills the table; another asking meanwhile waits for it (a server answers the first
#: paint on a worker of its own beside the engine: both may ask first)
_fill_lock = threading.RLock()
_filling = threading.local()


def all_analyses() -> dict[str, Analysis]:
    """Every registered analysis.  The first call runs the ``register_analyses`` slot of
    :mod:`profinsight.hooks`, which imports the analysis modules (the package root fills it), so
    this module never names them."""
    global _filled
    if _filled:
        return ANALYSES
    with _fill_lock:
        # the filling thread itself asks again while the modules import: it gets the table so far
        if _filled or getattr(_filling, "active", False):
            return ANALYSES
        fill = hooks.get("register_analyses")
        if fill is None:
            return ANALYSES  # nothing to fill with yet: a later call, once the slot is set, fills
        _filling.active = True
        try:
            fill()
        finally:
            _filling.active = False
        _filled = True
    return ANALYSES


def get(name: str) -> Analysis:
    reg = all_analyses()
    if name not in reg:
        raise UnknownTable(f"no analysis named {name!r}", fix=f"analyses: {', '.join(sorted(reg))}")
    return reg[name]
