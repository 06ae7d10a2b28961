"""A move the user names (`migrate --to`) against the named (team) budgets the job joins:
the rule its own budget holds it to (`move._past_budget`), what the budget spent in its
period, the job's rest there expected to cost (the move included) and the watch's charge
ahead there for its next interval, with what the budget's other running jobs are committed
to for theirs, must fit under the budget's cap. Said in the same one line, naming the
budget, what it spent, its cap and what gives it more (`caps.named_fix`)."""

from __future__ import annotations

from datetime import datetime

from costsched import own_budget
from costsched.amounts import decimals_kept, given, usd
from costsched.service.decide import Decision
from costsched.service.jobs.caps import budget_states, joins, named_fix
from costsched.service.jobs.runs import RunningJob
from costsched.service.jobs.watch_span import watch_span
from costsched.store import PriceStore

_PERIOD = {"day": " a day", "month": " a month"}  # else " in total"


def past_named(store: PriceStore, run: RunningJob, choice: Decision, at: datetime) -> str:
    """Why a named budget the job joins forbids the move `choice` the user asked for, and
    what gives it more ('' when the job joins none, or the move fits every one it joins);
    the first such budget, in the configuration's order."""
    if not choice.moves:
        return ""
    from costsched.config import effective

    config = effective()
    named = config.budgets.named
    if not any(joins(run.record.spec, n, b) for n, b in named.items()):
        return ""
    configured = config.daemon.watch_seconds
    seconds = watch_span(store, configured, at)  # as the watch will charge it
    per_hour = choice.usd_per_hour * run.nodes  # (all its nodes)
    ahead, span = charged_there(choice, per_hour, seconds, configured)
    job_id = run.record.id
    for state in budget_states(store, config.budgets, at, seconds):
        if state.kind != "named" or job_id not in state.jobs:
            continue
        # (its own next interval where it runs now is what the move replaces)
        others = max(state.committed_usd - state.next_usd.get(job_id, 0.0), 0.0)
        if state.spent_usd + choice.choice_usd + ahead + others <= state.usd:
            continue
        shown = decimals_kept([state.spent_usd, choice.choice_usd, ahead, others])
        spent, there, charged, claimed = (usd(v, shown) for v in (
            state.spent_usd, choice.choice_usd, ahead, others))
        also = (f" + {claimed} its other running jobs are committed to for theirs"
                if others > 0 else "")
        return (f"{spent} spent + {there} expected there, the move included, + {charged} "
                f"for the next watch interval "
                f"({span})"
                f"{also} would pass budget {state.name}'s {given(state.usd, shown)}"
                f"{_PERIOD.get(state.period, ' in total')}; to move it there, "
                f"{named_fix(state.name, state.period)}")
    return ""


def charged_there(choice: Decision, usd_per_hour: float, interval_seconds: float,
                  configured: float) -> tuple[float, str]:
    """What the watch charges a job moved by `choice` ahead at `usd_per_hour` there (all
    its nodes), and that span in words, as the watch charges it once there
    (`own_budget.charged_ahead`): the next interval, or its rest there (its expected cost
    there less the move's, at that price) where that is shorter."""
    moving = float(choice.move.total) if choice.move is not None else 0.0
    rest = own_budget.rest_seconds(choice.choice_usd - moving, usd_per_hour)
    return own_budget.charged_ahead(usd_per_hour, interval_seconds, rest, configured)
