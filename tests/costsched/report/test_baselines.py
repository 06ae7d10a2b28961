"""A saving that does not apply is null in JSON and "-" on screen, never 0; amounts under
a cent keep their significant digits; the tables' headers read as words."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from costsched.amounts import usd
from costsched.report import build
from costsched.report.html import heading, render
from costsched.store import OBSERVATION_COLUMNS, PriceStore
from tests.costsched.report.scenario import at, job

# An instance type no catalog lists and no on-demand price was stored for.
ODD = ("aws", "us-east-1", "us-east-1a", "x9.odd", "spot", "linux")


@pytest.fixture()
def odd_db(db_path: Path) -> Path:
    store = PriceStore(str(db_path))
    store.ingest(pd.DataFrame([(*ODD, "V100", 1, 8, 61.0, 0.003, pd.Timestamp(at(-10)),
                                "test")], columns=OBSERVATION_COLUMNS))
    alpha = job(store, "alpha", {"V100": 2.0})
    store.jobs.place(alpha, ODD, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=0.003,
                     reason="launch", instance="i-1", keep_open=False)
    store.jobs.record_step(alpha, 7200.0, at=at(1))  # its measured speed: 2 steps/s
    store.jobs.end_placement(alpha, at(1))
    store.dispose()
    return db_path


def test_a_saving_without_a_baseline_is_null_not_zero(cli, odd_db: Path) -> None:
    store = PriceStore(str(odd_db))
    report = build(store, now=at(5))
    store.dispose()
    [row] = report.jobs.to_dict("records")
    assert row["usd"] == pytest.approx(0.003)
    assert math.isnan(row["on_demand_usd"]) and math.isnan(row["saved_vs_on_demand_usd"])
    assert report.totals["saved_vs_on_demand_usd"] is None
    # The launch-time choice kept is known: what it ran on, at its own prices.
    assert report.totals["saved_vs_launch_choice_usd"] == pytest.approx(0.0)

    result = cli("report", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["totals"]["saved_vs_on_demand_usd"] is None
    assert data["jobs"][0]["saved_vs_on_demand_usd"] is None
    assert data["jobs"][0]["on_demand_usd"] is None

    shown = cli("report").output
    assert "against on-demand: not known" in shown  # was: 'saved - against on-demand'
    assert "- against" not in shown
    assert "Spend $0.0030 (" in shown  # under a cent: significant digits, not $0.00
    assert "saved vs on-demand $" in shown
    assert "saved_vs" not in shown and "job_id" not in shown
    page = render(build(PriceStore(str(odd_db)), now=at(5)))
    assert "<th>saved vs on-demand $</th>" in page and "<th>job</th>" in page


def test_amounts_in_words() -> None:
    assert [usd(v) for v in (0.0049, 0.0264, 12.5, -0.00012, 0.0, 1e-15, float("nan"),
                             None)] == [
        "$0.0049", "$0.03", "$12.50", "-$0.0001", "$0.00", "$0.00", "-", "-"]
    assert heading("saved_vs_launch_choice_usd") == "saved vs launch choice $"
    assert heading("usd_per_gb") == "$ per GB"


def test_the_launch_choice_kept_does_the_work_the_job_reported(store: PriceStore) -> None:
    """Two jobs on EAST at $1.0/h, 2 steps/s by their specs, placed 0-2 h. One reported
    step 3,600 at 2 h: 0.5 steps/s measured, so its launch choice kept takes the 2 h it
    took (not the half hour its spec's speed would make). The other reported 3,600 at 1 h
    (1 step/s measured) and ran on: 3,600 + 1 h x 1 step/s = 7,200 steps, 2 h."""
    east = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
    store.ingest(pd.DataFrame([(*east, "V100", 1, 8, 61.0, 1.0, pd.Timestamp(at(-10)),
                                "test")], columns=OBSERVATION_COLUMNS))
    done, running = job(store, "done", {"V100": 2.0}), job(store, "running", {"V100": 2.0})
    for job_id, reported_at in ((done, 2), (running, 1)):
        store.jobs.place(job_id, east, gpu_model="V100", gpu_count=1, at=at(0),
                         usd_per_hour=1.0, reason="launch", instance=f"i-{job_id}")
        store.jobs.end_placement(job_id, at(2))
        store.jobs.record_progress(job_id, 3600.0, at=at(reported_at))
    report = build(store, now=at(5))
    static = report.jobs.set_index("name")["launch_choice_usd"]
    assert static["done"] == pytest.approx(2.0)
    assert static["running"] == pytest.approx(2.0)
    assert report.jobs["saved_vs_launch_choice_usd"].tolist() == pytest.approx([0.0, 0.0])
    # A period that starts after the launch holds only part of the reported work: the
    # hours in it at the measured speed (1 h from 1 h on, on the same offering).
    later = build(store, since=at(1), now=at(5)).jobs.set_index("name")["launch_choice_usd"]
    assert later["done"] == pytest.approx(1.0)


def test_a_job_stopped_and_started_on_its_launch_choice_saves_nothing_against_it(
        store: PriceStore) -> None:
    """Placed 0-2 h, stopped, started again 5-7 h on the same offering, whose price was
    $1/h, $3/h while the job was stopped (2-5 h) and $2/h from 5 h. The launch choice kept
    stops and starts when the job did: it is the job's own $6, never a stretch 0-4 h
    through the stopped hours' prices ($8), which read as a loss of $2 for a job that never
    moved. A job moved in its second run keeps its runs too: 2 h at $1, 1 h at $2."""
    east = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
    west = ("aws", "us-west-2", "us-west-2a", "p3.2xlarge", "spot", "linux")
    rows = [(*east, "V100", 1, 8, 61.0, usd, pd.Timestamp(at(h)), "test")
            for h, usd in ((-10, 1.0), (2, 3.0), (5, 2.0))]
    rows.append((*west, "V100", 1, 8, 61.0, 0.5, pd.Timestamp(at(-10)), "test"))
    store.ingest(pd.DataFrame(rows, columns=OBSERVATION_COLUMNS))
    kept, moved = job(store, "kept", {"V100": 1.0}), job(store, "moved", {"V100": 1.0})
    for job_id in (kept, moved):
        store.jobs.place(job_id, east, gpu_model="V100", gpu_count=1, at=at(0),
                         usd_per_hour=1.0, reason="launch", instance=f"i-{job_id}-1")
        store.jobs.end_placement(job_id, at(2))
        store.jobs.place(job_id, east, gpu_model="V100", gpu_count=1, at=at(5),
                         usd_per_hour=2.0, reason="start", instance=f"i-{job_id}-2")
    store.jobs.end_placement(kept, at(7))
    store.jobs.end_placement(moved, at(6))  # moved to west for its last hour
    store.jobs.place(moved, west, gpu_model="V100", gpu_count=1, at=at(6), usd_per_hour=0.5,
                     reason="migration", instance=f"i-{moved}-3")
    store.jobs.end_placement(moved, at(7))
    for job_id in (kept, moved):
        store.jobs.record_progress(job_id, 4 * 3600.0, at=at(7))  # 1 step/s over 4 h
    report = build(store, now=at(9)).jobs.set_index("name")
    assert report.loc["kept", "usd"] == pytest.approx(6.0)
    assert report.loc["kept", "launch_choice_usd"] == pytest.approx(6.0)
    assert report.loc["kept", "saved_vs_launch_choice_usd"] == pytest.approx(0.0)
    assert report.loc["moved", "usd"] == pytest.approx(2.0 + 2.0 + 0.5)
    assert report.loc["moved", "launch_choice_usd"] == pytest.approx(6.0)
    assert report.loc["moved", "saved_vs_launch_choice_usd"] == pytest.approx(1.5)
