"""Collect profiles from a notebook and keep an experiment record.

``collect(name, steps=...)`` profiles a training loop (torch_npu on Ascend, torch.profiler
otherwise), ``register(name, path)`` records an existing profile, ``experiments()`` lists the
record.  See ``docs/collect.md``.  torch is never imported by importing this package.
"""

from __future__ import annotations

from .registry import experiments_folder, resolve_name
from .session import Collection, collect, experiments, find_output, register

__all__ = ["Collection", "collect", "experiments", "experiments_folder", "find_output", "register", "resolve_name"]
