"""Compile :mod:`._scan` (``_scan.c``) into the shared library :mod:`._native` loads.

Standard library only: the package's build hook (``hatch_build.py``) loads this file by path
while pyarrow and DuckDB may not be installed yet.  The library is an accelerator, never a
requirement: without a C compiler (or on a platform where this command line does not work) the
build says why and goes on, and the importers read every trace with DuckDB as before.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "_scan.c"
#: the library's file name beside this module
LIB_NAME = "_scan_native.dll" if sys.platform == "win32" else "_scan_native.so"


def source_hash(source: Path = SOURCE) -> str:
    """What the library is built from: the first 16 hex digits of ``_scan.c``'s SHA-256, compiled
    into it (``pi_source_hash``), so that a library built from another version of the source is
    never used."""
    return hashlib.sha256(Path(source).read_bytes()).hexdigest()[:16]


def compiler() -> str | None:
    """The C compiler to use: ``$CC``, else ``cc`` or ``gcc`` or ``clang`` on the PATH."""
    env = os.environ.get("CC")
    if env:
        return env
    for name in ("cc", "gcc", "clang"):
        if shutil.which(name):
            return name
    return None


def build(out_dir: Path = HERE, quiet: bool = False) -> Path | None:
    """Compile the scanner into ``out_dir / LIB_NAME``; the path, or None (and why, on stderr)."""
    cc = compiler()
    if cc is None or sys.platform == "win32":
        if not quiet:
            print("profinsight: no C compiler; traces are read by DuckDB alone", file=sys.stderr)
        return None
    out = Path(out_dir) / LIB_NAME
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    cmd = [
        cc,
        "-O2",
        "-shared",
        "-fPIC",
        "-std=c99",
        f'-DPI_SOURCE_HASH="{source_hash()}"',
        "-o",
        str(tmp),
        str(SOURCE),
    ]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as exc:
        if not quiet:
            print(f"profinsight: could not compile the trace scanner ({exc})", file=sys.stderr)
        return None
    if done.returncode != 0:
        tmp.unlink(missing_ok=True)
        if not quiet:
            print(f"profinsight: could not compile the trace scanner:\n{done.stderr}", file=sys.stderr)
        return None
    os.replace(tmp, out)  # a reader never loads a half-written library
    return out


if __name__ == "__main__":  # python src/profinsight/importers/chrome_trace/_native_build.py
    built = build()
    print(built if built else "not built")
    sys.exit(0 if built else 1)
