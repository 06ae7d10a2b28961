"""Where a budget's line states what the rest of a job costs, it says where that figure
comes from in the same line: its work in hours at the price of the offering it would run
on, what the decision model expects preemptions to add, and its start, the parts adding
up as written to the figure (`rest_cost`). A budget stop's hint (as `status` shows it), a
start refused at its budget, a launch's line and a move at a cap; and the amount the hint
names is enough: following it, the start is accepted. In-memory launcher, SQLite store."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

import pytest

from costsched.config import BudgetsConfig
from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.service.jobs import caps
from costsched.service.jobs.budget_launch import launch_fits
from costsched.service.jobs.budget_start import start_commands
from costsched.store import PriceStore
from tests.costsched.service.test_budget_move_ahead import OVERHEADS, _cheaper_after_launch
from tests.costsched.service.test_budget_over_cap import WATCH
from tests.costsched.service.test_budget_start_rule import launched, stop_at_cap  # noqa: F401
from tests.costsched.test_rest_cost import itemised

# A cloud's launcher: the instance boots, and the rest counts that start.
pytestmark = pytest.mark.usefixtures("cloud_launcher")

# The job (`launched`): an hour of work at $1/h on spot (its preemptions priced at the
# default rate), a budget of $5, its restart 15 min and the copy of its 1 GB checkpoint.
PRICE = 1.0
# '`costsched start rule --budget 1.31` ($0.00000 spent + $1.04366* expected for its 3,600
# steps left + $0.25222 to start it + $0.00833 for the next watch interval'
_HINT = re.compile(r"`costsched start rule --budget (?P<amount>[0-9.]+)` \(\$[0-9.]+ spent \+ "
                   r"\$(?P<rest>[0-9.]+)\*? expected for its [0-9,]+ steps left "
                   r"\+ \$(?P<start>[0-9.]+) to start it")


def _hint_adds_up(line: str) -> Decimal:
    """The hint's amount, after checking that its rest is itemised in the line (its work
    and what preemptions add, at the offering's price) and that the parts add up to the
    rest as the hint writes it."""
    found = _HINT.search(line)
    assert found, line
    total, parts = itemised(line, after="; its steps left: ")
    assert total == Decimal(found["rest"]), line  # the hint's own figure, itemised
    assert set(parts) == {"of work", "of restarts and work done again"}, line
    assert parts["of work"] == pytest.approx(Decimal(PRICE), abs=Decimal("0.0001"))  # 1 h
    assert parts["of restarts and work done again"] > 0  # spot: preemptions priced
    return Decimal(found["amount"])


def test_a_budget_stop_s_hint_itemises_the_rest_and_its_amount_starts_the_job(
        store: PriceStore, launched, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    launcher, job, _ = launched
    stop_at_cap(store, launcher, job, monkeypatch)
    record = store.jobs.get(job)
    assert record.state == "stopped"
    # The one command `status` gives it under its stop line.
    [hint] = start_commands(store, launcher, [record], datetime.now(timezone.utc)).values()
    amount = _hint_adds_up(hint)
    assert service.start(store, launcher, job, budget=float(amount)).state == "running"


def test_a_refused_start_itemises_the_rest_and_the_amount_it_names_is_accepted(
        store: PriceStore, launched) -> None:  # noqa: F811
    launcher, job, _ = launched
    service.stop(store, launcher, job)
    with pytest.raises(InvalidInput) as refused:
        service.start(store, launcher, job, budget=1.1)
    said = str(refused.value)
    assert said.startswith(f"job {job} (rule) is at its budget: its 3,600 steps left and its "
                           "start are expected to cost $"), said
    amount = _hint_adds_up(said)
    places = -amount.as_tuple().exponent
    with pytest.raises(InvalidInput):  # less than the amount named: refused
        service.start(store, launcher, job, budget=float(amount - Decimal(1).scaleb(-places)))
    assert service.start(store, launcher, job, budget=float(amount)).state == "running"


def test_a_launch_s_expected_cost_is_itemised_with_its_start(
        store: PriceStore, launched) -> None:  # noqa: F811
    _, _, spec = launched
    tight = spec.with_name("tight.yaml")
    tight.write_text(spec.read_text().replace("name: rule", "name: tight")
                     .replace("budget: 5", "budget: 1"))
    [fit] = launch_fits(store, [tight], BudgetsConfig(), datetime.now(timezone.utc))
    line = fit.line()
    assert not fit.fits and line.startswith("job tight: expected $"), line
    total, parts = itemised(line)
    assert float(total) == round(fit.expected_usd, 2)  # the plan's figure, itemised
    assert float(parts["to start it"]) == round(fit.start_usd, 2)
    assert "; its start: 0.25 h to get an instance up" in line, line


def test_a_move_weighed_at_a_cap_itemises_its_rest_where_it_runs(
        store: PriceStore, tmp_path: Path) -> None:
    job_id, launcher, at = _cheaper_after_launch(store, tmp_path, "move")
    events = caps.enforce(store, launcher, BudgetsConfig(), at, WATCH, OVERHEADS)
    [moved] = [e for e in events if "moved at its own budget" in e]
    total, parts = itemised(str(moved), after="passes the budget of ")
    assert f"${total} (" in str(moved) and " to finish here; " in str(moved), moved
    assert list(parts) == ["of work"]  # its work at its pace there, at its price
