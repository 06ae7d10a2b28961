"""A stop at a job's own budget's cap names the same spend in its stop line (the job's
events, the supervisor's log, the dashboard) as `status` does under the job, and what is
left adds up to the cap from it. In-memory launcher, SQLite store."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

from costsched.config import BudgetsConfig
from costsched.service import jobs as service
from costsched.service.jobs import caps
from costsched.service.jobs.caps import raise_budget
from costsched.store import PriceStore
from tests.costsched.service.test_budget_over_cap import WATCH, _launched


def stopped_at_cap(store: PriceStore, launcher: object, job_id: int, held: float,
                   seconds: float) -> tuple[str, re.Match, datetime]:
    """Job `job_id` given a budget of `held` seconds of its price and a watch interval,
    watched `seconds` after its start: (its stop's event, the spend it names, when)."""
    [placed] = store.jobs.placement_rows([job_id])
    per_second = placed.usd_per_hour / 3600
    raise_budget(store, job_id, per_second * (held + WATCH + 0.5), at=placed.start_at)
    at = placed.start_at.replace(microsecond=0) + timedelta(seconds=seconds)
    [event] = [e for e in caps.enforce(store, launcher, BudgetsConfig(), at, WATCH)
               if "stopped at " in e]
    stopped = re.search(r"stopped at its own budget: \$([0-9.]+) spent", event)
    assert stopped is not None, event
    return event, stopped, at


def test_the_stop_line_and_status_name_one_spend(store: PriceStore, tmp_path: Path) -> None:
    from costsched.cli.status_lines import cap_lines

    job_id, launcher = _launched(store, tmp_path)
    event, stopped, at = stopped_at_cap(store, launcher, job_id, 347, 348.7)
    [s] = service.status(store, launcher, job_id)
    states = caps.budget_states(store, BudgetsConfig(), at + timedelta(hours=1), WATCH)
    [line] = cap_lines(s, states)
    # Status says the stop's own line, in its figures; what is left now and what was
    # spent add up to the cap as written.
    assert line.startswith(event[event.index("stopped at "):] + "; "), (event, line)
    shown = re.search(r"; \$([0-9.]+) left now of its budget of \$([0-9.]+):", line)
    assert shown is not None, line
    spent, left, cap = (float(x) for x in (stopped.group(1), *shown.groups()))
    assert round(spent + left, 6) == cap, (event, line)
