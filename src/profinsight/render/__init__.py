"""The render layer: every HTML, SVG and Markdown that profinsight draws for people (notebook
display, the static report, the experiment record, compare output) lives in this package.

:func:`install` lends the model its notebook display through :mod:`profinsight.hooks`; the
package root calls it on first use of a public name, so ``profinsight.load(...)`` results
render richly in a notebook without the model importing this package.
"""

from __future__ import annotations

from .. import hooks


def _result_html(df, analysis, params):
    from .notebook import render_html

    return render_html(df, analysis, params)


def _result_bundle(df, analysis, params):
    from .notebook import result_bundle

    return result_bundle(df, analysis, params)


def _profile_html(profile):
    from .notebook import profile_html

    return profile_html(profile)


def _profile_bundle(profile):
    from .notebook import profile_bundle

    return profile_bundle(profile)


def install() -> None:
    """Fill the display slots of :mod:`profinsight.hooks` (cheap: nothing heavy is imported)."""
    hooks.provide("result_html", _result_html)
    hooks.provide("result_bundle", _result_bundle)
    hooks.provide("profile_html", _profile_html)
    hooks.provide("profile_bundle", _profile_bundle)
