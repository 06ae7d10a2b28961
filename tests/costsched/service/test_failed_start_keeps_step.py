"""A real local-launcher job that ended short at its checkpoint at step 60, started again,
whose run fails at once (before it saves anything): its instance reports the step of the
version it restored, so `status` and its --json still say where a start resumes (step 60),
as they did before the start."""

from __future__ import annotations

import json

import pytest

from costsched.cli.status_lines import print_status
from costsched.service import jobs as service
from tests.costsched.service.job_scripts import PREAMBLE
from tests.real_jobs import instance_of, launch, wait_for

# The first run reports step 60, saves it under a name that says it, and exits 0 (short of
# its steps); a run that finds that checkpoint fails at once.
JOB = PREAMBLE + """\
state = saved / "ckpt-000060.pkl"
if state.exists():
    print("cannot go on from", state.name, flush=True)
    sys.exit(1)
report(60)
time.sleep(0.2)
(saved / "ckpt.tmp").write_text("60")
os.replace(saved / "ckpt.tmp", state)
while not Path(sys.argv[1]).exists():
    time.sleep(0.05)
sys.exit(0)
"""


def _said(store, launcher, job: int, capsys: pytest.CaptureFixture[str],  # noqa: ANN001
          json_out: bool = False) -> str:
    capsys.readouterr()
    print_status(service.status(store, launcher, job, reconcile_first=False),
                 json_out=json_out)
    return capsys.readouterr().out if json_out else " ".join(capsys.readouterr().out.split())


def test_a_start_that_fails_at_once_keeps_the_step_it_resumes_from(
        world, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    store, launcher, tmp = world
    go = tmp / "go"
    job, first = launch(world, JOB, go)
    wait_for(lambda: launcher.status(first).checkpoint_step == 60)
    go.touch()
    wait_for(lambda: launcher.status(first).state == "succeeded")
    service.reconcile(store, launcher)

    service.start(store, launcher, job.id)
    second = instance_of(store, job.id)
    assert second != first
    wait_for(lambda: launcher.status(second).state == "failed")
    assert "cannot go on from ckpt-000060.pkl" in launcher.logs(second, tail=5)
    # the version it restored: its step, as known (its files' name), from the start
    instance = launcher.status(second)
    assert (instance.checkpoint_step, instance.checkpoint_step_inferred) == (60, False)
    service.reconcile(store, launcher)
    assert store.jobs.get(job.id).state == "failed"

    said = _said(store, launcher, job.id, capsys)
    assert (f"`costsched start {job.id}` starts it again from step 60, its newest verified "
            "checkpoint's") in said, said
    [doc] = json.loads(_said(store, launcher, job.id, capsys, json_out=True))
    assert doc["step"] == 60, doc
    assert (doc["failure"]["resumes_at"], doc["failure"]["resumes_inferred"]) == (60, False)
