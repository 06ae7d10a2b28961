"""A running job whose budget's forecast passes its cap, said while it runs: once, where
the job's state is said (`status`'s job lines, `status --json`'s `over_cap`, the dashboard
from it), from the figures of the Budgets table (`caps.BudgetState`: its forecast, spent,
the next watch interval's charge and the job's cost to its end), at the table's precision.

Where it is stopped: at the first watch where what it spent and the watch's charge for its
next interval would pass the cap (`caps.enforce`), so between the share of its steps that
the cap's room left now (cap less spent and that charge) pays of its cost to its end and
the share the cap less spent alone pays, its rest at its price now."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from costsched.amounts import given, usd
from costsched.report.budgets_now import figure_places
from costsched.store.job_rows import JobRecord

if TYPE_CHECKING:
    from costsched.service.jobs.caps import BudgetState
    from costsched.service.jobs.statuses import JobStatus


def places(states: Sequence[BudgetState], spent_places: int | None = None) -> int:
    """The decimals its forecast is written at: the Budgets table's (`figure_places`)."""
    return figure_places(states, spent_places)


def stop_share(state: BudgetState, job_id: int,
               progress: float | None) -> tuple[float, float] | None:
    """The shares of job `job_id`'s steps done between which its budget's cap stops it,
    from its share done now (`progress`): from where its spend and the next watch
    interval's charge reach the cap to where its spend alone does, as the stop comes at
    the first watch past the first (the cap is checked at each watch, not in between);
    None where it cannot be told (its progress or its cost to its end not known, or other
    running jobs of the budget spend its room too)."""
    rest = state.to_end_usd.get(job_id, 0.0)
    if progress is None or len(state.running) != 1 or not 0 < rest < float("inf"):
        return None

    def share(room: float) -> float:
        return min(max(progress + (1 - progress) * max(room, 0.0) / rest, progress), 1.0)

    room = state.usd - state.spent_usd
    return share(room - state.next_usd.get(job_id, 0.0)), share(room)


def said(states: Sequence[BudgetState], record: JobRecord, progress: float | None,
         at_cap: str, spent_places: int | None = None) -> str:
    """The line for running job `record` (its share done `progress`; `at_cap`: what its
    cap does to it, `caps.at_cap_of`) when the forecast of a budget it runs in passes the
    cap (its own first); '' when none does (or its forecast cannot be priced)."""
    over = [s for s in states if record.id in s.running and s.forecast_usd > s.usd]
    if not over:
        return ""
    state = over[0]
    shown = places(states, spent_places)  # the Budgets table's, the cap's too: one line
    forecast = usd(state.forecast_usd, shown)
    own = state.kind == "job"
    budget = f"its budget of {given(state.usd, shown)}" if own else \
        f"budget {state.name}'s cap of {given(state.usd, shown)}"
    share = stop_share(state, record.id, progress)
    # Its rest priced as now (at its speed measured so far, else its plan's): said so.
    first, last = share or (None, None)
    where = ("before its end" if share is None else
             f"at about {first:.0%} of its steps" if f"{first:.0%}" == f"{last:.0%}" else
             f"at between about {first:.0%} and {last:.0%} of its steps (the cap is checked "
             "at each watch; its rest priced as now)")
    more = (f"`costsched start {record.name} --budget USD` after its stop" if own else
            f"raise budgets.named.{state.name}.usd in the configuration")
    stop = f"it will be stopped {where} unless given more ({more})"
    if at_cap == "move":  # weighed at every check from now (`cap_move.move_ahead`)
        return (f"forecast {forecast} passes {budget}: it is moved where its rest, the "
                f"move included, fits what is left, once a move does (at_cap: move); "
                f"else {stop}")
    return f"forecast {forecast} passes {budget}: {stop}"


def of_status(s: JobStatus, states: Sequence[BudgetState] | None,
              spent_places: int | None = None) -> str:
    """`said` of the job a look shows (`JobStatus`), its cap's action as configured
    (`caps.at_cap_of`, the effective configuration's); '' without budgets read."""
    if not states or s.record.state != "running":
        return ""
    from costsched.config import effective
    from costsched.service.jobs.caps import at_cap_of

    return said(states, s.record, s.progress,
                at_cap_of(s.record.spec, effective().budgets), spent_places)
