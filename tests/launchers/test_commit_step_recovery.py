"""A real local-launcher job that writes the step it saved into its commit marker and reports
its next step at once: preempted without notice, it resumes from the marker's step, and
the recovery and `status` say that step (the report's times alone would say the next)."""

from __future__ import annotations

from costsched.service import jobs as service
from launchers.publisher import COMMIT
from tests.costsched.service.job_scripts import PREAMBLE
from tests.real_jobs import instance_of, preempt, saved_then_on, wait_for

# Saves step 300 (the marker holding it) and reports 301 at once; once `go` exists, reports
# step 394 (no checkpoint of it). Started again from its checkpoint, it says so and reports
# nothing more.
JOB = PREAMBLE + f"""\
marker = saved / "{COMMIT}"
if (saved / "step.txt").exists():
    print("resumed from step", (saved / "step.txt").read_text(), flush=True)
else:
    report(300)
    (saved / "step.txt").write_text("300")
    marker.write_text("300")
    report(301)
    while not Path(sys.argv[1]).exists():
        time.sleep(0.05)
    report(394)
while True:
    time.sleep(0.1)
"""


def test_a_recovery_resumes_from_the_step_in_the_marker(world) -> None:  # noqa: F811
    store, launcher, tmp = world
    job, instance = saved_then_on(world, JOB, saved=300, step=394)

    preempt(launcher, instance)
    lines = service.reconcile(store, launcher)
    assert any("resumes from step 300 (its checkpoint's): 94 steps lost" in line
               for line in lines), lines
    [after] = service.status(store, launcher, job.id)
    assert after.record.state == "running" and after.step == 300, after
    now = instance_of(store, job.id)
    wait_for(lambda: "resumed from step 300" in launcher.logs(now, tail=5))
    # the next instance knows the step of the version it restored, from its marker
    wait_for(lambda: launcher.status(now).checkpoint_step == 300)
