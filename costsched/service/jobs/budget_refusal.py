"""A stored job its own budget keeps from every offering: the refusal of its placement (a
start after a stop, a recovery), in one line whose figures read as they are: what its
steps left and its start are expected to cost on the cheapest offering it allows, marked
where that rests on an estimated speed, itemised (`rest_cost`), against what is left of
its budget, or, spent past already, by how much its budget is passed (never a negative
amount left)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from costsched.amounts import apart, decimals, difference_as_written, given, usd
from costsched.model import InvalidInput

if TYPE_CHECKING:
    from costsched.own_budget import OwnBudget
    from costsched.rest_cost import RestCost


class BudgetShort(InvalidInput):
    """A stored job whose steps left and start are expected to cost more, on the cheapest offering
    it allows (`offering`, at `usd_per_hour` for all its nodes), than what is left of its
    own budget (`budget`); `estimate`: the mark and words of a cost on an estimated speed;
    `rest`: that cost's parts (its work, preemptions and start), where known."""

    def __init__(self, name: str, budget: OwnBudget, steps_left: float, offering: str,
                 expected_usd: float, usd_per_hour: float,
                 estimate: tuple[str, str] = ("", ""),  # (`estimate_said`)
                 gpu: tuple[str, int] = ("", 0),  # its (gpu_model, gpu_count)
                 started: bool = True,  # (False: its start costs nothing)
                 rest: RestCost | None = None) -> None:
        self.budget, self.steps_left, self.offering = budget, steps_left, offering
        self.rest = rest
        self.gpu, self.started = gpu, started
        self.expected_usd, self.usd_per_hour, self.estimate = expected_usd, usd_per_hour, estimate
        super().__init__(f"job {name}: {self.why}")

    @property
    def why(self) -> str:
        return self.said()

    def places(self, least: int = 2) -> int:
        """The decimals its words read at: those at which its cost reads more than what is
        left (spent past already: what it spent more than its budget), no fewer than
        `least` (those of a hint joined to it, `start_check.start_places`)."""
        b = self.budget
        if b.spent_usd > b.usd:
            return apart(b.spent_usd, b.usd, max(least, decimals(
                [self.expected_usd, b.spent_usd - b.usd, b.spent_usd])))
        return apart(self.expected_usd, b.left_usd,
                     max(least, decimals([self.expected_usd, b.left_usd, b.spent_usd])))

    def said(self, places: int | None = None, itemised: bool = True) -> str:
        """`why`, at `places` (its line's precision: `places()` by default); its cost's
        parts said unless not `itemised` (a hint joined to it itemises the same figures)."""
        b = self.budget
        places = self.places() if places is None else places
        if b.spent_usd > b.usd:  # spent past already: nothing is left; by how much it passed
            # (at the decimals at which what it spent reads more than the budget; the
            # amount over it the difference of the two as they read)
            over = difference_as_written(b.spent_usd, b.usd, places)
            cost, passed, spent = (usd(v, places) for v in (self.expected_usd, over,
                                                            b.spent_usd))
            return self._said(self._cost(cost, places, itemised),
                              f"and its budget of {given(b.usd, places)} is already "
                              f"passed by {passed} ({spent} spent)")
        # The cost and what is left at the decimals at which the cost reads more.
        cost, left, spent = (usd(v, places) for v in (self.expected_usd, b.left_usd,
                                                      b.spent_usd))
        return self._said(self._cost(cost, places, itemised),
                          f"more than the {left} left of its budget of "
                          f"{given(b.usd, places)} ({spent} spent)")

    def _cost(self, cost: str, places: int, itemised: bool) -> str:
        """Its cost as written (`cost`), marked, and its parts where they are said."""
        mark = self.estimate[0]
        if not itemised or self.rest is None:
            return f"{cost}{mark}"
        return self.rest.said(places, mark)

    def _said(self, cost: str, budget: str) -> str:
        said = self.estimate[1]
        start = " and its start are" if self.started else " are"
        return (f"its {self.steps_left:,.0f} steps left{start} expected to cost "
                f"{cost} on the cheapest offering it allows, {self.offering}, "
                f"{budget}{said}")
