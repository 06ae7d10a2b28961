"""What the deadline decider (`jobs.decider.DeadlineDecider`) gives its policy and says
of its decision: the offerings without spot now, each with why, and a stay's alternatives
priced as `migrate --to` prices a move there."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import replace
from typing import TYPE_CHECKING

from costsched.optimize.decision import MovePrice
from costsched.policies import OfferingKey

if TYPE_CHECKING:
    from costsched.decide.deadline import DeadlineDecision


def unavailable(full: Collection[OfferingKey], over_quota: Collection[OfferingKey],
                lost: Collection[OfferingKey]) -> dict[OfferingKey, str]:
    """The offerings the deadline policy takes as without spot now, each with why: `full`
    (a launch there just met no capacity), `over_quota` (the account's quota does not hold
    the job) and `lost` (the job's own instance there was just lost). A capacity error or
    a preemption in the last half hour is the market's to say (`deadline_jobs`)."""
    out = {k: "a launch there met no capacity just now" for k in full}
    out.update({k: "the account's quota does not hold it" for k in over_quota})
    out.update({k: "its instance there was just lost" for k in lost})
    return out


def as_asked(d: DeadlineDecision,
             priced: Callable[[OfferingKey], tuple[float, MovePrice] | None]
             ) -> DeadlineDecision:
    """A stay's best alternative (`other`) and the cheaper offering it leaves out
    (`left_out`) priced by `priced` (the expected cost of the rest there and the move, as
    `migrate --to` prices them: one figure for one move, wherever it is said); the one
    left out kept only while it is cheaper than the alternative (else than staying)."""
    other, left = d.other, d.left_out
    if other is not None and (found := priced(other[0])) is not None:
        other = (other[0], *found)
    if left is not None and (again := priced(left[0])) is not None:
        left = (left[0], *again, left[3])
    if left is not None and left[1] >= (d.stay_usd if other is None else other[1]):
        left = None
    return replace(d, other=other, left_out=left)
