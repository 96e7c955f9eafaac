"""``doctor --env`` says whether the compiled trace scanner was built, and whether it is on."""

from __future__ import annotations

from pathlib import Path

from profinsight.cli.env_checks import scanner_checks


def test_built_off_and_absent(monkeypatch):
    from profinsight.importers.chrome_trace import _native

    monkeypatch.delenv("PROFINSIGHT_NATIVE", raising=False)
    (d,) = scanner_checks()
    assert d.code == ("trace-scanner" if _native.available() else "trace-scanner-absent")
    if _native.available():
        monkeypatch.setenv("PROFINSIGHT_NATIVE", "0")
        (d,) = scanner_checks()
        assert d.code == "trace-scanner-off" and d.severity == "info"
    # a library that is not there: what an install without a C compiler has
    real = Path.is_file
    monkeypatch.setattr(Path, "is_file", lambda p: False if p.name.startswith("_scan_native") else real(p))
    (d,) = scanner_checks()
    assert d.code == "trace-scanner-absent" and "C compiler" in d.fix


def test_stale(monkeypatch):
    """A library built from another version of ``_scan.c`` is not used, and doctor says how to
    rebuild it."""
    from profinsight.cli import env_checks
    from profinsight.importers.chrome_trace import _native

    if not _native.available():
        return
    monkeypatch.setattr(_native, "source_hash", lambda *a: "0123456789abcdef")
    _native._lib.cache_clear()
    try:
        assert not _native.available()
    finally:
        monkeypatch.undo()
        _native._lib.cache_clear()
    assert _native.available()
    monkeypatch.setattr(env_checks, "_built_from", lambda lib: "0123456789abcdef")
    (d,) = scanner_checks()
    assert d.code == "trace-scanner-stale" and "_native_build.py" in d.fix
