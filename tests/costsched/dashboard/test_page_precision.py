"""A job's page reads each kind of figure at one precision, as the command line does
(`costsched.amounts`): its budget at the decimals of the spend beside it (`given` at the
page's `places`), and its placements' hours and its totals line's billed hours alike."""

from __future__ import annotations

import re
from datetime import timedelta

from starlette.testclient import TestClient

from costsched.store import PriceStore
from tests.costsched.report.scenario import EAST, at, observe


def _budgeted(store: PriceStore) -> int:
    """258 s at $0.1809/h with a $1 budget: $0.01296, whose hours read at four decimals
    (0.0717 h x $0.1809/h = $0.0130), never 0.07 h."""
    observe(store, EAST, [(-10, 0.1809)])
    spec = {"spec": {"name": "capped", "throughputs": {"V100": 2.0}, "steps": 100,
                     "constraints": {"budget": 1.0}}, "launcher": "local"}
    job = store.jobs.create("capped", spec, 100, at=at(0))
    store.jobs.transition(job, "running", at=at(0))
    store.jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=at(0),
                     usd_per_hour=0.1809, reason="launch", instance="i-0")
    end = at(0) + timedelta(seconds=258)
    store.jobs.end_placement(job, end)
    store.jobs.transition(job, "succeeded", at=end)
    return job


def _decimals(figure: str) -> int:
    return len(figure.partition(".")[2])


def test_the_budget_reads_at_the_precision_of_the_spend_beside_it(
        store: PriceStore, client: TestClient) -> None:
    job = _budgeted(store)
    cards = dict((what, figure) for figure, what in re.findall(
        r'class="figure">([^<]*)</span><span>([^<]*)<', client.get(f"/jobs/{job}").text))
    spent, budget = cards["spent so far"], cards["budget"]
    assert spent.startswith("$0.01") and budget.startswith("$1.00"), cards
    assert _decimals(budget) == _decimals(spent), cards


def test_placements_hours_and_billed_hours_read_alike(store: PriceStore,
                                                      client: TestClient) -> None:
    job = _budgeted(store)
    page = client.get(f"/jobs/{job}").text
    table = page[page.index("<h2>Placements</h2>"):page.index("<h2>Migrations")]
    [hours] = re.findall(r'<td class="num">([\d.]+)</td><td class="num">\$', table)
    [billed] = re.findall(r"In the report: .*? over ([\d.]+) billed hours", page)
    # One placement: its hours are the job's billed hours, written once at one precision.
    assert hours == billed, (hours, billed)
    assert _decimals(hours) == 4, hours  # charged hours' four; its product makes its cost
