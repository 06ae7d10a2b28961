"""A real local-launcher job that keeps one state file, replaced whole by a rename at each
save (every second, slower than the agent's look, as a real job's saves are: each look
that follows a save sees the state file unchanged since), and appends to a log beside it
every 0.3 s: its directory never stays unchanged for the settle period, yet its saves are
published as it runs, so a preemption without notice resumes it from a recent save, not its
first."""

from __future__ import annotations

import re

from costsched.service import jobs as service
from tests.costsched.service.job_scripts import PREAMBLE
from tests.real_jobs import instance_of, launch, preempt, wait_for

FIRST_SAVE = 250
JOB = PREAMBLE + """\
import json, pickle
state = saved / "state.pkl"
step = pickle.loads(state.read_bytes())["step"] if state.exists() else 0
print("resumed from step", step, flush=True)
while True:
    time.sleep(0.1)
    step += 25
    if step % 250 == 0:
        Path(f"{state}.tmp").write_bytes(pickle.dumps({"step": step, "w": os.urandom(1000)}))
        os.replace(f"{state}.tmp", state)
    if step % 75 == 0:
        with open(saved / "metrics.jsonl", "a") as log:
            log.write(json.dumps({"step": step, "loss": 1 / step}) + "\\n")
    report(step)
"""


def test_a_job_with_one_state_file_and_a_log_resumes_from_a_recent_save(world) -> None:  # noqa: F811
    store, launcher, tmp = world
    job, instance = launch(world, JOB)
    # published while it runs, not only its first save (nor only its log, before it): its
    # second, at step 500 (the step read off the time of the save: about that)
    wait_for(lambda: (launcher.status(instance).checkpoint_step or 0) >= 2 * FIRST_SAVE - 50)

    preempt(launcher, instance)
    service.reconcile(store, launcher)
    now = instance_of(store, job.id)
    assert now != instance
    said = wait_for(lambda: re.search(r"resumed from step (\d+)", launcher.logs(now, tail=20)))
    assert int(said.group(1)) > FIRST_SAVE, said.group(0)
