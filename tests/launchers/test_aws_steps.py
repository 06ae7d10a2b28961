"""The EC2 launcher (moto) reads the step a job stands at, and its newest checkpoint's, from
its agent's heartbeat beside the checkpoints; a heartbeat that cannot be read says none."""

from __future__ import annotations

import dataclasses
import time

import pytest

pytest.importorskip("moto")

from launchers import heartbeats  # noqa: E402
from launchers.aws import AwsLauncher  # noqa: E402
from tests.launchers import test_aws as base  # noqa: E402
from tests.launchers.test_cloud_steps import WRITTEN, said  # noqa: E402

aws = base.aws  # the fixture


def test_an_ec2_instance_carries_the_steps_its_heartbeat_says(aws) -> None:  # noqa: ANN001
    aws.client("s3").create_bucket(Bucket="ckpt")
    launcher = AwsLauncher(session=aws, image_id="ami-12c6146b")
    job = dataclasses.replace(base.spec(), checkpoint_uri="s3://ckpt/jobs/job-7")
    got = launcher.launch(job)
    assert launcher.status(got.id).step is None  # no heartbeat yet (installing)
    heartbeats.publish(job.checkpoint_uri, job.attempt, {"pid": 9, "at": time.time()})
    seen = launcher.status(got.id)
    assert (seen.step, seen.checkpoint_step) == (None, None)  # an old heartbeat
    heartbeats.publish(job.checkpoint_uri, job.attempt, said())
    seen = launcher.status(got.id)
    assert (seen.step, seen.step_at, seen.checkpoint_step) == (720, WRITTEN, 708)
    [listed] = launcher.instances(7)
    assert (listed.step, listed.checkpoint_step) == (720, 708)
    assert launcher.statuses([got.id])[got.id] == seen


def test_an_ec2_heartbeat_that_cannot_be_read_says_no_step(aws) -> None:  # noqa: ANN001
    launcher = AwsLauncher(session=aws, image_id="ami-12c6146b")
    got = launcher.launch(base.spec())  # its bucket does not exist
    seen = launcher.status(got.id)
    assert seen.state in ("pending", "running") and seen.step is None


