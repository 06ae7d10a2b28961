"""`status --state` takes every state `status` shows, the shown-only ones (`finishing`,
`failing`) too, and lists exactly the jobs shown in it: a job stored running whose
instance ended reads, and is listed as, what the next pass makes of it."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.model import JOB_STATES, SHOWN_STATES
from costsched.service import jobs as service
from costsched.service.job_filters import parse_states
from costsched.vocabulary import SHOWN_ONLY
from tests.costsched.cli.test_status_one_state import _launched, _until, world  # noqa: F401


def test_the_states_taken_are_those_shown() -> None:
    assert set(SHOWN_STATES) == {*JOB_STATES, *SHOWN_ONLY}
    assert parse_states(["failing", "Finishing"]) == ["failing", "finishing"]
    help_text = CliRunner().invoke(app, ["status", "--help"], env={"COLUMNS": "250"}).stdout
    assert all(s in help_text for s in SHOWN_STATES)


def test_each_state_lists_exactly_the_jobs_shown_in_it(world) -> None:  # noqa: F811
    store, launcher, db, tmp = world
    wait = f"until [ -e {tmp / 'go'} ]; do sleep 0.05; done"  # every job launched first
    fails, failing = _launched(store, launcher, tmp, "fails", f"{wait}; exit 3")
    ends, ending = _launched(store, launcher, tmp, "ends", wait)
    runs, _ = _launched(store, launcher, tmp, "runs", "sleep 60")
    lost, losing = _launched(store, launcher, tmp, "lost", "sleep 60")
    (tmp / "go").touch()
    launcher.preempt(losing)
    for instance, state in ((failing, "failed"), (ending, "succeeded"), (losing, "preempted")):
        _until(launcher, instance, state)

    def listed(*states: str, limit: int | None = None) -> list[int]:
        return [s.record.id for s in service.status(store, launcher, states=list(states),
                                                    reconcile_first=False, limit=limit)]

    assert listed("failing") == [fails]
    assert listed("finishing") == [ends]
    assert listed("running") == [runs]
    assert listed("recovering") == [lost]
    assert listed("running", "failing") == [fails, runs]
    assert listed("running", "recovering", limit=1) == [lost]
    assert listed("failed") == []
    shown = CliRunner().invoke(app, ["status", "--db", db, "--no-reconcile", "--json",
                                     "--state", "failing"])
    assert shown.exit_code == 0, shown.output
    assert [(j["id"], j["state"]) for j in json.loads(shown.stdout)["jobs"]] == [
        (fails, "failing")]


@pytest.mark.parametrize(("typed", "meant"), [("failng", "failing"), ("finshing", "finishing")])
def test_a_misspelt_shown_state_is_answered_with_it(typed: str, meant: str) -> None:
    from costsched.model import InvalidInput

    with pytest.raises(InvalidInput, match=f"did you mean '{meant}'"):
        parse_states([typed])
