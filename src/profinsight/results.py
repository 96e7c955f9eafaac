"""What an analysis returns: a pandas DataFrame that remembers which analysis made it.

Its notebook display is drawn by the render layer, reached through :mod:`profinsight.hooks`
(the model never imports drawing code); without it, it displays as any DataFrame.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from . import hooks


class ResultFrame(pd.DataFrame):
    """A DataFrame that remembers which analysis made it, for display only.  Any operation on
    it returns a plain DataFrame, so users keep slicing as usual.  How it is drawn in a notebook
    (HTML table and chart, the interactive payload) is the render layer's, reached through
    :mod:`profinsight.hooks`; without it, it displays as any DataFrame."""

    _metadata = ["_analysis", "_params"]

    @property
    def _constructor(self):
        return pd.DataFrame

    @classmethod
    def wrap(cls, df: pd.DataFrame, analysis: Any, params: dict) -> ResultFrame:
        out = cls(df)
        out._analysis = analysis
        out._params = dict(params)
        return out

    @property
    def analysis(self) -> Any:
        return getattr(self, "_analysis", None)

    @property
    def params(self) -> dict:
        return dict(getattr(self, "_params", {}) or {})

    def _repr_html_(self) -> str:
        draw = hooks.get("result_html")
        if draw is None:
            return pd.DataFrame(self)._repr_html_()
        return draw(pd.DataFrame(self), self.analysis, self.params)

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = hooks.get("result_bundle")
        if bundle is None:
            return None  # IPython falls back to _repr_html_ / repr
        return bundle(pd.DataFrame(self), self.analysis, self.params)


class DisplayFrame(pd.DataFrame):
    """A DataFrame drawn in a notebook by a render slot of :mod:`profinsight.hooks` (e.g. a
    comparison's waterfall as its chart); any operation returns a plain DataFrame, and without
    the slot it displays as any DataFrame."""

    _metadata = ["_slot"]

    @property
    def _constructor(self):
        return pd.DataFrame

    @classmethod
    def wrap(cls, df: pd.DataFrame, slot: str) -> DisplayFrame:
        out = cls(df)
        out._slot = slot
        return out

    def _repr_html_(self) -> str:
        draw = hooks.get(getattr(self, "_slot", ""))
        if draw is None:
            return pd.DataFrame(self)._repr_html_()
        return draw(pd.DataFrame(self))
