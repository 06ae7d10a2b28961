"""The watcher: every `daemon.watch_seconds`, one look at the running jobs of every
launcher in use; a job whose instance is gone is recovered (or closed) at once."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from costsched import launch_secrets
from costsched.config import Config
from costsched.daemon.events import _emit, _now, _one_line, nodes_of
from costsched.migration.launcher import Launcher
from costsched.model import FINAL_STATES, JOB_STATES
from costsched.service import jobs as job_service
from costsched.service.jobs import sweep as sweeping
from costsched.service.jobs.budget_notes import Relay, notice
from costsched.service.jobs.runs import JobEvent
from costsched.store import PriceStore
from costsched.vocabulary import counted

WATCH = "watch"  # the watcher: every daemon.watch_seconds, beside the scheduled tasks
_POLL = 0.2
# How long the daemon that notifies a budget note holds its lease, so that the other daemons
# of the store (which log it within a watch interval) do not notify it again.
NOTIFIED_SECONDS = 86400
LauncherFactory = Callable[[str], Launcher]


class Watcher:
    """What a daemon watches with: its store, config and launchers (set by `Daemon`)."""

    store: PriceStore
    config: Config
    launchers: LauncherFactory
    stopping: threading.Event
    settle_seconds: float
    watch_seconds: float
    holder: str
    _next_sweep: float = 0.0  # when the next sweep is due (time.monotonic())
    _budget_notes: Relay | None = None  # the budget notes other processes wrote

    # --- the watcher --------------------------------------------------------------------

    def watch(self) -> list[str]:
        """One look at the running jobs of every launcher in use: a job whose instance was
        preempted, died or ended is recovered (or closed) now, and the moves under way are
        followed until they end (at most `watch_seconds`). Every step is under the job's
        lease, so several daemons watching the same store act once. The pass and its
        result are recorded in the daemon's row (`store.daemons`)."""
        lines: list[str] = []
        failures: list[str] = []
        live = self._live_jobs()
        for name in sorted({launcher for _, _, launcher in live}):
            if self.stopping.is_set():
                break
            try:
                with self.carrying():
                    lines += self._settle(self.launchers(name),
                                          seconds=self.watch_seconds or self.settle_seconds)
            except Exception as exc:  # noqa: BLE001 - one backend's failure is logged
                _emit("error", task=WATCH, event="failed", launcher=name,
                      error=_one_line(exc))
                failures.append(f"{name}: {_one_line(exc)}")
        if not self.stopping.is_set():
            lines += self._sweep()
        self.relay_budget_notes()
        self._passed(len(live), lines, failures)
        return lines

    def relay_budget_notes(self) -> None:
        """Log (and notify) the budget notes another costsched process wrote since the last
        pass (a `status` that reached a threshold first says nothing of it): the daemon's
        log carries every threshold, and every stop and move at a cap, whoever wrote it."""
        if self._budget_notes is None:
            self._budget_notes = Relay()
        try:
            noted = self._budget_notes.others(self.store)
        except Exception as exc:  # noqa: BLE001 - the store may be back at the next look
            _emit("warning", task=WATCH, event="budget_notes_failed", error=_one_line(exc))
            return
        for event in noted:
            _emit(event.level, task=WATCH, event="budget",
                  **nodes_of(self.store, event.job_id), detail=event)
            if event.notify and self._first_to_notify(event):
                self._notify(event.notify, job=event.job_id, detail=str(event))

    def _first_to_notify(self, event: JobEvent) -> bool:
        """Whether this daemon notifies budget note `event`: daemons that share the store
        each log it, the first to take its lease (`budget_notes.notice`) notifies it."""
        try:
            return self.store.leases.acquire(notice(event), self.holder, NOTIFIED_SECONDS,
                                             _now())
        except Exception as exc:  # noqa: BLE001 - better twice than never
            _emit("warning", task=WATCH, event="record_failed", error=_one_line(exc))
            return True

    def _sweep(self) -> list[str]:
        """Every SWEEP_SECONDS, end the instances of each launcher in use that run for no
        job (`costsched.service.jobs.sweep`); a launcher that fails is logged."""
        if time.monotonic() < self._next_sweep:
            return []
        self._next_sweep = time.monotonic() + sweeping.SWEEP_SECONDS
        lines: list[str] = []
        for name, places in sorted(sweeping.places_to_sweep(
                self.store, _now() - sweeping.LOOKBACK).items()):
            try:
                found = sweeping.sweep(self.store, self.launchers(name), places)
            except Exception as exc:  # noqa: BLE001 - one backend's failure is logged
                _emit("error", task=WATCH, event="sweep_failed", launcher=name,
                      error=_one_line(exc))
                continue
            for line in found:
                _emit(line.level, task=WATCH, event="swept", launcher=name,
                      **nodes_of(self.store, line.job_id), detail=line)
            lines += found
        return lines

    def _passed(self, watched: int, lines: list[str], failures: list[str]) -> None:
        """Record this pass in the daemon's row: ok, or failed with the launchers' errors."""
        detail = f"{counted(watched, 'job')} watched" + "".join(f"; {line}" for line in lines[:5])
        detail += f"; {len(lines) - 5} more" if len(lines) > 5 else ""
        if failures:
            detail = "; ".join(failures) + f" ({detail})"
        try:
            self.store.daemons.passed(self.holder, "failed" if failures else "ok", detail,
                                      _now())
        except Exception as exc:  # noqa: BLE001 - the store may be back at the next look
            _emit("warning", task=WATCH, event="record_failed", error=_one_line(exc))

    # --- helpers ------------------------------------------------------------------------

    def carrying(self) -> AbstractContextManager[None]:
        """While in the block, a job this daemon cannot carry on for want of a secret's
        value waits, and says once what gives it (`launch_secrets.carried_by`)."""
        if getattr(self, "kind", "service") in ("auto", "starting"):  # a launch started it
            return launch_secrets.carried_by(
                "the supervisor", "`costsched daemon stop`, then `costsched daemon start` "
                "in a shell that sets {names}, gives {it}")
        return launch_secrets.carried_by(
            "the daemon", "restart the daemon with {names} set in its environment")

    def _settle(self, launcher: Launcher, seconds: float) -> list[str]:
        """Reconcile until this launcher's moves end, `seconds` pass, or the daemon stops."""
        deadline = time.monotonic() + seconds
        lines: list[str] = []
        while not self.stopping.is_set():  # stopping: the moves resume at the next start
            found = job_service.reconcile(self.store, launcher, budgets=self.config.budgets,
                                          watch_seconds=self.watch_seconds
                                          or self.config.daemon.watch_seconds,
                                          overheads=self.config.migration.overheads())
            for line in found:
                self._reported(line)
            lines += found
            if not self._moving(launcher) or time.monotonic() >= deadline:
                break
            self.stopping.wait(_POLL)
        return lines

    def _moving(self, launcher: Launcher) -> list[int]:
        """The ids of this launcher's moves under way (but those that wait for a secret
        this daemon has no value for: it cannot carry them on)."""
        unfinished = self.store.moves.unfinished()
        if not unfinished:
            return []
        records = {r.id: r for r in self.store.jobs.records({m.job_id for m in unfinished})}
        return [m.id for m in unfinished
                if str(records[m.job_id].spec.get("launcher", "local")) == launcher.name
                and not launch_secrets.missing(m.job_id, launch_secrets.names_of(
                    records[m.job_id].spec))]

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

    def _reported(self, event: JobEvent) -> None:
        """Log what a reconcile did to a job; recoveries and failures are notified."""
        if self._budget_notes is None:
            self._budget_notes = Relay()
        self._budget_notes.told(event)
        _emit(event.level, task="replan", event="reconciled",
              **nodes_of(self.store, event.job_id), detail=event)
        if event.notify and (event.kind != "budget" or self._first_to_notify(event)):
            self._notify(event.notify, job=event.job_id, detail=str(event))

    def _notify(self, event: str, **details: Any) -> None:
        from costsched import notify

        try:
            notify.notify(self.config, event, **details)
        except Exception as exc:  # noqa: BLE001 - a broken hook must not stop the daemon
            _emit("warning", event="notify_failed", notify=event, error=_one_line(exc))

    def _launcher_name(self, job_id: int) -> str:
        return str(self.store.jobs.get(job_id).spec.get("launcher", "local"))

    def _live_jobs(self) -> list[tuple[int, str, str]]:
        live = [s for s in JOB_STATES if s not in FINAL_STATES]
        return [(r.id, r.state, str(r.spec.get("launcher", "local")))
                for r in self.store.jobs.records(states=live)]

    def _launchers_in_use(self) -> list[str]:
        return sorted({launcher for _, _, launcher in self._live_jobs()})
