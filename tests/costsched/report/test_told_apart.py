"""The report's figures that are neither dollars nor hours (GB, expected preemptions) read
at one precision down their column; two jobs of one name are told apart by their ids in
the tables that show names alone; a job the report is asked for that no job is names
the jobs there are."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from costsched.model import InvalidInput
from costsched.report.cells import format_cell, shown_rows
from costsched.report.data import reported_jobs
from costsched.store import PriceStore


def column(name: str, key: str, rows: list[dict]) -> list[str]:
    places, shown = shown_rows(name, {name: rows})
    return [format_cell(key, r[key], places) for r in shown]


def test_gb_read_at_one_precision() -> None:
    rows = [{"move_id": 1, "job_id": 1, "gb": 0.1, "usd_per_gb": 0.02, "usd": 0.002},
            {"move_id": 2, "job_id": 1, "gb": 0.0043, "usd_per_gb": 0.02, "usd": 0.0001}]
    assert column("egress", "gb", rows) == ["0.1000", "0.0043"]  # not 0.10 and 0.0043


def test_expected_preemptions_read_at_one_precision() -> None:
    rows = [{"job_id": j, "name": n, "expected_preemptions": p}
            for j, n, p in ((1, "a", 0.5), (2, "b", 0.0042))]
    assert column("estimates", "expected_preemptions", rows) == ["0.5000", "0.0042"]


def test_jobs_of_one_name_are_told_apart_by_their_ids() -> None:
    day = "2026-03-01T00:00:00Z"
    rows = [{"day": day, "job_id": j, "name": n, "cloud": "aws", "billed_hours": 1.0,
             "compute_usd": 1.0, "egress_usd": 0.0, "usd": 1.0}
            for j, n in ((1, "fit"), (2, "fit"), (3, "other"))]
    assert column("days", "name", rows) == ["fit (job 1)", "fit (job 2)", "other"]


def test_an_unknown_job_names_the_jobs_there_are(store: PriceStore) -> None:
    at = datetime(2026, 3, 1, tzinfo=timezone.utc)
    for name in ("alpha", "beta"):
        store.jobs.create(name, {"spec": {"name": name}}, 10.0, at=at)
    with pytest.raises(InvalidInput) as raised:
        reported_jobs(store, "nope")
    assert str(raised.value) == ("job 'nope': no job of that id or name in the store; the "
                                 "jobs: alpha, beta")
    with pytest.raises(InvalidInput, match="did you mean 'alpha'"):
        reported_jobs(store, "alpah")
