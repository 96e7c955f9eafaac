"""profinsight: find why a PyTorch model runs slow on Ascend NPUs and GPUs.

>>> import profinsight
>>> p = profinsight.load("path/to/rank0_ascend_pt")   # or a run folder, or a Kineto trace
>>> p.diagnostics                                     # what is missing and how to fix it
>>> p.table("device_tasks")                           # canonical tables as DataFrames
>>> p.sql("select type, sum(dur_ns)/1e3 as us from device_tasks group by type order by 2 desc")
"""
from __future__ import annotations

__version__ = "0.1.0"

from .api import load, resolve_run  # noqa: E402
from .diagnostics import Diagnostic  # noqa: E402
from .discover import Run, discover  # noqa: E402
from .errors import MixedRuns, NotAProfile, ProfileError, UnsupportedFormat  # noqa: E402
from .profile import Profile  # noqa: E402
from .samples import sample_path  # noqa: E402

__all__ = ["load", "discover", "resolve_run", "Profile", "Run", "Diagnostic", "ProfileError",
           "NotAProfile", "MixedRuns", "UnsupportedFormat", "sample_path", "__version__"]
