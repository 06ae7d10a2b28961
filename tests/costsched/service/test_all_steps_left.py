"""`runs.all_steps_left`: the one rule by which status (`JobStatus.no_step`) and migrate
(`views.unreported_totals`) say a running job's rest is priced as all of its own steps:
it runs, has reported no step (0 included), has no checkpoint's step behind its rest, and
its work is given in its own steps."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from costsched.service.jobs.runs import RunningJob, all_steps_left
from costsched.store.job_rows import JobRecord

STEPS = 5000.0
OWN = {"spec": {"model": "llama-7b"}}  # steps of its own
ON_REFERENCE = {"spec": {"hours": 2.0, "reference_gpu": "A100:1"}}  # hours on a GPU
ASSUMED = {"spec": {"hours": 1.0, "task": {"work_assumed": True}}}


def _run(state: str = "running", spec: dict | None = None, done: float = 0.0,
         checkpoint: float | None = None, total: float | None = STEPS) -> RunningJob:
    when = datetime(2026, 1, 1, tzinfo=timezone.utc)
    record = JobRecord(1, "train", OWN if spec is None else spec, state, "cheapest", total,
                       done, "", checkpoint, when, when)
    return RunningJob(record, "local", "", [], resolve=lambda: None)


def test_a_running_job_that_reported_nothing_has_all_of_its_own_steps_left() -> None:
    assert all_steps_left(_run(), 0.0, False) == STEPS


@pytest.mark.parametrize(("run", "reported", "said"), [
    (_run(), 0.0, True),  # it reported step 0: a step reading is stored
    (_run(done=10.0), 10.0, False),  # it reported a step
    (_run(checkpoint=200.0), 0.0, False),  # its checkpoint's step stands behind its rest
    (_run(state="stopped"), 0.0, False),
    (_run(state="succeeded"), 0.0, False),
    (_run(spec=ON_REFERENCE), 0.0, False),  # its total is no count of its own steps
    (_run(spec=ASSUMED), 0.0, False),
    (_run(total=None), 0.0, False),  # its work is not given
])
def test_any_other_job_has_none(run: RunningJob, reported: float, said: bool) -> None:
    assert all_steps_left(run, reported, said) is None
