"""A job's placements read their hours at one precision in its block, chosen from them all
(`amounts.block_hours`), in `status JOB`'s lines and on the dashboard's job page: never
0.01 h beside 0.02778 h. Each line still
multiplies out at the decimals shown."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from typer.testing import CliRunner

from costsched.cli import app
from costsched.store import PriceStore
from tests.costsched.test_costs import EAST_A, WEST, at, observe

PRODUCT = re.compile(r"billed ([\d.,]+) h(?: so far)? x \$([\d.]+)/h = \$([\d.]+)")


def _job(db: str, open_last: bool) -> int:
    """36 s at $0.0243/h ('0.01 h' alone), then 100 s at $0.0412/h ('0.02778 h' alone)."""
    store = PriceStore(db)
    observe(store, EAST_A, [(0, 0.0243)])
    observe(store, WEST, [(0, 0.0412)])
    spec = {"name": "legs", "run": "true", "steps": 10}
    job = store.jobs.create("legs", {"spec": spec, "source": "t", "launcher": "local"}, 10,
                            at=at(1))
    store.jobs.transition(job, "running", at=at(1))
    store.jobs.place(job, EAST_A, gpu_model="V100", gpu_count=1, at=at(1), usd_per_hour=0.0243,
                     reason="launch", instance="legs-1")
    store.jobs.place(job, WEST, gpu_model="V100", gpu_count=1,
                     at=at(1) + timedelta(seconds=36), usd_per_hour=0.0412,
                     reason="migration", instance="legs-2")
    if not open_last:
        store.jobs.end_placement(job, at(1) + timedelta(seconds=136))
        store.jobs.transition(job, "succeeded", at=at(1) + timedelta(seconds=136))
    store.dispose()
    return job


def _multiplies_out(hours: str, price: str, money: str) -> bool:
    exact = Decimal(hours.replace(",", "")) * Decimal(price)
    return exact.quantize(Decimal(money), rounding=ROUND_HALF_UP) == Decimal(money)


def test_a_jobs_lines_read_their_hours_at_one_precision(tmp_path: Path) -> None:
    db = str(tmp_path / "s.sqlite")
    job = _job(db, open_last=False)
    out = CliRunner().invoke(app, ["status", "--db", db, "--no-reconcile", str(job)],
                             env={"COLUMNS": "220"})
    assert out.exit_code == 0, out.output
    found = PRODUCT.findall(out.stdout)
    assert len(found) == 2, out.stdout
    assert len({len(h.partition(".")[2]) for h, _, _ in found}) == 1, found
    assert all(_multiplies_out(*f) for f in found), found
    (first, _, _), (second, _, _) = found

    from starlette.testclient import TestClient

    from costsched.dashboard.app import create_app

    store = PriceStore(db)
    page = TestClient(create_app(store)).get(f"/jobs/{job}")
    store.dispose()
    assert page.status_code == 200
    text = " ".join(page.text.split())
    assert first in text and second in text, text


def test_a_running_jobs_lines_read_their_hours_at_one_precision(tmp_path: Path) -> None:
    db = str(tmp_path / "s.sqlite")
    job = _job(db, open_last=True)
    out = CliRunner().invoke(app, ["status", "--db", db, "--no-reconcile", str(job)],
                             env={"COLUMNS": "220"})
    found = PRODUCT.findall(out.stdout)
    assert len(found) == 2, out.stdout
    assert len({len(h.partition(".")[2]) for h, _, _ in found}) == 1, found
    assert all(_multiplies_out(*f) for f in found), found
