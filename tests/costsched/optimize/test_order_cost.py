"""What an `ordered:` preference costs, written as the plan's table writes the figures it
is read against."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

from costsched import service
from costsched.amounts import derived_per_hour
from costsched.optimize.planner import order_cost

ORDERED = Path(__file__).resolve().parents[2] / "fixtures" / "skypilot" / "corpus" / \
    "07-ordered.yaml"
NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)


def test_an_hour_of_assumed_work_reads_as_the_tables_rate(tmp_path: Path) -> None:
    """A task without its work is planned per hour of work: the table's figures are rates
    ($0.7230 per work-hour, four decimals); the note says so at theirs, not '$0.72', and
    its difference is that of the rates as written."""
    result = service.plan(str(tmp_path / "empty.sqlite"), ORDERED, at=NOW)
    plan = result.jobs[0]
    assert plan.job.work is not None and plan.job.work.assumed
    first = plan.choices.iloc[0]
    cheapest = plan.choices.loc[plan.choices["expected_cost"].idxmin()]
    note = order_cost(plan)
    rate, least = (derived_per_hour(first["expected_cost"]),
                   derived_per_hour(cheapest["expected_cost"]))
    assert f"costs {rate} per hour of work on 1xT4, " in note  # the slower GPU of the task
    assert note.endswith(f", {least})")
    more = re.search(r", \$([0-9.]+) more than", note)
    assert more is not None
    assert round(float(rate[1:]) - float(least[1:]), 4) == float(more.group(1))
