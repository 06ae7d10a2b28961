"""One stored price reads the same wherever it is shown: a spot price of five decimals
($0.07962) in `plan`'s $/h column, `gpus` (the summary and one model's offerings),
`status`'s billed line of a job placed on it, and the dashboard's Prices page (its JSON
and its HTML) — never '$0.0796' in one and '$0.07962' in another."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from costsched.amounts import derived_per_hour, stored_price
from costsched.store import PriceStore
from tests.costsched.test_costs import EAST_A, T0, observe

pytest.importorskip("starlette", reason="the dashboard extra is not installed")

from starlette.testclient import TestClient  # noqa: E402

from costsched.dashboard.app import create_app  # noqa: E402

PRICE = 0.07962  # a stored spot price of five decimals
SHOWN = "$0.07962"
OFFERING = "aws us-east-1a p3.2xlarge spot"
AT = (T0.replace(hour=14)).isoformat()  # two hours after the price was observed
BILLED = re.compile(r"billed [\d.,]+ h(?: so far)? x (\$[\d.,]+)/h = \$[\d.,]+")
ROW = re.compile(r"<tr[^>]*>(.*?)</tr>", re.S)
NUM = re.compile(r'<td class="num">([^<]*)</td>')


def _cells(out: str, marker: str) -> list[str]:
    """The amounts in the table row of `out` (rich's text) that holds `marker`."""
    line = next(line for line in out.splitlines() if marker in line)
    return re.findall(r"\$[\d.,]+", line)


def _num_cells(html: str, marker: str) -> list[list[str]]:
    """The figures of every HTML table row that holds `marker`."""
    return [NUM.findall(row) for row in ROW.findall(html) if marker in row]


def _placed_on_the_price(store: PriceStore, tmp_path: Path, name: str, *,
                         running: bool) -> int:
    """A job of the local launcher placed on the price when it was observed: ended after
    68 s, or (`running`) still on it."""
    spec = {"name": name, "run": "true", "steps": 1000,
            "checkpoint": {"location": str(tmp_path / "ckpt"), "size_gb": 0}}
    job = store.jobs.create(name, {"spec": spec, "source": "t", "launcher": "local"},
                            1000, at=T0)
    store.jobs.place(job, EAST_A, gpu_model="V100", gpu_count=1, at=T0, usd_per_hour=PRICE,
                     reason="launch", instance=f"{job}-1", keep_open=running)
    store.jobs.transition(job, "running", at=T0)
    if not running:
        store.jobs.end_placement(job, T0 + timedelta(seconds=68))
        store.jobs.transition(job, "succeeded", at=T0 + timedelta(seconds=68))
    return job


def test_the_rules_write_a_stored_price_at_its_own_decimals() -> None:
    assert stored_price(PRICE) == SHOWN
    assert stored_price(0.9180) == "$0.9180"
    assert stored_price(30.13118) == "$30.13118"
    assert stored_price(0.2457138888) == "$0.2457"  # an average across prices: no stored one
    assert derived_per_hour(PRICE / 8, PRICE) == "$0.00995"  # of its price's decimals
    assert derived_per_hour(PRICE, PRICE) == SHOWN  # one GPU: its price per GPU-hour
    assert derived_per_hour(1.2345678) == "$1.2346"  # a cost per hour of work


def test_one_stored_price_reads_alike_in_plan_gpus_status_and_the_dashboard(
        store: PriceStore, cli, tmp_path: Path) -> None:  # noqa: ANN001
    observe(store, EAST_A, [(0, PRICE)])
    spec = tmp_path / "job.yaml"
    spec.write_text(yaml.safe_dump({"name": "one-price", "run": "true", "steps": 10000,
                                    "throughputs": {"V100": 2.0},
                                    "checkpoint": {"size_gb": 0}}))

    plan = cli("plan", str(spec), "--at", AT, "--top", "3")
    assert plan.exit_code == 0, plan.output
    assert SHOWN in _cells(plan.stdout, OFFERING), plan.stdout

    summary = cli("gpus", "--at", AT)
    assert summary.exit_code == 0, summary.output
    assert SHOWN in _cells(summary.stdout, "V100:1"), summary.stdout
    offerings = cli("gpus", "V100", "--at", AT, "--top", "50")
    assert offerings.exit_code == 0, offerings.output
    row = _cells(offerings.stdout, "us-east-1a")
    assert row.count(SHOWN) == 2, offerings.stdout  # $/h, and $/GPU-h of its one GPU

    ended = _placed_on_the_price(store, tmp_path, "ended", running=False)
    status = cli("status", str(ended), "--no-reconcile")
    assert status.exit_code == 0, status.output
    assert BILLED.findall(status.stdout) == [SHOWN], status.stdout

    _placed_on_the_price(store, tmp_path, "running", running=True)  # the page's 'In use'
    client = TestClient(create_app(store))
    doc = client.get("/api/prices").json()
    assert [j["usd_per_hour"] for j in doc["jobs"]] == [PRICE]
    assert PRICE in {r["usd_per_hour"] for r in doc["prices"]}
    html = client.get("/prices").text
    in_use, alternative = _num_cells(html, "us-east-1a p3.2xlarge spot")[:2]
    assert in_use == [SHOWN]  # 'In use': $/h at start
    assert alternative[:2] == [SHOWN, SHOWN]  # $/h and $/GPU-h
    [v100] = [cells for cells in _num_cells(html, "V100:1")]
    # the cheapest V100 spot, at its column's one precision (another price needs six places)
    assert v100[1] == SHOWN + "0", v100
