"""A budget's notes in a job's log (thresholds reached, stops and moves at a cap, budgets
`start --budget` raised) as the events a pass reports: whichever costsched process wrote
one (a `status` reconciles too, and keeps only its errors), a daemon that did not logs and
notifies it at its next pass (`Relay`)."""

from __future__ import annotations

import hashlib
import re

from costsched.service.jobs.runs import JobEvent
from costsched.store import PriceStore

# From this share of a budget on, a threshold reached is a warning (below it, news).
WARNING_SHARE = 0.8
_REACHED = re.compile(r" (?:reached|will reach) (\d+(?:\.\d+)?)% of ")
_AT_CAP = ("stopped at ", "moved at ")


def threshold_level(share: float) -> str:
    """The log level of a budget's threshold reached at `share` of it."""
    return "warning" if share >= WARNING_SHARE else "info"


def as_event(job_id: int, detail: str) -> JobEvent:
    """A budget note of job `job_id` as the pass that wrote it reported it: a threshold at
    its level, a stop or move at a cap a warning (both notified), else news."""
    if detail.startswith(_AT_CAP):
        return JobEvent(job_id, "budget", detail, level="warning", notify="budget")
    reached = _REACHED.search(detail)
    if reached is not None:
        return JobEvent(job_id, "budget", detail, level=threshold_level(
            float(reached.group(1)) / 100), notify="budget")
    return JobEvent(job_id, "budget", detail)


def notice(event: JobEvent) -> str:
    """The name of the lease a daemon takes to notify a budget note (`event`): daemons that
    share a store each log the note, the one that takes it first notifies it."""
    return f"notify:{hashlib.sha256(str(event).encode()).hexdigest()[:24]}"


class Relay:
    """The budget notes another process wrote since a daemon's last look: the first look
    marks where it starts (what came before it is history); the notes the daemon reported
    itself (`told`) are not said twice."""

    def __init__(self) -> None:
        self._seen: int | None = None
        self._told: set[tuple[int, str]] = set()

    def told(self, event: JobEvent) -> None:
        """The daemon reported `event` itself (a budget note its own pass wrote)."""
        if event.kind == "budget":
            self._told.add((event.job_id, str(event).split(": ", 1)[1]))

    def others(self, store: PriceStore) -> list[JobEvent]:
        """The budget notes written since the last look that the daemon did not report."""
        rows = store.jobs.event_rows(None, kinds=["budget"])
        seen, self._seen = self._seen, max((r.id for r in rows), default=self._seen or 0)
        if seen is None:
            self._told.clear()
            return []
        out = []
        for row in rows:
            if row.id <= seen:
                continue
            note = (row.job_id, str(row.detail or ""))
            if note in self._told:
                self._told.discard(note)
                continue
            out.append(as_event(*note))
        return out
