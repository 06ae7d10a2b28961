"""Who watches a store now: the daemons running for it (their rows in the store, and the
supervisor lease), and whether recovery is armed, in the words `launch`, `status` and
`daemon status` print. Reads only: starting a supervisor is `costsched.daemon.autostart`.

Recovery is armed when a daemon that watches the running jobs runs: a supervisor holding
the store's lease (one that let it go is on its way out), or a daemon run as a service or
installed. Unarmed, a preempted job waits until something looks at it (`costsched status`).
Armed, a job whose secret the daemon lacks is not recovered all the same: its recovery
waits, as the daemon says in the job's log (`Blocked`), and the lines here say so.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace
from datetime import datetime
from socket import gethostname

from costsched import launch_secrets
from costsched.amounts import age
from costsched.clouds.hints import collect_hint
from costsched.config import Config
from costsched.daemon.logs import shown_log
from costsched.daemon.records import SUPERVISOR_LEASE, live_jobs
from costsched.store import PriceStore
from costsched.store.daemons import DaemonRow
from costsched.store.leases import holder_pid
from costsched.vocabulary import counted

START = "costsched daemon start"  # what arms recovery by hand
LAUNCHING = "launching-"  # the tag of the holder a launch takes the lease under, at first
KIND_WORDS = {"auto": "supervisor", "installed": "installed daemon", "service": "daemon",
              "starting": "supervisor"}


@dataclass(frozen=True)
class Watching:
    """A daemon that watches the store's running jobs now."""

    pid: int | None
    host: str
    here: bool  # on this machine
    kind: str  # auto | installed | service | starting (its lease taken, not running yet)
    watch_seconds: float
    log: str
    started_at: datetime | None
    pass_at: datetime | None
    pass_status: str
    pass_detail: str

    @classmethod
    def of(cls, row: DaemonRow) -> Watching:
        return cls(row.pid, row.host, row.here, row.kind, row.watch_seconds, row.log,
                   row.started_at, row.pass_at, row.pass_status, row.pass_detail)

    def who(self) -> str:
        """'supervisor pid 123', 'installed daemon pid 45 on host gpu-box', 'supervisor
        (starting)'."""
        where = "" if self.here else f" on host {self.host}"
        what = KIND_WORDS.get(self.kind, "daemon")
        return f"{what} (starting){where}" if self.pid is None else \
            f"{what} pid {self.pid}{where}"

    def last_pass(self, at: datetime) -> str:
        """'last pass 4 s ago (ok)', or 'no pass yet'."""
        if self.pass_at is None:
            return "no pass yet"
        return f"last pass {ago(at, self.pass_at)} ({self.pass_status})"

    def document(self, at: datetime) -> dict:
        return {"pid": self.pid, "host": self.host, "kind": self.kind,
                "watch_seconds": self.watch_seconds, "log": self.log or None,
                "started_at": self.started_at,
                "last_pass": None if self.pass_at is None else {
                    "at": self.pass_at, "seconds_ago": _seconds(at, self.pass_at),
                    "status": self.pass_status, "detail": self.pass_detail}}


def watching(store: PriceStore, config: Config, at: datetime, *, log: str = ""
             ) -> list[Watching]:
    """The daemons watching the store's running jobs at `at`, the supervisor first. A
    supervisor whose process has not registered yet is "starting", with the config's
    interval and `log` (where a launch sent its output)."""
    auto = store.leases.holder_of(SUPERVISOR_LEASE, at)
    rows = [r for r in store.daemons.running(at) if r.watch_seconds > 0
            and (r.kind != "auto" or r.holder == auto)]  # one that let go of it is leaving
    found = [Watching.of(r) for r in sorted(rows, key=lambda r: r.kind != "auto")]
    if auto is not None and not any(r.holder == auto for r in rows):
        host, pid = holder_pid(auto)
        if auto.rpartition(":")[2].startswith(LAUNCHING):
            pid = None  # the launch starting it holds the lease until it knows its pid
        found.insert(0, Watching(pid, host, host == gethostname(), "starting",
                                 config.daemon.watch_seconds, log, None, None, "", ""))
    return found


@dataclass(frozen=True)
class Blocked:
    """A live job whose recovery cannot be armed for want of its secrets' values: the
    watching daemon said it lacks them (in the job's log), or a supervisor started from
    this shell would lack them."""

    job_id: int
    name: str
    secrets: tuple[str, ...]

    def waits(self) -> str:
        """'job 8: waits for WANDB_API_KEY'."""
        return f"job {self.job_id}: waits for {' and '.join(self.secrets)}"

    def document(self) -> dict:
        return {"job_id": self.job_id, "name": self.name, "secrets": list(self.secrets)}


@dataclass(frozen=True)
class Recovery:
    """Whether the store's running jobs are recovered without anyone looking, and the fix
    when they are not."""

    watchers: list[Watching]
    live_jobs: int
    autostart: bool
    db: str | None = None  # the --db the command was given: the fix names it too
    replan: str = ""  # the schedule.replan cron a supervisor re-plans on
    # Secrets of the live jobs this shell's environment lacks: a supervisor started from it
    # would lack them too (not armed only; a daemon's own lack is said under each job).
    lacking: tuple[str, ...] = ()
    # The live jobs the watching daemon says it cannot recover for want of a secret.
    blocked: tuple[Blocked, ...] = ()

    @property
    def armed(self) -> bool:
        return bool(self.watchers)

    def fix(self) -> str | None:
        """The command that arms recovery, when it is not armed and a job runs."""
        if self.armed or not self.live_jobs:
            return None
        return START + (f" --db {shlex.quote(self.db)}" if self.db else "")

    def line(self, at: datetime) -> str | None:
        """One line for `status`: armed (by whom, how often, its last pass), or not and the
        fix; None when nothing runs and nothing watches."""
        if self.watchers:
            first = self.watchers[0]
            more = len(self.watchers) - 1
            # A pass that went well is no "(ok)" while a job it watches cannot be recovered.
            last = first.last_pass(at).removesuffix(" (ok)" if self.blocked else "")
            fix = str(self.blocked[0].job_id) if len(self.blocked) == 1 else "JOB"
            armed = "armed" if not self.blocked else (
                f"armed, except {'; '.join(b.waits() for b in self.blocked)} "
                f"(`costsched status {fix}` says the fix)")
            return (f"Recovery {armed}: {first.who()} watches this store every "
                    f"{first.watch_seconds:g} s; {last}"
                    + (f"; log: {first.log}" if first.log else "")
                    + (f" (and {counted(more, 'more daemon')})" if more else ""))
        if not self.live_jobs:
            return None
        why = ("" if self.autostart else
               " (daemon.autostart is off: recovery depends on your daemon service)")
        secrets = (f" from a shell that sets {' and '.join(self.lacking)} (a job's "
                   f"secret{'s' if len(self.lacking) > 1 else ''}: a supervisor takes "
                   f"{'it' if len(self.lacking) == 1 else 'them'} from its environment)"
                   if self.lacking else "")
        return (f"Recovery not armed: no daemon watches this store{why}, so a preempted job "
                f"waits for the next `costsched status`; `{self.fix()}`{secrets} starts one.")

    def document(self, at: datetime) -> dict:
        return {"armed": self.armed, "live_jobs": self.live_jobs, "fix": self.fix(),
                "daemons": [w.document(at) for w in self.watchers], "line": self.line(at),
                "blocked": [b.document() for b in self.blocked],
                "unscheduled": self.unscheduled()}

    def undecided(self, job_id: int, at: datetime, scheduled: list | None = None,
                  due: datetime | None = None) -> str:
        """What `status` says of a running job the decider has not decided on where it
        runs now: when the daemon that watches the store decides it (its next re-plan:
        the supervisor's on schedule.replan, another daemon's as `scheduled`, the tasks'
        status, says), or, none watching, what shows the policy's advice now. A re-plan
        after the job's deadline (`due`) is said to come after it, with what decides the
        job before then: only a recovery, at a watch pass, should its instance be lost
        (a watch pass recovers a job by its own decider, and decides no other move)."""
        if not self.watchers:
            return (f"not decided yet: no daemon watches this store to decide it; "
                    f"`costsched migrate {job_id} --dry-run` shows what the policy would do "
                    "now")
        first = self.watchers[0]
        if first.kind in ("auto", "starting"):
            replan = next_fire(self.replan, at)
        else:
            replan = next((t.next_run for t in scheduled or () if t.task == "replan"), None)
        when = _clock(replan, at)
        who = KIND_WORDS.get(first.kind, "daemon")
        # A dry run keeps no decision, so its advice is never shown here: said how to see it.
        advice = f"`costsched migrate {job_id} --dry-run` shows what it would decide now"
        if replan is not None and due is not None and at < due < replan:
            return (f"not decided yet: the {who}'s next re-plan{when} (schedule.replan "
                    f"{self.replan}) comes after its deadline{_clock(due, at)}, so until "
                    f"then it stays where it runs unless its instance is lost (a watch, "
                    f"every {first.watch_seconds:g} s, then places it again by its "
                    f"deadline policy); {advice}")
        return (f"not decided yet: the {who} decides it at its next re-plan{when} "
                f"(schedule.replan {self.replan}); {advice}")

    def scheduled(self, tasks: list, at: datetime) -> list:
        """`tasks` (`records.status`) with the supervisor's next re-plan where only a
        supervisor watches: it re-plans on schedule.replan without a schedule in the store,
        so the store gives the task no next run."""
        if not self.watchers or any(w.kind not in ("auto", "starting")
                                    for w in self.watchers):
            return tasks
        due = next_fire(self.replan, at) if self.replan else None
        return [replace(t, next_run=due) if t.task == "replan" and t.next_run is None
                else t for t in tasks]

    def unscheduled(self) -> str | None:
        """What `status` and the dashboard say of the scheduled optimizer (collect, replan,
        catalog) when none of its tasks has a run or a next run in the store, while a
        daemon watches: who runs them, never a daemon to start beside it (None when none
        watches: the tasks never ran)."""
        if not self.watchers:
            return None
        if all(w.kind in ("auto", "starting") for w in self.watchers):
            return (f"Scheduled optimizer: the supervisor re-plans the running jobs on "
                    f"schedule.replan ({self.replan}), no run yet; prices are collected by "
                    f"{collect_hint()}, or on their schedule by `costsched daemon install`.")
        return (f"Scheduled optimizer: no run yet by the {self.watchers[0].who()} that "
                "watches this store (`costsched daemon status`).")


def recovery(store: PriceStore, config: Config, at: datetime, *, db: str | None = None,
             log: str = "") -> Recovery:
    """Whether recovery is armed for `store` at `at` (`db`: as the command was given it;
    `log`: where a supervisor still starting logs, by default the store's daemon log)."""
    log = log or str(shown_log(store.url, config))
    watchers, live = watching(store, config, at, log=log), live_jobs(store)
    if not watchers:
        return Recovery(watchers, len(live), config.daemon.autostart, db,
                        config.schedule.replan, _lacking(store, live))
    return Recovery(watchers, len(live), config.daemon.autostart, db, config.schedule.replan,
                    blocked=said_blocked(store, live))


def _lacking(store: PriceStore, job_ids: list[int]) -> tuple[str, ...]:
    """The secrets the jobs `job_ids` name that this process does not hold (`shell_blocked`:
    neither given to it nor set in its environment)."""
    return tuple(sorted({n for b in shell_blocked(store, job_ids) for n in b.secrets}))


def shell_blocked(store: PriceStore, job_ids: list[int]) -> tuple[Blocked, ...]:
    """The jobs of `job_ids` a supervisor started from this process would not recover:
    it gets this process's environment and the values it holds (`autostart._spawn`), so
    it lacks what this process lacks (`launch_secrets.missing`)."""
    if not job_ids:
        return ()
    found = []
    for record in store.jobs.records(job_ids):
        names = launch_secrets.names_of(record.spec)
        lacking = launch_secrets.missing(record.id, names) if names else []
        if lacking and not record.final:
            found.append(Blocked(record.id, record.name, tuple(lacking)))
    return tuple(found)


# The secrets a daemon's note in a job's log says it lacks (`launch_secrets.waits_line`:
# "recovery waits for secret A (...", "a recovery would wait for secrets A, B (...").
_WAITS_FOR = re.compile(r"\bwaits? for secrets? (.+?) \(")


def said_blocked(store: PriceStore, job_ids: list[int]) -> tuple[Blocked, ...]:
    """The jobs of `job_ids` whose move a daemon said it cannot carry on for want of a
    secret (its newest note in the job's log, cleared once it can: `SECRET_NOTE`)."""
    from costsched.service.jobs.steps import SECRET_NOTE

    if not job_ids:
        return ()
    notes = {j: n for j, n in store.jobs.last_details(job_ids, SECRET_NOTE).items() if n}
    if not notes:
        return ()
    found = []
    for record in store.jobs.records(sorted(notes)):
        said = _WAITS_FOR.search(notes[record.id])
        if said and not record.final:
            found.append(Blocked(record.id, record.name, tuple(said[1].split(", "))))
    return tuple(found)


def ago(at: datetime, then: datetime) -> str:
    """'4 s ago', '3 min ago', '2 h ago' (`costsched.amounts.age`)."""
    return f"{age(_seconds(at, then))} ago"


def _seconds(at: datetime, then: datetime) -> float:
    return max(0.0, (at - then).total_seconds())


def next_fire(cron: str, at: datetime) -> datetime | None:
    """When the crontab line `cron` (UTC) fires next after `at`; None when it cannot be
    told (not a cron line). APScheduler is loaded only here: a supervisor's re-plan is
    asked for only when a running job awaits its first decision."""
    from apscheduler.triggers.cron import CronTrigger

    try:
        return CronTrigger.from_crontab(cron, timezone="UTC").get_next_fire_time(None, at)
    except ValueError:
        return None


def _clock(when: datetime | None, at: datetime) -> str:
    """', 01:30 UTC' (its date too where it is not `at`'s); '' for None."""
    if when is None:
        return ""
    return f", {when:%H:%M} UTC" if when.date() == at.date() else f", {when:%Y-%m-%d %H:%M} UTC"
