"""`report --job` takes a sweep's name (all its jobs) and a pattern, as `status --name`
takes one: the report's jobs, totals and title are those of the jobs chosen."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costsched.report.data import reported_jobs
from costsched.store import PriceStore
from tests.costsched.report.scenario import EAST, WEST, at, job, observe, place

UNTIL = "2024-06-01T23:00Z"


@pytest.fixture()
def sweep_db(db_path: Path) -> Path:
    """Three jobs of sweep lm (1 h on EAST at $1/h each) and one other, fit (1 h on WEST
    at $0.5/h)."""
    store = PriceStore(str(db_path))
    observe(store, EAST, [(-10, 1.0)])
    observe(store, WEST, [(-10, 0.5)])
    for i in (1, 2, 3):
        one = job(store, f"lm-{i}", {"V100": 1.0})
        place(store, one, EAST, 0, "launch", f"lm-{i}")
        store.jobs.end_placement(one, at(1))
    fit = job(store, "fit", {"V100": 1.0})
    place(store, fit, WEST, 0, "launch", "fit")
    store.jobs.end_placement(fit, at(1))
    store.dispose()
    return db_path


@pytest.mark.parametrize("asked", ["lm", "lm-*"])
def test_a_sweep_or_a_pattern_is_reported_whole(cli, sweep_db: Path, asked: str) -> None:
    result = cli("report", "--until", UNTIL, "--job", asked, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [j["name"] for j in data["jobs"]] == ["lm-1", "lm-2", "lm-3"]
    assert data["totals"]["usd"] == pytest.approx(3.0)  # theirs, not fit's
    words = ("3 jobs of sweep lm (lm-1, lm-2, lm-3)" if asked == "lm"
             else "3 jobs matching 'lm-*' (lm-1, lm-2, lm-3)")
    assert data["chosen"]["jobs"] == words and len(data["chosen"]["job_ids"]) == 3
    text = cli("report", "--until", UNTIL, "--job", asked)
    assert text.exit_code == 0, text.output
    assert f"Cost report of {words}: " in text.output
    assert "fit" not in text.output


def test_one_job_s_report_names_it_and_every_job_s_names_none(cli, sweep_db: Path) -> None:
    one = cli("report", "--until", UNTIL, "--job", "fit")
    assert one.exit_code == 0 and "Cost report of job 4 (fit): " in one.output
    assert "Cost report of job 4 (fit): " in cli("report", "--until", UNTIL, "--job",
                                                  "4").output
    every = cli("report", "--until", UNTIL, "--json")
    assert json.loads(every.stdout)["chosen"] is None
    assert "Cost report: " in cli("report", "--until", UNTIL).output


def test_a_pattern_that_matches_no_job_is_one_line(cli, sweep_db: Path) -> None:
    result = cli("report", "--job", "lx-*")
    assert result.exit_code == 2
    assert "--job 'lx-*': no job's name matches it; did you mean" in result.stderr
    result = cli("report", "--job", "lx")  # a plain name, refused as before
    assert result.exit_code == 2 and "--job 'lx': no job of that name" in result.stderr


def test_a_sweep_s_jobs_are_its_numbered_ones_and_a_namesake_comes_first(
        sweep_db: Path) -> None:
    """A sweep's jobs are NAME-<number>, never NAME-something; a job named as asked is
    that job alone (as before)."""
    store = PriceStore(str(sweep_db))
    try:
        job(store, "lm-big", {"V100": 1.0})
        assert [r.name for r in reported_jobs(store, "lm")] == ["lm-1", "lm-2", "lm-3"]
        job(store, "lm", {"V100": 1.0})
        assert [r.name for r in reported_jobs(store, "lm")] == ["lm"]
    finally:
        store.dispose()


def test_the_html_file_says_which_jobs(cli, sweep_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    result = cli("report", "--until", UNTIL, "--job", "lm", "--html", out)
    assert result.exit_code == 0, result.output
    assert "<h1>costsched cost report of 3 jobs of sweep lm (lm-1, lm-2, lm-3)</h1>" in \
        out.read_text()
