"""A real local-launcher job that saves each checkpoint as a new step-named file (a temp
file renamed into place) and deletes older ones, saving every 0.5 s: its directory never
stays unchanged for the settle period, yet its saves are published as it runs, so a
preemption without notice resumes it from a recent save, not its first."""

from __future__ import annotations

import re
import sys

from costsched.service import jobs as service
from launchers.checkpoints import open_store
from tests.costsched.service.job_scripts import PREAMBLE
from tests.costsched.service.test_jobs import wait_for, world, write_spec  # noqa: F401

JOB = PREAMBLE + """\
kept = sorted(saved.glob("ckpt-*.npz"))
step = int(kept[-1].name[5:11]) if kept else 0
print("resumed from step", step, flush=True)
while True:
    time.sleep(0.5)
    step += 50
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
    script = tmp / "job.py"
    script.write_text(JOB)
    [job] = service.launch(store, write_spec(tmp, run=f"{sys.executable} {script}"),
                           launcher=launcher, wait_seconds=20,
                           checkpoint_root=str(tmp / "checkpoints"))
    instance = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    checkpoints = open_store(store.jobs.get(job.id).checkpoint_location)
    wait_for(lambda: newest_step(checkpoints) >= 500)  # ten saves or more in

    launcher.preempt(instance)
    wait_for(lambda: launcher.status(instance).state == "preempted")
    service.reconcile(store, launcher)
    now = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    assert now != instance
    said = wait_for(lambda: re.search(r"resumed from step (\d+)", launcher.logs(now, tail=20)))
    assert int(said.group(1)) >= 500, said.group(0)
