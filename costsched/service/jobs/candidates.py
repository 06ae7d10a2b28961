"""The offerings a launch, a recovery or a move tries, best first (`candidates_of`): the
decision's choice, then its fallbacks, those the launcher can start; and, for `plan`,
which lists none, the same refusal when the launcher can start none (`launchable`)."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from costsched.migration.launcher import Launcher
from costsched.migration.machine import candidate
from costsched.policies import OfferingKey
from costsched.service.jobs.runs import CANDIDATES
from costsched.service.jobs.unready import nothing_launchable

if TYPE_CHECKING:
    from costsched.jobspec import ResolvedJob
    from costsched.service.decide import Decision
    from costsched.service.jobs.market import Market


def runs_here(launcher: str) -> bool:
    """`launchers.runs_here`: the local launcher's instances stand in for a cloud's."""
    from launchers import runs_here as here

    return here(launcher)


def launchable(d: Decision, launcher: Launcher, market: Market, name: str,
               exclude: Collection[OfferingKey], resolved: ResolvedJob) -> None:
    """`candidates_of`'s refusal alone: None when the launcher can start one of the
    decision's offerings not excluded (what it would try is not listed)."""
    if not any(o.key not in exclude and launcher.can_launch(o)
               for o, _ in ((d.offering, d.usd_per_hour), *d.alternatives)):
        raise nothing_launchable(name, launcher, market.offerings_for(resolved), resolved)


def candidates_of(d: Decision, launcher: Launcher, market: Market, name: str,
                  exclude: Collection[OfferingKey] = (),
                  over_quota: Collection[OfferingKey] = (),
                  resolved: ResolvedJob | None = None) -> list[dict]:
    """The offerings a launch, recovery or move tries, best first: the decision's choice,
    then its fallbacks, those the launcher can start (one that just met no capacity
    after the others, and one the account's quota does not hold, `over_quota`, last), at
    most CANDIDATES. None: refused naming each cloud `resolved` allows that is not ready."""
    full = market.full_for(here=runs_here(launcher.name))
    ready, later, last = [], [], []
    for o, price in ((d.offering, d.usd_per_hour), *d.alternatives):
        if o.key in exclude or not launcher.can_launch(o):
            continue
        booked = d.reservation if o.key == d.choice else ""
        queue = last if o.key in over_quota else later if o.key in full else ready
        queue.append(candidate(o, price, booked))
    out = [*ready, *later, *last][:CANDIDATES]
    if out and d.quota_cost and out[0]["key"] == list(d.choice):
        out[0]["quota_cost"] = d.quota_cost  # kept in the launch's record (its job's log)
    if not out:
        raise nothing_launchable(name, launcher, None if resolved is None else
                                 market.offerings_for(resolved), resolved)
    return out
