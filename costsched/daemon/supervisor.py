"""The daemons that run once: the supervisor a launch starts, and the daemon that what
`costsched daemon install` wrote keeps running.

The supervisor holds the store's lease "supervisor" while it runs (one per store, however
many launches ask for one), watches the running jobs every `daemon.watch_seconds` and
re-plans them on the `schedule.replan` cron (the daemon's own passes: `Daemon`, with its
triggers kept in memory), and ends once no job has been left to watch for
`daemon.idle_seconds`. An installed daemon runs every task on the shared schedule, holds the
lease "daemon-installed:<host>" (one per store on a machine: a periodic keep-alive finds it
running and exits), and never ends by itself.

    Supervisor(store, config, holder=holder).serve()   # until idle, SIGTERM or SIGINT
"""

from __future__ import annotations

import socket
import threading
import time

from costsched import launch_secrets, redact
from costsched.config import Config
from costsched.daemon.events import _emit, _now, _one_line
from costsched.daemon.handoff import Listening
from costsched.daemon.records import SUPERVISOR_LEASE as SUPERVISOR_LEASE
from costsched.daemon.records import live_jobs as live_jobs
from costsched.daemon.records import sweep_owed
from costsched.daemon.scheduler import HEARTBEAT_SECONDS, Daemon
from costsched.daemon.watcher import LauncherFactory
from costsched.service.store_files import sqlite_path
from costsched.store import PriceStore

LEASE_SECONDS = 60  # renewed at each heartbeat; a dead holder of this host frees it at once
SUPERVISED_TASKS = ("replan",)  # beside the watcher; collecting prices is the service's
IDLE_LOOK_SECONDS = 2.0  # between a supervisor's looks for jobs left to watch


def installed_lease() -> str:
    """The lease an installed daemon holds: one per store and machine."""
    return f"daemon-installed:{socket.gethostname()}"


class Leased(Daemon):
    """A daemon that runs only while it holds `lease` (renewed at each heartbeat)."""

    lease: str
    take_over: str = ""  # a holder whose lease this daemon takes (the launch that started it)

    def claim(self) -> bool:
        leases = self.store.leases
        if leases.acquire(self.lease, self.holder, LEASE_SECONDS, _now()):
            return True
        return bool(self.take_over) and leases.hand_over(self.lease, self.take_over,
                                                         self.holder)

    def tick(self) -> None:
        due = time.monotonic() - self._beaten >= HEARTBEAT_SECONDS
        super().tick()
        if not due:
            return
        try:
            kept = self.store.leases.renew(self.lease, self.holder, LEASE_SECONDS, _now())
        except Exception as exc:  # noqa: BLE001 - the store may be back at the next beat
            _emit("warning", event="renew_failed", lease=self.lease, error=_one_line(exc))
            return
        if not kept:  # another took it while the store was away: it watches now
            _emit("warning", event="lease_lost", lease=self.lease)
            self.stopping.set()


class Supervisor(Leased):
    """The supervisor a launch starts for the store: the watcher and the re-plan, until no
    job has been left for `idle_seconds` (default: the config's daemon.idle_seconds). While
    it serves, a later launch gives it its jobs' secrets (costsched.daemon.handoff)."""

    lease = SUPERVISOR_LEASE

    def __init__(self, store: PriceStore, config: Config, *, holder: str, log: str = "",
                 take_over: str = "", launchers: LauncherFactory | None = None,
                 idle_seconds: float | None = None) -> None:
        super().__init__(store, config, tasks=SUPERVISED_TASKS, holder=holder,
                         launchers=launchers, kind="auto", log=log)
        self.shared_schedule = False
        self.take_over = take_over
        self.idle_seconds = idle_seconds if idle_seconds is not None else \
            config.daemon.idle_seconds
        self._idle_since: float | None = None
        self._looked = 0.0
        file = sqlite_path(store.url)
        self._file = None if file is None else file.resolve()  # None: a server's store
        self._handoff: Listening | None = None
        # Held from reading the jobs that run to changing the secrets held by it: a launch's
        # handoff (a thread of its own) and the look that drops ended jobs' secrets never
        # interleave (a look's older read would drop a job handed over since).
        self._holding = threading.Lock()

    def start(self) -> None:
        # Listening before its row is registered: a launch that finds the row and no
        # advert beside the log knows this supervisor does not listen.
        self._handoff = Listening.open(self.log, self.take_secrets)
        super().start()

    def stop(self) -> None:
        if self._handoff is not None:
            self._handoff.close()
            self._handoff = None
        super().stop()

    def take_secrets(self, given: dict[int, dict[str, str]]) -> list[int]:
        """Keep, in memory, the secrets a launch gives for its jobs: those the store's
        running jobs name (a value for anything else is dropped); the jobs held for."""
        if self.stopping.is_set():
            return []
        from costsched.service.jobs.steps import unsay_waits

        held, whole = [], []  # (whole: those it now holds every secret of)
        with self._holding:
            live = set(live_jobs(self.store))
            for job_id, values in given.items():
                if job_id not in live:
                    continue
                names = launch_secrets.names_of(self.store.jobs.get(job_id).spec)
                kept = {n: v for n, v in values.items() if n in names and v}
                if not kept:
                    continue
                redact.remember(kept.values())  # masked in whatever this process logs
                launch_secrets.keep(job_id, {**launch_secrets.held_for(job_id), **kept})
                held.append(job_id)
                if not launch_secrets.missing(job_id, names):
                    whole.append(job_id)
            # Unsaid before the launch has its answer: what it shows next is so.
            unsay_waits(self.store, whole)
        return held

    def claim(self) -> bool:
        if super().claim():
            return True
        holder = self.store.leases.holder_of(self.lease, _now()) or "another process"
        _emit("info", event="not_started", reason="another supervisor watches this store",
              holder=holder)
        return False

    def tick(self) -> None:
        super().tick()
        if self.stopping.is_set() or time.monotonic() - self._looked < IDLE_LOOK_SECONDS:
            return
        self._looked = time.monotonic()
        if self._file is not None and not self._file.exists():
            # Its store was deleted (a test's folder, a store given up): nothing is left to
            # recover into, and a supervisor must not run on forever for it.
            _emit("info", event="store_gone", detail=f"{self._file} no longer exists: exiting")
            self.stopping.set()
            return
        try:
            self._end_when_idle()
        except Exception as exc:  # noqa: BLE001 - the store may be back at the next look
            _emit("warning", event="idle_check_failed", error=_one_line(exc))

    def _end_when_idle(self) -> None:
        """Stop once nothing has been left to watch for `idle_seconds` (a job, or an
        instance a launch that failed over may have left: `records.sweep_owed`). The lease
        is given up before the last look: a launch that stored its job before that look is
        watched by this supervisor; one that stored it after finds the lease free and starts
        another."""
        with self._holding:  # a job handed over after this read is not dropped by it
            live = live_jobs(self.store)
            launch_secrets.keep_only(live)  # an ended job's secrets are held no longer
        if live or sweep_owed(self.store):
            self._idle_since = None
            return
        now = time.monotonic()
        if self._idle_since is None:
            self._idle_since = now
        if now - self._idle_since < self.idle_seconds:
            return
        leases = self.store.leases
        leases.release(self.lease, self.holder)
        if live_jobs(self.store) or sweep_owed(self.store):
            if leases.acquire(self.lease, self.holder, LEASE_SECONDS, _now()):
                self._idle_since = None
                return
            _emit("info", event="handed_over", reason="another supervisor took the lease")
        else:
            _emit("info", event="idle", detail=f"no job left to watch for "
                  f"{self.idle_seconds:g} s: exiting")
        self.stopping.set()


class Installed(Leased):
    """The daemon `costsched daemon install` keeps running: every task on the shared
    schedule and the watcher; one per store on this machine (a second exits at once)."""

    def __init__(self, store: PriceStore, config: Config, *, log: str = "",
                 launchers: LauncherFactory | None = None) -> None:
        super().__init__(store, config, launchers=launchers, kind="installed", log=log)
        self.lease = installed_lease()
