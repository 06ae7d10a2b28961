"""A running job's forecast on the dashboard reads at four decimals, as its spend so
far does beside it, and never below it: its spend as written plus the rest as written
(not '$6.00' beside a spend of '$6.0003')."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

from starlette.testclient import TestClient

from costsched.dashboard.render import forecast
from costsched.store import PriceStore
from tests.costsched.service.test_rest_priced import slow_job

CARD = r'<span class="figure">([^<]*)</span><span>{}</span>'


def test_the_job_pages_forecast_reads_as_its_spend_does(
        store: PriceStore, client: TestClient, instances: Path) -> None:
    # One step left at 1 step/s on $3/h: the rest costs $0.00083.
    job = slow_job(store, instances, datetime.now(timezone.utc), steps=4_601)
    page = client.get(f"/jobs/{job}").text
    [spent] = re.findall(CARD.format("spent so far"), page)
    [ahead] = re.findall(CARD.format("forecast"), page)
    decimals = len(spent.partition(".")[2])
    assert decimals >= 4 and len(ahead.partition(".")[2]) == decimals, (spent, ahead)
    assert float(ahead.lstrip("$").replace(",", "")) >= float(spent.lstrip("$").replace(",", ""))


def test_a_forecast_is_the_spend_as_written_plus_the_rest() -> None:
    scale = {"usd": 5, "hours": 4, "charged": 1}
    # Two placements of $0.000016 read $0.00002 each: the spend reads $0.00004, and a
    # forecast with nothing left reads so too (not the $0.00003 its exact figure makes).
    job = {"cost_usd": 0.000032, "placements": [
        {"usd": 0.000016, "end_at": "x"}, {"usd": 0.000016, "end_at": "x"}]}
    assert forecast(job, 0.000032, scale) == "$0.00004"
    job = {"cost_usd": 0.011034, "placements": [{"usd": 0.011034, "end_at": "x"}]}
    assert forecast(job, 0.011034 + 0.0000004, scale) == "$0.01103"
    assert forecast(job, None, scale) == "-"
