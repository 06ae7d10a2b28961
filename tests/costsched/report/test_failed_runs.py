"""Every run that ended failed is counted in "failed runs cost $X", each with its cost,
whatever its job did after: a job that failed, was started again and then finished still
had its failed run (text, `report --json` and the HTML file alike)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from costsched.report import build
from costsched.report.html import render
from costsched.store import OBSERVATION_COLUMNS, PriceStore
from tests.costsched.report.scenario import at, job

EAST = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")


def _run(store: PriceStore, made: int, start: float, hours: float, state: str,
         reason: str) -> None:
    if reason == "start":  # `costsched start`: the ended job is pending again
        store.jobs.transition(made, "pending", at=at(start))
    store.jobs.place(made, EAST, gpu_model="V100", gpu_count=1, at=at(start),
                     usd_per_hour=1.0, reason=reason, instance=f"i-{made}-{start}",
                     keep_open=False)
    store.jobs.record_step(made, 3600.0 * (start + hours), at=at(start + hours))
    store.jobs.end_placement(made, at(start + hours))
    store.jobs.transition(made, state, at=at(start + hours))


@pytest.fixture()
def again_db(db_path: Path) -> Path:
    """On EAST at $1/h: `again` failed after 1 h, was started again at hour 2 and
    succeeded 2 h later; `broke` failed after 1 h at hour 1 (a quarter hour: $0.25)."""
    store = PriceStore(str(db_path))
    store.ingest(pd.DataFrame([(*EAST, "V100", 1, 8, 61.0, 1.0, pd.Timestamp(at(-10)),
                                "test")], columns=OBSERVATION_COLUMNS))
    again = job(store, "again", {"V100": 1.0})
    _run(store, again, 0, 1, "failed", "launch")
    _run(store, again, 2, 2, "succeeded", "start")
    broke = job(store, "broke", {"V100": 1.0})
    _run(store, broke, 1, 0.25, "failed", "launch")
    store.dispose()
    return db_path


def test_a_failed_run_counts_though_its_job_finished_after(cli, again_db: Path) -> None:
    store = PriceStore(str(again_db))
    report = build(store, now=at(5))
    store.dispose()
    assert report.totals["failed_usd"] == pytest.approx(1.25)
    data = json.loads(cli("report", "--json").stdout)
    assert data["totals"]["failed_usd"] == pytest.approx(1.25)
    runs = [(r["name"], r["usd"]) for r in data["failed_runs"]]
    assert runs == [("again", pytest.approx(1.0)), ("broke", pytest.approx(0.25))]

    said = ("; failed runs cost $1.2500 (job 1 (again), failed 2024-06-01 21:00 UTC: $1.0000, "
            "job 2 (broke), failed 2024-06-01 21:15 UTC: $0.2500)")
    shown = " ".join(cli("report").output.split())  # (the line wraps at the width)
    assert said + " " in shown, shown
    assert said[2:] + "." in render(report)


def test_a_period_after_the_failure_counts_no_failed_run(cli, again_db: Path) -> None:
    data = json.loads(cli("report", "--json", "--since", at(2).isoformat()).stdout)
    assert data["totals"]["failed_usd"] == 0.0 and data["failed_runs"] == []
    assert "failed run" not in cli("report", "--since", at(2).isoformat()).output


def test_a_failed_run_of_seconds_reads_as_charged_never_zero(tmp_path: Path) -> None:
    # A job that failed at once ($0.000022): at four decimals its run, the failed runs'
    # figure and the spend read '<$0.0001', never 'failed runs cost $0.0000'.
    from costsched.report.cells import totals_line
    from costsched.store import PriceStore as Store
    from tests.costsched.cli.test_status_amounts import ran
    from tests.costsched.test_costs import EAST_A, observe

    store = Store(str(tmp_path / "store.sqlite"))
    observe(store, EAST_A, [(0, 0.07962)])
    ran(store, tmp_path, "blip", [(EAST_A, 0.07962, "launch", 1)], state="failed")
    built = build(store)
    store.dispose()
    line = totals_line(built.totals, built.tables())
    assert "failed runs cost <$0.0001 (job 1 (blip), failed " in line, line
    assert line.endswith(": <$0.0001)") and "$0.0000 (" not in line, line
    assert line.startswith("Spend <$0.0001 (compute <$0.0001, egress $0.0000)"), line
