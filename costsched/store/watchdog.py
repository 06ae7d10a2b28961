"""PostgreSQL connections that stop waiting for a server that has stopped answering.

The server's `statement_timeout` cancels a slow statement, but a server that completes the
login and then never answers (hung, or a network path that silently drops packets) never
sends that cancellation, and libpq would wait for good. Every blocking call of a psycopg 3
connection (each statement, the dialect's first-connect queries, commit, rollback, the
pool's ping, copies) goes through `Connection.wait`, so a deadline given there covers them
all, with no thread (about a microsecond per wait: bench/bench_watchdog.py). When it passes,
the connection is closed (it is mid-statement: nothing may use it again) and `Unanswered`
is raised, which SQLAlchemy sees as a lost connection and the store reports as
unavailable (exit 75).
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import psycopg
from psycopg import errors

GRACE_S = 2.0  # beyond the statement timeout: the server's own cancellation arrives first
_WAIT = inspect.signature(psycopg.Connection.wait).parameters
# psycopg 3.3.6 and later bound a wait (`timeout`); the postgres extra requires it.
SUPPORTED = "timeout" in _WAIT
_INTERVAL = _WAIT["interval"].default  # `wait`'s polling interval when the caller gives none
_UNITS = {"": 0.001, "ms": 0.001, "s": 1.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


class Unanswered(psycopg.OperationalError):
    """The server did not answer a statement before the connection's deadline."""

    def __init__(self, meaning: str) -> None:
        super().__init__(meaning)
        self.costsched_meaning = meaning  # what the store error says (`database._store_error`)


class WatchedConnection(psycopg.Connection):
    """A psycopg connection whose every wait on the server ends after `answer_within`
    seconds (None: no deadline), with `Unanswered` saying `why`."""

    answer_within: float | None = None
    why: str = ""

    def wait(self, gen: Any, interval: float = _INTERVAL,  # noqa: ANN401 - psycopg's generator
             timeout: float | None = None) -> Any:  # noqa: ANN401
        if timeout is not None or self.answer_within is None:  # psycopg's own bounded waits
            return super().wait(gen, interval=interval, timeout=timeout)
        try:
            return super().wait(gen, interval=interval, timeout=self.answer_within)
        except errors._WaitTimeout:  # noqa: SLF001 - psycopg's wait raises only this on time
            self.pgconn.finish()
            raise Unanswered(f"the server did not answer within {self.answer_within:g} s "
                             f"({self.why}); the connection was closed: check the server, "
                             "and try again when it answers") from None


def connect(answer_within: float | None, why: str, *args: Any,  # noqa: ANN401 - psycopg's
            **kwargs: Any) -> WatchedConnection:  # noqa: ANN401 - connect arguments
    """A psycopg connection made as `psycopg.connect(*args, **kwargs)` would, watched."""
    conn = WatchedConnection.connect(*args, **kwargs)
    conn.answer_within = answer_within
    conn.why = why
    return conn


def statement_timeout(options: str) -> float | None:
    """The `statement_timeout` that libpq `options` set (`-c statement_timeout=...` or
    `--statement_timeout=...`), in seconds (0: none); None when they do not set it."""
    found = re.findall(r"(?:-c\s*|--)statement_timeout=(\S+)", options)
    if not found:
        return None
    value = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(ms|s|min|h|d)?", found[-1].strip("'\""))
    if value is None:
        return None  # the server refuses it at login, with its own message
    return float(value[1]) * _UNITS[value[2] or ""]


def deadline(url_options: str, configured: float) -> tuple[float | None, str]:
    """How long each wait on the server may last (None: no limit) and why: the statement
    timeout the URL's `options` set, else `configured` (`store.statement_timeout_seconds`),
    plus `GRACE_S`."""
    own = statement_timeout(url_options)
    if own is None:
        return configured + GRACE_S, (f"store.statement_timeout_seconds {configured:g} s + "
                                      f"{GRACE_S:g} s")
    if own == 0:
        return None, "statement_timeout=0 in the URL: no limit"
    return own + GRACE_S, f"statement_timeout {own:g} s in the URL + {GRACE_S:g} s"
