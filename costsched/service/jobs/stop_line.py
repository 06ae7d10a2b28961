"""One precision for a budget's stop line and the hint joined to it: the stop (what was
spent and the next watch interval's charge passing the cap, `decider.budget_verdict`) and
what gives the job enough (`caps.enough`) read each amount at the one precision chosen
from all the amounts the line shows (`line_places`): '$0.0478 spent + ... would
pass the budget of $0.08; give it enough: ... ($0.0478 spent + ...', never '$0.05 spent'
in one half and '$0.0478 spent' in the other; a cleanly round line keeps two decimals."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING

from costsched import amounts, own_budget
from costsched.measured import MEASURING
from costsched.model import InvalidInput

if TYPE_CHECKING:
    from costsched.rest_cost import RestCost
    from costsched.service.jobs.budget_refusal import BudgetShort
    from costsched.service.jobs.budget_state import BudgetState
    from costsched.service.jobs.runs import RunningJob


def stop_why(state: BudgetState, job_id: int, charged: float, claims: float, span: str,
             start_usd: float = 0.0, least: int = 2) -> str | None:
    """Why the watch stops job `job_id` at `state`'s cap (`decider.budget_verdict`: what
    was spent, the next interval's `charged`, the earlier jobs' `claims`), or None; at the
    precision of the line `status` joins to it, its own budget's hint that gives it enough
    (`line_places`, from the figures the hint will show: its spend, its rest as the budget
    forecasts it, its start, `start_usd`, and the same charge ahead), no fewer decimals
    than `least` (those its threshold notices read its spend at)."""
    from costsched.service.jobs.decider import budget_verdict

    rest = state.to_end_usd.get(job_id, math.nan) if state.kind == "job" else math.nan
    places = line_places(state.spent_usd, charged, claims, state.usd, rest, start_usd,
                         charged, least)
    return budget_verdict(state.name, state.spent_usd, charged, state.usd, claims, span,
                          places)


def charged_per_hour(state: BudgetState, job_id: int, interval_seconds: float) -> float:
    """The price per hour (all its nodes) the job's charge ahead is at."""
    seconds = state.ahead_seconds.get(job_id, interval_seconds)
    return state.next_usd.get(job_id, 0.0) * 3600 / seconds if seconds > 0 else 0.0


def span_words(state: BudgetState, ahead: Mapping[int, float], interval_seconds: float,
               configured: float) -> str:
    """The spans the jobs' charge `ahead` covers and at what price, in words, one part per
    span ('30 s at $1.00/h + 2 s, to its end at its pace, at $0.50/h'): each part
    multiplies out to its share of the charge."""
    spans: dict[float, float] = {}
    for j in ahead:
        seconds = state.ahead_seconds.get(j, interval_seconds)
        spans[seconds] = spans.get(seconds, 0.0) + charged_per_hour(state, j, interval_seconds)
    if not spans:
        return own_budget.ahead_said(interval_seconds, 0.0, configured)
    return " + ".join(own_budget.ahead_said(seconds, price, configured,
                                            rest=seconds < interval_seconds)
                      for seconds, price in sorted(spans.items(), reverse=True))


def restart_usd(run: RunningJob | None, usd_per_hour: float) -> float:
    """What starting job `run` again from its checkpoint is expected to cost at
    `usd_per_hour` (all its nodes): its restart's hours at it; 0 where its spec does not
    resolve."""
    if run is None:
        return 0.0
    try:
        return float(run.resolved.restart_hours) * usd_per_hour
    except InvalidInput:  # its stored spec does not resolve now
        return 0.0


def line_places(spent_usd: float, next_usd: float, claims_usd: float, cap_usd: float,
                rest_usd: float = math.nan, start_usd: float = 0.0,
                ahead_usd: float = 0.0, least: int = 2) -> int:
    """The one precision of a line that joins a budget's stop (`spent_usd` + `next_usd` +
    `claims_usd` passing `cap_usd`; NaN: no stop in the line) and the hint that gives the
    job enough (its spend, its rest `rest_usd`, its start `start_usd` and the charge ahead
    `ahead_usd`, against the budget that holds them, `own_budget.enough_usd`; a rest not
    priced, NaN: no budget is said), chosen once from all of them: the fewest decimals,
    from those its amounts need (`amounts.decimals`: two for a cleanly round line, more for
    an amount under a cent), no fewer than `least`, at which the stop's amounts, summed as
    written, read past the cap (`amounts.apart`) and the hint's parts as written read no
    more than the budget given for them ('$0.015' four times beside '--budget 0.07', never
    '$0.02' four times); where none makes the parts read within it, those at which the
    cap reads passed."""
    stop = [spent_usd, next_usd, claims_usd]
    passes = own_budget.passes(stop, cap_usd)  # (NaN: no stop)
    hint = [spent_usd, start_usd, ahead_usd]
    budget = None
    if math.isfinite(rest_usd):
        hint.append(rest_usd)
        budget = own_budget.enough_usd(spent_usd, rest_usd, start_usd, ahead_usd)[0]
    least = max(least, amounts.decimals([*stop, cap_usd, *hint]))
    for places in range(least, amounts.COMPARED_MOST + 1):
        if (not passes or amounts.apart(stop, cap_usd, places) == places) and (
                budget is None
                or not amounts.sum_as_written(hint, places) > budget + amounts.NOISE):
            return places
    return amounts.apart(stop, cap_usd, least) if passes else least


def short_places(short: BudgetShort, rest_usd: float, start_usd: float,
                 ahead_usd: float, least: int = 2) -> int:
    """The one precision of a refusal that joins `short`'s words (its cost against what
    is left, its spend) and the hint that gives it enough (`line_places`): the fewest
    decimals, no fewer than `least`, at which both read honest, so that its spend reads
    alike in both."""
    places, seen = least, -1
    while places != seen:  # each half's need at least the other's, until they agree
        seen = places
        places = line_places(short.budget.spent_usd, 0.0, 0.0, math.nan, rest_usd,
                             start_usd, ahead_usd, least=short.places(places))
    return places


def enough(name: str, spent_usd: float, rest_usd: float, steps_left: float,
           start_usd: float, ahead_usd: float, start_said: str = "",
           paced: str | None = None, judging: bool = False,
           places: int | None = None, ahead_seconds: float = math.nan,
           interval_seconds: float = math.nan, parts: RestCost | None = None) -> str:
    """What gives job `name` the own budget it needs to start again and finish
    (`enough_usd`), as `costsched start NAME --budget USD` takes it, its parts itemised and
    its start's source said (`start_said`); its rest not priced (NaN): more than the
    others. `paced`: the pace its rest is priced at, in words ('its own 11.7 steps/s (...)');
    None: at its plan's speed, marked `*` and said so (`judging`: as its speed is still
    being measured). `places`: the precision of the line it is joined to (`line_places`:
    its amounts' own by default). `ahead_seconds`: the span of the charge ahead (of the
    watch's `interval_seconds`), where known: said where it is the job's rest, with the
    room that charge leaves its rest to run slower than at its pace (`own_budget.room`).
    `parts`: those of `rest_usd` where known, itemised after the amount's own parts
    ('its steps left: $0.0400 (0.0167 h of work at $2.4000/h)': `rest_cost`)."""
    source = f"; {start_said}" if start_said and start_usd > 0 else ""
    if places is None:
        places = line_places(spent_usd, 0.0, 0.0, math.nan, rest_usd, start_usd, ahead_usd)
    if rest_usd != rest_usd:  # its rest cannot be priced: no amount can be shown enough
        spent, start, ahead = (amounts.usd(v, places) for v in (spent_usd, start_usd, ahead_usd))
        started = f" + {start} to start it" if start_usd > 0 else ""
        return (f"give it more than {spent} spent{started} + {ahead} for the next watch "
                f"interval: `costsched start {name} --budget USD`{source}")
    amount, digits = own_budget.enough_usd(spent_usd, rest_usd, start_usd, ahead_usd)
    spent, rest, start, ahead = (amounts.usd(v, places)
                                 for v in (spent_usd, rest_usd, start_usd, ahead_usd))
    started = f" + {start} to start it" if start_usd > 0 else ""
    at_pace = f" at {paced}" if paced is not None else ""
    why = MEASURING if judging else "it has logged no steps of its own yet"
    planned = "" if paced is not None else f"; *: at its plan's speed, as {why}"
    rest += "" if paced is not None else "*"
    shown = [spent, rest, start] if start_usd > 0 else [spent, rest]
    rounded = _rounded_up([*shown, ahead], amount, digits)
    slack = _slack_seconds(amount, digits, ahead_usd, ahead_seconds,
                           spent_usd, rest_usd, start_usd)
    span = (f" ({ahead_seconds:g} s, to its end at its pace)"
            if ahead_seconds < interval_seconds else "")
    return (f"give it enough: `costsched start {name} --budget {amount:.{digits}f}` ({spent} "
            f"spent + {rest} expected for its {steps_left:,.0f} steps left{at_pace}{started} "
            f"+ {ahead} for the next watch interval{span}{rounded})"
            f"{_itemised(parts, places, paced is None)}{_room(ahead_seconds, slack)}"
            f"{source}{planned}")


def _itemised(rest: RestCost | None, places: int, planned: bool) -> str:
    """'; its steps left: $0.0400 (ITEMS)': the parts of the hint's rest (`rest`, at the
    line's `places`; marked `*` where `planned`, at its plan's speed); '' where not known."""
    return "" if rest is None else f"; its steps left: {rest.said(places, '*' if planned else '')}"


def _slack_seconds(amount: float, digits: int, ahead_usd: float, ahead_seconds: float,
                   *parts: float) -> float:
    """The seconds at the price of the charge ahead (`ahead_usd` over `ahead_seconds`)
    that the hint's `amount` (at `digits`) holds beyond its exact parts (`parts` and the
    charge ahead): what its rounding up adds; 0 where that price is not known."""
    if not ahead_seconds > 0 or not ahead_usd > 0:
        return 0.0
    slack = float(f"{amount:.{digits}f}") - sum(parts) - ahead_usd
    return max(slack, 0.0) * ahead_seconds / ahead_usd


def _room(ahead_seconds: float, slack_seconds: float = 0.0) -> str:
    """What the charge ahead a hint gives (its span, `ahead_seconds`; NaN: not known) and
    what its rounding up adds (`slack_seconds`, at the same price) leave for a rest slower
    than its pace, in words, with where the seconds come from (`own_budget.room`)."""
    if ahead_seconds != ahead_seconds:
        return ""
    room = own_budget.room(ahead_seconds + slack_seconds)
    if room < 1:
        return "; that amount holds its rest as priced, not slower"
    said = f"; that amount also holds its rest taking about {room:g} s longer than priced"
    if slack_seconds < 1:
        return said
    # Whole seconds that add up as written: the margins take the fractions.
    ahead, added = math.floor(ahead_seconds), round(slack_seconds)
    return (f"{said} ({ahead:g} s charged ahead + {added:g} s its rounding up adds, less "
            f"{ahead + added - room:g} s of the watch's margins)")


def _rounded_up(parts: Sequence[str], amount: float, places: int) -> str:
    """'; their exact sum rounded up to the cent' when the parts as written (`parts`:
    '$1.00', '$4.50*') do not add to the amount given (`amount` at `places`), which is
    their exact sum rounded up; '' when they do."""
    written = sum(Decimal(p.rstrip("*").lstrip("<$").replace(",", "")) for p in parts)
    if written == Decimal(f"{amount:.{places}f}"):
        return ""
    unit = "the cent" if places == 2 else f"{places} decimals"
    return f"; their exact sum rounded up to {unit}"


_SPENT = re.compile(r"\$[\d,]*\.(\d+) spent")


def spent_places(stop: str) -> int:
    """The decimals a stop's line (`stop_why`, as recorded) reads its spend at ('$0.0478
    spent': 4), so that a figure `status` sets beside it (what is left now) reads alike;
    2 where it names none."""
    found = _SPENT.search(stop)
    return len(found.group(1)) if found else 2
