"""What the rest of a job is expected to cost, itemised in the one wording every message
that states it uses: a budget stop's hint and a start refused at a budget (`caps`,
`stop_line.enough`), a placement refused for its own budget (`budget_refusal`), a launch's
line against a budget (`own_budget.LaunchFit`) and a move weighed at a cap (`cap_move`).

The figures are those the decision already made, never priced a second way: the work
left in hours at the price per hour of the offering it would run on (all its nodes), the
hours the decision model expects preemptions to add at that offering's rate (restarts
and work done again: `optimize.decision.expected_hours` less the work), and its start
where one is counted (`own_budget.start_usd`), each at that price. The parts are written
at the precision of the line they stand in and add up, as written, to the total as
written (`amounts.parts_as_written`); a part below the line's last decimal reads so
('<$0.0001'), never '$0.0000'; each part's hours times the price read as its amount
(`amounts.times`): '$0.0400 ($0.0341 for 0.0142 h of work + $0.0059 for 0.0025 h of
restarts and work done again (preemptions expected at 1.5/h) + $0.0017 for 0.0007 h to
start it, each at $2.4000/h)'; a rest of work alone, '$0.0400 (0.0167 h of work at
$2.4000/h)'."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from costsched.amounts import NOISE, hours_times, parts_as_written, usd

# Hours of the decision model's that differ by no more than this are one figure (a sum's
# float error): a row whose expected hours fall short of its work and start by more is
# no plan of this model (a policy's own figure), and is not itemised.
_HOURS_NOISE = 1e-9


@dataclass(frozen=True)
class RestCost:
    """The rest of a job on one offering: `work_hours` of work, the `hours` the decision
    model expects it to take there (its work, what preemptions add at `rate` per hour,
    and `start_hours` of start), all at `usd_per_hour` (all its nodes)."""

    usd_per_hour: float
    work_hours: float
    hours: float = math.nan  # NaN: its work (and start) alone, no preemptions counted
    rate: float = 0.0  # preemptions per hour, as the decision model priced them
    start_hours: float = 0.0

    @property
    def usd(self) -> float:
        """The rest's expected cost: its hours at its price, as the decision model makes it."""
        return self._hours() * self.usd_per_hour

    @property
    def preempted_hours(self) -> float:
        """The hours the decision model expects preemptions to add (0 where none counted)."""
        if self.hours != self.hours:
            return 0.0
        return max(self.hours - self.work_hours - self.start_hours, 0.0)

    def _hours(self) -> float:
        if self.hours == self.hours:
            return self.hours
        return self.work_hours + self.start_hours if self.start_hours else self.work_hours

    def without_start(self) -> RestCost:
        """Its steps left alone: the same work and preemptions, its start left out (a
        hint that states the start as a part of its own)."""
        if not self.start_hours:
            return self
        hours = self.hours - self.start_hours if self.hours == self.hours else math.nan
        return replace(self, hours=hours, start_hours=0.0)

    def said(self, places: int, mark: str = "", then: str = "") -> str:
        """'$0.0400 (ITEMS)': its cost at `places` (the line's precision), `mark` after it
        (a figure on an estimated speed), and its parts in brackets (`items`), `then`
        (more words of the same figure, '; its start: ...') closing them."""
        return f"{usd(self.usd, places)}{mark} ({self.items(places)}{then})"

    def items(self, places: int) -> str:
        """Its parts at `places`, adding up as written to its cost as written: '0.0167 h
        of work at $2.4000/h' (one part), else '$A for H h of work + $B for H h of
        restarts and work done again (preemptions expected at R/h) + $C for H h to start
        it, each at $P/h'."""
        parts = [(hours, words) for hours, words in (
            (self.work_hours, "of work"),
            (self.preempted_hours, "of restarts and work done again (preemptions expected "
                                   f"at {self.rate:.4g}/h)"),
            (self.start_hours, "to start it")) if hours * self.usd_per_hour >= NOISE]
        if len(parts) < 2:
            hours, words = parts[0] if parts else (self.work_hours, "of work")
            span, price, _ = hours_times(hours, self.usd_per_hour, self.usd, places)
            return f"{span} h {words} at {price}/h"
        amounts = parts_as_written(self.usd, [h * self.usd_per_hour for h, _ in parts],
                                   places)
        said, price = [], ""
        unit = 10.0 ** -places
        for (hours, words), amount in zip(parts, amounts, strict=True):
            exact = hours * self.usd_per_hour
            under = not amount and exact < unit  # below the last decimal: said so
            span, price, money = hours_times(hours, self.usd_per_hour,
                                             exact if under else amount, places)
            money = f"<{usd(unit, places)}" if under else money
            said.append(f"{money} for {span} h {words}")
        return f"{' + '.join(said)}, each at {price}/h"


def of_row(row: Mapping[str, Any]) -> RestCost | None:
    """The rest a plan's ranked row prices (`optimize.rank.rank`: its `work_hours`,
    `expected_hours`, `start_hours`, `preemptions_per_hour` and `usd_per_hour`, of all its
    nodes): the figures of its `expected_cost`. None where they are not known, or where its
    hours are no plan of the decision model (a policy's own cost set in a row)."""
    get = row.get
    price, work = float(get("usd_per_hour", math.nan)), float(get("work_hours", math.nan))
    hours, start = float(get("expected_hours", math.nan)), float(get("start_hours", 0) or 0)
    if not all(math.isfinite(v) for v in (price, work, hours, start)):
        return None
    if hours < work + start - _HOURS_NOISE:
        return None
    return RestCost(price, work, hours, float(get("preemptions_per_hour", 0.0) or 0.0), start)
