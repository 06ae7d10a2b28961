"""A real local-launcher job that saves each checkpoint as a new step-named file (a temp
file renamed into place) and deletes older ones, saving every 0.25 s: its directory never
stays unchanged for the settle period, yet its saves are published as it runs, so a
preemption without notice resumes it from a recent save, not its first."""

from __future__ import annotations

import re

from costsched.service import jobs as service
from tests.costsched.service.job_scripts import PREAMBLE
from tests.real_jobs import checkpoints_of, instance_of, launch, preempt, wait_for

JOB = PREAMBLE + """\
kept = sorted(saved.glob("ckpt-*.npz"))
step = int(kept[-1].name[5:11]) if kept else 0
print("resumed from step", step, flush=True)
while True:
    time.sleep(0.25)
    step += 100
    name = saved / f"ckpt-{step:06d}.npz"
    Path(f"{name}.tmp").write_bytes(os.urandom(1000))
    os.replace(f"{name}.tmp", name)
    for old in sorted(saved.glob("ckpt-*.npz"))[:-8]:  # the newest 8 kept
        old.unlink()
    report(step)
"""


def newest_step(checkpoints) -> int:  # noqa: ANN001
    found = checkpoints.newest_verified()
    return 0 if found is None else max(int(p.name[5:11]) for p in found.parts)


def test_a_rotating_job_resumes_from_a_recent_save(world) -> None:  # noqa: F811
    store, launcher, tmp = world
    job, instance = launch(world, JOB)
    checkpoints = checkpoints_of(store, job.id)
    wait_for(lambda: newest_step(checkpoints) >= 500)  # five saves or more in

    preempt(launcher, instance)
    service.reconcile(store, launcher)
    now = instance_of(store, job.id)
    assert now != instance
    said = wait_for(lambda: re.search(r"resumed from step (\d+)", launcher.logs(now, tail=20)))
    assert int(said.group(1)) >= 500, said.group(0)
