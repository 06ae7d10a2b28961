"""The scheduled optimizer: collect prices, re-plan running jobs, refresh the on-demand
catalog, on cron schedules, unattended.

APScheduler 3 keeps the schedule in the store's own database (table apscheduler_jobs, job
ids "collect", "replan", "catalog", replaced at each start). Several daemons may share a
store, on several hosts: each task runs under a lease named after it, and runs only when
its trigger fired since the task's last recorded run, so each trigger runs a task once;
re-planning decides every job first, then starts each move under the job's own lease
("steps:<id>", decided again once it is held). A daemon that finds the lease held
elsewhere, or the trigger served already, records a "skipped" run.

Beside the tasks, every daemon runs the watcher every `daemon.watch_seconds` (30 s by
default): it looks at the running jobs' instances and recovers a preempted or dead job at
once, under the job's lease (so several daemons act once); `--once` looks once.

    daemon = Daemon(store, loaded.config)
    daemon.serve()               # until SIGTERM or SIGINT
    run_once(store, config)      # each task that is due, one time (for cron)

Tests compress the schedules by passing APScheduler triggers (`triggers=`): the config's
schedules are 5-field cron expressions, whose finest step is a minute.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from sqlalchemy import inspect, text

from costsched import service
from costsched.config import Config
from costsched.migration.launcher import Launcher
from costsched.model import FINAL_STATES, InvalidInput
from costsched.passes import one_pass
from costsched.service import jobs as job_service
from costsched.store import PriceStore
from costsched.store.leases import TaskRun, holder_name
from costsched.store.schema import scheduler_jobs

TASKS = ("collect", "replan", "catalog")
WATCH = "watch"  # the watcher: every daemon.watch_seconds, beside the scheduled tasks
TASK_LEASE_SECONDS = 600  # renewed every third of it while the task runs
MISFIRE_GRACE_SECONDS = 3600  # a run this late (the daemon was down) still runs, once
SETTLE_SECONDS = 600.0  # how long a re-plan follows the moves it started
_COUNTED = ("running", "ok", "failed")  # the runs that serve a trigger (skips do not)
_POLL = 0.2
JOBSTORE_TABLE = scheduler_jobs.name  # made with the store's schema

log = logging.getLogger("costsched.daemon")
LauncherFactory = Callable[[str], Launcher]


def logfmt(level: str = "info", **fields: Any) -> str:
    """One logfmt line: ts=... level=... then `fields` in order; values with spaces or
    quotes are quoted; secrets masked (`costsched.redact`)."""
    from costsched.redact import MASK, is_secret_name, redact

    ts = datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    parts = [f"ts={ts}", f"level={level}"]
    for key, value in fields.items():
        text = f"{value:.2f}" if isinstance(value, float) else redact(str(value))
        text = MASK if is_secret_name(key) and text else text
        if not text or any(c in text for c in ' "=\\\n'):
            text = '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'
        parts.append(f"{key}={text}")
    return " ".join(parts)


def _emit(level: str, **fields: Any) -> None:
    log.log(logging.ERROR if level == "error" else logging.WARNING if level == "warning"
            else logging.INFO, logfmt(level, **fields))


def default_launchers(name: str) -> Launcher:
    """A launcher with this machine's defaults, as `costsched launch` makes it."""
    from launchers import make_launcher

    return make_launcher(name)


def triggers_from(config: Config, tasks: Sequence[str] = TASKS) -> dict[str, BaseTrigger]:
    """Each task's cron trigger from the config's schedules, in UTC."""
    return {task: CronTrigger.from_crontab(getattr(config.schedule, task), timezone="UTC")
            for task in tasks}


class Daemon:
    """The scheduled optimizer over `store`, configured by `config`.

    `triggers`: an APScheduler trigger per task, instead of the config's schedules (tests
    use IntervalTrigger(seconds=2)); `tasks`: the tasks scheduled; `launchers`: the launcher
    of each backend name (default `default_launchers`); `settle_seconds`: how long a re-plan
    follows the moves it started before it leaves them to the next run or start;
    `watch_seconds`: between the watcher's looks at running jobs (default: the config's
    daemon.watch_seconds; 0: no watcher).
    """

    def __init__(self, store: PriceStore, config: Config, *,
                 triggers: Mapping[str, BaseTrigger] | None = None,
                 tasks: Sequence[str] = TASKS, launchers: LauncherFactory | None = None,
                 settle_seconds: float = SETTLE_SECONDS, holder: str | None = None,
                 watch_seconds: float | None = None) -> None:
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
        self.stopping = threading.Event()
        self._scheduler: Any = None

    # --- one task -------------------------------------------------------------------

    def due(self, task: str, at: datetime | None = None) -> bool:
        """True when `task` never ran, or its trigger fired since its last recorded run."""
        now = at or _now()
        last = self.store.task_runs.last(task, statuses=_COUNTED)
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
        self.resume()
        scheduler = _scheduler_class()(timezone="UTC")
        scheduler.add_jobstore(SQLAlchemyJobStore(engine=self.store.engine,
                                                  tablename=JOBSTORE_TABLE))
        for task, trigger in self.triggers.items():
            scheduler.add_job(_scheduled, trigger, args=[task], id=task, name=task,
                              replace_existing=True, coalesce=True, max_instances=1,
                              misfire_grace_time=MISFIRE_GRACE_SECONDS)
        if self.watch_seconds:
            # Each daemon watches (in memory, not in the shared schedule): the job's lease
            # makes one of them act on a job at a time.
            scheduler.add_jobstore(MemoryJobStore(), alias=WATCH)
            scheduler.add_job(_watched, IntervalTrigger(seconds=self.watch_seconds),
                              id=WATCH, name=WATCH, jobstore=WATCH, coalesce=True,
                              max_instances=1, misfire_grace_time=None)
        scheduler.start()
        self._scheduler = scheduler
        _emit("info", event="started", holder=self.holder, tasks=",".join(self.triggers))

    def stop(self) -> None:
        """Take no new runs, let the running one finish its step, and give up the leases."""
        self.stopping.set()
        if self._scheduler is not None:
            self._scheduler.shutdown(wait=True)
            self._scheduler = None
        released = self.store.leases.release_all(self.holder)
        if _RUNNING.get("daemon") is self:
            del _RUNNING["daemon"]
        _emit("info", event="stopped", holder=self.holder, leases_released=released)

    def serve(self) -> None:
        """Run until SIGTERM or SIGINT (call from the main thread)."""
        def handle(signum: int, _frame: object) -> None:
            _emit("info", event="signal", signal=signal.Signals(signum).name)
            self.stopping.set()

        previous = {s: signal.signal(s, handle) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            self.start()
            while not self.stopping.wait(1.0):
                pass
        finally:
            self.stop()
            for sig, old in previous.items():
                signal.signal(sig, old)

    def resume(self) -> list[str]:
        """Carry on the moves left unfinished (a daemon stopped mid-migration); what moved."""
        lines: list[str] = []
        names = {self._launcher_name(m.job_id) for m in self.store.moves.unfinished()}
        for name in sorted(names):
            lines += self._settle(self.launchers(name), seconds=self.settle_seconds)
        for line in lines:
            _emit("info", task="resume", event="reconciled", detail=line)
        return lines

    # --- the watcher --------------------------------------------------------------------

    def watch(self) -> list[str]:
        """One look at the running jobs of every launcher in use: a job whose instance was
        preempted, died or ended is recovered (or closed) now, and the moves under way are
        followed until they end (at most `watch_seconds`). Every step is under the job's
        lease, so several daemons watching the same store act once."""
        lines: list[str] = []
        for name in self._launchers_in_use():
            if self.stopping.is_set():
                break
            try:
                lines += self._settle(self.launchers(name),
                                      seconds=self.watch_seconds or self.settle_seconds)
            except Exception as exc:  # noqa: BLE001 - one backend's failure is logged
                _emit("error", task=WATCH, event="failed", launcher=name,
                      error=_one_line(exc))
        return lines

    # --- the tasks ----------------------------------------------------------------------

    def collect(self, at: datetime | None = None) -> Outcome:
        """Collect today's on-demand and spot prices of the configured clouds and regions,
        then ask the deadline policy about each running job with a deadline: such a job
        may have to go on-demand (or back to spot) within the hour, not the day."""
        c = self.config.collect
        summary = service.collect_prices(self.store, clouds=c.clouds, regions=c.regions,
                                         gcp_project=c.gcp_project, signals=True)
        moved = self._deadline_pass(at)
        collected = _collected(summary)
        return Outcome(collected + (f"; {moved} deadline move(s) started" if moved else ""),
                       collected.level)

    def catalog(self, at: datetime | None = None) -> Outcome:
        """Refresh the on-demand catalog: collect the configured clouds' prices in every
        region of theirs (the collectors fetch on-demand and spot prices together), so that
        on-demand list prices stay current beyond the regions collected hourly. First the
        clouds' GPU instance types are discovered (`catalog refresh`), so new ones are priced."""
        from price_collectors import discovery

        c = self.config.collect
        found = discovery.refresh(c.clouds)
        summary = service.collect_prices(self.store, clouds=c.clouds,
                                         gcp_project=c.gcp_project)
        line = _collected(summary)
        new = sum(len(f.new) for f in found.found.values())
        return Outcome(f"{line}; {new} GPU instance type(s) discovered new", line.level)

    def replan(self, at: datetime | None = None) -> str:
        """For each launcher with live jobs: reconcile (recoveries, finished jobs, unfinished
        moves), ask the configured policy where each running job should be, start the
        migrations it asks for, and follow them until they complete (or `settle_seconds`)."""
        considered, started = self._replan_jobs(at)
        for alarm in job_service.budget_alarms(self.store, at=at):
            _emit("warning", task="replan", event="budget", job=alarm.job_id,
                  level=alarm.level, usd=alarm.spent_usd, budget=alarm.budget_usd)
            self._notify("budget", job=alarm.job_id, name=alarm.name, level=alarm.level,
                         spent_usd=alarm.spent_usd, budget_usd=alarm.budget_usd)
        left = len(self.store.moves.unfinished())
        detail = f"{considered} running job(s), {started} migration(s) started"
        return detail + (f", {left} move(s) left unfinished" if left else "")

    def _deadline_pass(self, at: datetime | None) -> int:
        return self._replan_jobs(at, deadline_only=True)[1]

    def _replan_jobs(self, at: datetime | None, deadline_only: bool = False) -> tuple[int, int]:
        """Per launcher in use: reconcile, decide for every running job (only those placed
        by a deadline policy, with `deadline_only`) from one market, start the moves that
        pay (each under its job's lease, decided again there), and follow them. Returns
        (jobs considered, migrations started)."""
        considered = started = 0
        policy = self.config.policy
        with one_pass():  # every job decided from the same market, read once
            for name in self._launchers_in_use():
                if self.stopping.is_set():
                    break  # no new migration once asked to stop
                launcher = self.launchers(name)
                for line in job_service.reconcile(self.store, launcher, at=at):
                    self._reported(line)
                advice = job_service.migrate(
                    self.store, launcher, at=at, margin=policy.margin, policy=policy.name,
                    overheads=self.config.migration.overheads(),
                    deadline_jobs_only=deadline_only, stop=self.stopping.is_set)
                considered += len(advice)
                started += sum(self._advised(a) for a in advice)
                if self._moving(launcher):
                    self._follow(launcher, seconds=self.settle_seconds)
        return considered, started

    def _advised(self, advice: job_service.MigrationAdvice) -> int:
        """Log (and notify) one job's re-plan; 1 when it started a migration."""
        job_id = advice.job_id
        if advice.started is None:
            _emit("info", task="replan", event="stays", job=job_id, reason=advice.reason)
            return 0
        current = advice.decision.current
        saved = advice.stay_usd - advice.move_usd
        where = {"from": _label(current) if current else "", "to": _label(advice.decision.choice)}
        _emit("info", task="replan", event="migrated", job=job_id, **where, usd_saved=saved,
              move=advice.started.id)
        self._notify("migration", job=job_id, name=advice.name, move=advice.started.id,
                     usd_saved=saved, stay_usd=advice.stay_usd, move_usd=advice.move_usd,
                     reason=advice.reason, **where)
        return 1

    # --- helpers ------------------------------------------------------------------------

    def _settle(self, launcher: Launcher, seconds: float) -> list[str]:
        """Reconcile until this launcher's moves end, `seconds` pass, or the daemon stops."""
        deadline = time.monotonic() + seconds
        lines: list[str] = []
        while not self.stopping.is_set():  # stopping: the moves resume at the next start
            found = job_service.reconcile(self.store, launcher)
            for line in found:
                self._reported(line)
            lines += found
            if not self._moving(launcher) or time.monotonic() >= deadline:
                break
            self.stopping.wait(_POLL)
        return lines

    def _moving(self, launcher: Launcher) -> list[int]:
        """The ids of this launcher's moves under way."""
        return [m.id for m in self.store.moves.unfinished()
                if self._launcher_name(m.job_id) == launcher.name]

    def _follow(self, launcher: Launcher, seconds: float) -> None:
        """Step this launcher's moves under way (each under its job's lease) until they
        end, `seconds` pass, or the daemon stops: what a re-plan does after it reconciled
        and started its moves, without looking at every instance again."""
        deadline = time.monotonic() + seconds
        while not self.stopping.is_set():
            for line in job_service.advance_moves(self.store, launcher):
                self._reported(line)
            if not self._moving(launcher) or time.monotonic() >= deadline:
                return
            self.stopping.wait(_POLL)

    def _reported(self, line: str) -> None:
        """Log a reconcile line; recoveries and failures are notified."""
        level = "warning" if "checkpoints not published" in line else "info"
        _emit(level, task="replan", event="reconciled", detail=line)
        job = line.split(":", 1)[0].removeprefix("job ").strip()
        if "recovery" in line and "failed" not in line.split("recovery", 1)[1]:
            self._notify("recovery", job=int(job) if job.isdigit() else job, detail=line)
        elif "failed" in line:
            self._notify("failure", job=int(job) if job.isdigit() else job, detail=line)

    def _notify(self, event: str, **details: Any) -> None:
        from costsched import notify

        try:
            notify.notify(self.config, event, **details)
        except Exception as exc:  # noqa: BLE001 - a broken hook must not stop the daemon
            _emit("warning", event="notify_failed", notify=event, error=_one_line(exc))

    def _launcher_name(self, job_id: int) -> str:
        return str(self.store.jobs.get(job_id).spec.get("launcher", "local"))

    def _live_jobs(self) -> list[tuple[int, str, str]]:
        frame = self.store.jobs.list()
        if frame.empty:
            return []
        return [(int(r.id), str(r.state), str(r.spec.get("launcher", "local")))
                for r in frame.itertuples() if r.state not in FINAL_STATES]

    def _launchers_in_use(self) -> list[str]:
        return sorted({launcher for _, _, launcher in self._live_jobs()})

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


@dataclass(frozen=True)
class TaskStatus:
    task: str
    next_run: datetime | None  # from the schedule in the store (None: never scheduled)
    last: TaskRun | None  # the newest run that was not a skip
    failures: list[TaskRun]  # the newest failed runs, newest first


def status(store: PriceStore, failures: int = 3) -> list[TaskStatus]:
    """Each task's next scheduled run, last run and recent failures, as the store records
    them (whether or not a daemon runs now)."""
    next_runs: dict[str, float | None] = {}
    if inspect(store.engine).has_table(JOBSTORE_TABLE):
        with store.engine.connect() as conn:
            rows = conn.execute(text(f"SELECT id, next_run_time FROM {JOBSTORE_TABLE}")).all()
        next_runs = {str(r[0]): r[1] for r in rows}
    out = []
    for task in TASKS:
        ts = next_runs.get(task)
        out.append(TaskStatus(
            task, None if ts is None else datetime.fromtimestamp(float(ts), timezone.utc),
            store.task_runs.last(task, statuses=_COUNTED),
            store.task_runs.recent(task, statuses=("failed",), limit=failures)))
    return out


TASK_FUNCTIONS: dict[str, Callable[[Daemon, datetime | None], str | Outcome]] = {
    "collect": Daemon.collect, "replan": Daemon.replan, "catalog": Daemon.catalog}
_RUNNING: dict[str, Daemon] = {}  # the daemon of this process, for the scheduled jobs


def _scheduled(task: str) -> None:
    """What the APScheduler job store names (a module-level function): run `task` on this
    process's daemon."""
    daemon = _RUNNING.get("daemon")
    if daemon is None or daemon.stopping.is_set():
        return
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


class Outcome(str):
    """What a task did, in one line (a str), with how the daemon logs it: `level` "info",
    or "warning" when part of it failed (a task that did nothing useful raises instead,
    and is logged as an "error")."""

    level: str

    def __new__(cls, detail: str, level: str = "info") -> Outcome:
        made = super().__new__(cls, detail)
        made.level = level
        return made


class NothingCollected(RuntimeError):
    """Every source of a collection failed: no cloud, no region gave a price."""


def _collected(summary: Any) -> Outcome:
    """One line from a collection's RunSummary: a warning when some cloud or region
    failed; NothingCollected when every one did (no cloud ran, or each cloud that ran lost
    every region it tried)."""
    errors = [f"{name}: {c.error}" for name, c in summary.clouds.items() if c.error]
    failed = sum(len(c.failed) for c in summary.clouds.values())
    worked = [c for c in summary.clouds.values()
              if not c.error and (not c.failed or c.units > len(c.failed))]
    line = f"{summary.inserted} new price(s), {summary.unchanged} unchanged"
    if failed:
        line += f", {failed} region(s) failed"
    line += "".join(f"; {e}" for e in errors)
    if summary.clouds and not worked:
        raise NothingCollected(f"every source failed: {line}")
    return Outcome(line, "warning" if errors or failed else "info")


def _label(key: Sequence[str]) -> str:
    cloud, region, zone, instance_type, market, _ = key
    return f"{cloud}:{zone or region}:{instance_type}:{market}"


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _now() -> datetime:
    return datetime.now(timezone.utc)


__all__ = ["TASKS", "Daemon", "TaskStatus", "default_launchers", "logfmt", "run_once",
           "status", "triggers_from"]
