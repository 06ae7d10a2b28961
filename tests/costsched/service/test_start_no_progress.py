"""A job whose command stops short of its declared steps by itself (it exits 0 at the same
step each time): `start` resumes it at that step, it exits 0 there again, and `status`
says that its command stops there by itself (check its `run` against its `steps`), never
the hint to start it again, which would only bill another run."""

from __future__ import annotations

import sys

import pytest

from costsched.cli.status_lines import print_status
from costsched.service import jobs as service
from tests.costsched.service.job_scripts import PREAMBLE
from tests.costsched.service.test_jobs import STEPS, wait_for, world, write_spec  # noqa: F401

HALF = STEPS // 2
# Every run checkpoints at step HALF, reports it and exits 0: its command stops there.
JOB = PREAMBLE + """\
(saved / "step.txt").write_text(str(int(sys.argv[1]) // 2))
report(int(sys.argv[1]) // 2)
time.sleep(0.5)
sys.exit(0)
"""


def _said(store, launcher, job: int, capsys: pytest.CaptureFixture[str]) -> str:  # noqa: ANN001
    print_status(service.status(store, launcher, job, reconcile_first=False), json_out=False)
    return " ".join(capsys.readouterr().out.split())


def test_a_start_that_ends_short_at_the_same_step_says_the_command_stops_there(
        world, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    store, launcher, tmp = world
    script = tmp / "job.py"
    script.write_text(JOB)
    [job] = service.launch(store, write_spec(tmp, run=f"{sys.executable} {script} {STEPS}"),
                           launcher=launcher, wait_seconds=20,
                           checkpoint_root=str(tmp / "checkpoints"))
    first = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    wait_for(lambda: launcher.status(first).state == "succeeded")
    service.reconcile(store, launcher)
    said = _said(store, launcher, job.id, capsys)
    assert f"`costsched start {job.id}` does the rest" in said, said  # once: it may go on

    service.start(store, launcher, job.id)
    second = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    wait_for(lambda: launcher.status(second).state == "succeeded")
    service.reconcile(store, launcher)
    assert store.jobs.get(job.id).state == "succeeded"
    said = _said(store, launcher, job.id, capsys)
    assert f"`costsched start {job.id}` does the rest" not in said, said
    assert (f"its start made no progress: it exited 0 at step {HALF:,}, no further than its "
            "run before, so its command stops there by itself (check its `run` against "
            f"`steps: {STEPS:,}`)") in said, said
