"""A job that exited 0 short of its declared steps with no checkpoint is told that a start
does the rest from step 0 (it published no checkpoint), never from a checkpoint it does not
have; once a start of it ended short again at the same step, that its command stops there
by itself, however early a pass read its run before. A real local-launcher job that
reports 150 of its steps and exits 0."""

from __future__ import annotations

import sys

import pytest

from costsched.cli.status_lines import print_status
from costsched.service import jobs as service
from tests.costsched.service.job_scripts import PREAMBLE
from tests.costsched.service.test_jobs import STEPS, wait_for, world, write_spec  # noqa: F401

# Reports step 100, then (once `go` exists: at once in a later run) 150, saves nothing,
# exits 0: every run ends at step 150.
JOB = PREAMBLE + """\
report(100)
while not Path(sys.argv[1]).exists():
    time.sleep(0.05)
report(150)
time.sleep(0.3)
sys.exit(0)
"""


def _said(store, launcher, job_id: int, capsys: pytest.CaptureFixture[str]) -> str:  # noqa: ANN001
    print_status(service.status(store, launcher, job_id, reconcile_first=False),
                 json_out=False)
    return " ".join(capsys.readouterr().out.split())


def test_an_ended_short_job_with_no_checkpoint_starts_from_step_0(
        world, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    store, launcher, tmp = world
    script, go = tmp / "short.py", tmp / "go"
    script.write_text(JOB)
    [job] = service.launch(store, write_spec(tmp, run=f"{sys.executable} {script} {go}"),
                           launcher=launcher, wait_seconds=20,
                           checkpoint_root=str(tmp / "checkpoints"))
    first = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    wait_for(lambda: launcher.status(first).step == 100)
    service.reconcile(store, launcher)  # a pass reads step 100 while it runs
    go.touch()
    wait_for(lambda: launcher.status(first).state == "succeeded")
    service.reconcile(store, launcher)
    said = _said(store, launcher, job.id, capsys)
    assert (f"exited 0 at step 150 of {STEPS:,} (the last step it reported): its declared "
            f"steps were not reached; `costsched start {job.id}` does the rest from step 0: "
            "it published no checkpoint") in said, said
    assert "newest verified checkpoint" not in said

    service.start(store, launcher, job.id)
    second = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    wait_for(lambda: launcher.status(second).state == "succeeded")
    service.reconcile(store, launcher)
    said = _said(store, launcher, job.id, capsys)
    assert ("its start made no progress: it exited 0 at step 150, no further than its run "
            "before, so its command stops there by itself (check its `run` against "
            f"steps: {STEPS} in ") in said, said
