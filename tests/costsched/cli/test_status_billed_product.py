"""`status` lists each placement of a job as billed, its hours times the hourly price it
was charged making its amount as written (the trial's '0.01 h, $0.0012' at $0.0796/h made
$0.0008), and says the hours are the placement's, begun by the launch (or the recovery,
move or start), not the time the launch took."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

from typer.testing import CliRunner

from costsched.amounts import as_written
from costsched.cli import app
from costsched.store import PriceStore
from tests.costsched.test_costs import EAST_A, WEST, at, observe

PLACED = re.compile(r"job \d+: (placed [a-z ]+) on (.+?): billed ([0-9.]+) h x "
                    r"\$([0-9.]+)/h = \$([0-9.]+)$")


def test_each_placement_reads_hours_times_its_price_making_its_amount(tmp_path: Path) -> None:
    db = str(tmp_path / "store.sqlite")
    store = PriceStore(db)
    observe(store, EAST_A, [(0, 0.0796)])
    observe(store, WEST, [(0, 0.3644)])
    spec = {"name": "tiny", "run": "true", "steps": 10,
            "checkpoint": {"location": str(tmp_path / "ckpt"), "size_gb": 0}}
    job = store.jobs.create("tiny", {"spec": spec, "source": "t", "launcher": "local"}, 10,
                            at=at(1))
    store.jobs.transition(job, "running", at=at(1))
    store.jobs.place(job, EAST_A, gpu_model="V100", gpu_count=1, at=at(1),
                     usd_per_hour=0.0796, reason="launch", instance="l-1")
    moved = at(1) + timedelta(seconds=53)  # 0.0147 h
    store.jobs.place(job, WEST, gpu_model="V100", gpu_count=1, at=moved,
                     usd_per_hour=0.3644, reason="migration", instance="l-2")
    store.jobs.end_placement(job, moved + timedelta(seconds=7))  # 0.0019 h
    store.jobs.transition(job, "succeeded", at=moved + timedelta(seconds=7))
    store.dispose()
    result = CliRunner().invoke(app, ["status", "--db", db, "--no-reconcile"],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    lines = [m.groups() for line in result.stdout.splitlines()
             if (m := PLACED.search(line.strip()))]
    assert [(how, where) for how, where, *_ in lines] == [
        ("placed at its launch", "aws us-east-1a p3.2xlarge spot"),
        ("placed by its migration", "aws us-west-2b p3.2xlarge spot")], result.stdout
    for _, _, hours, price, amount in lines:
        places = len(amount.partition(".")[2])
        assert f"{as_written(float(hours) * float(price), places):.{places}f}" == amount, \
            (hours, price, amount)
    assert "job 1: launch on" not in result.stdout  # the old label: 'the launch took 0.01 h'
