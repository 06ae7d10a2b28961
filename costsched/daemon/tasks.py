"""The scheduled tasks: collect prices, re-plan running jobs, refresh the catalog."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from costsched import service
from costsched.daemon.events import _emit, _label
from costsched.daemon.supervision import KIND_WORDS
from costsched.daemon.watcher import Watcher
from costsched.passes import one_pass
from costsched.service import jobs as job_service
from costsched.vocabulary import counted, prefixed, unprefixed


class Tasks(Watcher):
    """The tasks a daemon runs on its schedule."""

    # --- the tasks ----------------------------------------------------------------------

    def collect(self, at: datetime | None = None) -> Outcome:
        """Collect today's on-demand and spot prices of the configured clouds and regions
        (the re-plan that follows decides every running job from them)."""
        c = self.config.collect
        summary = service.collect_prices(self.store, clouds=c.clouds, regions=c.regions,
                                         gcp_project=c.gcp_project, signals=True)
        return _collected(summary)

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
        return Outcome(f"{line}; {counted(new, 'GPU instance type')} discovered new",
                       line.level)

    def replan(self, at: datetime | None = None) -> str:
        """For each launcher with live jobs: reconcile (recoveries, finished jobs, unfinished
        moves), ask the configured policy where each running job should be, start the
        migrations it asks for, and follow them until they complete (or `settle_seconds`)."""
        considered, started = self._replan_jobs(at)
        left = len(self.store.moves.unfinished())
        detail = f"{counted(considered, 'running job')}, {counted(started, 'migration')} started"
        return detail + (f", {counted(left, 'move')} left unfinished" if left else "")

    def _replan_jobs(self, at: datetime | None) -> tuple[int, int]:
        """Per launcher in use: reconcile, decide for every running job from one market
        (each by its own decider), start the moves that pay (each under its job's lease,
        decided again there), and follow them. Returns (jobs considered, migrations
        started)."""
        considered = started = 0
        policy = self.config.policy
        with one_pass(), self.carrying():  # every job decided from one market, read once
            for name in self._launchers_in_use():
                if self.stopping.is_set():
                    break  # no new migration once asked to stop
                launcher = self.launchers(name)
                for line in job_service.reconcile(self.store, launcher, at=at):
                    self._reported(line)
                advice = job_service.migrate(
                    self.store, launcher, at=at, margin=policy.margin, policy=policy.name,
                    overheads=self.config.migration.overheads(),
                    stop=self.stopping.is_set, decided_by=self.deciding_as())
                considered += len(advice)
                started += sum(self._advised(a) for a in advice)
                if self._moving(launcher):
                    self._follow(launcher, seconds=self.settle_seconds)
        return considered, started

    def deciding_as(self) -> str:
        """Who this daemon's decisions are kept as ("the supervisor", "the daemon")."""
        return f"the {KIND_WORDS.get(getattr(self, 'kind', 'service'), 'daemon')}"

    def _advised(self, advice: job_service.MigrationAdvice) -> int:
        """Log (and notify) one job's re-plan; 1 when it started a migration."""
        job_id = advice.job_id
        nodes = {"nodes": advice.nodes} if advice.nodes > 1 else {}  # as `nodes_of` says
        if advice.started is None:
            _emit("info", task="replan", event="stays", job=job_id, **nodes,
                  reason=advice.reason)
            return 0
        current = advice.decision.current
        saved = advice.stay_usd - advice.move_usd
        where = {"from": _label(current) if current else "", "to": _label(advice.decision.choice)}
        _emit("info", task="replan", event="migrated", job=job_id, **nodes, **where,
              usd_saved=saved,
              move=advice.started.id)
        self._notify("migration", job=job_id, name=advice.name, move=advice.started.id,
                     usd_saved=saved, stay_usd=advice.stay_usd, move_usd=advice.move_usd,
                     reason=advice.reason, **where)
        return 1


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
    errors = [prefixed(name, c.error) for name, c in summary.clouds.items() if c.error]
    failed = sum(len(c.failed) for c in summary.clouds.values())
    worked = [c for c in summary.clouds.values()
              if not c.error and (not c.failed or c.units > len(c.failed))]
    line = f"{counted(summary.inserted, 'new price')}, {summary.unchanged:,} unchanged"
    if failed:
        line += f", {counted(failed, 'region')} failed"
    line += "".join(f"; {e}" for e in errors)
    # The quotas read after the prices; a cloud's unread ones change no decision (info).
    quotas = [f"{name} {q.read} read" if not q.error
              else f"{name} not read ({unprefixed(q.error, name, 'quotas not read')})"
              for name, q in getattr(summary, "quotas", {}).items()]
    if quotas:
        line += "; quotas: " + ", ".join(quotas)
    if summary.clouds and not worked:  # no count to give: what failed, and why
        failures = ([counted(failed, "region") + " failed"] if failed else []) + errors
        raise NothingCollected(f"every source failed: {'; '.join(failures)}")
    return Outcome(line, "warning" if errors or failed else "info")
