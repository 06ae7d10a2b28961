"""Where a launch places a new job, and the decision behind it (`first_placement`): what
`launch` starts from, and what `plan` and the budget check at launch ask of the same
decision without launching anything (they load none of the launch's own steps)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from costsched.service.deadline_terms import DEFAULT_DEADLINE_POLICY, uses_deadline_policy
from costsched.service.jobs.decider import JobNow, placement

if TYPE_CHECKING:
    from costsched.jobspec import ResolvedJob
    from costsched.migration.launcher import Launcher
    from costsched.service.decide import Decision
    from costsched.store import PriceStore
    from costsched.store.booked import Booking


def first_placement(store: PriceStore, launcher: Launcher, resolved: ResolvedJob,
                    when: datetime, pick: str | None = None,
                    deadline_policy: str = DEFAULT_DEADLINE_POLICY,
                    booking: Booking | None = None, *, tried: bool = True
                    ) -> tuple[str, Decision, list[dict]]:
    """`launches._first_place` with the decision behind it: what a launch places the job
    on, as its budget check prices it (`budget_launch`) and says why. Not `tried` (`plan`):
    the decision and launch's refusal alone, no offerings listed to try."""
    policy = (deadline_policy if pick is None and uses_deadline_policy(resolved)
              else "dynamic-aware")
    regions = resolved.job.constraints.regions
    decision, candidates = placement(
        store, JobNow(resolved, when, policy, regions[0] if regions else "", None,
                      resolved.job.steps, offering=pick, first=True,
                      booked=(booking,) if booking else ()), launcher, when, tried=tried)
    return policy, decision, candidates
