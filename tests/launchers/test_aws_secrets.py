"""A job's secrets on EC2 against moto's SSM: put as SecureString parameters of the attempt
(never in the user data), deleted when the launcher ends the instance (a terminate while
the instance still boots included; again: nothing to do), and swept when a launch that
crashed left them; the wedged-instance recovery through the service's dead-agent check."""

from __future__ import annotations

import dataclasses
import time

import pytest

pytest.importorskip("moto")

from launchers import aws_secrets, cloud_secrets  # noqa: E402
from launchers.aws import AwsLauncher  # noqa: E402
from launchers.base import Instance  # noqa: E402
from tests.launchers import test_aws as base  # noqa: E402
from tests.launchers.test_aws import spec, user_data  # noqa: E402

aws, launcher = base.aws, base.launcher  # the fixtures


@pytest.fixture(autouse=True)
def _no_instance_left():
    """moto's backends are this process's: the boot tests' server would find this test's
    instances (a launch finds one of the same job and attempt)."""
    yield
    from moto.moto_api._internal.models import moto_api_backend

    moto_api_backend.reset()

VALUE = "hf_s3cr3t-token-9a7b"


def secret_spec(attempt: str = "launch-1", job_id: int = 7):
    job = spec(attempt=attempt, job_id=job_id)
    return dataclasses.replace(job, envs={**job.envs, "HF_TOKEN": VALUE},
                               secret_names=("HF_TOKEN",))


def parameters(session) -> dict[str, dict]:
    ssm = session.client("ssm", region_name="us-east-1")
    pages = ssm.get_paginator("get_parameters_by_path").paginate(
        Path="/costsched", Recursive=True, WithDecryption=True)
    return {p["Name"]: p for page in pages for p in page["Parameters"]}


def test_secrets_are_parameters_of_the_attempt_never_in_the_user_data(
        aws, launcher: AwsLauncher) -> None:
    got = launcher.launch(secret_spec())
    key = cloud_secrets.key(7, "launch-1")
    [(name, parameter)] = parameters(aws).items()
    assert name == f"/costsched/job-7/{key}/HF_TOKEN"
    assert parameter["Type"] == "SecureString" and parameter["Value"] == VALUE
    script = user_data(aws, got.id.split("/")[1])
    assert VALUE not in script
    from launchers.userdata import read_payload

    job = read_payload(script)
    assert job["secret_refs"] == {"HF_TOKEN": name} and "HF_TOKEN" not in job["envs"]
    assert job["secret_store"] == "ssm"


def test_terminate_mid_boot_deletes_the_attempts_parameters_idempotently(
        aws, launcher: AwsLauncher) -> None:
    first = launcher.launch(secret_spec(attempt="launch-1"))
    other = launcher.launch(secret_spec(attempt="move-2"))  # a move's target: kept
    assert len(parameters(aws)) == 2
    launcher.terminate(first.id)  # still pending: it never read them
    assert list(parameters(aws)) == [f"/costsched/job-7/{cloud_secrets.key(7, 'move-2')}"
                                     "/HF_TOKEN"]
    launcher.terminate(first.id)  # again: nothing left to delete, no error
    launcher.terminate(other.id)
    assert parameters(aws) == {}


def test_sweep_deletes_what_a_crashed_launch_left_and_keeps_live_ones(
        aws, launcher: AwsLauncher) -> None:
    live = launcher.launch(secret_spec(attempt="launch-1"))
    ssm = launcher._client("ssm", "us-east-1")
    crashed = secret_spec(attempt="crashed-1", job_id=8)
    aws_secrets.put(ssm, crashed)  # put, then costsched died before run_instances
    seen = launcher.statuses([live.id])
    later = time.time() + cloud_secrets.SWEEP_AFTER_SECONDS + 60
    assert aws_secrets.sweep(ssm, seen.values(), now=time.time()) == []  # under way: kept
    assert aws_secrets.sweep(ssm, seen.values(), now=later) == [
        f"/costsched/job-8/{cloud_secrets.key(8, 'crashed-1')}/HF_TOKEN"]
    assert list(parameters(aws)) == [f"/costsched/job-7/{cloud_secrets.key(7, 'launch-1')}"
                                     "/HF_TOKEN"]
    ended = Instance(**{**dataclasses.asdict(seen[live.id]), "state": "terminated"})
    assert len(aws_secrets.sweep(ssm, [ended], now=later)) == 1
    assert parameters(aws) == {}


def test_a_launch_without_secrets_makes_no_ssm_call(aws, launcher: AwsLauncher) -> None:
    launcher.launch(spec())
    assert ("ssm", "us-east-1") not in launcher._clients


def test_a_launch_that_fails_deletes_the_secrets_it_put(aws) -> None:
    from botocore.stub import Stubber

    from costsched.clouds import aws as aws_cloud
    from launchers.base import CapacityError

    launcher = AwsLauncher(session=aws, image_id="ami-12c6146b")
    ec2 = launcher._client("ec2", "us-east-1")
    code = sorted(aws_cloud.CAPACITY_ERROR_CODES)[0]
    with Stubber(ec2) as stub:
        stub.add_response("describe_instances", {"Reservations": []})  # not launched before
        stub.add_response("describe_instances", {"Reservations": []})  # the sweep's look
        stub.add_client_error("run_instances", service_error_code=code,
                              service_message="no capacity")
        with pytest.raises(CapacityError):
            launcher.launch(secret_spec())
    assert parameters(aws) == {}
