"""A job whose command stops short of its declared steps by itself (it exits 0 at the same
step each time): `start` resumes it at that step, it exits 0 there again, and `status`
says that its command stops there by itself (check its `run` against `steps: N in FILE`), never
the hint to start it again, which would only bill another run."""

from __future__ import annotations

import pytest

from costsched.cli.status_lines import print_status
from costsched.service import jobs as service
from tests.costsched.service.job_scripts import PREAMBLE
from tests.costsched.service.test_jobs import STEPS
from tests.real_jobs import instance_of, launch, wait_for

HALF = STEPS // 2
# Every run checkpoints at step HALF, reports it and, once `go` exists, exits 0: its
# command stops there. (The launch waits for its job to run and closes a job that has
# ended by then: its first run waits for the test to let it end.)
JOB = PREAMBLE + """\
(saved / "step.txt").write_text(str(int(sys.argv[1]) // 2))
report(int(sys.argv[1]) // 2)
while not Path(sys.argv[2]).exists():
    time.sleep(0.05)
sys.exit(0)
"""


def _said(store, launcher, job: int, capsys: pytest.CaptureFixture[str]) -> str:  # noqa: ANN001
    print_status(service.status(store, launcher, job, reconcile_first=False), json_out=False)
    return " ".join(capsys.readouterr().out.split())


def test_a_start_that_ends_short_at_the_same_step_says_the_command_stops_there(
        world, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    store, launcher, tmp = world
    go = tmp / "go"
    job, first = launch(world, JOB, STEPS, go)
    go.touch()
    wait_for(lambda: launcher.status(first).state == "succeeded")
    service.reconcile(store, launcher)
    said = _said(store, launcher, job.id, capsys)
    assert f"`costsched start {job.id}` does the rest" in said, said  # once: it may go on

    service.start(store, launcher, job.id)
    second = instance_of(store, job.id)
    wait_for(lambda: launcher.status(second).state == "succeeded")
    service.reconcile(store, launcher)
    assert store.jobs.get(job.id).state == "succeeded"
    said = _said(store, launcher, job.id, capsys)
    assert f"`costsched start {job.id}` does the rest" not in said, said
    assert (f"its start made no progress: it exited 0 at step {HALF:,}, no further than its "
            "run before, so its command stops there by itself (check its `run` against "
            f"steps: {STEPS} in ") in said, said


# Its first run reports step 1 (read by a pass), then step 2, and exits 0 short of its
# steps; a start resumes it and its command exits 0 at once, reporting nothing: a porter's
# script whose epochs loop is over ("for epoch in range(2, 2)").
SILENT_START = PREAMBLE + """\
if (saved / "step.txt").exists():
    sys.exit(0)
report(1)
go_on = Path(sys.argv[1])
while not go_on.exists():
    time.sleep(0.05)
(saved / "step.txt").write_text("2")
report(2)
time.sleep(0.5)
sys.exit(0)
"""


def test_a_start_that_reports_no_step_at_all_made_no_progress(
        world, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    """The start's run reported no step: it made no progress, though the job's step (2,
    reported as its first run ended) is past the last reading a pass took of that run (1)."""
    store, launcher, tmp = world
    go_on = tmp / "go-on"
    job, first = launch(world, SILENT_START, go_on)
    wait_for(lambda: launcher.status(first).step == 1)
    service.reconcile(store, launcher)  # a pass reads step 1 while it runs
    go_on.touch()
    wait_for(lambda: launcher.status(first).state == "succeeded")
    service.reconcile(store, launcher)
    assert store.jobs.get(job.id).steps_done == 2

    service.start(store, launcher, job.id)
    second = instance_of(store, job.id)
    wait_for(lambda: launcher.status(second).state == "succeeded")
    service.reconcile(store, launcher)
    said = _said(store, launcher, job.id, capsys)
    assert f"`costsched start {job.id}` does the rest" not in said, said
    assert ("its start made no progress: it exited 0 at step 2, no further than its run "
            "before, so its command stops there by itself") in said, said
