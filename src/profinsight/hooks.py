"""Slots through which an upper floor lends a lower one a way of showing itself.

The model (:class:`~profinsight.profile.Profile`, analysis results) must display richly in a
notebook and open the JupyterLab viewer from ``Profile.show()``, but must not import the render
or Jupyter code that does it (those sit on the top floors and import the model).  So the model
asks this table for a function by name, and the surface that owns the drawing puts it there:
:func:`profinsight.render.install` and :func:`profinsight.jupyter.show.install`, which the
package root runs on first use of a public name.

Slots: ``register_analyses() -> None`` (imports the analysis modules, so the table of
:mod:`profinsight.registry` fills on first use), ``install_surfaces() -> None`` (fills the
display slots; :func:`get` runs it when a display slot is still empty), ``result_html(df, analysis, params) -> str``, ``result_bundle(df, analysis, params) ->
dict``, ``profile_html(profile) -> str``, ``profile_bundle(profile) -> dict``,
``show(profile, view) -> None``, and for the comparison objects (which sit below the render
layer too) ``comparison_html(cmp) -> str``, ``framework_html(cmp) -> str``, ``ranks_html(rep)
-> str``.
"""

from __future__ import annotations

from collections.abc import Callable

_SLOTS: dict[str, Callable] = {}
NAMES = (
    "register_analyses",
    "install_surfaces",
    "result_html",
    "result_bundle",
    "profile_html",
    "profile_bundle",
    "show",
    "comparison_html",
    "framework_html",
    "ranks_html",
    "waterfall_html",
)


#: the slots that are not for drawing (an empty one of these installs nothing)
_NOT_DISPLAY = ("register_analyses", "install_surfaces")


def provide(name: str, func: Callable) -> None:
    """Fill slot ``name`` (a later call replaces an earlier one)."""
    if name not in NAMES:
        raise KeyError(f"no display slot named {name!r}; slots: {', '.join(NAMES)}")
    _SLOTS[name] = func


def get(name: str) -> Callable | None:
    """The function in slot ``name``, or None when no surface has filled it.

    A display slot asked for before any surface filled it runs ``install_surfaces`` once (the
    package root fills that slot on import), so a profile built without a public name of the
    root (``profinsight.testing.profile_from_tables``, a module imported directly) still draws
    richly in a notebook."""
    func = _SLOTS.get(name)
    if func is None and name not in _NOT_DISPLAY:
        install = _SLOTS.pop("install_surfaces", None)  # once: a failed install is not retried per call
        if install is not None:
            install()
            func = _SLOTS.get(name)
    return func
