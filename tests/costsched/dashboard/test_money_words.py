"""The dashboard writes money by the rule of `costsched.amounts`: a budget as the user set
it, and a placement's hourly price as it was charged, so that its hours times its price
make its cost even when the stored price changed while it ran."""

from __future__ import annotations

from datetime import timedelta

import pytest
from starlette.testclient import TestClient

from costsched.store import PriceStore
from tests.costsched.report.scenario import EAST, at, observe


def _ended(store: PriceStore, name: str, hours: float, budget: float | None = None) -> int:
    """A job that ran on EAST from hour 0 for `hours`, placed at $1.00/h, and succeeded."""
    spec = {"spec": {"name": name, "throughputs": {"V100": 2.0}, "steps": 100,
                     "constraints": {"budget": budget}}, "launcher": "local"}
    job = store.jobs.create(name, spec, 100, at=at(0))
    store.jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=1.0,
                     reason="launch", instance=f"{job}-1")
    store.jobs.transition(job, "running", at=at(0))
    end = at(0) + timedelta(hours=hours)
    store.jobs.end_placement(job, end)
    store.jobs.transition(job, "succeeded", at=end)
    return job


def test_a_placement_whose_price_changed_reads_at_the_price_it_was_charged(
        store: PriceStore, client: TestClient) -> None:
    observe(store, EAST, [(-10, 1.0), (1, 3.0)])  # $1/h when placed, $3/h from hour 1
    job = _ended(store, "repriced", 2.0)
    (placed,) = client.get(f"/api/jobs/{job}").json()["job"]["placements"]
    assert placed["usd_per_hour"] == 1.0  # the price when it began, as before
    assert placed["hours"] == pytest.approx(2.0) and placed["usd"] == pytest.approx(4.0)
    assert placed["charged_usd_per_hour"] == pytest.approx(2.0)  # 2 h x $2.00 = $4.00
    page = client.get(f"/jobs/{job}").text
    assert "$2.0000 on average ($1.0000 when placed)" in page
    assert "<td class=\"num\">$1.0000</td>" not in page  # not 2 h x $1/h beside $4


def test_a_placement_at_one_price_reads_it_alone(store: PriceStore,
                                                 client: TestClient) -> None:
    observe(store, EAST, [(-10, 1.0)])
    job = _ended(store, "steady", 2.0)
    (placed,) = client.get(f"/api/jobs/{job}").json()["job"]["placements"]
    assert placed["charged_usd_per_hour"] == pytest.approx(1.0)
    page = client.get(f"/jobs/{job}").text
    assert "<td class=\"num\">$1.0000</td>" in page and "on average" not in page


def test_a_budget_reads_at_the_four_decimals_of_the_spend_beside_it(
        store: PriceStore, client: TestClient) -> None:
    # The trial: '$5.00' in the list of jobs, '$5.00000' on the job's page and '$5.0000'
    # in `status`, for one cap. It reads as `status`'s budgets table writes it.
    observe(store, EAST, [(-10, 1.0)])
    job = _ended(store, "brief", 10 / 3600, budget=2.0)  # ten seconds: $0.0028
    for page in (client.get("/").text, client.get(f"/jobs/{job}").text):
        assert "$0.0028" in page
        assert "$2.0000<" in page and "$2.00<" not in page


def test_a_move_is_priced_at_the_prices_of_its_time(store: PriceStore,
                                                    client: TestClient) -> None:
    """Placed on EAST at $1/h; EAST rose to $3/h at hour 1; the job moved to WEST ($0.50/h)
    at hour 2: the move left $3/h, not the $1/h EAST was placed at."""
    from tests.costsched.report.scenario import WEST

    observe(store, EAST, [(-10, 1.0), (1, 3.0)])
    observe(store, WEST, [(-10, 0.5)])
    spec = {"spec": {"name": "moved", "throughputs": {"V100": 2.0}, "steps": 100},
            "launcher": "local"}
    job = store.jobs.create("moved", spec, 100, at=at(0))
    store.jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=1.0,
                     reason="launch", instance=f"{job}-1")
    store.jobs.transition(job, "running", at=at(0))
    store.jobs.place(job, WEST, gpu_model="V100", gpu_count=1, at=at(2), usd_per_hour=0.5,
                     reason="migration", instance=f"{job}-2")
    store.jobs.end_placement(job, at(3))
    store.jobs.transition(job, "succeeded", at=at(3))
    [change] = client.get(f"/api/jobs/{job}").json()["price_changes"]
    assert (change["from"], change["to"]) == (pytest.approx(3.0), pytest.approx(0.5))
    page = client.get(f"/jobs/{job}").text
    assert "$3.0000/h → $0.5000/h (saves $2.5000/h)" in page


def test_a_recovery_in_place_reads_as_no_price_change(store: PriceStore,
                                                      client: TestClient) -> None:
    """Launched on EAST at $1/h, recovered on EAST (the same price), moved to WEST at
    $0.50/h: the note lists the move with its saving, never the recovery as
    '$1.0000/h → $1.0000/h (saves $0.00/h)'."""
    from tests.costsched.report.scenario import WEST

    observe(store, EAST, [(-10, 1.0)])
    observe(store, WEST, [(-10, 0.5)])
    job = store.jobs.create("kept", {"spec": {"name": "kept"}}, 100, at=at(0))
    for n, (where, start, reason) in enumerate(
            [(EAST, 0, "launch"), (EAST, 1, "recovery"), (WEST, 2, "migration")]):
        store.jobs.place(job, where, gpu_model="V100", gpu_count=1, at=at(start),
                         usd_per_hour=1.0 if where == EAST else 0.5, reason=reason,
                         instance=f"{job}-{n}")
        if not n:
            store.jobs.transition(job, "running", at=at(0))
    store.jobs.end_placement(job, at(3))
    store.jobs.transition(job, "succeeded", at=at(3))
    page = client.get(f"/jobs/{job}").text
    [note] = [p for p in page.split("<p") if "Hourly price at each change" in p]
    assert "$1.0000/h → $0.5000/h (saves $0.5000/h)" in note
    assert "$1.0000/h → $1.0000/h" not in note and "saves $0.00/h" not in note


def test_the_jobs_chart_tells_two_jobs_of_one_name_apart(store: PriceStore,
                                                         client: TestClient) -> None:
    """Two jobs named alike: the Jobs page's chart labels their bars with name and id."""
    import json
    import re

    first = _ended(store, "bigram", 1.0)
    second = _ended(store, "bigram", 1.0)
    page = client.get("/").text
    [data] = re.findall(r'<script type="application/json" id="chart-jobs">(.*?)</script>',
                        page, re.S)
    labels = json.loads(data)["labels"]
    assert sorted(labels) == sorted([f"bigram ({first})", f"bigram ({second})"]), labels
