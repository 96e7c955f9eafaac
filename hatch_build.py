"""The package's build hook: compiles the trace scanner (``_scan.c``) into the wheel.

Why a hook: the scanner is C, and the project builds with hatchling, which builds pure-Python
wheels.  The hook compiles it where the wheel is built (an editable install keeps the library
in ``src``, a regular wheel carries it and is tagged for this platform).  Without a compiler the
wheel is built without it, pure Python, and traces are read by DuckDB alone: slower, the same
tables.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

ROOT = Path(__file__).resolve().parent
PACKAGE_DIR = ROOT / "src" / "profinsight" / "importers" / "chrome_trace"


def _native_build():
    """The compile helper, loaded by path: the package's own imports need pyarrow and DuckDB."""
    spec = importlib.util.spec_from_file_location("_profinsight_native_build", PACKAGE_DIR / "_native_build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class NativeScannerHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        built = _native_build().build(PACKAGE_DIR)
        if built is None:
            self.app.display_warning("profinsight: the trace scanner was not compiled; DuckDB reads every trace")
            return
        if version != "editable":  # an editable install loads it from src, where it was built
            build_data["force_include"][str(built)] = f"profinsight/importers/chrome_trace/{built.name}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
