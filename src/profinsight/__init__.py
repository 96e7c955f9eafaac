"""profinsight: find why a PyTorch model runs slow on Ascend NPUs and GPUs."""
from __future__ import annotations

__version__ = "0.1.0"
