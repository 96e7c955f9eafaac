"""What the doctor found: every load yields a list of :class:`Diagnostic`.

A diagnostic is for a person at 2 a.m.: it names the file, says what is wrong and what it
disables, and gives the fix.  Codes are stable identifiers that tests and the UI key on.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

Severity = Literal["info", "warning", "error"]
SEVERITIES: tuple[Severity, ...] = ("info", "warning", "error")


@dataclass(frozen=True)
class Diagnostic:
    severity: Severity
    code: str
    message: str
    file: str | None = None
    fix: str | None = None
    rank: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Diagnostic:
        return cls(**{k: d.get(k) for k in ("severity", "code", "message", "file", "fix", "rank")})

    def __str__(self) -> str:
        where = f" [{self.file}]" if self.file else ""
        fix = f" Fix: {self.fix}" if self.fix else ""
        return f"{self.severity.upper()} {self.code}: {self.message}{where}{fix}"


def info(code: str, message: str, file=None, fix=None, rank=None) -> Diagnostic:
    return Diagnostic("info", code, message, _s(file), fix, rank)


def warning(code: str, message: str, file=None, fix=None, rank=None) -> Diagnostic:
    return Diagnostic("warning", code, message, _s(file), fix, rank)


def error(code: str, message: str, file=None, fix=None, rank=None) -> Diagnostic:
    return Diagnostic("error", code, message, _s(file), fix, rank)


def _s(file) -> str | None:
    return None if file is None else str(file)


def worst(diags) -> Severity | None:
    """The most severe level present, or None for an empty list."""
    levels = {d.severity for d in diags}
    for s in reversed(SEVERITIES):
        if s in levels:
            return s
    return None


def by_code(diags, severity: Severity) -> dict[str, int]:
    """How many diagnostics of ``severity`` there are per code, in the order first met."""
    out: dict[str, int] = {}
    for d in diags:
        if d.severity == severity:
            out[d.code] = out.get(d.code, 0) + 1
    return out


def codes_text(counts: dict[str, int]) -> str:
    """``{"csv-bad-values": 2, "missing-file": 1}`` as ``csv-bad-values x2, missing-file``: the
    short form a one-line summary names the codes in."""
    return ", ".join(f"{c} x{k}" if k > 1 else c for c, k in counts.items())
