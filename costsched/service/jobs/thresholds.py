"""A budget's threshold notices (`budgets.thresholds`), said once per budget amount, share
and period, logged on the budget's newest job.

A warning share under the cap (`budget_notes.WARNING_SHARE` up to, not including, 100%)
is said ahead, as the cap's stop is decided ahead: at the check whose spend plus its
running jobs' charge for the next watch interval (`BudgetState.committed_usd`, their pace
over it) reaches the share while the spend is still short of it ('its budget will reach
80% of $0.0500 (total) by the next check: $0.0376 of $0.0500 spent + $0.0108 for the
next watch interval'), so that a user has that interval to act before the spend passes
it. Where the spend is past it before any check foresaw it (the job started between two
checks, a check came late, its pace rose, or the same check stops it), the notice says
it is late. A check that stops one of the budget's jobs at its cap says no forecast: its
stop line says what happens instead. Other shares (news, and the cap itself, which the
stop line says ahead) are said once the spend passes them.

Each notice reads its amounts at one precision, and a stop at the cap of one of the
budget's jobs reads its spend at no fewer decimals than that job's notices did
(`spent_places`), so that its spend reads alike in both lines of its log."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from costsched import amounts
from costsched.service.jobs.budget_notes import WARNING_SHARE, threshold_level
from costsched.service.jobs.budget_periods import period_start
from costsched.service.jobs.budget_state import BudgetState
from costsched.service.jobs.runs import JobEvent
from costsched.store import PriceStore

LATE = "late: no earlier check foresaw it"


def notices(store: PriceStore, state: BudgetState, shares: Sequence[float], at: datetime,
            *, stopping: bool = False) -> list[JobEvent]:
    """A notification of the highest threshold the budget passed, or of the highest
    warning share its next watch interval's charge will take it to (not when `stopping`:
    this check stops one of its jobs at its cap), where it was not said yet: a pass whose
    spend crossed several at once says the highest alone, and a lower one is not said
    after a higher one (a forecast of 80% said, a later 50% is not). None once no job of
    the budget runs: its jobs ended, nothing is left to warn of."""
    spent, cap = state.spent_usd, state.usd
    if not state.running:
        return []
    passed = [s for s in shares if spent >= s * cap]
    coming = [] if stopping else [s for s in shares if _foreseen(s) and s not in passed
                                  and spent + state.committed_usd >= s * cap]
    if not state.jobs or not (passed or coming):
        return []
    share = (coming or passed)[-1]
    owner = state.jobs[-1]
    called = "its budget" if state.kind == "job" else f"budget {state.name}"
    start = period_start(state.period, at)
    period = f"({state.period})" if start is None else f"({state.period} from {start:%Y-%m-%d})"
    said = [str(e.detail) for e in store.jobs.event_rows([owner], kinds=["budget"])]
    if any(_said_of(line, called, state.name, f"{higher:.0%}", period, cap) for line in said
           for higher in shares if higher >= share):
        return []
    ahead = state.committed_usd if coming else 0.0
    # The spend at the decimals at which it reads past each threshold it passed and short
    # of each it did not ('$0.0775 of $0.10', never '$0.08': 80%, not reached yet), and a
    # forecast's spend and charge ahead, summed as written, reading the share reached.
    places = max([amounts.decimals_kept([spent, cap, *([ahead] if coming else [])]),
                  *(amounts.apart(spent, s * cap) for s in shares),
                  *([amounts.apart([spent, ahead], share * cap)] if coming else [])])
    # The budget at the line's precision: one line, one precision.
    budget = amounts.given(cap, places)
    spend = f"{amounts.usd(spent, places)} of {budget} spent"
    if coming:
        text = (f"{called} will reach {share:.0%} of {budget} {period} by the next check: "
                f"{spend} + {amounts.usd(ahead, places)} for the next watch interval")
    else:
        text = f"{called} reached {share:.0%} of {budget} {period}: {spend}"
        text += f"; {LATE}" if _foreseen(share) else ""
    store.jobs.note(owner, "budget", text, at=at)
    return [JobEvent(owner, "budget", text, level=threshold_level(share), notify="budget")]


def _foreseen(share: float) -> bool:
    """Whether a threshold at `share` is said ahead of the spend (a warning under the cap)."""
    return WARNING_SHARE <= share < 1


def _said_of(line: str, called: str, name: str, share: str, period: str,
             usd: float) -> bool:
    """Whether `line` is a threshold's notice of `share` in `period` of the budget `usd`
    ('its budget reached 50% of $0.10 (total): ...', 'its budget will reach 80% of ...',
    'reached NAME 50% of ...'), written at whatever decimals (the budget as it reads at
    them)."""
    found = re.match(rf"(?:{re.escape(called)} (?:reached|will reach)|reached "
                     rf"{re.escape(name)}) {re.escape(share)} of \$([\d,.]+) "
                     rf"{re.escape(period)}", line)
    if found is None:
        return False
    written = found.group(1).replace(",", "")
    places = len(written.partition(".")[2])
    return amounts.as_written(usd, places) == float(written)


_SPENT = re.compile(r"\$[\d,]*\.(\d+) of \$[\d,.]+ spent")


def spent_places(store: PriceStore, job_id: int, state: BudgetState) -> int:
    """The most decimals job `job_id`'s threshold notices of `state`'s budget read its
    spend at ('$0.0480 of $0.05 spent': 4), so that its stop at that cap reads its spend
    alike; 2 where it has none."""
    called = "its budget " if state.kind == "job" else f"budget {state.name} "
    found = [len(m.group(1)) for e in store.jobs.event_rows([job_id], kinds=["budget"])
             if str(e.detail).startswith(called) and (m := _SPENT.search(str(e.detail)))]
    return max(found, default=2)
