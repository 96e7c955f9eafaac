"""MindSpore profiles (``*_ascend_ms`` folders): recognised, not read yet.

Why by name: a MindSpore rank folder has the same layout as torch_npu's (``ASCEND_PROFILER_OUTPUT``,
``profiler_info*.json``) and nothing in that layout is MindSpore's alone, so the ``_ascend_ms``
suffix MindSpore's profiler gives every rank folder is the one mark.  The torch_npu layout
(:mod:`.._torch_npu`) leaves such folders alone.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import UnsupportedFormat
from ..base import Importer, Recognised


def _recognise(path: Path) -> Recognised | None:
    if not path.name.endswith("_ascend_ms"):
        return None
    return Recognised(
        problem=UnsupportedFormat(
            f"{path.name} is a MindSpore profile: not supported yet",
            file=path,
            fix="profinsight reads torch_npu (*_ascend_pt) and Kineto traces today",
        )
    )


IMPORTER = Importer(
    name="mindspore",
    shape="folder",
    recognise=_recognise,
    doc="MindSpore profile (*_ascend_ms): recognised, not supported yet",
    hint=lambda name: name.endswith("_ascend_ms"),
    loads=False,
)
