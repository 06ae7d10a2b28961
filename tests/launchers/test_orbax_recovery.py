"""A real local-launcher job that checkpoints the way Orbax's CheckpointManager does: each
save's files written into `<step>.orbax-checkpoint-tmp-<n>/`, then the folder renamed to
`<step>/` (the rename is the commit), the newest 3 step folders kept. Its save of step 600
is slow (async: it trains on while the save is half written) and it is preempted without
notice in the middle of it. No version ever holds the temporary folder; the recovery
restores the last committed step, 400, and says so with the steps lost, never "no step
lost"; the restored directory holds no temporary folder."""

from __future__ import annotations

import re
from pathlib import Path

from costsched.service import jobs as service
from launchers.in_progress import in_progress
from tests.costsched.service.job_scripts import PREAMBLE
from tests.real_jobs import (
    a_world,
    checkpoints_of,
    instance_of,
    launch,
    preempt,
    wait_for,
)

EVERY = 200  # steps between saves: 2 s
JOB = PREAMBLE + f"""\
import json, shutil
steps = sorted(int(p.name) for p in saved.iterdir() if p.is_dir() and p.name.isdigit())
step, whole = 0, None
if steps:
    step = steps[-1]
    meta = json.loads((saved / str(step) / "_CHECKPOINT_METADATA").read_text())
    whole = meta["step"] == step and all(
        (saved / str(step) / n).read_text() == f"{{n}} {{step}}" for n in meta["items"])
print("resumed from step", step, "whole" if whole else "torn" if whole is False else "",
      "listing", sorted(p.name for p in saved.iterdir()), flush=True)
first_run = step == 0
pending = None  # (step, its temporary folder) of the save under way
while True:
    time.sleep(0.1)
    step += 10
    report(step)
    if step % {EVERY} == 0 and pending is None:
        tmp = saved / f"{{step}}.orbax-checkpoint-tmp-{{int(time.time() * 1000)}}"
        tmp.mkdir()
        (tmp / "params.npz").write_text(f"params.npz {{step}}")
        pending = (step, tmp)
    if pending is not None:
        at, tmp = pending
        # the first run's save of step 600 never ends: it is preempted half way through it
        if first_run and at == 3 * {EVERY} or step < at + 20:
            continue
        (tmp / "opt_state.npz").write_text(f"opt_state.npz {{at}}")
        (tmp / "_CHECKPOINT_METADATA").write_text(
            json.dumps({{"step": at, "items": ["params.npz", "opt_state.npz"]}}))
        os.rename(tmp, saved / str(at))
        pending = None
        for old in sorted((int(p.name) for p in saved.iterdir() if p.name.isdigit()))[:-3]:
            shutil.rmtree(saved / str(old))
"""


def temporary_parts(store, job_id: int) -> list[str]:  # noqa: ANN001
    """Every file of every version in the job's checkpoint store named as a save in
    progress."""
    return [p.name for c in checkpoints_of(store, job_id).list() for p in c.parts
            if in_progress(p.name) and not p.name.startswith(".costsched")]


def test_an_orbax_job_preempted_mid_save_resumes_from_its_last_committed_step(
        tmp_path: Path) -> None:
    with a_world(tmp_path) as world:
        store, launcher, _ = world
        job, instance = launch(world, JOB)
        # its commits of 200 and 400 published, its save of 600 begun and left half done
        # while it trains on for 2 s (its agent looks every 0.2 s)
        wait_for(lambda: (launcher.status(instance).step or 0) >= 3 * EVERY + 200)
        status = launcher.status(instance)
        assert status.checkpoint_step == 2 * EVERY, status
        assert status.checkpoint_error == ""
        assert temporary_parts(store, job.id) == []

        preempt(launcher, instance)
        lines = service.reconcile(store, launcher)
        said = [line for line in lines if "resumes from" in line]
        assert len(said) == 1, lines
        lost = re.search(r"resumes from step 400 \(its checkpoint's\): (?:at least )?"
                         r"([\d,]+) steps? lost", said[0])
        assert lost, said[0]
        assert int(lost.group(1).replace(",", "")) >= 200, said[0]
        assert "no step lost" not in said[0]

        now = instance_of(store, job.id)
        assert now != instance
        resumed = wait_for(lambda: re.search(r"resumed from step (\d+) (\w*) listing (.*)",
                                             launcher.logs(now, tail=20)))
        assert resumed.group(1, 2) == ("400", "whole"), resumed.group(0)
        assert "tmp" not in resumed.group(3), resumed.group(0)  # none restored, none left

        # it commits 600 on its new instance: published, still with no temporary folder
        wait_for(lambda: (launcher.status(now).checkpoint_step or 0) >= 3 * EVERY)
        assert temporary_parts(store, job.id) == []
