"""The launchers' warnings as a command prints them: a warning the launchers log while a
command runs (a workdir file left out of the job's code, a checkpoint link left out...)
is printed as every other warning of the command, `warning: ` first (`common.say_warning`),
not as a bare line."""

from __future__ import annotations

import logging
from collections.abc import Callable

LOGGERS = ("costsched", "launchers")  # whose warnings reach the user of a command
# (the daemon's own lines keep to its log: `costsched.daemon.logs.log_to`)


class WarningLines(logging.Handler):
    """Each WARNING record (or above) of the loggers it is on, as `say_warning` prints it."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            from costsched.cli.common import say_warning

            say_warning(record.getMessage())
        except Exception:  # noqa: BLE001 - a warning that cannot be printed ends nothing
            self.handleError(record)


def print_logged_warnings() -> Callable[[], None]:
    """Route the launchers' warnings to `say_warning` while a command runs; returns what
    ends it (called when the command closes: a process that runs more than one command,
    or none, keeps its own logging)."""
    added: list[tuple[logging.Logger, logging.Handler]] = []
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(h, WarningLines) for h in logger.handlers):
            added.append((logger, WarningLines()))
            logger.addHandler(added[-1][1])

    def end() -> None:
        for logger, handler in added:
            logger.removeHandler(handler)

    return end
