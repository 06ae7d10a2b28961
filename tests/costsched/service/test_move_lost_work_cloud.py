"""On a cloud instance (EC2 under moto), a planned move is priced with the steps since the
checkpoint its agent's heartbeat says, not the decision model's assumption: the launcher
reads the heartbeat beside the job's checkpoints into the instance it describes."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("moto")

from costsched.optimize.decision import Overheads  # noqa: E402
from costsched.service import jobs as service  # noqa: E402
from costsched.store import PriceStore  # noqa: E402
from launchers import heartbeats  # noqa: E402
from launchers.aws import AwsLauncher  # noqa: E402
from tests.costsched.service.test_jobs import offer  # noqa: E402
from tests.costsched.service.test_move_shown_alike import EAST, NOW, OVERHEADS, SPEC  # noqa: E402
from tests.launchers import test_aws as base  # noqa: E402

aws = base.aws  # the fixture
CHECKPOINTS = "s3://ckpt/jobs/job-1"
WEST_USD_PER_HOUR = 1.0


def _running_on_ec2(tmp_path: Path, session) -> tuple[PriceStore, AwsLauncher, int]:  # noqa: ANN001
    """A job running on an EC2 instance in us-east-1 (its placement's), where us-west-2
    is cheaper."""
    store = PriceStore(f"sqlite:///{tmp_path / 'jobs.sqlite'}")
    at = NOW - timedelta(hours=1)
    west = dict(offer("us-west-2a", WEST_USD_PER_HOUR, at), region="us-west-2")
    store.ingest(pd.DataFrame([offer("us-east-1a", 3.0, at), west]))
    launcher = AwsLauncher(session=session, image_id="ami-12c6146b")
    start = NOW - timedelta(hours=6)
    job_id = store.jobs.create("big", {"spec": SPEC, "source": "test", "launcher": "aws"},
                               4000, at=start, policy="dynamic-aware")
    session.client("s3").create_bucket(Bucket="ckpt")
    launch = dataclasses.replace(base.spec(job_id=job_id, zone="us-east-1a"),
                                 checkpoint_uri=CHECKPOINTS, attempt="launch-1")
    instance = launcher.launch(launch)
    store.jobs.transition(job_id, "running", at=start)
    store.jobs.place(job_id, EAST, gpu_model="V100", gpu_count=1, at=start, usd_per_hour=3.0,
                     reason="launch", instance=instance.id)
    return store, launcher, job_id


def test_a_move_of_a_job_on_ec2_loses_the_steps_since_the_checkpoint_its_heartbeat_says(
        aws, tmp_path: Path) -> None:  # noqa: ANN001
    store, launcher, job_id = _running_on_ec2(tmp_path, aws)
    # It stands at step 720, reached 4 h into its run (measured at 0.05 steps/s); its
    # agent's newest checkpoint is at step 708: never stopped, nothing of it stored.
    store.jobs.record_progress(job_id, 720, at=NOW - timedelta(hours=2))
    heartbeats.publish(CHECKPOINTS, "launch-1", heartbeats.document(720, None, 708, 4))
    [advice] = service.migrate(store, launcher, job_id, dry_run=True, at=NOW,
                               overheads=OVERHEADS)
    assert advice.decision.move is not None
    hours = 12 / 0.05 / 3600
    assert advice.decision.move.lost_work_usd == pytest.approx(hours * WEST_USD_PER_HOUR)
    assert advice.reason.endswith("; lost work: up to 12 steps since its checkpoint at step 708 "
                                  "(none if the job checkpoints when stopped): "
                                  "4 min at 0.05 steps/s")
    assumed = Overheads().lost_work_hours(0.5) * WEST_USD_PER_HOUR
    assert advice.decision.move.lost_work_usd < assumed / 3
    store.dispose()


def test_an_old_heartbeat_leaves_the_assumption(aws, tmp_path: Path) -> None:  # noqa: ANN001
    store, launcher, job_id = _running_on_ec2(tmp_path, aws)
    heartbeats.publish(CHECKPOINTS, "launch-1", {"pid": 9, "at": NOW.timestamp()})
    [advice] = service.migrate(store, launcher, job_id, dry_run=True, at=NOW,
                               overheads=OVERHEADS)
    assumed = Overheads().lost_work_hours(0.5) * WEST_USD_PER_HOUR
    assert advice.decision.move is not None
    assert advice.decision.move.lost_work_usd == pytest.approx(assumed)
    assert "lost work:" not in advice.reason
    store.dispose()
