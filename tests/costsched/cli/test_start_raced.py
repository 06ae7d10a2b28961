"""Two `costsched start JOB` at once: the one that loses says in one line that another
costsched is starting the job, and exits 75 (as a command does when another costsched
acts on the job), never the store's own words ("job 5 is 'pending': expected stopped to
move it to 'pending'") nor "stop it first" of the job itself. The winner's start is made
to happen in between the loser's checks and its own start (no timing)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from costsched.cli import jobs as cli_jobs
from costsched.service import jobs as service
from costsched.service.jobs import launches
from costsched.store import PriceStore
from costsched.store.jobs import StaleState
from tests.costsched.service.test_start_secrets import launch_two


@pytest.fixture()
def stopped(cli, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN001
    store = PriceStore(str(db_path))
    launcher, _, plain = launch_two(store, tmp_path, monkeypatch)
    assert service.stop(store, launcher, plain).state == "stopped"
    monkeypatch.setattr(cli_jobs, "job_launcher", lambda store, job: launcher)
    yield cli, store, plain, monkeypatch
    store.dispose()


def _started_meanwhile(store: PriceStore, job: int, monkeypatch: pytest.MonkeyPatch,
                       step: str) -> None:
    """The other start moves the job to pending when this one reaches `step`."""
    original = getattr(launches, step)

    def other_start_first(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        if store.jobs.get(job).state == "stopped":
            store.jobs.transition(job, "pending", at=datetime.now(timezone.utc),
                                  expect="stopped", detail="started again by the user")
        return original(*args, **kwargs)

    monkeypatch.setattr(launches, step, other_start_first)


@pytest.mark.parametrize("step", ["_within_budgets", "_ran_to_its_end"])
def test_the_start_that_loses_says_another_costsched_starts_the_job(stopped,
                                                                    step: str) -> None:
    cli, store, job, monkeypatch = stopped
    _started_meanwhile(store, job, monkeypatch, step)
    result = cli("start", "plain", "--wait", "0")
    assert result.exit_code == 75, result.output
    assert " ".join(result.output.split()) == (
        f"error: job {job} (plain) is being started by another costsched: nothing to do "
        f"here; `costsched status {job}` shows how it stands")
    assert store.jobs.get(job).state == "pending"  # the other start's, left to it
    assert not store.moves.of_job(job)[-1:] or store.moves.of_job(job)[-1].kind != "start"


def test_a_stop_whose_job_keeps_changing_says_another_costsched_acts_on_it(
        stopped) -> None:
    """A stop that loses every try to other writers (the job recovering meanwhile) says
    so, not "is recovering: nothing to stop" (which reads as a job that has ended)."""
    cli, store, job, monkeypatch = stopped
    store.jobs.transition(job, "recovering", at=datetime.now(timezone.utc), expect="stopped")

    def kept_changing(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise StaleState(f"job {job}: its state kept changing; try again")

    monkeypatch.setattr(type(store.jobs), "transition", kept_changing)
    result = cli("stop", "plain")
    assert result.exit_code == 75, result.output
    assert " ".join(result.output.split()) == (
        f"error: job {job} (plain) is being recovered by another costsched: ask again to "
        "stop it")
