"""The line `status` gives a job its own budget's cap stopped: one command that starts it
again, the amount `start` itself names as enough, which run as printed starts it (local
launcher, real subprocesses, a real SQLite store); and whether that budget is still set
is the job's own word, not whether the caller read the budgets."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from costsched.cli.status_lines import cap_lines
from costsched.service.jobs import budget_launch
from tests.cleanup import stop_unless_ended
from tests.costsched.service.test_budget_caps import _project
from tests.costsched.service.test_budget_launch_ahead import priced  # noqa: F401


def test_the_command_the_stop_line_prints_starts_the_job_as_printed(
        tmp_path: Path, priced, cli, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    store, launcher = priced
    # Its plan ($0.02: 20 s at $3.60/h) within its budget, but not its spend and its rest
    # (in whole seconds, and one more) at the watch of its wait: the watch stops it.
    project = _project(tmp_path, "watched", {"budget": 0.0205}, steps=2000, speed=100)
    monkeypatch.chdir(project)
    # A launch that checked nothing: the watch of its wait stops the job at its cap.
    monkeypatch.setattr(budget_launch, "launch_fits", lambda *args, **kwargs: [])
    launched = cli("launch", "job.yaml", "--launcher", "local", "--wait", "1")
    assert launched.exit_code == 0, launched.output
    [job_id] = (int(j) for j in store.jobs.list()["id"])
    try:
        assert store.jobs.get(job_id).state == "stopped"
        shown = cli("status", str(job_id), "--no-reconcile")
        assert shown.exit_code == 0, shown.output
        said = " ".join(shown.output.split())
        assert "stopped at its own budget: " in said, said  # the stop's own reason
        assert "would pass the budget of $0.0205" in said, said
        assert " else " not in said and "if that covers" not in said, said  # one command
        found = re.search(r"`costsched start (watched --budget [0-9.]+)`", said)
        assert found, said
        started = cli("start", *found.group(1).split(), "--wait", "0")
        assert started.exit_code == 0, started.output
        assert store.jobs.get(job_id).state == "running"
    finally:
        stop_unless_ended(store, launcher, job_id)


def _stopped(why: str, spec: dict) -> SimpleNamespace:
    return SimpleNamespace(record=SimpleNamespace(state="stopped", name="fit", id=4,
                                                  spec={"spec": spec}),
                           stopped_why=why)


def test_a_budget_still_set_is_never_said_gone_when_the_caller_read_none(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "team.toml"
    config.write_text("[budgets.named.team]\nusd = 5\n")
    monkeypatch.setenv("COSTSCHED_CONFIG", str(config))
    own = _stopped("stopped at its own budget: over", {"constraints": {"budget": 1.0}})
    [line] = cap_lines(own, [])  # type: ignore[arg-type]
    assert "no longer configured" not in line
    assert "`costsched start fit --budget USD`" in line
    team = _stopped("stopped at budget team: over", {"constraints": {"budget_name": "team"}})
    [line] = cap_lines(team, [])  # type: ignore[arg-type]
    assert "no longer configured" not in line and "budgets.named.team.usd" in line
    gone = _stopped("stopped at budget old: over", {"constraints": {"budget_name": "old"}})
    [line] = cap_lines(gone, [])  # type: ignore[arg-type]
    assert "that budget is no longer configured" in line
