"""A finished placement's hours read in the report as `status` reads them, and a job's
hours are the sum of its placements' as written (docs/reports.md, How amounts are
written)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from costsched.store import PriceStore
from tests.costsched.report.scenario import EAST, GCP, at, job, observe


@pytest.fixture()
def averaged(db_path: Path) -> Path:
    """Launched on EAST for 67 s, charged $0.0796/h for its first 36 s and $0.0801/h
    after (an average of $0.079831/h); moved to GCP for 33 s at $0.05/h ($0.0014857 and
    $0.00045833: at four decimals $0.0015 + $0.0005 = $0.0020). 67 s is 0.018611 h:
    status writes 0.0186 h x $0.079831/h = $0.0015, the hours as they read, at which the
    product reads as the amount."""
    store = PriceStore(str(db_path))
    observe(store, EAST, [(-10, 0.0796), (0.01, 0.0801)])
    observe(store, GCP, [(-10, 0.05)])
    fit = job(store, "fit", {"V100": 1.0, "A100": 1.0})
    store.jobs.place(fit, EAST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=0.0796,
                     reason="launch", instance="i-1")
    store.jobs.end_placement(fit, at(67 / 3600))
    store.jobs.place(fit, GCP, gpu_model="A100", gpu_count=1, at=at(0.5), usd_per_hour=0.05,
                     reason="migration", instance="i-2")
    store.jobs.end_placement(fit, at(0.5 + 33 / 3600))
    store.jobs.transition(fit, "succeeded", at=at(1))
    store.dispose()
    return db_path


def _cells(text: str, first: str) -> list[str]:
    """The cells of the table row of `text` that begins with `first`."""
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if cells and cells[0] == first:
            return cells
    raise AssertionError(f"no row {first!r} in:\n{text}")


def test_a_placements_hours_read_as_status_reads_them(averaged: Path, cli) -> None:  # noqa: ANN001
    status = cli("status", "1").output
    launch = re.search(r"placed at its launch on .*: billed ([0-9.]+) h x", status)
    moved = re.search(r"placed by its migration on .*: billed ([0-9.]+) h x", status)
    assert launch and moved, status
    assert launch[1] == "0.0186"
    shown = cli("report", "--wide").output
    days = [_cells(line, "2024-06-01") for line in shown.splitlines()
            if line.strip("│ ").startswith("2024-06-01")]
    hours = {cells[2]: cells[3] for cells in days}  # by cloud
    assert hours == {"aws": launch[1], "gcp": moved[1]}
    assert _cells(shown, "aws")[1] == launch[1]  # Spend per cloud
    # The job's hours: its placements' as written, added up.
    job_hours = _cells(shown, "1")[4]
    assert job_hours == f"{float(launch[1]) + float(moved[1]):.4f}" == "0.0278"
