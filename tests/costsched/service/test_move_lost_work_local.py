"""A real job of the local launcher, never stopped, whose agent published a checkpoint at
step 600 while the job reports step 612: a move now is priced with the 12 steps since."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from costsched.amounts import usd
from costsched.service import jobs as service
from tests.real_jobs import launch, set_prices, wait_for

JOB = """\
import os, pathlib, time
ckpt = pathlib.Path(os.environ["COSTSCHED_CHECKPOINT_DIR"])
progress = os.environ["COSTSCHED_PROGRESS_FILE"]
def report(step):
    with open(progress + ".tmp", "w") as f:
        f.write(f"{step}\\n")
    os.replace(progress + ".tmp", progress)
report(600)
(ckpt / "state.bin.tmp").write_bytes(b"weights at 600")
os.replace(ckpt / "state.bin.tmp", ckpt / "state.bin")
(ckpt / "COSTSCHED_COMMIT").write_text("600\\n")
time.sleep(1)
report(612)
time.sleep(300)
"""


def test_a_running_job_s_move_loses_the_steps_since_its_published_checkpoint(
        world, tmp_path: Path) -> None:  # noqa: ANN001, F811
    store, launcher, tmp = world
    job, instance = launch(world, JOB)
    wait_for(lambda: (lambda i: i.step == 612 and i.checkpoint_step == 600)(
        launcher.status(instance)))
    set_prices(store, {"us-east-1a": 3.0, "us-east-1b": 0.5}, datetime.now(timezone.utc))
    [advice] = service.migrate(store, launcher, job.id, dry_run=True)
    move = advice.decision.move
    assert advice.decision.moves and move is not None
    assert ("; lost work: up to 12 steps since its checkpoint at step 600 "
            "(none if the job checkpoints when stopped): ") in advice.reason
    # Not measured yet (no pass stored its steps): at its plan's 0.01 steps/s.
    hours = 12 / 0.01 / 3600
    assert advice.reason.endswith("; lost work: up to 12 steps since its checkpoint at step 600 "
                                  "(none if the job checkpoints when stopped): "
                                  "20 min at its plan's 0.01 steps/s")
    assert move.lost_work_usd == pytest.approx(hours * advice.decision.usd_per_hour)
    assert f"lost work {usd(move.lost_work_usd)}" in advice.reason
