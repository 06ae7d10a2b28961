"""A checkpoint's step is the step the job had reported when its files were written, not
when the agent published them (seconds later, at its next poll): a job that writes its only
checkpoint file at step 0 and trains on is stopped at step 0, where it resumes. A real
local-launcher job, taken away without notice, then stopped."""

from __future__ import annotations

from costsched.service import jobs as service
from tests.costsched.service.job_scripts import PREAMBLE
from tests.real_jobs import checkpoints_of, launch, preempt, wait_for

# Writes config.json once, at step 0, then a step every 0.1 s, each reported; never writes
# another checkpoint file. Started again from its checkpoint, it says so.
JOB = PREAMBLE + """\
if (saved / "config.json").exists():
    print("config only: starting steps from 0", flush=True)
else:
    (saved / "config.tmp").write_text('{"k": 8}')
    os.replace(saved / "config.tmp", saved / "config.json")
step = 0
while True:
    time.sleep(0.1)
    step += 1
    report(step)
"""


def test_a_checkpoint_written_at_step_0_resumes_at_step_0(world) -> None:  # noqa: F811
    store, launcher, tmp = world
    job, instance = launch(world, JOB)
    wait_for(checkpoints_of(store, job.id).newest_verified)
    # published at the agent's poll, once the job had reported steps after its write
    wait_for(lambda: launcher.status(instance).checkpoint_step is not None)
    wait_for(lambda: (launcher.status(instance).step or 0) >= 5)
    assert launcher.status(instance).checkpoint_step == 0  # was: the step at the publish
    reported = launcher.status(instance).step
    assert reported is not None and reported > 0

    preempt(launcher, instance)
    service.stop(store, launcher, job.id)
    [s] = service.status(store, launcher, job.id, reconcile_first=False)
    assert s.record.state == "stopped"
    assert s.step == 0 and store.jobs.get(job.id).checkpoint_step == 0, s
    assert s.reported_step >= reported
    assert s.resumes == (f"resumes at step 0, its newest checkpoint's: it last reported "
                         f"step {s.reported_step:,.0f}, so the {s.reported_step:,.0f} steps "
                         "between are done again"), s.resumes


# Writes config.json, then waits for `go` (argv[1]; the test makes it once the agent has
# published the file, before any report), then reports a step every 0.1 s.
QUIET_FIRST = PREAMBLE + """\
(saved / "config.tmp").write_text('{"k": 8}')
os.replace(saved / "config.tmp", saved / "config.json")
while not Path(sys.argv[1]).exists():
    time.sleep(0.05)
step = 0
while True:
    time.sleep(0.1)
    step += 1
    report(step)
"""


def test_a_checkpoint_published_before_the_first_report_gets_its_step_from_it(world
                                                                               ) -> None:  # noqa: F811
    store, launcher, tmp = world
    job, instance = launch(world, QUIET_FIRST, tmp / "go")
    wait_for(checkpoints_of(store, job.id).newest_verified)
    assert launcher.status(instance).step is None  # published with no step reported yet
    (tmp / "go").touch()
    wait_for(lambda: launcher.status(instance).checkpoint_step is not None)
    status = launcher.status(instance)
    assert status.checkpoint_step == 0 and (status.step or 0) >= 1, status
