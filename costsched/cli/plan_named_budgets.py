"""`plan`'s words for the named budgets its jobs join (`constraints.budget_name`, or the
labels a budget of the configuration names): what is left of each against what its jobs
are expected to cost, by the rule `launch` checks them by (`budget_launch.left_now`), so
that a plan `launch` would refuse says so before the launch."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from costsched.amounts import decimals_kept, given, total_as_written, usd
from costsched.jobspec import JobSpec
from costsched.optimize.planner import JobPlan
from costsched.store import PriceStore
from costsched.vocabulary import counted


def named_budget_lines(store: PriceStore, specs: Sequence[tuple[str, JobSpec]],
                       jobs: Sequence[JobPlan], at: datetime) -> list[tuple[str, bool]]:
    """A line per named budget the planned `jobs` join ('budget sweepcap: $0.004 left; the
    4 jobs planned in it are expected to cost $0.0808 ($0.0202 the most): launch refuses
    them; raise ...'), each with whether launch refuses one of them (expected to cost more
    than what is left, as `launch` checks each)."""
    from costsched.config import effective

    config = effective()
    if not config.budgets.named:  # (most plans: the launch's modules stay unloaded)
        return []
    from costsched.service.jobs.budget_launch import left_now
    from costsched.service.jobs.caps import budget_states, joins, named_fix

    stored = {spec.name: {"spec": spec.model_dump(mode="json")} for _, spec in specs}
    costs = {p.job.name: float(p.best["expected_cost"]) for p in jobs if p.best is not None}
    states = {s.name: s for s in budget_states(store, config.budgets, at,
                                               config.daemon.watch_seconds)}
    lines = []
    for name, budget in config.budgets.named.items():
        members = [n for n, s in stored.items() if n in costs and joins(s, name, budget)]
        if not members:
            continue
        left = left_now(states[name]) if name in states else budget.usd
        each = [costs[n] for n in members]
        places = decimals_kept([*each, left])  # as launch's budget line writes them
        total, most = total_as_written(each, places), max(each)  # its rows as they read
        one = len(members) == 1
        said = (f"budget {name}: {given(left, places)} left; the "
                f"{counted(len(members), 'job')} planned in it {'is' if one else 'are'} "
                f"expected to cost {usd(total, places)}"
                + ("" if one else f" ({usd(most, places)} the most)"))
        refused = sum(c > left for c in each)
        if refused:
            whom = ("it" if one else "them" if refused == len(members)
                    else f"{refused} of them")
            lines.append((f"{said}: launch refuses {whom}; {named_fix(name, budget.period)}",
                          True))
        elif total > left:
            lines.append((f"{said}, more than is left together: the budget's cap acts once "
                          "they have spent it", False))
        else:
            lines.append((f"{said}: {'it fits' if len(members) == 1 else 'they fit'}", False))
    return lines
