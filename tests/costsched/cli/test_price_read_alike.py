"""A placement's price per hour reads at its own decimals in `status`, the dashboard's job
page and the report: a charge's average (its dollars over its hours) a float's error off
its price ($1.005999999993/h) reads '$1.0060/h', as `plan` and `launch` write it, never
'$1.006000/h'; its hours times it, as written, still make its cost."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

from costsched.amounts import as_written
from costsched.store import PriceStore
from tests.costsched.cli.test_store_scale_views import _dashboard, _run, _tiny
from tests.costsched.test_costs import EAST_A, WEST, at, observe

ON_DEMAND = ("aws", "us-east-1", "", "p3.2xlarge", "on_demand", "linux")


def _store(tmp_path: Path) -> tuple[str, int]:
    db = str(tmp_path / "store.sqlite")
    store = PriceStore(db)
    observe(store, EAST_A, [(0, 0.0243)])
    observe(store, WEST, [(0, 0.0412)])
    observe(store, ON_DEMAND, [(0, 1.005999999993)])  # as charged on average
    _tiny(store, tmp_path)  # charges under a thousandth of a dollar
    spec = {"name": "budget", "run": "true", "steps": 10}
    job = store.jobs.create("budget", {"spec": spec, "source": "t", "launcher": "local"},
                            10, at=at(1))
    store.jobs.transition(job, "running", at=at(1))
    store.jobs.place(job, ON_DEMAND, gpu_model="V100", gpu_count=1, at=at(1),
                     usd_per_hour=1.006, reason="launch", instance=f"{job}-1")
    store.jobs.end_placement(job, at(1) + timedelta(seconds=346))
    store.jobs.transition(job, "stopped", at=at(1) + timedelta(seconds=346))
    store.dispose()
    return db, job


def test_a_price_reads_at_its_own_decimals_in_every_view(tmp_path: Path) -> None:
    db, job = _store(tmp_path)
    status = _run("status", str(job), "--db", db, "--no-reconcile")
    [line] = [x for x in status.splitlines() if "placed at its launch on aws us-east-1" in x]
    found = re.search(r"billed ([\d.]+) h x \$([\d.]+)/h = \$([\d.]+)$", line)
    assert found is not None, status
    span, rate, money = found.groups()
    assert rate == "1.0060", line
    places = len(money.partition(".")[2])  # the store's (its other jobs' costs add up)
    assert f"{as_written(float(span) * float(rate), places):.{places}f}" == money, line
    page, spend = _dashboard(db, f"/jobs/{job}", "/spend")
    report = _run("report", "--db", db)
    for text in (status, page, spend, report):
        assert "1.006000" not in text and "1.00600" not in text, text
    # The job page's placement: the same hours, price and cost as `status`'s line.
    assert f">{span}<" in page and ">$1.0060<" in page and f">${money}<" in page, page
