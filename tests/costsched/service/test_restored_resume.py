"""Where a job resumed from is the checkpoint its agent restored. A recovery (or a start)
says the step of the newest checkpoint as it begins; the new instance's agent restores the
newest version that verifies, the one before where the newest is damaged. The first pass
that reads what the agent restored corrects the words, in `status`, its --json and the
report's moves (the steps lost are what the move cost), and notes it once in the job's
log. A real job on the local launcher, its newest checkpoint damaged in its store."""

from __future__ import annotations

from pathlib import Path

from costsched.cli.status_gangs import lost_lines
from costsched.report import build
from costsched.service import jobs as service
from costsched.service import views
from costsched.service.jobs.restored_said import RESTORED_NOTE
from launchers.checkpoints.layout import version_dir
from tests.costsched.service.job_scripts import PREAMBLE
from tests.real_jobs import (
    World,
    checkpoints_of,
    instance_of,
    launch,
    preempt,
    wait_for,
    world,  # noqa: F401
)

# Saves at step 1025 (its marker holds the step), waits for `go`, saves at step 1700 and
# reports it; run again, reports the step its restored marker holds and says it.
JOB = PREAMBLE + """\
go = Path(sys.argv[1])
marker = saved / "COSTSCHED_COMMIT"
if marker.exists():
    step = int(marker.read_text())
    print("resumed from", step, flush=True)
    report(step)
else:
    for step in (1025, 1700):
        (saved / "weights.npy.tmp").write_text(f"w{step}")
        os.replace(saved / "weights.npy.tmp", saved / "weights.npy")
        marker.write_text(f"{step}\\n")
        report(step)
        while step == 1025 and not go.exists():
            time.sleep(0.05)
while True:
    time.sleep(0.1)
"""
SAID = ("resumes from step 1,025 (the newer checkpoint at step 1,700 was damaged and "
        "skipped): 675 steps lost")


def _at_1700(world: World) -> tuple[int, str]:  # noqa: F811
    """The job, its versions 1 (step 1025) and 2 (step 1700) published and said."""
    store, launcher, tmp = world
    job, instance = launch(world, JOB, tmp / "go")
    wait_for(lambda: launcher.status(instance).checkpoint_step == 1025)
    (tmp / "go").touch()
    wait_for(lambda: launcher.status(instance).checkpoint_step == 1700
             and launcher.status(instance).step == 1700)
    return job.id, instance


def _damage_newest(world: World, job_id: int) -> None:  # noqa: F811
    """Version 2's weights, the same size, other bytes: it no longer verifies."""
    store, _, _ = world
    checkpoints = checkpoints_of(store, job_id)
    newest = checkpoints.list()[-1]
    assert newest.version == 2
    weights = Path(checkpoints.uri) / version_dir(2) / "weights.npy"
    weights.write_text("x" * len(weights.read_text()))
    assert not checkpoints.verify(newest)


def _restored_notes(world: World, job_id: int) -> list[str]:  # noqa: F811
    events = world[0].jobs.events(job_id)
    return list(events.loc[events["kind"] == RESTORED_NOTE, "detail"])


def test_a_recovery_past_a_damaged_checkpoint_says_the_step_it_resumed_from(
        world: World) -> None:  # noqa: F811
    store, launcher, _ = world
    job_id, first = _at_1700(world)
    _damage_newest(world, job_id)
    preempt(launcher, first)
    service.reconcile(store, launcher)  # the recovery, as the lost instance said it
    second = instance_of(store, job_id)
    assert second != first
    wait_for(lambda: "resumed from 1025" in launcher.logs(second, tail=5))
    wait_for(lambda: (launcher.status(second).restored or None) is not None)

    [s] = service.status(store, launcher, job_id)  # reconciled first: the words corrected
    [line] = [x for x in lost_lines(s) if x.startswith("recovered at ")]
    assert line.endswith(f"instance {first} was preempted; the job {SAID}"), line
    [doc] = views.status_document([s])
    assert [r["said"] for r in doc["recovered"]] == [
        f"instance {first} was preempted; the job {SAID}"]
    [recovery] = [m for m in doc["moves"] if m["kind"] == "recovery"]
    assert recovery["resumed"] == SAID
    [row] = [r for r in build(store, job=job_id).rows["moves"] if r["kind"] == "recovery"]
    assert row["lost_steps"] == 675  # what the move cost: the steps trained again
    heads = [x for x in service.every_log(store, launcher, job_id).splitlines()
             if x.startswith("--- instance ")]
    assert SAID in heads[-1], heads

    service.reconcile(store, launcher)  # and again: said once
    notes = _restored_notes(world, job_id)
    assert len(notes) == 1, notes
    assert notes[0].startswith(f"instance {second} restored checkpoint version 1 at step "
                               "1,025 (the newer checkpoint at step 1,700 was damaged and "
                               "skipped); the recovery had said: resumes from step 1,700"), notes
    service.stop(store, launcher, job_id)


def test_a_start_after_a_stop_says_the_step_of_the_checkpoint_it_restored(
        world: World) -> None:  # noqa: F811
    store, launcher, _ = world
    job_id, first = _at_1700(world)
    service.stop(store, launcher, job_id)
    assert store.jobs.get(job_id).checkpoint_step == 1700  # where the stop left it
    _damage_newest(world, job_id)
    service.start(store, launcher, job_id)
    second = instance_of(store, job_id)
    wait_for(lambda: "resumed from 1025" in launcher.logs(second, tail=5))
    wait_for(lambda: (launcher.status(second).restored or None) is not None)

    [s] = service.status(store, launcher, job_id)
    [line] = [x for x in lost_lines(s) if x.startswith("started again at ")]
    said = ("resumes from step 1,025 (the newer checkpoint at step 1,700 was damaged and "
            "skipped): 675 steps lost")
    assert line.endswith(f"UTC: {said}"), line
    [doc] = views.status_document([s])
    [start] = [m for m in doc["moves"] if m["kind"] == "start"]
    assert start["resumed"] == said
    service.reconcile(store, launcher)
    assert len(_restored_notes(world, job_id)) == 1
    service.stop(store, launcher, job_id)


def test_words_that_say_the_restored_step_already_are_left_as_they_are(
        world: World) -> None:  # noqa: F811
    store, launcher, _ = world
    job_id, first = _at_1700(world)
    preempt(launcher, first)  # nothing damaged: version 2 restored, as the recovery said
    service.reconcile(store, launcher)
    second = instance_of(store, job_id)
    wait_for(lambda: "resumed from 1700" in launcher.logs(second, tail=5))
    wait_for(lambda: (launcher.status(second).restored or None) is not None)
    assert launcher.status(second).restored.version == 2
    [s] = service.status(store, launcher, job_id)
    [line] = [x for x in lost_lines(s) if x.startswith("recovered at ")]
    assert line.endswith("resumes from step 1,700 (its checkpoint's): no step lost"), line
    assert _restored_notes(world, job_id) == []
    service.stop(store, launcher, job_id)
