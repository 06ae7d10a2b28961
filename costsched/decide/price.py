"""The price-driven core: a `costsched.policies` policy's choice over a market view, carried
out only when the move pays.

The same function decides a running job live (`service.jobs.decider.PriceDecider`, over the
store's market at t) and each period of a replay (`backtest.engine.simulate`, over the
trace's market at t): the policy proposes an offering, and a move is made only when the
decision model's expected cost of the rest of the job on the choice, the move included, is
below staying by more than the margin (`pays`), or, for a policy that weighs the move
itself (`Policy.weighs_moves`), as that policy decided. A first placement is always carried
out.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

from costsched.amounts import apart, usd
from costsched.lazy import numpy as np
from costsched.model import Offering
from costsched.optimize.decision import MovePrice, move_price, outcomes
from costsched.optimize.rank import tie_rounded
from costsched.policies import JobState, MarketView, OfferingKey, Policy
from costsched.policies.base import expected_cost
from costsched.policies.dynamic_aware import DEFAULT_PERIOD_HOURS
from costsched.rest_cost import RestCost


@dataclass(frozen=True)
class Decision:
    at: datetime
    policy: str
    current: OfferingKey | None
    choice: OfferingKey
    offering: Offering | None  # the chosen offering, ready to launch (None: a lean replay)
    # Its price as of `at`: one instance's, as every offering is quoted and a placement
    # keeps it (a gang's N instances cost N times it: `per_instance`).
    usd_per_hour: float
    # The decision model's expected USD of the steps left where the job is (NaN before its
    # first placement, or where its offering has no price now), and on the choice, the
    # move included.
    stay_usd: float
    choice_usd: float
    # Why the policy's choice is not carried out ('' when it is): a move that does not pay.
    held: str = field(default="", kw_only=True)
    # Where else the move pays, best first (offering, USD/hour): what a move tries when
    # the choice has no capacity.
    alternatives: tuple[tuple[Offering, float], ...] = field(default=(), kw_only=True)
    # The move's price, itemised as the bill prices it (None when the job stays or is
    # placed for the first time): `choice_usd` includes its total.
    move: MovePrice | None = field(default=None, kw_only=True)
    reason: str = field(default="", kw_only=True)  # why, in words and dollars
    # What the account's quotas cost the placement, in dollars ('' when nothing): kept
    # with the launch it starts (`optimize.quotas.QuotaCost.line`).
    quota_cost: str = field(default="", kw_only=True)
    # The capacity reservation the choice is launched into, when it is booked capacity.
    reservation: str = field(default="", kw_only=True)
    # Where a placed job stays: the best other offering, (key, expected USD of the rest
    # there with the move, the move's price); None when it moves, is placed, or has none.
    other: tuple[OfferingKey, float, MovePrice] | None = field(default=None, kw_only=True)
    # A placement's `choice_usd` itemised: the decision model's work, preemption and start
    # hours at the choice's price for all its nodes (`rest_cost.of_row`); None where it is
    # not made of them.
    rest: RestCost | None = field(default=None, kw_only=True)

    @property
    def moves(self) -> bool:
        """True when the job should change offering (or be placed for the first time)."""
        return self.choice != self.current and not self.held



def per_instance(decision: Decision, nodes: int) -> Decision:
    """`decision`, made over a gang's view (its prices N times an instance's, for `nodes`
    N), with its hourly prices (`usd_per_hour`, `alternatives`) one instance's, as a
    launch records them; its expected costs stay the gang's."""
    if nodes <= 1:
        return decision
    return replace(decision, usd_per_hour=decision.usd_per_hour / nodes,
                   alternatives=tuple((o, p / nodes) for o, p in decision.alternatives))


def choose(view: MarketView, state: JobState, chosen: Policy, margin: float,
           when: datetime, *, lean: bool = False, judge: bool = True) -> Decision:
    """`chosen`'s decision over `view` for the job, carried out only when the move pays
    (`pays`; a first placement always is), with the other offerings a move would pay to
    (`Decision.alternatives`). `lean`: for a replay, which launches and shows nothing: no
    alternatives, no `Decision.offering`, and the expected costs only where the job moves
    (else NaN).
    `judge=False`: the policy's move carried out as it is (a baseline replayed as it was
    published)."""
    choice = chosen.decide(view, state)
    row = view.row(choice)
    moving = state.current is not None and choice != state.current
    nothing = float("nan")
    stay, there, move = (expected_costs(view, state, choice) if moving or not lean
                         else (nothing, nothing, None))
    held, others = "", ()
    if moving:
        # A policy that weighed the move itself is not judged again by another model of
        # it (today's price for the rest of the job): only a move that cannot be priced
        # is held.
        held = ("" if not judge else unpriced(stay, there) if chosen.weighs_moves
                else pays(view, state, stay, there, margin))
        if not held and not lean:
            others = _paying(view, state, chosen.candidates(view, state), stay, margin,
                             exclude={choice, state.current})
    other = None
    if not lean and state.current is not None and not moving:
        other = best_other(view, state, chosen.candidates(view, state))
    return Decision(when, chosen.name, state.current, choice,
                    None if lean else view.offering(choice), float(view.prices[row]), stay,
                    there, held=held, alternatives=others, move=move, other=other)


def best_other(view: MarketView, state: JobState, usable: np.ndarray
               ) -> tuple[OfferingKey, float, MovePrice] | None:
    """The usable offering other than the job's own of the least expected cost of its rest,
    the move included (ties by the tie rule): (key, that cost, the move's price); None
    when there is none, or where the job runs has no price now."""
    here = view.row(state.current)
    rows = np.flatnonzero(usable)
    rows = rows[rows != here] if here is not None else rows[:0]
    if len(rows) == 0:
        return None
    costs = expected_cost(view, state, rows) + _move_costs(view, state)[rows]
    costs = np.nan_to_num(costs, nan=np.inf)
    i = int(np.lexsort((view.tie_order[rows], tie_rounded(costs)))[0])
    if not np.isfinite(costs[i]):
        return None
    return view.key(int(rows[i])), float(costs[i]), move_of(view, state, int(rows[i]))


def _paying(view: MarketView, state: JobState, usable: np.ndarray, stay_usd: float,
            margin: float, exclude: set, most: int = 3) -> tuple[tuple[Offering, float], ...]:
    """Up to `most` usable offerings other than `exclude` that a move to pays (`pays`),
    cheapest first with the move included (ties by the tie rule)."""
    rows = np.flatnonzero(usable)
    rows = rows[[view.key(int(r)) not in exclude for r in rows]] if len(rows) else rows
    if len(rows) == 0:
        return ()
    costs = expected_cost(view, state, rows) + _move_costs(view, state)[rows]
    order = np.lexsort((view.tie_order[rows], tie_rounded(np.nan_to_num(costs, nan=np.inf))))
    out = []
    for i in order:
        if len(out) == most:
            break
        if not pays(view, state, stay_usd, float(costs[i]), margin):
            key = view.key(int(rows[i]))
            out.append((view.offering(key), float(view.prices[rows[i]])))
    return tuple(out)


def _move_costs(view: MarketView, state: JobState) -> np.ndarray:
    """USD of moving the job from its offering to each row (0 to its own)."""
    cost = np.asarray(_move_prices(view, state).total, dtype=float)
    cost[view.row(state.current)] = 0.0
    return cost


def _move_prices(view: MarketView, state: JobState) -> MovePrice:
    """The itemised price of moving the job from its offering to each row
    (`optimize.decision.move_price`, egress by cloud, region and zone pair; the work it
    loses as measured, `JobState.lost_work_hours`, else the model's assumption)."""
    here = view.row(state.current)
    job = state.job
    return move_price(state.overheads, view.prices, here, view.egress_from(here),
                      job.checkpoint_gb, job.checkpoint_hours, state.lost_work_hours)


def move_of(view: MarketView, state: JobState, row: int) -> MovePrice:
    """The itemised price of moving the job to offering `row`."""
    every = _move_prices(view, state)
    return MovePrice(*(float(np.asarray(v)[row]) for v in (
        every.egress_usd, every.restart_usd, every.lost_work_usd, every.overlap_usd)))


def pays(view: MarketView, state: JobState, stay_usd: float, move_usd: float,
         margin: float, period_hours: float = DEFAULT_PERIOD_HOURS) -> str:
    """'' when moving pays: the expected cost of the rest of the job on the choice, the
    move included (`move_usd`), is below staying (`stay_usd`) by more than `margin` x the
    expected cost of the next `period_hours` where the job is. Else why not, in words."""
    if unpriced(stay_usd, move_usd):
        return unpriced(stay_usd, move_usd)
    threshold = margin * period_cost(view, state, stay_usd, period_hours)
    saving = stay_usd - move_usd
    if saving > threshold and saving > 0:
        return ""
    if saving <= 0:
        return f"it would cost {usd(-saving)} more than staying"
    places = apart(saving, threshold)  # 'not more than' a margin it reads under
    saved, least = usd(saving, places), usd(threshold, places)
    return (f"it would save {saved}, not more than the margin "
            f"({margin:.0%} of the next {period_hours:g} h here, {least})")


def unpriced(stay_usd: float, move_usd: float) -> str:
    """Why a move cannot be priced ('' when it can): where the job runs has no price now,
    or the choice cannot run its model."""
    if not np.isfinite(stay_usd):
        return "no price is known now for the offering it runs on"
    if not np.isfinite(move_usd):
        return "the choice cannot run the job's model"
    return ""


def period_cost(view: MarketView, state: JobState, stay_usd: float,
                period_hours: float = DEFAULT_PERIOD_HOURS) -> float:
    """The expected cost of the next `period_hours` of the job where it is (all of the rest
    when it finishes sooner): what the margin is a share of."""
    here = view.row(state.current)
    if here is None:
        return float("nan")
    hours = float(outcomes(state.steps_left, view.steps_per_second[[here]],
                           view.prices[[here]], view.preemptions_per_hour[[here]],
                           state.job.checkpoint_hours, state.restart_hours).hours[0])
    if not np.isfinite(hours) or hours <= 0:
        return stay_usd
    return stay_usd * min(1.0, period_hours / hours)


def expected_costs(view: MarketView, state: JobState, choice: OfferingKey
              ) -> tuple[float, float, MovePrice | None]:
    """Expected USD of the steps left on the current offering, and on `choice` plus the
    move's price when it is a move; that price, itemised."""
    there = view.row(choice)
    cost_there = float(expected_cost(view, state, np.array([there]))[0])
    here = view.row(state.current)
    if here is None:
        return float("nan"), cost_there, None
    if here == there:
        return cost_there, cost_there, None
    move = move_of(view, state, there)
    return (float(expected_cost(view, state, np.array([here]))[0]),
            cost_there + float(move.total), move)



def carried_out(decision: Decision) -> OfferingKey:
    """Where the job runs after `decision`: its choice when it moves, else where it was."""
    if decision.moves or decision.current is None:
        return decision.choice
    return decision.current


def fitting(view: MarketView, state: JobState, usable: np.ndarray, left_usd: float,
            when: datetime) -> Decision | None:
    """At a budget's cap: a move to the usable offering, cheaper by the hour than where the
    job runs, whose expected cost of the steps left, the move included (`move_of`, the one
    move price), is least and fits in `left_usd`; None when none does (or the job's
    offering has no price now)."""
    return _least_move(view, state, usable, when, left_usd)


def cheapest_move(view: MarketView, state: JobState, usable: np.ndarray,
                  when: datetime) -> Decision | None:
    """The move `fitting` weighs that costs least, whatever is left to pay for it: what a
    stop at a cap says when none fits; None when no usable offering cheaper by the hour
    than where the job runs has a price (or the job's offering has none now)."""
    return _least_move(view, state, usable, when, None)


def _least_move(view: MarketView, state: JobState, usable: np.ndarray, when: datetime,
                left_usd: float | None) -> Decision | None:
    """The least-cost move (`fitting`), of those within `left_usd` (None: of any priced)."""
    here = view.row(state.current)
    if here is None:
        return None
    # Only where it spends slower than where it met the cap.
    rows = np.flatnonzero(usable & (view.prices < view.prices[here]))
    if len(rows) == 0:
        return None
    # No steps left by the job's pace: what is left to pay is the move.
    finish = (expected_cost(view, state, rows) if state.steps_left > 0 else
              np.where(np.isnan(view.steps_per_second[rows]), np.nan, 0.0))
    costs = finish + _move_costs(view, state)[rows]
    costs = np.where(np.isfinite(costs), costs, np.inf)
    fits = np.isfinite(costs) if left_usd is None else costs <= left_usd
    if not fits.any():
        return None
    order = np.lexsort((view.tie_order[rows], tie_rounded(costs)))
    best = int(next(i for i in order if fits[i]))
    choice = view.key(int(rows[best]))
    stay = (float(expected_cost(view, state, np.array([here]))[0]) if state.steps_left > 0
            else 0.0)
    return Decision(when, "budget", state.current, choice, view.offering(choice),
                    float(view.prices[rows[best]]), stay, float(costs[best]),
                    move=move_of(view, state, int(rows[best])))
