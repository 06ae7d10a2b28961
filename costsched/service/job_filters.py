"""Which jobs a look at them shows, by label and by budget: `costsched status --label
LABEL=VALUE --budget NAME` and the dashboard's jobs page and /api/jobs (`?label=LABEL=VALUE&
budget=NAME`) filter with this one definition.

A job carries a label when its task says `labels: {KEY: VALUE}`. A job is in budget NAME
when it joins it as the budget caps count it (`costsched.service.jobs.caps.joins`): by
`constraints.budget_name: NAME`, or by carrying every label the configured budget
`[budgets.named.NAME]` lists.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from costsched.model import InvalidInput

if TYPE_CHECKING:  # imported when used: `status` checks its options before pandas loads
    import pandas as pd

    from costsched.config import NamedBudget


@dataclass(frozen=True)
class JobFilter:
    """Jobs carrying every one of `labels` and, when `budget` is set, in that budget
    (`named`: the configured named budgets, which say the labels that join one)."""

    labels: Mapping[str, str] = field(default_factory=dict)
    budget: str | None = None
    named: Mapping[str, NamedBudget] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.labels and not self.budget

    def matches(self, stored: Mapping) -> bool:
        """Whether the job whose stored record spec is `stored` passes."""
        from costsched.config import NamedBudget
        from costsched.service.jobs.caps import joins

        spec = (stored.get("spec") or {}) if isinstance(stored, Mapping) else {}
        carried = (spec.get("task") or {}).get("labels") or {}
        if any(carried.get(k) != v for k, v in self.labels.items()):
            return False
        if self.budget:
            budget = self.named.get(self.budget) or NamedBudget(usd=1)  # joined by name only
            return joins(stored, self.budget, budget)
        return True

    def select(self, jobs: pd.DataFrame) -> pd.DataFrame:
        """The rows of `jobs` (a job store listing, with its `spec` column) that pass."""
        if self.empty or jobs.empty:
            return jobs
        return jobs[[self.matches(s) for s in jobs["spec"]]]


def job_filter(labels: Iterable[str] = (), budget: str | None = None, *,
               named: Mapping[str, NamedBudget] | None = None,
               where: str = "--label") -> JobFilter:
    """A JobFilter from `LABEL=VALUE` strings (`where`: the option or field they came from,
    named in the one-line refusal of a malformed one) and a budget name. `named`: the
    configured named budgets (default: those of the configuration in effect, read only
    when a budget is asked for)."""
    wanted = parse_labels(labels, where)
    budget = (budget or "").strip() or None
    if budget and named is None:
        from costsched.config import effective

        named = effective().budgets.named
    return JobFilter(wanted, budget, dict(named or {}))


def budget_names(specs: Iterable[Mapping], named: Mapping[str, NamedBudget]) -> list[str]:
    """The budget names a filter can ask for: the configured named budgets, and those the
    jobs whose stored record specs are `specs` name (constraints.budget_name)."""
    found = set(named)
    for stored in specs:
        spec = (stored.get("spec") or {}) if isinstance(stored, Mapping) else {}
        name = (spec.get("constraints") or {}).get("budget_name")
        if isinstance(name, str) and name:
            found.add(name)
    return sorted(found)


def parse_states(values: Iterable[str], where: str = "--state") -> list[str]:
    """Job states as views show them (`model.SHOWN_STATES`: `finishing` and `failing`
    too) in their spelling (any case, '-' or '_'), or one line naming the first that is
    none, the states and the close ones."""
    from costsched.model import SHOWN_STATES
    from costsched.vocabulary import choose

    states, error = choose(values, SHOWN_STATES)
    if error is not None:
        raise InvalidInput(f"{where} {error}")
    return states


def parse_labels(labels: Iterable[str], where: str = "--label") -> dict[str, str]:
    """`LABEL=VALUE` strings as a mapping; a malformed one is refused in one line."""
    wanted: dict[str, str] = {}
    for text in labels:
        key, sep, value = str(text).partition("=")
        if not sep or not key.strip():
            raise InvalidInput(f"{where} {text!r}: expected LABEL=VALUE, e.g. team=vision")
        wanted[key.strip()] = value.strip()
    return wanted
