"""A job's page: its placements' costs visibly add up to its "spent so far", as `status`
writes them (`costsched.amounts`: at the store's scale, a total the sum of its parts as
written)."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

from starlette.testclient import TestClient

from costsched.store import PriceStore
from tests.costsched.report.scenario import EAST, WEST, at, observe


def _three_legs(store: PriceStore) -> int:
    """36 s on EAST ($0.000243), 36 s on WEST ($0.000412), 36 s on EAST again: $0.000898
    in all, whose legs at four decimals read $0.0002 + $0.0004 + $0.0002 = $0.0008."""
    observe(store, EAST, [(-10, 0.0243)])
    observe(store, WEST, [(-10, 0.0412)])
    spec = {"spec": {"name": "tiny", "throughputs": {"V100": 2.0}, "steps": 100},
            "launcher": "local"}
    job = store.jobs.create("tiny", spec, 100, at=at(0))
    store.jobs.transition(job, "running", at=at(0))
    t = at(0)
    for i, (key, price) in enumerate([(EAST, 0.0243), (WEST, 0.0412), (EAST, 0.0243)]):
        store.jobs.place(job, key, gpu_model="V100", gpu_count=1, at=t, usd_per_hour=price,
                         reason="launch" if i == 0 else "recovery", instance=f"i-{i}")
        t += timedelta(seconds=36)
    store.jobs.end_placement(job, t)
    store.jobs.transition(job, "succeeded", at=t)
    return job


def test_a_jobs_placements_add_up_to_its_spend_as_written(store: PriceStore,
                                                          client: TestClient) -> None:
    job = _three_legs(store)
    page = client.get(f"/jobs/{job}").text
    [spent] = re.findall(r'class="figure">(\$[^<]*)</span><span>spent so far', page)
    table = page[page.index("<h2>Placements</h2>"):page.index("<h2>Migrations")]
    legs = re.findall(r'<td class="num">(\$[\d.]+)</td></tr>', table)
    assert len(legs) == 3, table
    assert sum(Decimal(v[1:]) for v in legs) == Decimal(spent[1:]), (spent, legs)
    # Each as `status` writes it: at four decimals, the spend their sum as written:
    # $0.0002 + $0.0004 + $0.0002 = $0.0008 (the exact $0.000898 is in the JSON).
    assert spent == "$0.0008" and legs == ["$0.0002", "$0.0004", "$0.0002"]


def test_the_spend_is_its_legs_as_written() -> None:
    """Three thirds of a dollar: each leg reads as it does everywhere ($0.3333) and the
    spend is their sum as written ($0.9999), as `status` writes the job's cost: never a
    leg bent to make the exact total."""
    from costsched.dashboard.render import job_places, leg_costs, spent

    third = 1 / 3
    job = {"cost_usd": 1.0, "egress_usd": 0.0, "state": "succeeded",
           "placements": [{"usd": third, "hours": 1.0, "end_at": "2026-01-01"}
                          for _ in range(3)]}
    places = job_places(job, {"scale": {"usd": 4, "hours": 2}})
    legs = leg_costs(job, places)
    assert legs == ["$0.3333"] * 3 and spent(job, places) == "$0.9999", legs
