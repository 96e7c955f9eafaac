"""The render layer: every HTML, SVG and Markdown that profinsight draws for people lives in
this package, so that every surface looks alike and no engine module mixes drawing into its data.

- :mod:`.notebook` — analysis results and profiles in a notebook (table + chart, MIME payload)
- :mod:`.compare` — run-vs-run and framework comparisons; :mod:`.ranks` — the ranks of a profile
- :mod:`.report` — the guided report as one offline page (``profinsight report``)
- :mod:`.record` — the experiment record (HTML and Markdown) and a collection's summary
- :mod:`.svg` — the chart primitives all of them draw with; :mod:`.styles` — palette, page CSS

The layer sits above the model, the analyses, the advisor and the comparisons, and below
collection, the CLI and the server: those import it directly.  The objects below it display
through :mod:`profinsight.hooks`: :func:`install` fills the slots (the package root calls it
on first use of a public name), so ``profinsight.load(...)`` results and comparisons render
richly in a notebook without the model importing this package.  The slot functions import
their module on first call, so installing costs nothing.
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


def _comparison_html(cmp):
    from .compare import comparison_html

    return comparison_html(cmp)


def _framework_html(cmp):
    from .compare import framework_html

    return framework_html(cmp)


def _waterfall_html(wf):
    from .compare import waterfall_html

    return waterfall_html(wf)


def _ranks_html(rep):
    from .ranks import ranks_html

    return ranks_html(rep)


def install() -> None:
    """Fill the display slots of :mod:`profinsight.hooks` (cheap: nothing heavy is imported)."""
    hooks.provide("result_html", _result_html)
    hooks.provide("result_bundle", _result_bundle)
    hooks.provide("profile_html", _profile_html)
    hooks.provide("profile_bundle", _profile_bundle)
    hooks.provide("comparison_html", _comparison_html)
    hooks.provide("framework_html", _framework_html)
    hooks.provide("ranks_html", _ranks_html)
    hooks.provide("waterfall_html", _waterfall_html)
