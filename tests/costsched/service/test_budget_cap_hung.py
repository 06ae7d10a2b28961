"""A job that reports its last step but whose process never exits (it hangs after
training) is charged all the while: its budget's cap stops it like any other job once it
has had a watch interval to end by itself, and it is recorded as a job that did all its
steps is when a cap stops it: succeeded, its instance ended, its placement closed, no
'stopped at' note. Within that interval it is left to end by itself. A real
local-launcher job that reports its last step, then sleeps and ignores SIGTERM."""

from __future__ import annotations

import sys
from datetime import datetime, timedelta, timezone

import pytest

from costsched.config import BudgetsConfig
from costsched.service import jobs as service
from costsched.service.jobs import caps
from costsched.service.jobs.caps import raise_budget
from costsched.service.views import status_document
from tests.costsched.service.job_scripts import PREAMBLE
from tests.costsched.service.test_jobs import STEPS, wait_for, world, write_spec  # noqa: F401

JOB = PREAMBLE + """\
import signal
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # it hangs: a stop's signal ends nothing
report(int(sys.argv[1]))
while True:
    time.sleep(0.1)
"""
WATCH = 60.0  # the watch interval, seconds


def test_a_job_that_hangs_after_its_last_step_is_stopped_at_its_cap(
        world, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    store, launcher, tmp = world
    monkeypatch.setattr(caps, "CHECKPOINT_WAIT_SECONDS", 1.0)
    script = tmp / "job.py"
    script.write_text(JOB)
    [job] = service.launch(store, write_spec(tmp, run=f"{sys.executable} {script} {STEPS}"),
                           launcher=launcher, wait_seconds=20,
                           checkpoint_root=str(tmp / "checkpoints"))
    instance = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    wait_for(lambda: launcher.status(instance).step == STEPS)
    service.status(store, launcher, job.id)  # a look reads its last step
    assert store.jobs.get(job.id).steps_done == STEPS
    now = datetime.now(timezone.utc)
    raise_budget(store, job.id, 0.05, at=now)  # $1/h: three minutes' worth

    # Just after its last step, with the next interval's charge passing the cap: left to
    # end by itself, never asked to stop.
    assert caps.enforce(store, launcher, BudgetsConfig(), now, WATCH) == []
    assert store.jobs.get(job.id).state == "running"
    assert launcher.status(instance).live

    # Ten minutes on, it still runs, charged past what its budget leaves: stopped at its
    # cap (was: left to run and be charged without end).
    later = now + timedelta(minutes=10)
    events = caps.enforce(store, launcher, BudgetsConfig(), later, WATCH)
    assert "finished" in [e.kind for e in events if e.job_id == job.id], events
    assert not any(e.startswith("stopped") or "stopped at" in e for e in events), events
    record = store.jobs.get(job.id)
    assert (record.state, record.steps_done) == ("succeeded", STEPS)
    assert not launcher.status(instance).live
    assert store.jobs.placements_of([job.id], open_only=True).empty
    notes = store.jobs.events(job.id)
    assert not any(str(d).startswith("stopped at ") for d in notes["detail"]), notes
    [shown] = service.status(store, launcher, job.id, reconcile_first=False)
    [doc] = status_document([shown])
    assert (doc["state"], doc["progress"]) == ("succeeded", 1.0), doc
