"""The scheduler: each task on its cron schedule, under its lease, once per trigger;
the watcher beside them; `run_once` for cron; the tasks' status as the store records it."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from typing import Any

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger

from costsched.config import Config
from costsched.daemon.events import _emit, _now, _one_line
from costsched.daemon.records import COUNTED, JOBSTORE_TABLE, TASKS
from costsched.daemon.records import TaskStatus as TaskStatus  # its names, also here
from costsched.daemon.records import status as status
from costsched.daemon.tasks import Outcome, Tasks
from costsched.daemon.watcher import WATCH, LauncherFactory
from costsched.migration.launcher import Launcher
from costsched.model import InvalidInput
from costsched.store import PriceStore
from costsched.store.leases import TaskRun, holder_name

TASK_LEASE_SECONDS = 600  # renewed every third of it while the task runs
HEARTBEAT_SECONDS = 10.0  # between a serving daemon's beats in its row (store.daemons)
MISFIRE_GRACE_SECONDS = 3600  # a run this late (the daemon was down) still runs, once
SETTLE_SECONDS = 600.0  # how long a re-plan follows the moves it started


def default_launchers(name: str) -> Launcher:
    """A launcher with this machine's defaults, as `costsched launch` makes it."""
    from launchers import make_launcher

    return make_launcher(name)


def triggers_from(config: Config, tasks: Sequence[str] = TASKS) -> dict[str, BaseTrigger]:
    """Each task's cron trigger from the config's schedules, in UTC."""
    return {task: CronTrigger.from_crontab(getattr(config.schedule, task), timezone="UTC")
            for task in tasks}


class Daemon(Tasks):
    """The scheduled optimizer over `store`, configured by `config`.

    `triggers`: an APScheduler trigger per task, instead of the config's schedules (tests
    use IntervalTrigger(seconds=2)); `tasks`: the tasks scheduled; `launchers`: the launcher
    of each backend name (default `default_launchers`); `settle_seconds`: how long a re-plan
    follows the moves it started before it leaves them to the next run or start;
    `watch_seconds`: between the watcher's looks at running jobs (default: the config's
    daemon.watch_seconds; 0: no watcher); `kind`: how it was started, as its row in the
    store says (`costsched.store.daemons.KINDS`); `log`: where it logs ('' for stderr).
    """

    def __init__(self, store: PriceStore, config: Config, *,
                 triggers: Mapping[str, BaseTrigger] | None = None,
                 tasks: Sequence[str] = TASKS, launchers: LauncherFactory | None = None,
                 settle_seconds: float = SETTLE_SECONDS, holder: str | None = None,
                 watch_seconds: float | None = None, kind: str = "service",
                 log: str = "") -> None:
        unknown = [t for t in tasks if t not in TASKS]
        if unknown:
            raise InvalidInput(f"task {unknown[0]!r}: expected one of {', '.join(TASKS)}")
        self.store, self.config = store, config
        self.triggers = {**triggers_from(config, tasks),
                         **{t: trig for t, trig in (triggers or {}).items() if t in tasks}}
        self.launchers = launchers or default_launchers
        self.settle_seconds = settle_seconds
        self.watch_seconds = watch_seconds if watch_seconds is not None else \
            config.daemon.watch_seconds  # 0: no watcher
        self.holder = holder or holder_name()
        self.kind, self.log = kind, log
        self.shared_schedule = True  # the schedule in the store's table, with other daemons
        self.stopping = threading.Event()
        self._scheduler: Any = None
        self._beaten = 0.0  # time.monotonic() of the last heartbeat

    # --- one task -------------------------------------------------------------------

    def due(self, task: str, at: datetime | None = None) -> bool:
        """True when `task` never ran, or its trigger fired since its last recorded run."""
        now = at or _now()
        last = self.store.task_runs.last(task, statuses=COUNTED)
        if last is None:
            return True
        # Runs are recorded in whole seconds: the next fire strictly after the run's start.
        after = last.started_at + timedelta(seconds=1)
        fire = self.triggers[task].get_next_fire_time(None, after)
        return fire is not None and fire <= now

    def run_task(self, task: str, at: datetime | None = None) -> TaskRun:
        """Run `task` now under its lease, if its trigger has not been served yet; a
        "skipped" run when another daemon holds the lease or served the trigger."""
        now = at or _now()
        leases, runs = self.store.leases, self.store.task_runs
        if not leases.acquire(task, self.holder, TASK_LEASE_SECONDS, now):
            other = next((x.holder for x in leases.held() if x.name == task), "another daemon")
            _emit("info", task=task, event="skipped", reason="lease", holder=other)
            return runs.skipped(task, self.holder, now, f"lease held by {other}")
        try:
            if not self.due(task, now):
                _emit("info", task=task, event="skipped", reason="served")
                return runs.skipped(task, self.holder, now, "ran already for this trigger")
            run = runs.start(task, self.holder, now)
            _emit("info", task=task, event="started", run=run.id)
            with self._renewing(task):
                try:
                    result = TASK_FUNCTIONS[task](self, at)
                except Exception as exc:  # noqa: BLE001 - a task's failure is recorded
                    detail = _one_line(exc)
                    _emit("error", task=task, event="failed", run=run.id, error=detail)
                    self._notify("failure", task=task, error=detail)
                    return runs.finish(run, "failed", _now(), detail)
            # A task that partly failed did something useful: a warning, not a failure.
            detail = str(result)
            _emit(getattr(result, "level", "info"), task=task, event="finished", run=run.id,
                  detail=detail)
            return runs.finish(run, "ok", _now(), detail)
        finally:
            leases.release(task, self.holder)

    def run_once(self, at: datetime | None = None) -> list[TaskRun]:
        """Run each task that is due, one time; the runs (empty when none was due)."""
        return [self.run_task(task, at) for task in self.triggers if self.due(task, at)]

    # --- the scheduler ----------------------------------------------------------------

    def start(self) -> None:
        """Finish the moves a previous run left, then schedule the tasks (in the background)."""
        from apscheduler.jobstores.memory import MemoryJobStore
        from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
        from apscheduler.triggers.interval import IntervalTrigger

        if _RUNNING.get("daemon") not in (None, self):
            raise InvalidInput("a daemon runs in this process already: one per process")
        _RUNNING["daemon"] = self
        try:
            now = _now()
            self.store.daemons.prune(now)
            self.store.daemons.register(self.holder, kind=self.kind, tasks=tuple(self.triggers),
                                        watch_seconds=self.watch_seconds, log=self.log, at=now)
            self._beaten = time.monotonic()
            self.resume()
            scheduler = _scheduler_class()(timezone="UTC")
            if self.shared_schedule:
                scheduler.add_jobstore(SQLAlchemyJobStore(engine=self.store.engine,
                                                          tablename=JOBSTORE_TABLE))
            else:  # its own triggers: it neither runs nor moves on the other daemons' tasks
                scheduler.add_jobstore(MemoryJobStore())
            for task, trigger in self.triggers.items():
                scheduler.add_job(_scheduled, trigger, args=[task], id=task, name=task,
                                  replace_existing=True, coalesce=True, max_instances=1,
                                  misfire_grace_time=MISFIRE_GRACE_SECONDS)
            if self.watch_seconds:
                # Each daemon watches (in memory, not in the shared schedule): the job's lease
                # makes one of them act on a job at a time.
                scheduler.add_jobstore(MemoryJobStore(), alias=WATCH)
                # Its first look at once: a job preempted while none watched waits no interval.
                scheduler.add_job(_watched, IntervalTrigger(seconds=self.watch_seconds),
                                  id=WATCH, name=WATCH, jobstore=WATCH, coalesce=True,
                                  max_instances=1, misfire_grace_time=None,
                                  next_run_time=datetime.now(timezone.utc))
            scheduler.start()
            self._scheduler = scheduler
            _emit("info", event="started", holder=self.holder, kind=self.kind,
                  tasks=",".join(self.triggers), watch_seconds=self.watch_seconds,
                  store=self.store.where)
        except BaseException:  # a start that failed is not this process's daemon
            if _RUNNING.get("daemon") is self:
                del _RUNNING["daemon"]
            raise

    def stop(self) -> None:
        """Take no new runs, let the running one finish its step, and give up the leases."""
        self.stopping.set()
        if self._scheduler is not None:
            self._scheduler.shutdown(wait=True)
            self._scheduler = None
        released = self.store.leases.release_all(self.holder)
        self.store.daemons.unregister(self.holder)
        if _RUNNING.get("daemon") is self:
            del _RUNNING["daemon"]
        _emit("info", event="stopped", holder=self.holder, leases_released=released)

    def serve(self) -> bool:
        """Run until SIGTERM or SIGINT (call from the main thread), or until `tick` says to
        stop; False when it did not start at all (`claim` said no)."""
        def handle(signum: int, _frame: object) -> None:
            _emit("info", event="signal", signal=signal.Signals(signum).name)
            self.stopping.set()

        if not self.claim():
            return False
        previous = {s: signal.signal(s, handle) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            self.start()
            while not self.stopping.wait(1.0):
                self.tick()
        finally:
            self.stop()
            for sig, old in previous.items():
                signal.signal(sig, old)
        return True

    def claim(self) -> bool:
        """Whether this daemon may start (a kind that runs once per store says no when one
        runs already)."""
        return True

    def tick(self) -> None:
        """What a serving daemon does every second beside its schedule: its heartbeat."""
        if time.monotonic() - self._beaten < HEARTBEAT_SECONDS:
            return
        self._beaten = time.monotonic()
        try:
            if not self.store.daemons.beat(self.holder, _now()):  # pruned: back in the list
                self.store.daemons.register(self.holder, kind=self.kind,
                                            tasks=tuple(self.triggers),
                                            watch_seconds=self.watch_seconds, log=self.log,
                                            at=_now())
        except Exception as exc:  # noqa: BLE001 - the store may be back at the next beat
            _emit("warning", event="heartbeat_failed", error=_one_line(exc))

    def resume(self) -> list[str]:
        """Carry on the moves left unfinished (a daemon stopped mid-migration); what moved."""
        lines: list[str] = []
        names = {self._launcher_name(m.job_id) for m in self.store.moves.unfinished()}
        for name in sorted(names):
            lines += self._settle(self.launchers(name), seconds=self.settle_seconds)
        for line in lines:
            _emit("info", task="resume", event="reconciled", detail=line)
        return lines

    @contextmanager
    def _renewing(self, lease: str) -> Iterator[None]:
        """Keep `lease` from expiring while a long task holds it."""
        done = threading.Event()

        def renew() -> None:
            while not done.wait(TASK_LEASE_SECONDS / 3):
                try:
                    self.store.leases.renew(lease, self.holder, TASK_LEASE_SECONDS, _now())
                except Exception as exc:  # noqa: BLE001 - the store may be back next time
                    _emit("warning", task=lease, event="renew_failed", error=_one_line(exc))

        thread = threading.Thread(target=renew, name=f"lease-{lease}", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()


def run_once(store: PriceStore, config: Config, at: datetime | None = None, *,
             triggers: Mapping[str, BaseTrigger] | None = None,
             launchers: LauncherFactory | None = None,
             settle_seconds: float = SETTLE_SECONDS) -> list[TaskRun]:
    """Each task that is due (its schedule fired since its last recorded run, or it never
    ran), run one time: `costsched daemon --once`, for cron. Moves an earlier run left
    unfinished are carried on first. A second call within the period runs nothing."""
    daemon = Daemon(store, config, triggers=triggers, launchers=launchers,
                    settle_seconds=settle_seconds)
    daemon.resume()
    daemon.watch()  # recover what was preempted since the last run
    return daemon.run_once(at)


TASK_FUNCTIONS: dict[str, Callable[[Daemon, datetime | None], str | Outcome]] = {
    "collect": Daemon.collect, "replan": Daemon.replan, "catalog": Daemon.catalog}
_RUNNING: dict[str, Daemon] = {}  # the daemon of this process, for the scheduled jobs


def _scheduled(task: str) -> None:
    """What the APScheduler job store names (a module-level function): run `task` on this
    process's daemon."""
    daemon = _RUNNING.get("daemon")
    if daemon is None or daemon.stopping.is_set() or task not in daemon.triggers:
        return  # a task of the shared schedule this daemon does not run (a supervisor's)
    try:
        daemon.run_task(task)
    except Exception as exc:  # noqa: BLE001 - e.g. the database is away: the next tick retries
        _emit("error", task=task, event="failed", error=_one_line(exc))


def _watched() -> None:
    """The watcher's scheduled job: one look at this process's daemon's running jobs."""
    daemon = _RUNNING.get("daemon")
    if daemon is None or daemon.stopping.is_set():
        return
    try:
        daemon.watch()
    except Exception as exc:  # noqa: BLE001 - the database may be back at the next look
        _emit("error", task=WATCH, event="failed", error=_one_line(exc))


def _scheduler_class() -> type:
    """APScheduler's background scheduler, whose loop outlives a database that goes away
    (it would end its thread on an error writing a job's next run time), and that submits
    nothing once shut down (a run due as the daemon stops would log a traceback)."""
    from apscheduler.schedulers.background import BackgroundScheduler
    from apscheduler.schedulers.base import STATE_STOPPED

    class Scheduler(BackgroundScheduler):
        def _process_jobs(self) -> float | None:
            # `shutdown` takes this (re-entrant) lock after marking the scheduler stopped
            # and before shutting the executors: looked at under it, the state is final.
            with self._jobstores_lock:
                if self.state == STATE_STOPPED:
                    return None
                try:
                    return super()._process_jobs()
                except Exception as exc:  # noqa: BLE001 - retried like a job store failure
                    _emit("error", event="schedule_failed", error=_one_line(exc))
                    return float(self.jobstore_retry_interval)

    return Scheduler
