"""A job whose cost, the sum of its charges each rounded alone, reads under its exact
figure rounded ($0.0006 + $0.0007 + $0.0014 = $0.0027 for an exact $0.002765) is said so
under the report's totals, with the command that lists the charges: the figure is a sum,
not one cut short. The hint works as said."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

from costsched.report.rounding import JOB_ROUNDING_NOTE, ROUNDING_NOTE
from costsched.store import PriceStore
from tests.costsched.cli.test_totals_as_written import _run  # (a command's output, wide)
from tests.costsched.test_costs import EAST_A, at, observe

PRICE = 0.07962  # an L4 spot's, per hour


def _three_runs(tmp_path: Path) -> tuple[str, int]:
    """A job placed three times on EAST_A at PRICE: 28 s, 33 s and 64 s, stopped."""
    db = str(tmp_path / "store.sqlite")
    store = PriceStore(db)
    observe(store, EAST_A, [(0, PRICE)])
    spec = {"name": "thrice", "run": "true", "steps": 10,
            "checkpoint": {"location": str(tmp_path / "ckpt"), "size_gb": 0}}
    job = store.jobs.create("thrice", {"spec": spec, "source": "t", "launcher": "local"}, 10,
                            at=at(1))
    store.jobs.transition(job, "running", at=at(1))
    t = at(1)
    for n, (seconds, reason) in enumerate([(28, "launch"), (33, "start"), (64, "recovery")]):
        store.jobs.place(job, EAST_A, gpu_model="L4", gpu_count=1, at=t, usd_per_hour=PRICE,
                         reason=reason, instance=f"{job}-{n}")
        t += timedelta(seconds=seconds)
        store.jobs.end_placement(job, t)
    store.jobs.transition(job, "stopped", at=t)
    store.dispose()
    return db, job


def test_a_job_cost_under_its_exact_figure_is_said_to_be_its_charges_sum(
        tmp_path: Path) -> None:
    db, job = _three_runs(tmp_path)
    report = _run("report", "--db", db)
    line = next(line for line in report.splitlines() if "│ thrice" in line)
    assert "$0.0027" in line, report  # exact $0.002765: the sum of its charges as shown
    assert report.count(JOB_ROUNDING_NOTE) == 1, report
    assert ROUNDING_NOTE not in report
    # The hint as said: `costsched status JOB` lists the charges that make $0.0027.
    status = _run("status", str(job), "--db", db, "--no-reconcile")
    parts = re.findall(rf"job {job}: placed .* = \$([\d.]+)$", status, re.M)
    assert parts == ["0.0006", "0.0007", "0.0014"], status
    assert round(sum(float(p) for p in parts), 4) == 0.0027
