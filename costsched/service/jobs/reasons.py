"""Why a running job moves or stays, in dollars: the words of the deciders' decisions
(`jobs.decider`). Every decision on a placed job says the expected cost of its rest where
it is and where it would go (the best alternative, when it stays), the move's price
itemised; the amounts of a line at one precision, so that they add up."""

from __future__ import annotations

import math
from collections.abc import Sequence

from costsched.amounts import (
    apart,
    decimals,
    decimals_kept,
    difference_as_written,
    given,
    parts_as_written,
    usd,
)
from costsched.decide.price import Decision, unpriced
from costsched.optimize.decision import MovePrice
from costsched.policies import OfferingKey
from costsched.vocabulary import offering_label

# After a figure that rests on an assumption (a job's work given as hours: its rest priced
# as all of them), as `plan` marks an estimated figure.
ASSUMED_MARK = "*"


def finish_here(amount: str) -> str:
    """The expected cost of a placed job's rest where it runs, as every decision line says
    it ('$4.12 to finish here'): the steps left, not the whole job's forecast."""
    return f"{amount} to finish here"


def move_reason(choice: Decision, margin: float, asked: bool = False, mark: str = "",
                there_mark: str = "") -> str:
    """Why the job moves or stays, in dollars (never NaN: an unknown amount is '-'), the
    move's price itemised; the amounts of a line at one precision (they add up). `mark`:
    after each expected cost (ASSUMED_MARK: they rest on an assumption); `there_mark`:
    after the cost there and the difference only (the speed there is estimated)."""
    if unpriced(choice.stay_usd, choice.choice_usd):
        return _unknown_figure(choice, asked)
    diff = choice.choice_usd - choice.stay_usd
    places = decimals_kept([choice.stay_usd, choice.choice_usd, diff, *parts(choice)])
    stay = usd(choice.stay_usd, places) + mark
    there = usd(choice.choice_usd, places) + (mark or there_mark)
    # The difference as the two amounts read: the line subtracts as printed.
    apart = usd(abs(difference_as_written(choice.choice_usd, choice.stay_usd, places)),
                places)
    where = label(choice.choice)
    if asked:
        if not choice.moves:
            return f"stay: it runs on {where} already"
        marked = mark or there_mark
        verdict = f"{apart}{marked} dearer" if diff > 0 else f"saves {apart}{marked}"
        return (f"move to {where} as asked: {finish_here(stay)}, {there} there including "
                f"the move{itemised(choice, places)} ({verdict})")
    if choice.moves and diff >= 0:
        # Only a policy that weighs its moves itself (dynamic-aware's look-ahead) moves so.
        return (f"move: {finish_here(stay)}, {there} on {where} including the move"
                f"{itemised(choice, places)} ({apart} dearer at "
                f"today's prices for the rest of the job; {choice.policy} expects it to pay "
                "with the next day at today's prices and the rest at the past week's)")
    if choice.moves:
        return (f"move: {finish_here(stay)}, {there} on {where} including the move"
                f"{itemised(choice, places)} (saves {apart})")
    if choice.held:
        if choice.choice != choice.current and choice.move is not None:
            return (f"stay: {finish_here(stay)}, {there} on {where} including the move"
                    f"{itemised(choice, places)}; not moved there: {choice.held}")
        return f"stay: {finish_here(stay)}; not moved to {where}: {choice.held}"
    if choice.other is not None:  # at the precision of the line, its best alternative's
        stay = usd(choice.stay_usd, _other_places(choice)) + mark
    return (f"stay: {finish_here(stay)}{best_other(choice, mark)}; no move saves more "
            f"than {margin:.0%} of the next day's cost here")


# What brings a price for the offering a job runs on, when none is known now.
def price_hint(current: Sequence[str] | None) -> str:
    """What brings a price for the offering a job runs on (`current`: its key, (cloud,
    region, ...)), when none is known now: its cloud's collect."""
    from costsched.clouds.hints import collect_hint

    return f"{collect_hint(current[:1] if current else ())} or `costsched prices import` brings one"


def _unknown_figure(choice: Decision, asked: bool) -> str:
    """`move_reason` of a decision one of whose expected costs is not known (no price
    where the job runs, or its model cannot run on the choice): why, in words, and what
    would let them be compared, never an amount written as '-'."""
    why = unpriced(choice.stay_usd, choice.choice_usd)
    if not math.isfinite(choice.stay_usd):
        why = f"{why} ({price_hint(choice.current)})"
    if asked:
        return asked_unpriced(choice, why)
    if not choice.moves and choice.choice == choice.current:
        return f"stay: the rest cannot be priced: {why}"
    where, there = label(choice.choice), ""
    if math.isfinite(choice.choice_usd):  # without a move's price: none from nowhere priced
        places = decimals_kept([choice.choice_usd, *parts(choice)])
        there = (f", {usd(choice.choice_usd, places)} there including the move"
                 f"{itemised(choice, places)}" if choice.move is not None else
                 f", {usd(choice.choice_usd, places)} for the rest there, the move not priced")
    verb = "move" if choice.moves else "stay"
    return f"{verb}: the rest here and there cannot be compared: {why}; " + (
        f"moves to {where}{there}" if choice.moves else f"not moved to {where}{there}")


def asked_unpriced(choice: Decision, short: str) -> str:
    """A move the user asked for (`migrate --to`) of a job whose rest cannot be priced
    (`short` says why): the move's price, and that the rest here and there cannot be
    compared, and what would let them be."""
    where = label(choice.choice)
    if not choice.moves:
        return f"stay: it runs on {where} already"
    move = "" if choice.move is None else f", the move{itemised(choice)}"
    return (f"move to {where} as asked{move}; cannot compare the rest here and there: "
            f"{short}")


def deadline_dollars(d: Decision) -> str:
    """A deadline policy's decision on a placed job in dollars: ': $A to finish here, $B
    there including the move of ...' for a move; for a stay, its expected cost here and
    that of its first fallback, the move there included ('' when it has none); where a
    figure is not known, why (`decide.price.unpriced`), never '-'."""
    if d.current is None:
        return ""
    why = unpriced(d.stay_usd, d.choice_usd if d.moves else d.stay_usd)
    if why:  # never '- to finish here'
        hint = f" ({price_hint(d.current)})" if not math.isfinite(d.stay_usd) else ""
        return f": its rest cannot be priced: {why}{hint}"
    if d.moves:
        places = decimals_kept([d.stay_usd, d.choice_usd, *parts(d)])
        why = getattr(d, "why", "")
        return (f": {finish_here(usd(d.stay_usd, places))}, {usd(d.choice_usd, places)} "
                f"there including the move{itemised(d, places)}{why and f'; {why}'}")
    return (f": {finish_here(usd(d.stay_usd, _other_places(d)))}{best_other(d)}"
            f"{left_out(d)}")


def left_out(d: Decision) -> str:
    """'; <offering>, $Y including the move, is left out: <why>' for a deadline job that
    stays where a cheaper spot offering has no spot now (`DeadlineDecision.left_out`; ''
    when none), at the precision of the line it ends."""
    found = getattr(d, "left_out", None)
    if found is None:
        return ""
    key, there, _, why = found
    return (f"; {label(key)}, {usd(there, _other_places(d))} including the move, is left "
            f"out: {why}")


def best_other(d: Decision, mark: str = "") -> str:
    """'; $Y on <offering>, the best alternative, including the move of $M (...)' for a
    job that stays (`Decision.other`; '' when it has none), at the precision of the line
    it ends (the cost here with it)."""
    if d.other is None:
        return ""
    key, there, move = d.other
    places = _other_places(d)
    best = ("the best alternative with spot now" if getattr(d, "left_out", None) is not None
            else "the best alternative")
    return (f"; {usd(there, places)}{mark} on {label(key)}, {best}, including "
            f"the move{_itemised(move, places)}")


def _other_places(d: Decision) -> int:
    """The decimals of a stay's line: its cost here, its best alternative's and the move's."""
    found = getattr(d, "left_out", None)
    return decimals_kept([d.stay_usd, *([] if d.other is None else
                                        [d.other[1], *_items(d.other[2])]),
                          *([] if found is None else [found[1]])])


def parts(choice: Decision) -> list[float]:
    """The move's price and its items (none without a move)."""
    return [] if choice.move is None else _items(choice.move)


def _items(m: MovePrice) -> list[float]:
    return [float(v) for v in (m.total, m.egress_usd, m.restart_usd, m.lost_work_usd,
                               m.overlap_usd)]


def itemised(choice: Decision, places: int | None = None) -> str:
    """' of $X (egress $a, restart $b, lost work $c, overlap $d)', or '' without a move; at
    one precision (`places`, else the one its own amounts need): the items add up."""
    return "" if choice.move is None else _itemised(choice.move, places)


def _itemised(move: MovePrice, places: int | None = None) -> str:
    """' of $T (egress $a, restart $b, lost work $c, overlap $d)' (`move_items`)."""
    return f" of {move_items(move, places)}"


def move_items(move: MovePrice, places: int | None = None, egress_of: str = "") -> str:
    """'$T (egress $a, restart $b, lost work $c, overlap $d)': a move's price and its
    items at one precision (`places`, else the one they need), the items summing to the
    total as written (each within a unit of its last decimal where they would not alone:
    `parts_as_written`); `egress_of`: what the egress is for ('for 0.2 GB'), after it."""
    items = _items(move)
    places = decimals(items) if places is None else places
    shown = parts_as_written(items[0], items[1:], places)
    total, egress, restart, lost, overlap = (usd(v, places) for v in (items[0], *shown))
    return (f"{total} (egress {egress}{egress_of and ' ' + egress_of}, restart {restart}, "
            f"lost work {lost}, overlap {overlap})")


def label(key: OfferingKey) -> str:
    return offering_label(*key[:5])


def none_fits(left_usd: float, cheapest: Decision | None, priced_here: bool = True) -> str:
    """Why no move is made at a budget's cap (`BudgetDecider`), in dollars: what is left
    (`left_usd`), and the least a move would cost (`cheapest`; None: no offering the job
    allows is priced cheaper by the hour than where it runs, or, not `priced_here`, where
    it runs has no price now)."""
    if not priced_here:
        return (f"where it runs has no price now to weigh a move against, to finish it "
                f"within {_left(left_usd)}")
    if cheapest is None:
        return (f"no offering it allows is cheaper by the hour than where it runs, to finish "
                f"it within {_left(left_usd)}")
    # The cost reads over what is left, its move's items at its precision (they add up).
    places = max(apart(cheapest.choice_usd, left_usd),
                 decimals(_items(cheapest.move)) if cheapest.move is not None else 0)
    return (f"no offering finishes it within {_left(left_usd, places)} (the "
            f"cheapest: {label(cheapest.choice)}, {usd(cheapest.choice_usd, places)} to "
            f"finish there including the move{itemised(cheapest, places)})")


def _left(left_usd: float, places: int | None = None) -> str:
    """What is left of a budget, as a move at its cap is weighed against it: 'the $0.0039
    left', or, its spend already past it (within the watch interval a cap lets it run
    over), 'its budget, already over by $0.0006', never a negative amount left."""
    if left_usd < 0:
        return f"its budget, already over by {given(-left_usd, places)}"
    return f"the {given(left_usd, places)} left"
