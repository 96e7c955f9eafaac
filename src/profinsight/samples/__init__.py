"""The bundled real sample: rank 0 of a torch_npu Level1 text export (one AlexNet training step
on an Ascend 910B, 2 of 8 data-parallel ranks exported).  Origin and licence: see NOTICE
(Ascend/msinsight test data, Mulan PSL v2)."""

from __future__ import annotations

from pathlib import Path


def sample_path() -> Path:
    """Path of the bundled sample rank folder (read-only use)."""
    return Path(__file__).resolve().parent / "rank0_ascend_pt"
