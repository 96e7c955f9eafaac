"""What a terminal shows while a command loads its run: the file being read with its bytes, then
the stage (building the tables, writing the cache), and the ranks ready.

Why: a cold import of a 1 GB rank takes half a minute, and a bar that only counts "0/1 ranks"
looks the same at second 2 as at second 29 -- the user cannot tell a slow import from a hung one.
The importers already report the bytes their streaming readers have read and the stage they are
in (:mod:`profinsight.importers.progress`, which the server's load status reads too); this module
watches the run's files while :func:`profinsight.api.load` runs and draws the same words as the
viewer's status line (the ``ui.stage.*`` and ``ui.bytes_read`` messages, in the command's
language).

Ranks imported in other processes (several ranks side by side) report no bytes as they go: each
counts as read whole when it is ready, so the bar moves by rank there.  A run that is cached
reads no file and shows the rank count only, for the moment it takes.
"""

from __future__ import annotations

from ..i18n import has, t
from ..importers.progress import Watcher
from .units import fmt_bytes


def counting(w: Watcher) -> bool:
    """Whether the bytes say anything: the run has files to read and an import has begun (a run
    read from the cache reads none of them, and "0 B of 1.22 GiB" would say it stalled)."""
    return bool(w.total and (w.done or w.stage))


def load_status(w: Watcher, ranks_done: float, ranks_total: float | None, lang: str | None = None) -> str:
    """One line: ``reading trace_view.json · 320.0 MiB of 1.22 GiB read (26%)``, then ``building
    the tables`` and ``writing the cache``; with ``· 3 of 8 rank(s) ready`` where the run has
    several ranks (or nothing else to say)."""
    parts = []
    stage = w.shown_stage()
    if stage == "reading":
        parts.append(t("ui.stage.reading", lang, file=w.file or ""))
    elif stage:  # the viewer's words, shorter where its status line has room to explain
        parts.append(t(f"load.stage.{stage}" if has(f"load.stage.{stage}") else f"ui.stage.{stage}", lang))
    total = w.total
    if counting(w):
        done = min(w.done, total)
        parts.append(
            t("ui.bytes_read", lang, done=fmt_bytes(done), total=fmt_bytes(total), pct=int(100 * done / total))
        )
    if ranks_total and (ranks_total > 1 or not parts):  # one rank: the bytes and the stage say it
        parts.append(t("ui.ranks_done", lang, done=int(ranks_done), total=int(ranks_total)))
    return " · ".join(parts)


def load_with_progress(target, console, prefer: str | None = None, lang: str | None = None):
    """:func:`profinsight.api.load` of ``target`` with a transient progress line on ``console``
    (a terminal): the bar follows the bytes read where the run has files to read, else the ranks."""
    from rich.progress import BarColumn, Progress, ProgressColumn, TimeElapsedColumn
    from rich.progress_bar import ProgressBar
    from rich.text import Text

    from ..api import load, resolve_run
    from ..importers import progress as bytes_progress
    from ..store.loader import watched_files

    run = resolve_run(target, prefer=prefer)
    files_of = {str(s.path): list(s.files) for s in run.sources}

    with bytes_progress.watch(watched_files(run.sources)) as w:

        class Status(ProgressColumn):
            def render(self, task) -> Text:
                return Text(load_status(w, task.completed, task.total, lang), no_wrap=True, overflow="ellipsis")

        class Bar(BarColumn):
            def render(self, task) -> ProgressBar:
                if not counting(w):  # nothing to count in bytes: the ranks
                    return super().render(task)
                return ProgressBar(
                    total=w.total,
                    completed=min(w.done, w.total),
                    width=None if self.bar_width is None else max(1, self.bar_width),
                    animation_time=task.get_time(),
                    style=self.style,
                    complete_style=self.complete_style,
                    finished_style=self.finished_style,
                    pulse_style=self.pulse_style,
                )

        with Progress(Bar(bar_width=24), Status(), TimeElapsedColumn(), console=console, transient=True) as bar:
            task = bar.add_task("load", total=len(run.sources) or None)

            def progress(done: int, total: int, label: str) -> None:
                bar.update(task, completed=done, total=total)
                if label in files_of:  # a rank imported elsewhere: its files count as read
                    w.finished(files_of[label])

            return load(run, progress=progress)
