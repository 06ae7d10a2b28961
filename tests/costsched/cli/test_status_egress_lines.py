"""While a job that moved between regions runs, `status JOB`'s lines under the table list
every part of its cost column, the checkpoint's egress included: they add up to it as
written, before the job ends as after."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

from typer.testing import CliRunner

from costsched.cli import app
from costsched.store import PriceStore
from tests.costsched.test_costs import EAST_A, WEST, at, observe


def _moved(db: str, ended: bool) -> int:
    """32 s on EAST_A, then on WEST (another region: its 0.001 GB checkpoint copied)."""
    store = PriceStore(db)
    observe(store, EAST_A, [(0, 0.07962)])
    observe(store, WEST, [(0, 0.0412)])
    spec = {"name": "mover", "run": "true", "steps": 10, "checkpoint": {"size_gb": 0.001}}
    job = store.jobs.create("mover", {"spec": spec, "source": "t", "launcher": "local"}, 10,
                            at=at(1))
    store.jobs.transition(job, "running", at=at(1))
    moved = at(1) + timedelta(seconds=32)
    store.jobs.place(job, EAST_A, gpu_model="V100", gpu_count=1, at=at(1),
                     usd_per_hour=0.07962, reason="launch", instance=f"{job}-1")
    store.jobs.place(job, WEST, gpu_model="V100", gpu_count=1, at=moved,
                     usd_per_hour=0.0412, reason="migration", instance=f"{job}-2")
    if ended:
        store.jobs.end_placement(job, moved + timedelta(seconds=27))
        store.jobs.transition(job, "succeeded", at=moved + timedelta(seconds=27))
    store.dispose()
    return job


def _cost_and_parts(output: str, job: int) -> tuple[Decimal, list[Decimal], list[str]]:
    row = re.search(rf"│\s*{job}\s*│.*?│\s*\$([\d.,]+)\s*│", output)
    assert row is not None, output
    lines = [x for x in output.splitlines() if x.startswith(f"  job {job}: ")
             and re.search(r"\$[\d.,]+$", x)]
    # (a part under the last decimal, '<$0.0001', adds nothing as written)
    parts = [Decimal(0) if x.endswith(f"<${x.rsplit('$', 1)[1]}") else
             Decimal(x.rsplit("$", 1)[1].replace(",", "")) for x in lines]
    return Decimal(row.group(1).replace(",", "")), parts, lines


def test_the_lines_list_the_egress_in_the_cost_running_or_ended(tmp_path: Path) -> None:
    for ended in (False, True):
        db = str(tmp_path / f"{ended}.sqlite")
        job = _moved(db, ended)
        out = CliRunner().invoke(app, ["status", "--db", db, "--no-reconcile", str(job)],
                                 env={"COLUMNS": "220"})
        assert out.exit_code in (0, 75), out.output  # (not looked after while running: 75)
        cost, parts, lines = _cost_and_parts(out.stdout, job)
        assert any("(egress)" in x for x in lines), out.stdout
        assert sum(parts) == cost, out.stdout
