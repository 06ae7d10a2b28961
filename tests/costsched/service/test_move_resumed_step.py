"""A migration says in `status` the step it resumed its job from, as a recovery and a
start do: a real job of the local launcher that saves when stopped (SIGTERM) is moved
with `migrate --to`, and its status reads 'moved at ... UTC: instance ID: resumes from
step 612 (its checkpoint's): no step lost'; the next move is then priced as losing none."""

from __future__ import annotations

import re
from datetime import datetime, timezone

from costsched.cli.status_gangs import lost_lines
from costsched.service import jobs as service
from costsched.service import views
from tests.costsched.service.test_move_lost_work_local import JOB as SAVES_AT_600
from tests.real_jobs import launch, set_prices, wait_for, world  # noqa: F401 - the fixture

# At 600 with a checkpoint, then at 612; on SIGTERM, a checkpoint at 612, exit 0. Run again
# (the move's target), it stands at the step it resumed from.
JOB = SAVES_AT_600.replace("report(600)\n", """\
import signal, sys
def save(*_):
    (ckpt / "state.bin.tmp").write_bytes(b"weights at 612")
    os.replace(ckpt / "state.bin.tmp", ckpt / "state.bin")
    (ckpt / "COSTSCHED_COMMIT").write_text("612\\n")
    sys.exit(0)
signal.signal(signal.SIGTERM, save)
if (ckpt / "COSTSCHED_COMMIT").exists():
    report(int((ckpt / "COSTSCHED_COMMIT").read_text()))
    time.sleep(300)
report(600)
""")


def test_a_move_says_the_step_it_resumed_from(world) -> None:  # noqa: ANN001, F811
    store, launcher, _ = world
    job, instance = launch(world, JOB)
    wait_for(lambda: (lambda i: i.step == 612 and i.checkpoint_step == 600)(
        launcher.status(instance)))
    set_prices(store, {"us-east-1a": 3.0, "us-east-1b": 0.5}, datetime.now(timezone.utc))
    [advice] = service.migrate(store, launcher, job.id, to="aws us-east-1b p3.2xlarge spot")
    assert "lost work: up to 12 steps since its checkpoint at step 600" in advice.reason
    service.settle(store, launcher, 60)

    def moved() -> list[str]:
        [s] = service.status(store, launcher, str(job.id))
        return [line for line in lost_lines(s) if line.startswith("moved at ")]

    [line] = wait_for(moved, seconds=120)
    [s] = service.status(store, launcher, str(job.id))
    [doc] = views.status_document([s])
    [said] = doc["moved"]  # --json: the same words
    assert line.endswith(said["said"]) and said["said"].startswith(f"instance {instance}: ")
    assert re.fullmatch(rf"moved at \d{{4}}-\d\d-\d\d \d\d:\d\d UTC: instance {instance}: "
                        r"resumes from step 612 \(its checkpoint's\): no step lost", line), line
    assert [(m.kind, m.state) for m in store.moves.of_job(job.id)][1:] == [
        ("migration", "done")]
    # Seen to save when stopped: a move from here on loses none.
    set_prices(store, {"us-east-1a": 0.2, "us-east-1b": 0.5}, datetime.now(timezone.utc))
    [again] = service.migrate(store, launcher, job.id, dry_run=True,
                              to="aws us-east-1a p3.2xlarge spot")
    assert "lost work: none, the job checkpoints when stopped" in again.reason, again.reason
