"""Restarts on errors with real jobs on the local launcher: a job whose script exits 1
(once, or every time) is restarted from its published checkpoint while it has restarts
left (max_restarts_on_errors), and fails, saying so, when it has none."""

from __future__ import annotations

import sys

import pytest
import yaml

from costsched.service import jobs as service
from costsched.service.jobs.restarts import RESTART_NOTE
from launchers.checkpoints import open_store
from tests.costsched.service.job_scripts import PREAMBLE
from tests.costsched.service.test_jobs import STEPS, wait_for, world, write_spec  # noqa: F401

# First run: checkpoints step 300 and reports it; once `go` exists reports 350 and exits 1.
# Each later run resumes from the checkpoint; it exits 1 again while the count in `fails`
# is below FAILS, else reports its last step and exits 0.
JOB = PREAMBLE + """\
go, fails, most = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
if (saved / "step.txt").exists():
    print("resumed from step", (saved / "step.txt").read_text(), flush=True)
else:
    (saved / "step.txt").write_text("300")
    report(300)
    while not go.exists():
        time.sleep(0.05)
failed = int(fails.read_text()) if fails.exists() else 0
if failed < most:
    fails.write_text(str(failed + 1))
    report(350)
    print("flaky collective: giving up", flush=True)
    sys.exit(1)
report(STEPS)
""".replace("STEPS", str(STEPS))


def run(world, restarts: int, fails: int) -> tuple[int, list]:  # noqa: ANN001, F811
    """Launch the job allowing `restarts`, failing `fails` times; reconcile until it ends."""
    store, launcher, tmp = world
    script, go = tmp / "job.py", tmp / "go"
    script.write_text(JOB)
    path = write_spec(tmp, run=f"{sys.executable} {script} {go} {tmp / 'fails'} {fails}")
    spec = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump({**spec, "max_restarts_on_errors": restarts}))
    [job] = service.launch(store, path, launcher=launcher, wait_seconds=20,
                           checkpoint_root=str(tmp / "checkpoints"))
    instance = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    wait_for(open_store(store.jobs.get(job.id).checkpoint_location).newest_verified)
    wait_for(lambda: launcher.status(instance).checkpoint_step == 300)
    go.touch()
    events: list = []

    def ended() -> bool:
        events.extend(service.reconcile(store, launcher))
        return store.jobs.get(job.id).final

    wait_for(ended, seconds=120, poll=0.3)
    return job.id, events


def test_a_job_that_fails_once_is_restarted_from_its_checkpoint_and_succeeds(
        world) -> None:  # noqa: ANN001, F811
    store, launcher, _ = world
    job, events = run(world, restarts=1, fails=1)
    assert store.jobs.get(job).state == "succeeded"  # was: failed
    notes = [e.detail for e in store.jobs.event_rows([job], [RESTART_NOTE])]
    assert notes == ["exited 1 (flaky collective: giving up): restarted from step 300, 1 of "
                     "1 restart on errors used"], notes
    assert any(e.kind == "restart" for e in events), events
    [s] = service.status(store, launcher, job, reconcile_first=False)
    assert s.recoveries == 0 and len(store.jobs.placements(job)) == 2
    assert "resumed from step 300" in service.every_log(store, launcher, job)


@pytest.mark.parametrize(("restarts", "fails", "said"), [
    (0, 1, "exit code 1"),
    (1, 2, "failed after 1 restart on errors"),
])
def test_a_job_with_no_restart_left_fails(world, restarts: int, fails: int,  # noqa: ANN001, F811
                                          said: str) -> None:
    store, launcher, _ = world
    job, events = run(world, restarts=restarts, fails=fails)
    assert store.jobs.get(job).state == "failed"
    [failed] = [e for e in events if e.job_id == job and e.kind == "failed"]
    assert said in failed, failed
    assert ("restart on errors" in failed) == bool(restarts)
    assert len(store.jobs.event_rows([job], [RESTART_NOTE])) == restarts
    assert len(store.jobs.placements(job)) == restarts + 1
