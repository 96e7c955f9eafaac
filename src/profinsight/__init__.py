"""profinsight: find why a PyTorch model runs slow on Ascend NPUs and GPUs.

>>> import profinsight
>>> p = profinsight.load("path/to/rank0_ascend_pt")   # or a run folder, or a Kineto trace
>>> p.diagnostics                                     # what is missing and how to fix it
>>> p.table("device_tasks")                           # canonical tables as DataFrames
>>> p.sql("select type, sum(dur_ns)/1e3 as us from device_tasks group by type order by 2 desc")
"""

from __future__ import annotations

from . import hooks
from ._version import __version__

# Public names are imported on first use, so that `profinsight --help` and `import profinsight`
# stay fast (pandas, DuckDB and Arrow load only when a profile is).
_EXPORTS = {
    "load": ".api",
    "resolve_run": ".api",
    "Diagnostic": ".diagnostics",
    "Run": ".discovery",
    "discover": ".discovery",
    "MixedRuns": ".errors",
    "NotAProfile": ".errors",
    "ProfileError": ".errors",
    "UnsupportedFormat": ".errors",
    "Profile": ".profile",
    "sample_path": ".samples",
    "compare": ".api",
    "load_parallel": ".api",
    "ranks_report": ".api",
    "collect": ".collection",
    "experiments": ".collection",
    "register": ".collection",
}
__all__ = [*_EXPORTS, "__version__"]


def _jupyter_labextension_paths():
    """The prebuilt JupyterLab extension shipped in the wheel (``jupyter labextension develop``
    uses this to link a checkout's build)."""
    return [{"src": "labextension", "dest": "profinsight"}]


def _register_analyses() -> None:
    """Import every module that registers an analysis (the advisor's ``advise`` included)."""
    from . import advisor, analyses  # noqa: F401 - each analysis module registers itself on import
    from .advisor import analysis  # noqa: F401 - ``advise``


# The analysis table (profinsight.registry, a bottom floor) fills itself through this slot the
# first time any surface reads it; importing any profinsight module runs this file first, so
# the slot is always filled.  hooks imports nothing, so this costs nothing at start-up.
hooks.provide("register_analyses", _register_analyses)


def _install_surfaces() -> None:
    """Lend the model its notebook display and ``Profile.show`` (see :mod:`profinsight.hooks`):
    the root stands above every floor, so it is the one place that may wire the top floors'
    drawing into the bottom floors' objects.  Cheap: nothing heavy is imported."""
    from . import render
    from .jupyter import show

    render.install()
    show.install()


hooks.provide("install_surfaces", _install_surfaces)  # for a profile built below the root's names


def __getattr__(name):
    if name in _EXPORTS:
        import importlib

        _install_surfaces()
        value = getattr(importlib.import_module(_EXPORTS[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'profinsight' has no attribute {name!r}")
