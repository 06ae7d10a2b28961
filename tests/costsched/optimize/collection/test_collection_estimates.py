"""A collection's refusals (a sweep planned together) mark a cost or hours that rest on an
estimated speed and name the `throughputs:` key that gives the measured one, as a single
job's refusals do (`unmatched_estimates`); figures on given speeds are not marked."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest

from costsched.jobspec import parse, resolve
from costsched.optimize.collection import plan_collection_shared
from costsched.optimize.collection.build import plan_collection
from costsched.optimize.planner import prepare
from costsched.prices import prices_at
from costsched.throughput import ThroughputTable

AT = datetime(2020, 3, 1, tzinfo=timezone.utc)
# The key of the estimated GPU, as the single job's refusal names it.
K80_KEY = r"`throughputs: \{(\"K80:\d+\"|K80): STEPS_PER_S\}` in sweep\.yaml"


def _sweep(n: int = 2, **constraints: object) -> list:
    """`n` jobs of one file: 400,000 steps at 5 steps/s given on a V100."""
    return [resolve(parse({"name": f"lr{i}", "run": "true", "throughputs": {"V100": 5.0},
                           "steps": 400_000, "constraints": constraints}),
                    ThroughputTable(), AT, source="sweep.yaml") for i in range(n)]


@pytest.fixture(scope="module")
def offerings(recorded_store):  # noqa: ANN001, ANN201
    return prepare(prices_at(recorded_store, AT))


@pytest.mark.parametrize("place", [plan_collection, plan_collection_shared])
def test_a_budget_short_on_an_estimated_speed_is_marked(offerings, place) -> None:  # noqa: ANN001
    plan = place(_sweep(gpu_models=["K80"]), offerings, "cost", budget_usd=0.5)
    [reason] = plan.reasons
    assert re.fullmatch(r"budget: the cheapest placement( on shared instances)? that meets "
                        r"every quota costs \$[\d.,]+\*, \$[\d.,]+\* more than the budget of "
                        r"\$0\.50 \(\* from an estimated speed on \d+xK80: " + K80_KEY
                        + r" gives the measured "
                          r"figure\)", reason), reason


@pytest.mark.parametrize("place", [plan_collection, plan_collection_shared])
def test_a_budget_short_on_given_speeds_is_not(offerings, place) -> None:  # noqa: ANN001
    plan = place(_sweep(gpu_models=["V100"], gpu_counts=[1]), offerings, "cost",
                 budget_usd=0.5)
    [reason] = plan.reasons
    assert reason.startswith("budget: ") and "*" not in reason, reason


@pytest.mark.parametrize("place", [plan_collection, plan_collection_shared])
def test_a_deadline_missed_on_an_estimated_speed_is_marked(offerings, place) -> None:  # noqa: ANN001
    plan = place(_sweep(gpu_models=["K80"], deadline="1h"), offerings, "cost")
    assert plan.reasons and all(
        re.search(r"cannot meet its deadline of 1 h .* needs [\d.,]+\* h.* \(\* from an "
                  r"estimated speed on \d+xK80: " + K80_KEY + r".*at least [\d.,]+\* h from "
                  r"now", r) for r in plan.reasons), plan.reasons


def test_a_deadline_missed_on_given_speeds_is_not(offerings) -> None:  # noqa: ANN001
    plan = plan_collection(_sweep(gpu_models=["V100"], gpu_counts=[1], deadline="1h"),
                           offerings, "cost")
    assert plan.reasons and all("deadline" in r and "*" not in r for r in plan.reasons)
