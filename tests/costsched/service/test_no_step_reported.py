"""A running job that writes no step to $COSTSCHED_PROGRESS_FILE is told so once its
command has run a minute past its setup, or three of its checkpoint intervals when they are
shorter (as a job that publishes no checkpoint is: `launchers.unseen`, one rule), in one
line naming the file and what its forecast and moves assume meanwhile; not before.
`status`, `status --json`, the dashboard's job page and `migrate` say it. A real
local-launcher job that reports no step."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from costsched.cli.status_lines import problems
from costsched.service import jobs as service
from costsched.service import views
from launchers.unseen import INTERVAL_ENV, wait_seconds
from tests.costsched.service.job_scripts import PREAMBLE
from tests.real_jobs import SETTLE, STEPS, launch, wait_for, world  # noqa: F401

# Trains without writing its step (a script written for another tool).
SILENT = PREAMBLE + """\
Path(sys.argv[1]).write_text(str(time.time()))
print("training", flush=True)
while True:
    time.sleep(0.1)
"""
# Told it checkpoints every 3 s: its step is looked for within 9 s of its run.
ENVS = {INTERVAL_ENV: "0.05"}
WAIT = wait_seconds(ENVS)
LINE = (f"no step reported in 9 s of its run: write the step to $COSTSCHED_PROGRESS_FILE "
        f"(docs/job-contract.md); until then its forecast and moves assume none of its "
        f"{STEPS:,} steps done")


def _status(store, launcher, job_id: int):  # noqa: ANN001, ANN202
    [s] = service.status(store, launcher, job_id, reconcile_first=False)
    return s


def test_a_job_that_reports_no_step_is_told_so_after_its_wait(
        world, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    store, launcher, tmp = world
    started = tmp / "started"
    job, instance = launch(world, SILENT, started, envs=ENVS)
    wait_for(lambda: "training" in launcher.logs(instance, tail=5))
    began = time.monotonic()  # its command runs by now: it began no later
    early = _status(store, launcher, job.id)
    if time.monotonic() - began < WAIT / 2:  # (surely well inside its wait)
        assert not any("no step reported" in line for line in problems(early)), problems(early)
        assert early.no_step == ""
        assert launcher.status(instance).no_step_after is None

    wait_for(lambda: launcher.status(instance).no_step_after, seconds=WAIT + SETTLE)
    # not said early: its command had run about its wait (its start, less the moments
    # its interpreter took to begin, is when the agent counts from)
    assert time.time() - float(started.read_text()) >= WAIT / 2
    s = _status(store, launcher, job.id)
    assert LINE in problems(s), problems(s)
    assert sum("no step reported" in line for line in problems(s)) == 1  # said once
    [doc] = views.status_document([s])
    assert doc["no_step"] == LINE
    # `migrate`'s figures for it price every step as left, and say so
    unreported = views.unreported_totals(store, [SimpleNamespace(job_id=job.id)])
    assert unreported == {job.id: STEPS}

    # the dashboard's job page says it too, under the same words
    pytest.importorskip("starlette", reason="the dashboard extra is not installed")
    from starlette.testclient import TestClient

    from costsched.dashboard.app import create_app

    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp / "instances"))
    client = TestClient(create_app(store))
    assert client.get(f"/api/jobs/{job.id}").json()["job"]["no_step"] == LINE
    page = client.get(f"/jobs/{job.id}").text
    assert "no step reported in 9 s of its run" in page
