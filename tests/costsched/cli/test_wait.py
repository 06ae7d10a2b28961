"""`status --wait` looks at the jobs soon at first (POLL_FIRST), then less and less often
while nothing changes (up to POLL_MOST), and soon again after a job changed state, sleeping
in between (the clock and the sleep are the test's); it shows what it waits for, and tells
a wait that ran out and a job waited for that failed by their exit codes."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import click
import pytest
import typer
from typer.testing import CliRunner

from costsched import daemon
from costsched.cli import app
from costsched.cli import jobs as cli_jobs
from costsched.cli.wait_ended import EXIT_WAIT_RAN_OUT, EXIT_WAITED_FAILED
from costsched.store import PriceStore


def _fake_job(monkeypatch: pytest.MonkeyPatch, ends: float = 30.0, last: str = "done"
              ) -> tuple[list[float], list[float], list[str], list[str]]:
    """A job that runs after 1 s and ends after `ends` s in the state `last`, on the test's
    clock: the sleeps, the looks, the states shown and the waiting lines."""
    clock = {"now": 0.0}
    sleeps: list[float] = []
    looks: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock["now"] += seconds

    def status(store, launcher, job, **filters):  # noqa: ANN001, ANN003, ANN202
        looks.append(clock["now"])
        final = clock["now"] >= ends
        state = last if final else "running" if clock["now"] >= 1.0 else "launching"
        record = SimpleNamespace(id=1, final=final, name="train", state=state)
        return [SimpleNamespace(record=record, progress=min(1.0, clock["now"] / 30),
                                progress_source="reported", reported=True, step=0.0,
                                trouble="", setup_since=None, in_setup=False)]

    shown: list[str] = []
    monkeypatch.setattr(cli_jobs.time, "monotonic", lambda: clock["now"])
    monkeypatch.setattr(cli_jobs.time, "sleep", sleep)
    monkeypatch.setattr(cli_jobs.service, "status", status)
    monkeypatch.setattr(cli_jobs, "open_store", lambda db: None)
    monkeypatch.setattr("costsched.service.glance.missing_job", lambda db, job: None)
    monkeypatch.setattr(cli_jobs, "job_launcher", lambda store, job: None)
    monkeypatch.setattr(cli_jobs, "_rearm", lambda *_: None)
    monkeypatch.setattr(daemon, "status", lambda store: [])
    monkeypatch.setattr("costsched.daemon.supervision.recovery", lambda *_, **__: None)
    monkeypatch.setattr(cli_jobs, "print_budgets", lambda store, **_: None)
    monkeypatch.setattr(cli_jobs, "budgets_now", lambda store, **_: [])
    monkeypatch.setattr("costsched.service.booking.held_unused", lambda *_: [])
    monkeypatch.setattr(cli_jobs, "_print_status", lambda shown_, json_out, scheduled=None, **_:
                        shown.append(shown_[0].record.state))
    lines: list[str] = []
    real_waiting_line = cli_jobs._waiting_line
    monkeypatch.setattr(cli_jobs, "_waiting_line",
                        lambda s, left: lines.append(real_waiting_line(s, left)) or lines[-1])
    return sleeps, looks, shown, lines


def test_status_wait_sleeps_between_looks(monkeypatch: pytest.MonkeyPatch,
                                          store: PriceStore, db_path: Path) -> None:
    monkeypatch.setenv("COSTSCHED_DB", str(db_path))  # an empty store; the looks are faked
    sleeps, looks, shown, lines = _fake_job(monkeypatch)
    result = CliRunner().invoke(app, ["status", "--wait", "60"])
    assert result.exit_code == 0, result.output
    # 0.5 s, then 1.5 times longer; soon again once the job runs; never more than 5 s.
    assert sleeps == [0.5, 0.75, 0.5, 0.75, 1.125, 1.6875, 2.53125, 3.796875, 5.0, 5.0, 5.0,
                      5.0]
    assert looks == [0.0] + [sum(sleeps[:i + 1]) for i in range(len(sleeps))]
    assert shown == ["done"]
    assert lines[0] == "waiting (60 s left): train launching 0%"
    assert lines[-1].startswith("waiting (33 s left): train running 88%")
    assert "not ended" not in result.output


def test_a_wait_that_runs_out_names_the_jobs_not_ended(monkeypatch: pytest.MonkeyPatch,
                                                        store: PriceStore,
                                                        db_path: Path) -> None:
    monkeypatch.setenv("COSTSCHED_DB", str(db_path))
    _fake_job(monkeypatch, ends=30.0)
    result = CliRunner().invoke(app, ["status", "--wait", "15"])
    # A script tells it from a job that ended (0) by its exit code, said in --help.
    assert result.exit_code == EXIT_WAIT_RAN_OUT == 124, result.output
    assert result.stderr.splitlines()[-1] == (
        "after --wait 15, 1 job has not ended: job 1 (train) running")
    group = typer.main.get_command(app)
    command = group.get_command(click.Context(group), "status")  # type: ignore[attr-defined]
    [said] = [p.help for p in command.params if p.name == "wait"]
    assert f"exit code {EXIT_WAIT_RAN_OUT} when the wait ends before every job" in said


@pytest.mark.parametrize(("last", "changed", "wait"), [
    (None, False, 0.5), (0.5, False, 0.75), (4.0, False, 5.0), (5.0, False, 5.0),
    (5.0, True, 0.5)])
def test_the_wait_between_looks(last: float | None, changed: bool, wait: float) -> None:
    assert cli_jobs.next_poll(last, changed) == wait


@pytest.mark.parametrize(("argv", "ends"), [(["status", "--wait", "60"], 30.0),
                                            (["status", "1", "--wait", "60"], 30.0),
                                            (["status", "1", "--wait", "60"], 0.0)])
def test_a_wait_for_a_job_that_ended_failed_exits_with_its_own_code(
        monkeypatch: pytest.MonkeyPatch, store: PriceStore, db_path: Path, argv: list[str],
        ends: float) -> None:
    """Failed during the wait, or before it for the job named: exit code 1, so that
    `status JOB --wait N && costsched fetch JOB DIR` does not fetch."""
    monkeypatch.setenv("COSTSCHED_DB", str(db_path))
    _fake_job(monkeypatch, ends=ends, last="failed")
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == EXIT_WAITED_FAILED == 1, result.output
    assert result.stderr.splitlines()[-1] == (
        "after --wait 60, 1 job waited for ended failed: job 1 (train)")
    group = typer.main.get_command(app)
    command = group.get_command(click.Context(group), "status")  # type: ignore[attr-defined]
    [said] = [p.help for p in command.params if p.name == "wait"]
    assert f"else {EXIT_WAITED_FAILED} when a job waited for" in said


def test_a_job_that_failed_before_a_wait_over_every_job_is_no_news_of_it(
        monkeypatch: pytest.MonkeyPatch, store: PriceStore, db_path: Path) -> None:
    monkeypatch.setenv("COSTSCHED_DB", str(db_path))
    _fake_job(monkeypatch, ends=0.0, last="failed")
    result = CliRunner().invoke(app, ["status", "--wait", "60"])
    assert result.exit_code == 0 and "ended failed" not in result.output, result.output
    waited = CliRunner().invoke(app, ["status", "--wait", "0", "1"])  # no wait: shown only
    assert waited.exit_code == 0, waited.output
