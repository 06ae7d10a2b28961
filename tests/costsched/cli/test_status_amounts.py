"""`status`'s money adds up where it is read: the cost column and the placements listed
under it at one precision."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

from typer.testing import CliRunner

from costsched.cli import app
from costsched.store import PriceStore
from tests.costsched.test_costs import EAST_A, WEST, at, observe


def ran(store: PriceStore, tmp_path: Path, name: str,
        spans: list[tuple[tuple, float, str, float]], state: str = "succeeded") -> None:
    """A job `name` that ran `spans` one after another from at(1), each (offering, $/h,
    the placement's reason, seconds), then ended in `state`."""
    spec = {"name": name, "run": "true", "steps": 10,
            "checkpoint": {"location": str(tmp_path / "ckpt"), "size_gb": 0}}
    job = store.jobs.create(name, {"spec": spec, "source": "t", "launcher": "local"}, 10,
                            at=at(1))
    store.jobs.transition(job, "running", at=at(1))
    t = at(1)
    for i, (where, price, reason, seconds) in enumerate(spans):
        store.jobs.place(job, where, gpu_model="V100", gpu_count=1, at=t,
                         usd_per_hour=price, reason=reason, instance=f"l-{name}-{i}")
        t += timedelta(seconds=seconds)
    store.jobs.end_placement(job, t)
    store.jobs.transition(job, state, at=t)


def status_text(store: PriceStore, db: str) -> str:
    """`status` of the store at `db` (closed first), 200 columns wide."""
    store.dispose()
    result = CliRunner().invoke(app, ["status", "--db", db, "--no-reconcile"],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.stdout


def test_a_jobs_placements_add_up_to_its_cost_at_one_precision(tmp_path: Path) -> None:
    db = str(tmp_path / "store.sqlite")
    store = PriceStore(db)
    observe(store, EAST_A, [(0, 0.36)])  # $0.0060 a minute
    observe(store, WEST, [(0, 0.288)])  # $0.0048 a minute
    ran(store, tmp_path, "tiny", [(EAST_A, 0.36, "launch", 60), (WEST, 0.288, "recovery", 60)])
    out = status_text(store, db)
    # $0.0060 + $0.0048 = $0.0108: the column reads it so, not $0.01 beside them.
    assert ("placed at its launch on aws us-east-1a p3.2xlarge spot: billed 0.0167 h x "
            "$0.3600/h = $0.0060") in out
    assert ("placed at its recovery on aws us-west-2b p3.2xlarge spot: billed 0.0167 h x "
            "$0.2880/h = $0.0048") in out
    [row] = [line for line in out.splitlines() if "tiny" in line and "│" in line]
    assert "$0.0108" in row and "$0.01 " not in row


def test_the_hours_of_one_status_read_at_one_precision(tmp_path: Path) -> None:
    # An older `status`: '0.0086 h' for job 1, '0.01 h' for job 2, each job at its own
    # precision; every hour of the view reads at one, none 0.00 for seconds.
    db = str(tmp_path / "store.sqlite")
    store = PriceStore(db)
    observe(store, EAST_A, [(0, 0.36)])
    observe(store, WEST, [(0, 0.288)])

    ran(store, tmp_path, "first", [(EAST_A, 0.36, "launch", 31)])
    ran(store, tmp_path, "second", [(EAST_A, 0.36, "launch", 36), (WEST, 0.36, "start", 3)])
    out = status_text(store, db)
    spans = re.findall(r"spot: billed ([\d.<]+) h x ", out)
    # At four decimals for hours, whatever the smallest settled span (3 s, 0.00083 h):
    # every span reads at them, each still making its amount with its price.
    assert spans == ["0.0086", "0.0100", "0.0008"], out


def test_a_finished_placement_reads_as_it_does_alone(tmp_path: Path) -> None:
    """Placements of $0.000243 and $0.000412: at four decimals each reads as it does
    alone, never bent to make a total (the exact $0.000655 would round to $0.0007), and
    the job's cost is their sum as written."""
    db = str(tmp_path / "store.sqlite")
    store = PriceStore(db)
    observe(store, EAST_A, [(0, 0.0243)])  # 36 s: $0.000243
    observe(store, WEST, [(0, 0.0412)])  # 36 s: $0.000412
    ran(store, tmp_path, "tiny", [(EAST_A, 0.0243, "launch", 36),
                                  (WEST, 0.0412, "recovery", 36)], state="stopped")
    out = status_text(store, db)
    assert ("placed at its launch on aws us-east-1a p3.2xlarge spot: billed 0.0100 h x "
            "$0.0243/h = $0.0002") in out
    assert ("placed at its recovery on aws us-west-2b p3.2xlarge spot: billed 0.0100 h x "
            "$0.0412/h = $0.0004") in out
    [row] = [line for line in out.splitlines() if "tiny" in line and "│" in line]
    assert "$0.0006 " in row
