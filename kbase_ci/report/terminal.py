"""The terminal: whether to colour output, the colours, and progress of long commands.

`--color auto` (the default) colours a stream only when it is a terminal and the
`NO_COLOR` environment variable is unset or empty (https://no-color.org); `--color
always` colours even a pipe or a file (a user's explicit choice beats `NO_COLOR`);
`--color never` never does. Errors are red, warnings yellow: a warning must not look
like an error.
"""

from __future__ import annotations

import os
import time
from typing import Any, Literal, TextIO

ColorChoice = Literal["auto", "always", "never"]
CHOICES: tuple[ColorChoice, ...] = ("auto", "always", "never")

_STYLES = {"error": "31", "warning": "33", "bold": "1", "dim": "2", "ok": "32"}


def color_wanted(stream: TextIO, choice: str = "auto") -> bool:
    """Whether output written to `stream` may carry ANSI colours."""
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR", ""):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())


def paint(text: str, style: str, on: bool) -> str:
    """`text` in `style` (`error`, `warning`, `bold`, `dim`, `ok`) when `on`."""
    return f"\x1b[{_STYLES[style]}m{text}\x1b[0m" if on else text


def severity_style(severity: str) -> str:
    return "warning" if severity == "warning" else "error"


class StageProgress:
    """Progress of a long command, stage by stage, as `(stage, done, total)` calls.

    On a terminal: a bar per stage (rich), redrawn as the numbers move and cleared at the
    end. Elsewhere (a CI log, a pipe): one line per stage when it ends, with its count and
    time, so a log says what took how long without a line per step. State: the stages
    seen, when each started, the bar."""

    def __init__(self, stream: TextIO, *, tty: bool, color: bool, prefix: str = "kbase") -> None:
        self._stream = stream
        self._tty = tty
        self._color = color
        self._prefix = prefix
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}
        self._open: dict[str, tuple[float, int, int]] = {}  # stage -> (start, done, total)
        self._order: list[str] = []

    def __enter__(self) -> StageProgress:
        if self._tty:
            # Lazy: rich (and pygments) only for a terminal.
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            console = Console(file=self._stream, no_color=not self._color,
                              color_system="auto" if self._color else None)
            self._bar = Progress(TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(), console=console,
                                 transient=True, refresh_per_second=8)
            self._bar.start()
        return self

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = time.perf_counter()
        if stage not in self._open:
            for other in list(self._open):  # a new stage ends the ones before it
                self._close(other, now)
            self._open[stage] = (now, done, total)
            self._order.append(stage)
        else:
            self._open[stage] = (self._open[stage][0], done, total)
        if self._bar is not None:
            task = self._tasks.get(stage)
            if task is None:
                task = self._tasks[stage] = self._bar.add_task(stage, total=max(total, 1))
            self._bar.update(task, completed=done, total=max(total, 1))

    def _close(self, stage: str, now: float) -> None:
        start, done, total = self._open.pop(stage)
        if self._bar is None:
            self._stream.write(f"{self._prefix}: {stage} {done}/{total} in "
                               f"{now - start:.1f} s\n")
            self._stream.flush()

    def __exit__(self, *exc: object) -> None:
        now = time.perf_counter()
        for stage in list(self._open):
            self._close(stage, now)
        if self._bar is not None:
            self._bar.stop()
