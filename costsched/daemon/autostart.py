"""Arming recovery: a supervisor for the store, started in the background by a launch (and
`costsched daemon start`) when no daemon watches it.

Race-safe, one per store: the caller takes the store's supervisor lease under a holder name
of its own, starts the supervisor (its own session: closing the terminal does not end it;
its output appended to its log), and hands the lease to the supervisor's holder name
("host:pid:tag", the tag given on its command line). The supervisor takes the lease over
itself if it starts before the hand-over. A caller that finds the lease held starts nothing:
it names the one that holds it. The supervisor ends by itself when no job is left to watch.
Every command that looks after the jobs arms it so: a launch and a start (`ensure`), the
others (`status`, `stop`, `migrate`) where none watches any more (`rearm`).

    armed = ensure(store, config, env=launcher.environment())
    print(armed.line())
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from costsched import launch_secrets
from costsched.config import ENV_CONFIG, Config
from costsched.daemon.logs import rotate, shown_log, started_log
from costsched.daemon.records import SUPERVISOR_LEASE, live_jobs, sweep_owed
from costsched.daemon.supervision import LAUNCHING, START, Watching, watching
from costsched.store import PriceStore
from costsched.store.database import ENV_DB

HAND_OVER_WAIT = 3.0  # seconds a launch waits to name the supervisor another one starts


@dataclass(frozen=True)
class Arming:
    """What `ensure` found or did: the daemon that watches (None: none), whether this call
    started it, and why none was started."""

    watcher: Watching | None
    started: bool = False
    off: bool = False  # daemon.autostart is off (and no daemon watches)
    idle: bool = False  # no job runs: nothing to watch
    error: str = ""  # the supervisor could not be started
    sweep_only: bool = False  # no job runs, but a failed launch's instances are not swept

    def line(self) -> str | None:
        """The one line a launch prints (None: nothing to say, no job runs)."""
        w = self.watcher
        if w is not None:
            earlier = (" (started earlier)" if not self.started and w.pid is not None
                       and w.kind in ("auto", "starting") else "")
            if self.sweep_only:  # no job to recover: it ends what the failed launch left
                return (f"No job runs; {w.who()}{earlier} watches this store a while for an "
                        "instance the failed launch may have left, to end it"
                        + (f"; log: {w.log}" if w.log else ""))
            return (f"Recovery armed: {w.who()}{earlier} watches this store every "
                    f"{w.watch_seconds:g} s" + (f"; log: {w.log}" if w.log else ""))
        if self.error:
            return (f"Recovery not armed: the supervisor could not be started "
                    f"({self.error}); `{START}` tries again.")
        if self.off:
            return ("Recovery depends on your daemon (daemon.autostart is off), and none "
                    f"watches this store now; `{START}` starts one.")
        return None

    def document(self) -> dict:
        return {"armed": self.watcher is not None, "started": self.started,
                "autostart": not self.off, "error": self.error or None,
                "daemon": None if self.watcher is None else
                self.watcher.document(datetime.now(timezone.utc))}


def ensure(store: PriceStore, config: Config, *, env: Mapping[str, str] | None = None,
           explicit: bool = False) -> Arming:
    """Make sure a daemon watches `store` while any job runs in it (or a launch that failed
    over is not swept yet: `records.sweep_owed`): when none does, start a supervisor
    (unless the config's daemon.autostart is off and the call is not `explicit`, i.e.
    `costsched daemon start`). `env`: what the supervisor needs in its environment
    beyond this process's (the launchers' `environment()`)."""
    now = datetime.now(timezone.utc)
    log = shown_log(store.url, config)
    found = watching(store, config, now, log=str(log))
    sweep_only = not live_jobs(store)  # (and, below, a sweep owed)
    if found:  # (a supervisor another launch is starting: once it is handed the lease)
        return Arming(found[0] if found[0].pid is not None else
                      _started_elsewhere(store, config, log),
                      sweep_only=sweep_only and sweep_owed(store))
    if sweep_only and not sweep_owed(store):
        return Arming(None, idle=True)
    if not config.daemon.autostart and not explicit:
        return Arming(None, off=True)
    from costsched.daemon.supervisor import LEASE_SECONDS  # (the scheduler's module too)

    mine = f"{socket.gethostname()}:{os.getpid()}:{LAUNCHING}{uuid.uuid4().hex[:8]}"
    if not store.leases.acquire(SUPERVISOR_LEASE, mine, LEASE_SECONDS, now):
        return Arming(_started_elsewhere(store, config, log), sweep_only=sweep_only)
    tag, log = uuid.uuid4().hex[:8], started_log(store.url, config)
    try:
        child = _spawn(store.url, log, tag, mine, env or {})
    except OSError as exc:
        store.leases.release(SUPERVISOR_LEASE, mine)
        return Arming(None, error=f"{sys.executable}: {exc.strerror or exc}")
    holder = f"{socket.gethostname()}:{child.pid}:{tag}"
    store.leases.hand_over(SUPERVISOR_LEASE, mine, holder)  # else it took the lease itself
    return Arming(Watching(child.pid, socket.gethostname(), True, "auto",
                           config.daemon.watch_seconds, str(log), now, None, "", ""),
                  started=True, sweep_only=sweep_only)


def rearm(store: PriceStore, config: Config, *, env: Mapping[str, str] | None = None
          ) -> str | None:
    """Recovery armed again by a command that looks after the store's jobs other than a
    launch or a start (`status`, `stop`, `migrate`): where a job runs and no daemon
    watches (the supervisor was killed, or ended with the machine), a supervisor started
    as a launch starts one (`ensure`, the same config key turning it off). The line that
    says it (a launch's line), or that it could not be started; None where a daemon
    watches already, no job runs, or daemon.autostart is off (the user's choice, which
    `status` says beside its jobs)."""
    if not live_jobs(store):  # (the common case, asked first: nothing to watch)
        return None
    armed = ensure(store, config, env=env)
    return armed.line() if armed.started or armed.error else None


def _started_elsewhere(store: PriceStore, config: Config, log: Path) -> Watching | None:
    """The supervisor another caller is starting now: once it has handed the lease over
    (at most a process start away), with its pid."""
    deadline = time.monotonic() + HAND_OVER_WAIT
    while True:
        found = watching(store, config, datetime.now(timezone.utc), log=str(log))
        if not found or found[0].pid is not None or time.monotonic() > deadline:
            return found[0] if found else None
        time.sleep(0.05)


def supervise_argv(tag: str, take_over: str, log: Path) -> list[str]:
    """The supervisor's command line."""
    return [sys.executable, "-m", "costsched.cli", "daemon", "supervise", "--tag", tag,
            "--take-over", take_over, "--log", str(log)]


def _spawn(url: str, log: Path, tag: str, take_over: str, extra: Mapping[str, str]
           ) -> subprocess.Popen:
    """Start the supervisor in a session of its own, its output appended to `log`, with this
    process's environment (the store named by URL, the config file by absolute path), the
    launchers' `extra`, and the secrets this process holds for its jobs."""
    env = {**os.environ, **launch_secrets.held(), **extra, ENV_DB: url}
    if env.get(ENV_CONFIG):
        env[ENV_CONFIG] = str(Path(env[ENV_CONFIG]).expanduser().resolve())
    rotate(log)
    with log.open("ab") as out:
        child = subprocess.Popen(supervise_argv(tag, take_over, log), env=env,
                                 stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                 start_new_session=True, close_fds=True)
    # Collected when it ends, should this process outlive it (a notebook, a test run).
    threading.Thread(target=child.wait, name=f"supervisor-{child.pid}", daemon=True).start()
    return child
