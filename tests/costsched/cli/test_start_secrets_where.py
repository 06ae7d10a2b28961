"""Where a shell lacks a job's secret, `status` says where a start takes it from only under
a job that a start applies to (stopped, by its user or a budget's cap, failed, or ended
short of its steps), right after its start hint; never under a running or succeeded job,
whose lines may name a start to make after a stop to come."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from costsched import launch_secrets
from costsched.cli.status_next import next_to_start, secrets_for_start

AHEAD = ("it will be stopped at its budget at between about 31% and 53%: give it more: "
         "`costsched start capped --budget USD` after its stop")
HINT = "stopped at its own budget: ...; give it enough: `costsched start capped --budget 0.014`"


def job(state: str, short: str = "") -> SimpleNamespace:
    record = SimpleNamespace(id=12, state=state,
                             spec={"spec": {"task": {"secrets": ["WANDB_API_KEY"]}}})
    return SimpleNamespace(record=record, steps_not_reached=short)


@pytest.fixture(autouse=True)
def new_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launch_secrets, "_GIVEN", {})
    monkeypatch.delenv("WANDB_API_KEY", raising=False)


@pytest.mark.parametrize("state", ["running", "succeeded", "pending", "recovering"])
def test_no_secret_line_under_a_job_no_start_applies_to(state: str) -> None:
    assert secrets_for_start(job(state), [AHEAD]) == []  # was: the secret line


@pytest.mark.parametrize(("state", "short"), [("stopped", ""), ("failed", ""),
                                              ("succeeded", "exited 0 at step 1,000 ...")])
def test_the_secret_line_under_a_job_a_start_applies_to(state: str, short: str) -> None:
    [line] = secrets_for_start(job(state, short), [HINT])
    assert line.startswith("a start takes its secret WANDB_API_KEY from your shell")


def test_the_secret_line_stands_next_to_the_start_hint() -> None:
    said = ["instance local-12", HINT, "throughput: ok"]
    added = secrets_for_start(job("stopped"), said)
    assert next_to_start(said, added) == ["instance local-12", HINT, *added, "throughput: ok"]
