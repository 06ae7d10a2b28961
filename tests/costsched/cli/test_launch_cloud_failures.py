"""`costsched launch` when EC2 fails a call for another reason than capacity (moto's EC2,
the failures raised by botocore's own send and after-call hooks, as botocore raises them):
one line on stderr naming the cloud, the call, the cause and the fix, never a traceback; a
non-zero exit code when nothing was launched; the job failed with that line, or launched on
the next offering the failure does not refuse. A create whose answer was lost is found by
its tag (one instance, never two). A recovery pass (the daemon's `reconcile`) acts alike,
and a pass EC2 cannot answer is one line, the job left running for the next pass."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, ReadTimeoutError
from moto import mock_aws

from costsched.clouds.aws import new_session as _REAL_SESSION
from costsched.service import jobs as service
from costsched.store import PriceStore
from tests.conftest import hermetic_aws_env
from tests.costsched.cli.test_quotas import priced_task  # a spot V100 task, two zones


@dataclass
class Faults:
    """What EC2 does wrong, by (operation, region): an exception raised before the request
    is sent (`before`) or after EC2 carried it out (`after`); the calls made."""

    before: dict[tuple[str, str], Callable[[str], Exception]] = field(default_factory=dict)
    after: dict[tuple[str, str], Callable[[str], Exception]] = field(default_factory=dict)
    calls: list[tuple[str, str]] = field(default_factory=list)

    def session(self) -> Any:
        session = _REAL_SESSION()
        session.events.register_first("before-send.ec2", self._before)
        session.events.register_first("after-call.ec2", self._after)
        return session

    @staticmethod
    def _where(url: str) -> str:
        return next((r for r in ("us-east-1", "us-west-2") if r in url), "us-east-1")

    def _before(self, request: Any, **_: Any) -> None:
        operation = request.context.get("operation_name", "") if hasattr(
            request, "context") else ""
        operation = operation or _operation(request.body)
        region = self._where(request.url)
        self.calls.append((operation, region))
        for key in ((operation, region), ("*", region), ("*", "*")):
            if key in self.before:
                raise self.before[key](request.url)

    def _after(self, model: Any, context: Any, **_: Any) -> None:
        region = context.get("client_region", "") or "us-east-1"
        key = (model.name, region)
        if key in self.after:
            raise self.after.pop(key)(f"https://ec2.{region}.amazonaws.com/")


def _operation(body: Any) -> str:
    text = body.decode() if isinstance(body, bytes) else str(body or "")
    for part in text.split("&"):
        if part.startswith("Action="):
            return part.split("=", 1)[1]
    return ""


def unplugged(url: str) -> Exception:
    return EndpointConnectionError(endpoint_url=url)


def answer_lost(url: str) -> Exception:
    return ReadTimeoutError(endpoint_url=url)


def ec2_said(code: str, status: int) -> Callable[[str], Exception]:
    def make(url: str) -> Exception:
        return ClientError({"Error": {"Code": code, "Message": f"{code} (said by EC2)"},
                            "ResponseMetadata": {"HTTPStatusCode": status}}, "RunInstances")
    return make


@pytest.fixture()
def ec2(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, db_path: Path) -> Iterator[Faults]:
    """Moto's EC2 behind the faults' hooks, spot prices cheaper in us-east-1 than in
    us-west-2, and the job's file (`ec2.task`)."""
    hermetic_aws_env(monkeypatch, tmp_path)
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    monkeypatch.setenv("MOTO_EC2_LOAD_DEFAULT_AMIS", "false")
    monkeypatch.setenv("COSTSCHED_DAEMON_AUTOSTART", "false")
    monkeypatch.setattr("launchers.aws.AwsLauncher._all_regions",
                        lambda self: ["us-east-1", "us-west-2"])
    # One attempt a call: botocore's retries of a lost network are its own, not costsched's.
    monkeypatch.setattr("costsched.clouds.aws.RETRIES",
                        {"mode": "standard", "total_max_attempts": 1})
    faults = Faults()
    monkeypatch.setattr("costsched.clouds.aws.new_session", faults.session)
    with mock_aws():
        path = priced_task(db_path, tmp_path)
        faults.task = path  # type: ignore[attr-defined]
        yield faults


def instances_in(region: str) -> list[dict]:
    found = boto3.client("ec2", region_name=region).describe_instances()["Reservations"]
    return [i for r in found for i in r["Instances"] if i["State"]["Name"] != "terminated"]


def job_of(db_path: Path) -> tuple[str, str]:
    """(state, the detail of its last state change) of the store's only job."""
    store = PriceStore(str(db_path))
    try:
        [record] = store.jobs.records()
        return record.state, store.jobs.last_details([record.id], "state")[record.id]
    finally:
        store.dispose()


def test_no_network_is_one_line_and_a_failed_job_not_a_traceback(
        cli: Any, ec2: Faults, db_path: Path) -> None:
    ec2.before[("*", "*")] = unplugged
    launched = cli("launch", ec2.task, "--launcher", "aws", "--wait", "0")  # type: ignore[attr-defined]
    assert launched.exit_code == 1, launched.output
    assert "Traceback" not in launched.output
    [line] = launched.stderr.splitlines()
    assert line.startswith("error: job 1 (spot-v100) not launched: no offering could be "
                           "launched; aws ")
    assert line.endswith("aws list of the job's instances: cannot reach the cloud's API "
                         "(EndpointConnectionError: Could not connect to the endpoint URL: "
                         "\"https://ec2.us-east-1.amazonaws.com/\"); check this machine's "
                         "network (a proxy, DNS, a firewall) to the cloud's API")
    assert "testing" not in launched.output  # the access key
    state, why = job_of(db_path)
    assert state == "failed" and why == line.split(" not launched: ", 1)[1]
    # Each offering's look for what its launch may have made failed: no create was sent.
    assert ec2.calls == [("DescribeInstances", "us-east-1")] * 2


def test_throttling_fails_over_to_the_next_region(cli: Any, ec2: Faults,
                                                  db_path: Path) -> None:
    ec2.before[("RunInstances", "us-east-1")] = ec2_said("RequestLimitExceeded", 503)
    launched = cli("launch", ec2.task, "--launcher", "aws", "--wait", "0", "--json")  # type: ignore[attr-defined]
    assert launched.exit_code == 0, launched.output
    [job] = json.loads(launched.stdout)
    assert job["placement"]["region"] == "us-west-2" and job["state"] in ("launching",
                                                                          "running")
    assert len(instances_in("us-west-2")) == 1 and instances_in("us-east-1") == []
    store = PriceStore(str(db_path))
    said = [d for d in store.jobs.events(job["id"])["detail"] if "throttled" in d]
    store.dispose()
    assert said == ["move 1 (launch): cannot launch: aws us-east-1a: run_instances "
                    "p3.2xlarge: throttled by the cloud's API (RequestLimitExceeded: "
                    "RequestLimitExceeded (said by EC2))"]


def test_a_missing_permission_fails_the_job_with_the_fix_and_tries_no_other_region(
        cli: Any, ec2: Faults, db_path: Path) -> None:
    ec2.before[("RunInstances", "us-east-1")] = ec2_said("UnauthorizedOperation", 403)
    ec2.before[("RunInstances", "us-west-2")] = ec2_said("UnauthorizedOperation", 403)
    launched = cli("launch", ec2.task, "--launcher", "aws", "--wait", "0")  # type: ignore[attr-defined]
    assert launched.exit_code == 1, launched.output
    assert launched.stderr == (
        "error: job 1 (spot-v100) not launched: no offering could be launched; aws "
        "us-east-1a: run_instances p3.2xlarge: not allowed (UnauthorizedOperation: "
        "UnauthorizedOperation (said by EC2)); allow it to the AWS identity costsched uses "
        "(its IAM policy); `costsched check` says what each cloud can do from here\n")
    assert [c for c in ec2.calls if c[0] == "RunInstances"] == [("RunInstances", "us-east-1")]
    assert job_of(db_path)[0] == "failed"


def test_a_create_whose_answer_was_lost_is_found_by_its_tag(cli: Any, ec2: Faults,
                                                            db_path: Path) -> None:
    ec2.after[("RunInstances", "us-east-1")] = answer_lost  # EC2 made it; the answer is lost
    launched = cli("launch", ec2.task, "--launcher", "aws", "--wait", "0", "--json")  # type: ignore[attr-defined]
    assert launched.exit_code == 0, launched.output
    [job] = json.loads(launched.stdout)
    [made] = instances_in("us-east-1")
    assert instances_in("us-west-2") == []  # one instance: never a second
    assert job["placement"]["instance"] == f"us-east-1/{made['InstanceId']}"
    assert [c for c in ec2.calls if c[0] == "RunInstances"] == [("RunInstances", "us-east-1")]


def running_job(ec2: Faults, db_path: Path, cli: Any) -> tuple[PriceStore, Any, int, str]:
    launched = cli("launch", ec2.task, "--launcher", "aws", "--wait", "0", "--json")  # type: ignore[attr-defined]
    assert launched.exit_code == 0, launched.output
    [job] = json.loads(launched.stdout)
    from launchers import make_launcher

    store = PriceStore(str(db_path))
    launcher = make_launcher("aws")
    service.reconcile(store, launcher)
    assert store.jobs.get(job["id"]).state == "running"
    return store, launcher, job["id"], str(job["placement"]["instance"])


def preempt(instance: str) -> None:
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.ec2.models import ec2_backends
    from moto.ec2.models.instances import StateReason

    region, ec2_id = instance.split("/")
    backend = ec2_backends[DEFAULT_ACCOUNT_ID][region]
    backend.terminate_instances([ec2_id])
    backend.get_instance(ec2_id).state_reason = StateReason(
        "Server.SpotInstanceTermination: Spot instance termination",
        "Server.SpotInstanceTermination")


def test_a_recovery_pass_waits_fails_over_and_a_permission_fails_the_job_with_its_fix(
        cli: Any, ec2: Faults, db_path: Path) -> None:
    store, launcher, job, instance = running_job(ec2, db_path, cli)
    preempt(instance)
    # The lost instance cannot be ended now: the job is left for the next pass.
    ec2.before[("TerminateInstances", "us-east-1")] = ec2_said("RequestLimitExceeded", 503)
    [event] = [e for e in service.reconcile(store, launcher) if e.job_id == job]
    assert (event.kind, event.level) == ("cloud", "warning")
    assert str(event).endswith("throttled by the cloud's API (RequestLimitExceeded: "
                               "RequestLimitExceeded (said by EC2)); asked again at the next "
                               "pass")
    assert store.jobs.get(job).state == "running"
    del ec2.before[("TerminateInstances", "us-east-1")]
    ec2.before[("RunInstances", "us-east-1")] = ec2_said("RequestLimitExceeded", 503)
    events = service.reconcile(store, launcher)
    assert [e.kind for e in events if e.job_id == job] == ["recovery"]
    assert store.jobs.get(job).state == "running"
    assert store.jobs.placements(job)["region"].tolist() == ["us-east-1", "us-west-2"]

    preempt(str(store.jobs.placements(job)["instance"].iloc[-1]))
    ec2.before[("RunInstances", "us-west-2")] = ec2_said("UnauthorizedOperation", 403)
    ec2.before[("RunInstances", "us-east-1")] = ec2_said("UnauthorizedOperation", 403)
    [event] = [e for e in service.reconcile(store, launcher) if e.job_id == job]
    assert event.notify == "failure"
    record = store.jobs.get(job)
    assert record.state == "failed"
    assert store.jobs.last_details([job], "state")[job].endswith(
        "allow it to the AWS identity costsched uses (its IAM policy); `costsched check` "
        "says what each cloud can do from here")
    store.dispose()


def test_a_pass_ec2_cannot_answer_is_one_line_and_the_job_waits_for_the_next(
        cli: Any, ec2: Faults, db_path: Path) -> None:
    store, launcher, job, _ = running_job(ec2, db_path, cli)
    store.dispose()
    ec2.before[("DescribeInstances", "us-east-1")] = unplugged
    shown = cli("status")
    assert shown.exit_code == 75, shown.output
    [line] = shown.stderr.splitlines()
    assert line == (f"error: job {job}: not looked after in this pass (shown with why); "
                    "`costsched status` again tries again")
    # The job is shown, with the cloud's words in one line under it.
    said = " ".join(shown.stdout.split())
    assert (f"job {job}: not looked after in this pass: aws us-east-1: status: cannot reach "
            "the cloud's API (EndpointConnectionError: Could not connect to the endpoint "
            "URL: \"https://ec2.us-east-1.amazonaws.com/\"); check this machine's network "
            "(a proxy, DNS, a firewall) to the cloud's API; tried again at the next pass"
            ) in said
    assert "Traceback" not in shown.output
    assert job_of(db_path)[0] == "running"
    del ec2.before[("DescribeInstances", "us-east-1")]
    assert cli("status").exit_code == 0
    assert job_of(db_path)[0] == "running"
