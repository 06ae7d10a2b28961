"""Where `launch` places a job that its deadline policy places, rather than the plan's
first row: a job with a deadline that may use on-demand capacity is placed by the deadline
policy (spot while it lasts, on-demand of the same type when the deadline needs it),
which weighs the offerings otherwise than the plan's table, one by one, does. `plan` says
so in the words of the very decision `launch` makes (`first_place.first_placement`), asked
of the same store at the same instant."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from costsched.model import InvalidInput
from costsched.service.deadline_terms import DEFAULT_DEADLINE_POLICY, uses_deadline_policy

if TYPE_CHECKING:
    from costsched.jobspec import ResolvedJob
    from costsched.store import PriceStore

PLACED_UP_TO = 20  # jobs; a larger collection's jobs are not asked one by one


@dataclass(frozen=True)
class LaunchPlacement:
    """What `launch` would do with a job its deadline policy places: the policy, the
    offering it starts on (`key`, `offering`: its label), the expected USD of its steps
    at that offering's price with its start (`usd`, the decision's `choice_usd`: spot
    lasting, before any preemption; `started`: whether that start costs anything, none
    where the launcher boots no instance), and the decision's words (`reason`); or why
    launch refuses it (`refused`, the rest empty)."""

    policy: str
    key: tuple = ()
    offering: str = ""
    usd_per_hour: float = float("nan")
    usd: float = float("nan")
    reason: str = ""
    refused: str = ""
    started: bool = True

    def as_dict(self) -> dict[str, Any]:
        if self.refused:
            return {"policy": self.policy, "refused": self.refused}
        return {"policy": self.policy, "offering": self.offering, "key": list(self.key),
                "usd_per_hour": self.usd_per_hour,
                "expected_usd": None if self.usd != self.usd else self.usd,
                "reason": self.reason}


def launch_placements(store: PriceStore, jobs: Sequence[ResolvedJob], at: datetime,
                      launcher: str) -> tuple[LaunchPlacement | None, ...]:
    """Per job, what `launch` on the launcher named `launcher` would place it on at `at`,
    for the jobs a deadline policy places (None for the others, whose launch takes the
    plan's order; () for more than PLACED_UP_TO jobs, or none such, or a launcher that
    cannot be made on this machine: its cloud's SDK or account not set up, which the
    plan's note on what launch can do says, and a plan still plans)."""
    if len(jobs) > PLACED_UP_TO or not any(map(uses_deadline_policy, jobs)):
        return ()
    from costsched.passes import one_pass
    from costsched.service.jobs.first_place import first_placement
    from costsched.service.jobs.reasons import label
    from launchers import make_launcher

    try:
        backend = make_launcher(launcher)  # as `launch` makes it
    except InvalidInput:  # its SDK or account not set up here (`launcher_line` says so)
        return ()
    out: list[LaunchPlacement | None] = []
    with one_pass():  # the market of `at` read once for every job (a sweep's)
        for job in jobs:
            if not uses_deadline_policy(job):
                out.append(None)
                continue
            try:
                policy, d, _ = first_placement(store, backend, job, at, tried=False)
            except InvalidInput as exc:  # (launch refuses it in these words)
                out.append(LaunchPlacement(DEFAULT_DEADLINE_POLICY, refused=str(exc)))
                continue
            out.append(LaunchPlacement(policy, tuple(d.choice), label(d.choice),
                                       float(d.usd_per_hour), float(d.choice_usd), d.reason,
                                       started=job.start_hours > 0))
    return tuple(out)
