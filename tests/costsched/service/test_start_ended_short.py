"""`start` of a job that exited 0 short of its declared steps ('ended short') continues it
from its newest verified checkpoint to do the rest, as it starts a stopped job: the same
job (its charges go on), the code it was launched with, one instance at a time; once it
has done all its steps it has succeeded, and a start of it is refused in one line. A real
local-launcher job that exits 0 halfway the first time and finishes the second."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from costsched.cli.status_lines import print_status
from costsched.model import InvalidInput
from costsched.report.data import build
from costsched.service import jobs as service
from costsched.service.views import status_document
from tests.costsched.service.job_scripts import PREAMBLE
from tests.costsched.service.test_jobs import STEPS
from tests.real_jobs import launch, wait_for

HALF = STEPS // 2
# The first run checkpoints at step HALF, reports it and, once `go` exists, exits 0; a run
# that finds that checkpoint says so, reports its last step and, once `done` exists, exits
# 0 (it runs until the test has checked what a start of a running job says).
JOB = PREAMBLE + """\
if (saved / "step.txt").exists():
    print("resumed from step", (saved / "step.txt").read_text(), flush=True)
    (saved / "step.txt").write_text(sys.argv[2])
    report(int(sys.argv[2]))
    while not Path(sys.argv[3]).exists():
        time.sleep(0.05)
    sys.exit(0)
(saved / "step.txt").write_text(str(int(sys.argv[2]) // 2))
report(int(sys.argv[2]) // 2)
while not Path(sys.argv[1]).exists():
    time.sleep(0.05)
sys.exit(0)
"""


def _shown(store, launcher, job: int) -> dict:  # noqa: ANN001
    [s] = service.status(store, launcher, job, reconcile_first=False)
    [doc] = status_document([s])
    return doc


def test_start_continues_a_job_that_ended_short_to_its_last_step(
        world, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    store, launcher, tmp = world
    go, done = tmp / "go", tmp / "done"
    job, first = launch(world, JOB, go, STEPS, done)
    wait_for(lambda: launcher.status(first).checkpoint_step == HALF)
    go.touch()
    wait_for(lambda: launcher.status(first).state == "succeeded")
    service.reconcile(store, launcher)
    doc = _shown(store, launcher, job.id)
    assert (doc["state"], doc["steps_left"]) == ("ended-short", STEPS - HALF), doc
    print_status(service.status(store, launcher, job.id, reconcile_first=False),
                 json_out=False)
    said = " ".join(capsys.readouterr().out.split())
    assert (f"its declared steps were not reached; `costsched start {job.id}` does the rest "
            "from its newest verified checkpoint") in said, said

    started = service.start(store, launcher, job.id)  # was: refused, 'ended short: ...'
    assert started.id == job.id and started.state in ("launching", "running")
    placed = store.jobs.placements(job.id)
    assert list(placed["reason"]) == ["launch", "start"], placed
    assert placed["end_at"].iloc[0] is not None and placed["end_at"].isna().sum() == 1
    assert _shown(store, launcher, job.id)["state"] in ("launching", "running")
    with pytest.raises(InvalidInput, match=r"is (launching|running): only a stopped or failed job"):
        service.start(store, launcher, job.id)  # never twice

    second = str(placed["instance"].iloc[-1])
    done.touch()
    wait_for(lambda: launcher.status(second).state == "succeeded")
    assert f"resumed from step {HALF}" in launcher.logs(second, tail=5)
    service.reconcile(store, launcher)
    record = store.jobs.get(job.id)
    assert (record.state, record.steps_done) == ("succeeded", STEPS)
    doc = _shown(store, launcher, job.id)
    assert (doc["state"], doc["progress"], doc["steps_left"], doc["steps_not_reached"]) == (
        "succeeded", 1.0, 0, None), doc
    at = datetime.now(timezone.utc) + timedelta(hours=1)
    [row] = build(store, until=at, now=at).rows["jobs"]
    assert row["state"] == "succeeded", row

    with pytest.raises(InvalidInput) as refused:  # done: one line, and how to run it again
        service.start(store, launcher, job.id)
    said = str(refused.value)
    assert "\n" not in said and said.startswith(
        f"job {job.id} (train) has succeeded: only a stopped or failed job, or one that ended "
        "short of its steps, can be started again; `costsched launch "), said
    assert len(store.jobs.placements(job.id)) == 2  # never run again
