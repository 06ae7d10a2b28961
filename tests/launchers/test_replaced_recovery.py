"""A real local-launcher job laid out as a ported numpy script is: at each save, its weights
(`weights.npz`), then the step they were saved at (`step.txt`), each written under a
temporary name and renamed into place, every 2 s: sooner than the 10 s settle period, and
sooner than its agent's looks (every 3 s, so that its saves are published at the looks the
publisher asks for in between). Its saves are published as it runs, with nothing said
against them; preempted without notice, it resumes from a recent save, whole (the weights
of the step it names), not from its first."""

from __future__ import annotations

import re
from pathlib import Path

from costsched.service import jobs as service
from tests.costsched.service.job_scripts import PREAMBLE
from tests.real_jobs import World, a_world, instance_of, launch, preempt, wait_for

EVERY = 200  # steps between saves: 2 s
JOB = PREAMBLE + f"""\
weights, stepfile = saved / "weights.npz", saved / "step.txt"
step, whole = 0, None
if weights.exists() and stepfile.exists():
    step = int(stepfile.read_text())
    whole = weights.read_bytes().startswith(f"step {{step}}\\n".encode())
print("resumed from step", step, "whole" if whole else "torn" if whole is False else "",
      flush=True)
while True:
    time.sleep(0.1)
    step += 10
    report(step)
    if step % {EVERY} == 0:
        (saved / "weights.tmp.npz").write_bytes(f"step {{step}}\\n".encode() + os.urandom(4000))
        os.replace(saved / "weights.tmp.npz", weights)
        (saved / "step.txt.tmp").write_text(str(step))
        os.replace(saved / "step.txt.tmp", stepfile)
"""


def recovered_after_saves(world: World, job_script: str, saved: int
                          ) -> tuple[int, list[str], re.Match]:
    """`job_script` launched; once a save at step `saved` or later is published while it
    runs, with nothing said against it, its instance is taken away without notice and one
    pass recovers it on another: (the step the recovery says it resumes from, the pass's
    lines, its new instance's 'resumed from step N whole|torn' log line)."""
    store, launcher, _ = world
    job, instance = launch(world, job_script)
    wait_for(lambda: (launcher.status(instance).checkpoint_step or 0) >= saved, seconds=120)
    assert launcher.status(instance).checkpoint_error == ""

    preempt(launcher, instance)
    lines = service.reconcile(store, launcher)
    said = [re.search(r"resumes from (?:about )?step ([\d,]+)", line) for line in lines]
    [recovered] = [int(m.group(1).replace(",", "")) for m in said if m]
    now = instance_of(store, job.id)
    assert now != instance
    resumed = wait_for(lambda: re.search(r"resumed from step (\d+) (\w*)",
                                         launcher.logs(now, tail=20)), seconds=120)
    return recovered, lines, resumed


def test_a_job_saving_two_files_sooner_than_the_settle_period_resumes_from_a_recent_save(
        tmp_path: Path) -> None:
    with a_world(tmp_path, poll_seconds=3.0) as world:
        # its fifth save published while it runs (the first is a look after it, the rest
        # by the rule for files replaced together), with nothing said against them
        recovered, lines, resumed = recovered_after_saves(world, JOB, 5 * EVERY)
        assert recovered >= 5 * EVERY - 10, lines
        step = int(resumed.group(1))
        assert step >= 5 * EVERY and step % EVERY == 0, resumed.group(0)
        assert resumed.group(2) == "whole", resumed.group(0)
