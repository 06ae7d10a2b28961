"""A job lost before its first checkpoint resumes from step 0, and its progress says so in
every view (`0%`, its checkpoint's step, 0 with none), never `no step yet` as for a job
that has reported no step at all. A real local-launcher job, preempted without notice."""

from __future__ import annotations

from costsched.cli import jobs as cli_jobs
from costsched.dashboard.render import FILTERS
from costsched.service import jobs as service
from costsched.service.views import status_document
from costsched.store.jobs import JobRecord
from tests.costsched.service.job_scripts import PREAMBLE
from tests.real_jobs import World, instance_of, launch, preempt, wait_for

# Reports step 67 and writes no checkpoint; run again (the recovery), reports nothing.
JOB = PREAMBLE + """\
ran = Path(sys.argv[1])
if not ran.exists():
    ran.touch()
    report(67)
while True:
    time.sleep(0.1)
"""


def test_a_job_lost_before_its_first_checkpoint_reads_its_step_0(world) -> None:  # noqa: F811
    store, launcher, tmp = world
    job, instance = launch(world, JOB, tmp / "ran")
    wait_for(lambda: launcher.status(instance).step == 67)
    [before] = service.status(store, launcher, job.id)
    assert cli_jobs._progress(before) != "no step yet"
    preempt(launcher, instance)
    lines = service.reconcile(store, launcher)
    assert any("resumes from step 0 (no checkpoint: from the start): 67 steps lost" in line
               for line in lines), lines
    [after] = service.status(store, launcher, job.id)
    assert after.recoveries == 1 and after.step == 0
    [doc] = status_document([after])
    assert (doc["progress"], doc["progress_source"]) == (0.0, "reported")
    assert cli_jobs._progress(after) == FILTERS["progress"](doc) == "0%"  # status, dashboard


# Reports no step (a setup still running) the first time; run again, reports nothing.
SILENT = PREAMBLE + """\
while True:
    time.sleep(0.1)
"""


def test_a_job_lost_before_its_first_step_says_its_recovery_too(world) -> None:  # noqa: F811
    """A recovery before any step and any checkpoint is said as every recovery is: in the
    pass's line, the job's log (`status`: `recovered`), never counted but silent."""
    store, launcher, tmp = world
    job, instance = launch(world, SILENT, name="silent.py")
    preempt(launcher, instance)
    lines = service.reconcile(store, launcher)
    # lost in its agent's setup: none lost; once its command ran, what it did, not counted
    said = ("resumes from step 0 (no checkpoint yet): what it did since it started is lost; "
            "how much is not known (it reports no step)" if launcher.status(instance).ran
            else "resumes from step 0 (no checkpoint yet): no step lost")
    assert any(said in line for line in lines), lines
    [after] = service.status(store, launcher, job.id)
    assert after.recoveries == 1
    [doc] = status_document([after])
    assert [r["said"] for r in doc["recovered"]] == [
        f"instance {instance} was preempted; the job {said}"], doc


# Checkpoints at step 50 and reports 67 the first time; run again, reports nothing (a
# replacement lost in its setup).
AFTER_A_CHECKPOINT = PREAMBLE + """\
ran = Path(sys.argv[1])
if not ran.exists():
    ran.touch()
    (saved / "step.txt").write_text("50")
    report(50)
    report(67)
while True:
    time.sleep(0.1)
"""


def recovered_once(world: World) -> tuple[JobRecord, str, float]:
    """AFTER_A_CHECKPOINT launched, its first instance taken away once it reports step 67,
    and recovered by a pass: (the job, its replacement, the step the job stood at)."""
    store, launcher, tmp = world
    job, first = launch(world, AFTER_A_CHECKPOINT, tmp / "ran", name="again.py")
    wait_for(lambda: launcher.status(first).step == 67)
    # (step.txt alone is published a look after it was written: it may be half written)
    wait_for(lambda: launcher.status(first).checkpoint_version is not None)
    preempt(launcher, first)
    service.reconcile(store, launcher)
    return job, instance_of(store, job.id), store.jobs.get(job.id).steps_done


def test_a_replacement_lost_in_its_setup_says_its_recovery_too(world) -> None:  # noqa: F811
    """Its second recovery, of an instance that reported no step, is said with the step it
    resumes from again, never counted but silent."""
    store, launcher, _ = world
    job, second, step = recovered_once(world)
    preempt(launcher, second)
    lines = service.reconcile(store, launcher)
    said = (f"resumes from step {step:,.0f} (its newest checkpoint's, as before it): " + (
        "what it did since is lost; how much is not known (it reported no step)"
        if launcher.status(second).ran else "no step lost (its command had not started)"))
    assert any(said in line for line in lines), lines
    [after] = service.status(store, launcher, job.id)
    [doc] = status_document([after])
    assert after.recoveries == 2 and len(doc["recovered"]) == 2, doc
    assert doc["recovered"][-1]["said"] == f"instance {second} was preempted; the job {said}", doc
