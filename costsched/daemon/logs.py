"""Where a daemon in the background logs: the config's daemon.log_file, else beside the
store (a SQLite file's folder: <store stem>.supervisor.log), else in the user state
directory (supervisor-<host>-<database>-<tag>.log)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import platformdirs
from sqlalchemy.engine import make_url

from costsched.config import Config
from costsched.daemon.events import log as daemon_log
from costsched.store.database import describe

MAX_BYTES = 10_000_000  # a log this large is kept as <log>.1 when a daemon starts on it


NAME = "supervisor"  # the word that names the log: prices.supervisor.log
OLD_NAME = "daemon"  # its name before: a log of that name is still shown, then renamed


def log_path(url: str, config: Config, make_folder: bool = True) -> Path:
    """Where the daemons of the store at `url` log (its folder is made, unless not
    `make_folder`)."""
    return _folder_made(_named(url, config, NAME), make_folder)


def shown_log(url: str, config: Config) -> Path:
    """The log to show for the store at `url`: `log_path`, or the log of the name it had
    before while that one is there and no supervisor has logged under the new name yet."""
    path, old = log_path(url, config, make_folder=False), _named(url, config, OLD_NAME)
    return old if old != path and old.exists() and not path.exists() else path


def started_log(url: str, config: Config) -> Path:
    """`log_path`, for a supervisor or an installed daemon that starts now: a log of the
    name it had before is renamed to it first (kept as it is where it cannot be)."""
    path, old = log_path(url, config), _named(url, config, OLD_NAME)
    if old != path and old.exists() and not path.exists():
        with suppress(OSError):
            old.replace(path)
    return path


def _named(url: str, config: Config, name: str) -> Path:
    """The log of the store at `url` under `name` (`NAME`, or `OLD_NAME`)."""
    if config.daemon.log_file:
        return Path(config.daemon.log_file).expanduser().resolve()
    parsed = make_url(url)
    database = parsed.database or ""
    if parsed.get_backend_name() == "sqlite" and database not in ("", ":memory:"):
        store = Path(database)
        return store.with_name(f"{store.stem}.{name}.log")
    # a server's store: named after it (never its password)
    tag = hashlib.sha256(describe(url).encode()).hexdigest()[:10]
    return (Path(platformdirs.user_state_dir("costsched"))
            / f"{name}-{parsed.host or 'local'}-{Path(database).name or 'db'}-{tag}.log")


def _folder_made(path: Path, make_folder: bool) -> Path:
    """`path`, its folder made (else the user state directory's file of its name)."""
    if not make_folder:
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        fallback = Path(platformdirs.user_state_dir("costsched")) / path.name
        fallback.parent.mkdir(parents=True, exist_ok=True)
        return fallback
    return path


def rotate(path: Path) -> None:
    """Keep a log grown past MAX_BYTES as <log>.1 (the one before it is dropped)."""
    try:
        if path.stat().st_size > MAX_BYTES:
            path.replace(path.with_name(path.name + ".1"))
    except OSError:
        pass


@contextmanager
def logging_to(path: Path | None) -> Iterator[None]:
    """While in the block, the daemon's log lines go to `path` (appended), else to stderr;
    after it, the log is as it was (a daemon run inside another program's process, a test's,
    leaves no handler behind on a stream that has gone)."""
    import sys

    handler: logging.Handler = (logging.StreamHandler(sys.stderr) if path is None
                                else logging.FileHandler(path, mode="a", encoding="utf-8"))
    handler.setFormatter(logging.Formatter("%(message)s"))
    level, propagate = daemon_log.level, daemon_log.propagate
    daemon_log.addHandler(handler)
    daemon_log.setLevel(logging.INFO)
    daemon_log.propagate = False
    try:
        yield
    finally:
        daemon_log.removeHandler(handler)
        handler.close()
        daemon_log.setLevel(level)
        daemon_log.propagate = propagate
