"""Where a daemon in the background logs: the config's daemon.log_file, else beside the
store (a SQLite file's folder: <store>.daemon.log), else in the user state directory."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import platformdirs
from sqlalchemy.engine import make_url

from costsched.config import Config
from costsched.daemon.events import log as daemon_log
from costsched.store.database import describe

MAX_BYTES = 10_000_000  # a log this large is kept as <log>.1 when a daemon starts on it


def log_path(url: str, config: Config, make_folder: bool = True) -> Path:
    """Where the daemons of the store at `url` log (its folder is made, unless not
    `make_folder`)."""
    if config.daemon.log_file:
        path = Path(config.daemon.log_file).expanduser().resolve()
    else:
        parsed = make_url(url)
        database = parsed.database or ""
        if parsed.get_backend_name() == "sqlite" and database not in ("", ":memory:"):
            store = Path(database)
            path = store.with_name(f"{store.stem}.daemon.log")
        else:  # a server's store: named after it (never its password)
            where = describe(url)
            tag = hashlib.sha256(where.encode()).hexdigest()[:10]
            name = f"daemon-{parsed.host or 'local'}-{Path(database).name or 'db'}-{tag}.log"
            path = Path(platformdirs.user_state_dir("costsched")) / name
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
