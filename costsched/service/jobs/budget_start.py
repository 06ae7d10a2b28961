"""What starts again a job a budget's cap stopped: the one command, as `costsched start`
checks it (`start_check.start_places`, the check `start` itself makes)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from costsched import own_budget
from costsched.migration.launcher import Launcher
from costsched.model import InvalidInput
from costsched.store import PriceStore
from costsched.store.job_rows import JobRecord


def start_commands(store: PriceStore, launcher: Launcher, records: Sequence[JobRecord],
                   at: datetime) -> dict[int, str]:
    """Each of `records` a budget's cap keeps stopped (`own_budget.capped_now`), by id: the
    one command that starts it again, as `costsched start` checks its budgets now:
    '`costsched start NAME` starts it again' where they let it start, else what its
    refusal gives it ('give it enough: `costsched start NAME --budget N` (...)', the amount
    that is enough; a named budget's key). Left out: a job of another launcher, or one
    whose start cannot be asked now (`start` says why)."""
    capped = own_budget.capped_now(store, records)
    if not capped:  # (the start's machinery is loaded only for a job a cap stopped)
        return {}
    from costsched.config import effective
    from costsched.service.jobs.decider import JobNow
    from costsched.service.jobs.runs import _running, steps_left
    from costsched.service.jobs.start_check import start_places

    config = effective()
    out: dict[int, str] = {}
    for record in records:
        if record.id not in capped:
            continue
        try:
            run = _running(store, record.id)
            if run.launcher != launcher.name:
                continue
            start_places(store, launcher, JobNow.of(run, None, steps_left(store, run, at)),
                         at, config.budgets, config.daemon.watch_seconds)
        except own_budget.StartShort as short:
            out[record.id] = short.fix
        except InvalidInput:
            continue
        else:
            out[record.id] = f"`costsched start {record.name}` starts it again"
    return out
