"""One error family for everything a user can cause.  Messages name the file, what is wrong
and what to do; the CLI prints them without a traceback (``--debug`` shows one)."""

from __future__ import annotations


class ProfileError(Exception):
    """Base of every user-facing error."""

    def __init__(self, message: str, *, file=None, fix: str | None = None, diagnostics=()):
        self.file = None if file is None else str(file)
        self.fix = fix
        self.diagnostics = list(diagnostics)
        super().__init__(message)

    def __str__(self) -> str:
        msg = super().__str__()
        if self.file and self.file not in msg:
            msg = f"{msg} ({self.file})"
        if self.fix:
            msg = f"{msg}\nFix: {self.fix}"
        return msg


class NotAProfile(ProfileError):
    """The path holds nothing profinsight can read."""


class UnsupportedFormat(ProfileError):
    """A format we recognise but cannot read yet (CANN PROF_*, MindSpore)."""


class MixedRuns(ProfileError):
    """A folder holds several runs; ``discover`` lists them, ``load`` needs one."""

    def __init__(self, message: str, runs, **kw):
        self.runs = list(runs)
        super().__init__(message, **kw)


class UnknownTable(ProfileError):
    """A table or analysis name that does not exist."""
