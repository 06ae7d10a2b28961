"""After a recovery or a start, a job's progress is the step its next instance resumes from
(its newest checkpoint's), not the step it reported before it was taken away or stopped,
until it reports again; a recovery says the steps lost. A real local-launcher job,
preempted without notice; a start on the in-memory launcher."""

from __future__ import annotations

from costsched.service import jobs as service
from tests.costsched.service.job_scripts import PREAMBLE
from tests.costsched.service.test_stopped_step import running, shown  # noqa: F401
from tests.real_jobs import instance_of, preempt, saved_then_on, wait_for

# Checkpoints at step 300 and reports it; once `go` exists, reports step 394 (no
# checkpoint of it) and trains on. Started again from its checkpoint, it says so and
# reports nothing more.
JOB = PREAMBLE + """\
if (saved / "step.txt").exists():
    print("resumed from step", (saved / "step.txt").read_text(), flush=True)
else:
    (saved / "step.txt").write_text("300")
    report(300)
    while not Path(sys.argv[1]).exists():
        time.sleep(0.05)
    report(394)
while True:
    time.sleep(0.1)
"""


def test_after_a_recovery_progress_is_the_checkpoints_step(world) -> None:  # noqa: F811
    store, launcher, tmp = world
    job, instance = saved_then_on(world, JOB, saved=300, step=394)
    [before] = service.status(store, launcher, job.id)
    assert before.step == 394

    preempt(launcher, instance)
    lines = service.reconcile(store, launcher)
    assert any("preempted; recovery" in line and
               "resumes from step 300 (its checkpoint's): 94 steps lost" in line
               for line in lines), lines
    [after] = service.status(store, launcher, job.id)
    assert after.record.state == "running" and after.recoveries == 1
    assert after.step == 300, after  # was: 394, the step before the preemption
    events = store.jobs.events(job.id)
    said = events[events["kind"] == "recovery"]["detail"].tolist()
    assert said == [f"instance {instance}: resumes from step 300 (its checkpoint's): "
                    "94 steps lost"], said
    # The next instance resumed there, and its report moves the step on as before.
    now = instance_of(store, job.id)
    wait_for(lambda: "resumed from step 300" in launcher.logs(now, tail=5))


def test_a_start_after_a_stop_stands_at_the_checkpoints_step(running) -> None:  # noqa: F811
    store, launcher, job = running
    launcher.last = (140, 116)  # killed at 140: its newest checkpoint is at 116
    service.stop(store, launcher, job)
    service.start(store, launcher, job)
    s = shown(store, launcher, job)
    assert s.record.state == "running"
    assert (s.step, s.reported_step) == (116, 116), s  # was: 140, the step before the stop
