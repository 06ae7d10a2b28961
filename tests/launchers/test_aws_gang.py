"""EC2 gangs against moto: N instances with the same tags and user data but for their rank,
their addresses beside the checkpoints, all-or-nothing when a node meets no capacity, a
lost node, termination of every node. moto has no placement groups: their three calls are
answered at botocore's boundary (a before-call handler with EC2's documented response
shapes), which keeps the groups made and deleted."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

pytest.importorskip("moto")
import boto3  # noqa: E402
from botocore.awsrequest import AWSResponse  # noqa: E402
from moto import mock_aws  # noqa: E402

from costsched.model import InvalidInput, Offering  # noqa: E402
from launchers import aws_gang, cloud_gang  # noqa: E402
from launchers.aws import STOP_COMMAND, AwsLauncher  # noqa: E402
from launchers.base import TAG_ATTEMPT, TAG_JOB, CapacityError, LaunchSpec  # noqa: E402
from launchers.userdata import read_payload  # noqa: E402
from tests.conftest import moto_regions  # noqa: E402
from tests.job_folders import folder_of

BUCKET = "gang-bucket"


def offering(instance_type: str = "p3.2xlarge", zone: str = "us-east-1b") -> Offering:
    return Offering("aws", "us-east-1", zone, instance_type, "spot", "V100", 1, 8, 61.0)


def spec(nodes: int = 2, attempt: str = "launch-1", **kw: Any) -> LaunchSpec:
    return LaunchSpec(job_id=7, job_name="gang", command="torchrun train.py",
                      offering=offering(**kw), checkpoint_uri=f"s3://{BUCKET}/jobs/job-7",
                      attempt=attempt, envs={"LR": "0.1"}, task={"num_nodes": nodes})


class Calls:
    """EC2 calls seen at botocore's boundary: run_instances' parameters as sent, placement
    groups answered (moto has none), and a capacity error for the n-th run_instances."""

    def __init__(self, session: boto3.session.Session) -> None:
        self.runs: list[dict] = []
        self.groups: dict[str, dict] = {}
        self.deleted: list[str] = []
        self.fail_run: int | None = None  # 1-based: that run_instances call fails
        session.events.register("before-parameter-build.ec2.RunInstances", self._run)
        session.events.register("before-call.ec2.RunInstances", self._maybe_fail)
        self.asked: dict = {}  # the API parameters of the call under way
        self.commands: list[dict] = []  # SSM send_command (moto lists every instance in one)
        session.events.register("before-parameter-build.ssm.SendCommand",
                                lambda params, **_: self.commands.append(dict(params)))
        for op in ("CreatePlacementGroup", "DescribePlacementGroups", "DeletePlacementGroup"):
            session.events.register(f"before-parameter-build.ec2.{op}", self._ask)
            session.events.register(f"before-call.ec2.{op}", getattr(self, f"_{op}"))

    def _run(self, params: dict, **_: Any) -> None:
        self.runs.append(json.loads(json.dumps(params)))

    def _ask(self, params: dict, **_: Any) -> None:
        self.asked = dict(params)

    @staticmethod
    def _answer(status: int, body: dict) -> tuple[AWSResponse, dict]:
        return AWSResponse("https://ec2.us-east-1.amazonaws.com/", status, {}, None), {
            **body, "ResponseMetadata": {"HTTPStatusCode": status}}

    def _maybe_fail(self, **_: Any) -> tuple[AWSResponse, dict] | None:
        if self.fail_run is not None and len(self.runs) == self.fail_run:
            return self._answer(500, {"Error": {
                "Code": "InsufficientInstanceCapacity",
                "Message": "We currently do not have sufficient p3.2xlarge capacity in "
                           "the Availability Zone you requested (us-east-1b)."}})
        return None

    def _CreatePlacementGroup(self, **_: Any) -> tuple[AWSResponse, dict]:  # noqa: N802
        params = self.asked
        name = params["GroupName"]
        if name in self.groups:
            return self._answer(400, {"Error": {"Code": "InvalidPlacementGroup.Duplicate",
                                                "Message": f"{name} exists"}})
        tags = params["TagSpecifications"][0]["Tags"]
        self.groups[name] = {"GroupName": name, "Strategy": params["Strategy"],
                             "State": "available", "Tags": tags}
        return self._answer(200, {"PlacementGroup": self.groups[name]})

    def _DescribePlacementGroups(self, **_: Any) -> tuple[AWSResponse, dict]:  # noqa: N802
        params = self.asked
        [wanted] = params["Filters"]
        assert wanted == {"Name": "tag-key", "Values": [cloud_gang.TAG_GANG]}
        return self._answer(200, {"PlacementGroups": list(self.groups.values())})

    def _DeletePlacementGroup(self, **_: Any) -> tuple[AWSResponse, dict]:  # noqa: N802
        params = self.asked
        name = params["GroupName"]
        if self.groups.pop(name, None) is None:
            return self._answer(400, {"Error": {"Code": "InvalidPlacementGroup.Unknown",
                                                "Message": f"{name} unknown"}})
        self.deleted.append(name)
        return self._answer(200, {})


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    moto_regions(monkeypatch)
    with mock_aws():
        session = boto3.session.Session(region_name="us-east-1")
        session.client("s3").create_bucket(Bucket=BUCKET)
        yield session


@pytest.fixture
def calls(aws) -> Calls:
    return Calls(aws)


@pytest.fixture
def launcher(aws, calls) -> AwsLauncher:
    return AwsLauncher(session=aws, image_id="ami-12c6146b", gang_placement="auto")


def ec2_records(session) -> list[dict]:
    ec2 = session.client("ec2", region_name="us-east-1")
    return [r for res in ec2.describe_instances()["Reservations"] for r in res["Instances"]]


def tags_of(record: dict) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in record["Tags"]}


def user_data(session, ec2_id: str) -> str:
    import base64

    ec2 = session.client("ec2", region_name="us-east-1")
    value = ec2.describe_instance_attribute(InstanceId=ec2_id, Attribute="userData")
    return base64.b64decode(value["UserData"]["Value"]).decode()


def test_two_nodes_same_tags_ranked_user_data_placement_group_and_addresses(
        aws, calls: Calls, launcher: AwsLauncher) -> None:
    got = launcher.launch(spec())
    digest = cloud_gang.digest(7, "launch-1")
    assert got.id == f"us-east-1/gang-7-2-{digest}"
    assert (got.job_id, got.attempt, got.offering_key) == (7, "launch-1", offering().key)
    records = sorted(ec2_records(aws), key=lambda r: tags_of(r)[cloud_gang.TAG_NODE])
    assert len(records) == 2
    tags = [tags_of(r) for r in records]
    shared = {TAG_JOB: "7", TAG_ATTEMPT: "launch-1", cloud_gang.TAG_GANG: digest,
              cloud_gang.TAG_NODES: "2", aws_gang.TAG_PLACEMENT: f"costsched-7-{digest}"}
    for rank, node_tags in enumerate(tags):
        assert {k: node_tags[k] for k in shared} == shared
        assert node_tags[cloud_gang.TAG_NODE] == str(rank)
    assert {r["InstanceType"] for r in records} == {"p3.2xlarge"}
    assert {r["Placement"]["AvailabilityZone"] for r in records} == {"us-east-1b"}
    # One offering, one zone, one cluster placement group, a client token a node.
    group = f"costsched-7-{digest}"
    assert calls.groups[group]["Strategy"] == "cluster"
    assert [r["Placement"] for r in calls.runs] == [
        {"AvailabilityZone": "us-east-1b", "GroupName": group}] * 2
    assert len({r["ClientToken"] for r in calls.runs}) == 2
    # The same user data but for the rank.
    payloads = [read_payload(user_data(aws, r["InstanceId"])) for r in records]
    assert [p["gang"] for p in payloads] == [
        {"rank": 0, "nodes": 2, "gpus": 1, "digest": digest},
        {"rank": 1, "nodes": 2, "gpus": 1, "digest": digest}]
    for p in payloads:
        p.pop("gang")
    assert payloads[0] == payloads[1] and payloads[0]["command"] == "torchrun train.py"
    # The nodes' addresses beside the checkpoints, rank 0 first.
    ips = [r["PrivateIpAddress"] for r in records]
    assert cloud_gang.read_addresses(f"s3://{BUCKET}/jobs/job-7", digest) == ips
    # One instance for costsched; each node's state and address.
    assert launcher.status(got.id).state == "running"
    nodes = launcher.nodes(got.id)
    assert [(n.rank, n.state, n.address) for n in nodes] == [
        (0, "running", ips[0]), (1, "running", ips[1])]
    assert [i.id for i in launcher.instances(7)] == [got.id]
    assert launcher.statuses([got.id])[got.id].state == "running"
    # The gang was made when its rank 0 was.
    assert launcher.status(got.id).created_at == records[0]["LaunchTime"] is not None
    # The same attempt launched again finds the gang (a costsched that crashed).
    assert launcher.launch(spec()).id == got.id and len(ec2_records(aws)) == 2


def test_terminate_ends_every_node_and_the_placement_group(aws, calls, launcher) -> None:
    got = launcher.launch(spec(nodes=3))
    launcher.terminate(got.id)
    assert {r["State"]["Name"] for r in ec2_records(aws)} == {"terminated"}
    assert calls.deleted == [f"costsched-7-{cloud_gang.digest(7, 'launch-1')}"]
    assert not calls.groups
    seen = launcher.status(got.id)
    assert seen.state == "terminated" and not seen.live
    launcher.terminate(got.id)  # idempotent


def test_no_capacity_for_the_second_node_ends_the_first(aws, calls, launcher) -> None:
    calls.fail_run = 2
    with pytest.raises(CapacityError) as caught:
        launcher.launch(spec())
    assert "InsufficientInstanceCapacity" in caught.value.reason
    assert "node 1 of 2" in caught.value.reason and "\n" not in str(caught.value)
    assert caught.value.offering == offering()
    [record] = ec2_records(aws)  # the first node, started then ended
    assert record["State"]["Name"] == "terminated"
    assert not calls.groups and calls.deleted  # its placement group went with it
    assert launcher.instances(7) == [] or all(not i.live for i in launcher.instances(7))


def test_a_node_whose_agent_ended_stops_rank_0_then_reads_its_end(
        aws, calls, launcher, monkeypatch) -> None:
    """A node whose own agent ended (its instance shut itself down) is not replaced: the
    gang ends as one."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.ec2.models import ec2_backends
    from moto.ec2.models.instances import StateReason

    got = launcher.launch(spec())
    rank0, rank1 = (n.id.split("/")[1] for n in launcher.nodes(got.id))
    backend = ec2_backends[DEFAULT_ACCOUNT_ID]["us-east-1"]
    backend.terminate_instances([rank1])
    backend.get_instance(rank1).state_reason = StateReason(
        "Client.InstanceInitiatedShutdown: Instance initiated shutdown",
        "Client.InstanceInitiatedShutdown")
    seen = launcher.status(got.id)
    # Rank 0 is asked to checkpoint first: the gang still runs, and says why.
    assert seen.state == "running" and "node 1 terminated" in seen.detail
    assert seen.lost_nodes == ()
    [command] = calls.commands
    assert command["InstanceIds"] == [rank0]
    assert command["Parameters"] == {"commands": [STOP_COMMAND]}
    assert launcher.status(got.id).state == "running"
    assert len(calls.commands) == 1  # asked once
    assert launcher.repair_nodes(got.id, spec()) == "" and len(calls.runs) == 2
    assert [n.state for n in launcher.nodes(got.id)] == ["running", "terminated"]
    monkeypatch.setattr(cloud_gang, "STOP_GRACE_SECONDS", 0.0)  # its time is up
    seen = launcher.status(got.id)
    assert seen.state == "terminated" and "node 1 terminated" in seen.detail
    launcher.terminate(got.id)
    assert {r["State"]["Name"] for r in ec2_records(aws)} == {"terminated"}


def test_placement_off_or_unsupported_type_makes_no_group(aws, calls) -> None:
    off = AwsLauncher(session=aws, image_id="ami-12c6146b", gang_placement="off")
    off.launch(spec())
    t3 = AwsLauncher(session=aws, image_id="ami-12c6146b", gang_placement="auto")
    t3.launch(spec(attempt="launch-2", instance_type="t3.large"))
    assert not calls.groups and all("GroupName" not in r["Placement"] for r in calls.runs)
    assert {r["Placement"]["AvailabilityZone"] for r in calls.runs} == {"us-east-1b"}
    with pytest.raises(InvalidInput, match="gang placement 'always'"):
        AwsLauncher(session=aws, image_id="ami-12c6146b", gang_placement="always")


def test_regional_offering_puts_every_node_in_rank_0s_zone(aws, calls) -> None:
    launcher = AwsLauncher(session=aws, image_id="ami-12c6146b", gang_placement="off")
    launcher.launch(spec(nodes=3, zone=""))
    zones = {r["Placement"]["AvailabilityZone"] for r in ec2_records(aws)}
    assert len(zones) == 1
    assert "Placement" not in calls.runs[0]
    assert [r["Placement"] for r in calls.runs[1:]] == [{"AvailabilityZone": zones.pop()}] * 2


def test_one_node_job_is_one_instance_as_before(aws, calls, launcher) -> None:
    got = launcher.launch(spec(nodes=1))
    assert got.id.split("/")[1].startswith("i-")
    [record] = ec2_records(aws)
    assert cloud_gang.TAG_GANG not in tags_of(record)
    assert read_payload(user_data(aws, record["InstanceId"]))["gang"] is None
    assert not calls.groups


TASK = """\
name: gang-recovers
num_nodes: 2
resources:
  infra: aws/us-east-1
  accelerators: V100:1
  use_spot: true
run: python train.py
"""


def launched_gang(aws, tmp_path) -> tuple[Any, Any, AwsLauncher, str]:
    """Through the service: a gang of two launched for TASK (store, job, launcher, its
    handle)."""
    import pandas as pd

    from costsched.service import jobs as service
    from costsched.store import PriceStore

    at = pd.Timestamp("2026-01-01T00:00:00Z").to_pydatetime()
    launcher = AwsLauncher(session=aws, image_id="ami-12c6146b", gang_placement="auto")
    store = PriceStore(f"sqlite:///{tmp_path / 'store.sqlite'}")
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone=zone, instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=price, effective_at=at, source="test")
        for zone, price in (("us-east-1a", 0.9), ("us-east-1b", 1.0))]))
    path = tmp_path / "task.yaml"
    path.write_text(TASK)
    [job] = service.launch(store, [path], launcher=launcher, at=at,
                           checkpoint_root=f"s3://{BUCKET}/jobs")
    first = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    assert len(launcher.nodes(first)) == 2 and launcher.status(first).state == "running"
    return store, job, launcher, first


def test_a_preempted_node_is_replaced_in_place_through_the_service(aws, calls,
                                                                   tmp_path) -> None:
    """Through the service: node 1 taken away; the reconcile pass replaces it where it ran
    (one instance), rank 0 kept, and the gang resumes in round 2 once rank 0 checkpointed
    and the new node is set up; the job stays on its placement; N instances at most."""
    from costsched.service import jobs as service

    store, job, launcher, first = launched_gang(aws, tmp_path)
    rank0 = launcher.nodes(first)[0].id
    lose_rank1(launcher, first)
    [said] = service.reconcile(store, launcher)  # the replacement, said once (a recovery)
    assert "node 1 was lost: replaced in us-east-1a, the other nodes kept" in said, said
    assert len(calls.runs) == 3 and len(live_records(aws)) == 2 and not calls.commands
    attempt = launcher.status(first).attempt
    uri = f"s3://{BUCKET}/jobs/{folder_of(store, job.id)}"
    digest = cloud_gang.digest(job.id, attempt)
    cloud_gang.StoreGangFile(uri, digest, 0).left(1, "paused")  # rank 0's agent
    cloud_gang.StoreGangFile(uri, digest, 1).ready()  # the replacement's agent
    service.reconcile(store, launcher)
    assert cloud_gang.read_round(uri, digest)["round"] == 2
    assert str(store.jobs.placements(job.id)["instance"].iloc[-1]) == first
    assert store.jobs.get(job.id).state == "running"
    assert launcher.nodes(first)[0].id == rank0
    assert [n.state for n in launcher.nodes(first)] == ["running", "running"]
    assert len(calls.runs) == 3 and len(live_records(aws)) == 2 and len(ec2_records(aws)) == 3
    events = store.jobs.events(job.id)
    said = list(events[events["kind"] == "gang"]["detail"])
    assert any("replaced in us-east-1" in d for d in said), said
    assert any("round 2" in d for d in said), said
    store.dispose()


def test_no_capacity_to_replace_a_node_recovers_the_job_as_a_new_gang(
        aws, calls, tmp_path, monkeypatch) -> None:
    """Through the service: node 1 taken away and no capacity for its replacement: rank 0
    is asked to checkpoint, then the job is recovered on a new gang of two; the old nodes
    end; never more than 2N alive."""
    from costsched.service import jobs as service

    store, job, launcher, first = launched_gang(aws, tmp_path)
    lose_rank1(launcher, first)
    calls.fail_run = 3
    [said] = service.reconcile(store, launcher)  # rank 0 checkpoints first
    assert said.endswith("the gang was ended, to move where its nodes fit"), said
    assert "node 1 could not be replaced in us-" in said, said
    assert len(calls.commands) == 1 and len(live_records(aws)) == 1
    calls.fail_run = None
    monkeypatch.setattr(cloud_gang, "STOP_GRACE_SECONDS", 0.0)
    done = service.reconcile(store, launcher)
    assert any("preempted; recovery" in line for line in done), done
    second = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    assert second != first and "/gang-" in second
    assert [n.state for n in launcher.nodes(first)] == ["terminated", "preempted"]
    assert [n.state for n in launcher.nodes(second)] == ["running", "running"]
    assert len(live_records(aws)) == 2 and len(ec2_records(aws)) == 4  # 2N at most, N after
    assert len(calls.groups) == 1  # the first gang's placement group is gone
    store.dispose()


def test_sweep_deletes_groups_left_by_ended_gangs_only(aws, calls, launcher) -> None:
    ended = launcher.launch(spec(attempt="ended"))
    for node in launcher.nodes(ended.id):  # its nodes ended, its group left behind (as
        launcher.terminate(node.id)        # when EC2 refused the delete while they shut down)
    left = f"costsched-7-{cloud_gang.digest(7, 'ended')}"
    running = launcher.launch(spec(attempt="running"))
    kept = f"costsched-7-{cloud_gang.digest(7, 'running')}"
    assert set(calls.groups) == {kept} and calls.deleted == [left]  # swept by the launch
    calls.groups["costsched-8-fresh"] = {  # a launch under way: no instance yet
        "GroupName": "costsched-8-fresh", "Strategy": "cluster", "State": "available",
        "Tags": [{"Key": cloud_gang.TAG_GANG, "Value": "0123456789ab"}]}
    assert aws_gang.sweep_groups(launcher, "us-east-1") == []
    assert set(calls.groups) == {kept, "costsched-8-fresh"}
    assert launcher.status(running.id).state == "running"


def lose_rank1(launcher: AwsLauncher, gang_id: str) -> str:
    """Node 1 taken away by EC2 (a spot interruption, as moto can say it): its id."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.ec2.models import ec2_backends
    from moto.ec2.models.instances import StateReason

    rank1 = launcher.nodes(gang_id)[1].id.split("/")[1]
    backend = ec2_backends[DEFAULT_ACCOUNT_ID]["us-east-1"]
    backend.terminate_instances([rank1])
    backend.get_instance(rank1).state_reason = StateReason(
        "Server.SpotInstanceTermination: Spot instance termination",
        "Server.SpotInstanceTermination")
    return rank1


def live_records(session) -> list[dict]:
    return [r for r in ec2_records(session)
            if r["State"]["Name"] in ("pending", "running", "stopping", "stopped")]


URI = f"s3://{BUCKET}/jobs/job-7"
DIGEST = cloud_gang.digest(7, "launch-1")


def node_says(rank: int, what: str, number: int = 1) -> None:
    """What a node's agent writes beside the checkpoints (its gang file's own calls):
    rank 0 left the round, a replacement is set up."""
    doc = cloud_gang.StoreGangFile(URI, DIGEST, rank)
    if what == "left":
        doc.left(number, "paused")
    else:
        doc.ready()


def test_a_lost_node_is_replaced_alone_in_its_zone_with_its_user_data(
        aws, calls: Calls, launcher: AwsLauncher) -> None:
    got = launcher.launch(spec())
    rank0 = launcher.nodes(got.id)[0].id
    assert cloud_gang.read_round(URI, DIGEST)["round"] == 1
    lost = lose_rank1(launcher, got.id)
    lost_payload = read_payload(user_data(aws, lost))
    # The gang runs on, its lost node to be replaced; rank 0 is not asked to stop.
    seen = launcher.status(got.id)
    assert (seen.state, seen.lost_nodes, seen.replacing) == ("running", (1,), ())
    assert "node 1 lost" in seen.detail and not calls.commands
    said = launcher.repair_nodes(got.id, spec())
    assert "replaced in us-east-1b" in said and "pauses" in said
    assert cloud_gang.read_round(URI, DIGEST)["paused"] is True  # every node stops
    assert len(calls.runs) == 3  # two at launch, ONE replacement
    assert len(live_records(aws)) == 2  # never more than N
    new = launcher.nodes(got.id)[1].id
    new_id = new.split("/")[1]
    [record] = [r for r in ec2_records(aws) if r["InstanceId"] == new_id]
    assert read_payload(user_data(aws, new_id)) == lost_payload  # rank 1's user data
    assert record["Placement"]["AvailabilityZone"] == "us-east-1b"
    assert calls.runs[-1]["Placement"] == {"AvailabilityZone": "us-east-1b",
                                           "GroupName": f"costsched-7-{DIGEST}"}
    [old] = [r for r in ec2_records(aws) if r["InstanceId"] == lost]
    assert {k: v for k, v in tags_of(record).items() if k != aws_gang.TAG_ROUND} == \
        tags_of(old)
    assert tags_of(record)[aws_gang.TAG_ROUND] == "2"
    assert calls.runs[-1]["ClientToken"] not in {r["ClientToken"] for r in calls.runs[:2]}
    seen = launcher.status(got.id)
    assert (seen.state, seen.lost_nodes, seen.replacing) == ("running", (), (1,))
    # Rank 0 has not checkpointed yet, then the replacement is not set up: no new round,
    # nothing new for the job's log.
    assert launcher.repair_nodes(got.id, spec()) == ""
    node_says(0, "left")
    assert launcher.repair_nodes(got.id, spec()) == ""
    assert cloud_gang.read_round(URI, DIGEST) == {
        "round": 1, "paused": True, "nodes": 2,
        "ips": [launcher.nodes(got.id)[0].address, old["PrivateIpAddress"]]}
    assert len(calls.runs) == 3
    node_says(1, "ready")
    said = launcher.repair_nodes(got.id, spec())
    assert "round 2" in said
    assert len(calls.runs) == 3 and len(live_records(aws)) == 2
    # Rank 0 kept; the gang's next round has the new node's address.
    nodes = launcher.nodes(got.id)
    assert nodes[0].id == rank0 and nodes[1].id == new
    assert cloud_gang.read_round(URI, DIGEST) == {
        "round": 2, "paused": False, "nodes": 2,
        "ips": [nodes[0].address, record["PrivateIpAddress"]]}
    seen = launcher.status(got.id)
    assert (seen.state, seen.lost_nodes, seen.replacing) == ("running", (), ())
    assert launcher.repair_nodes(got.id, spec()) == ""


def test_a_repair_cut_short_carries_on_with_the_same_replacement(
        aws, calls: Calls, launcher: AwsLauncher) -> None:
    got = launcher.launch(spec())
    lose_rank1(launcher, got.id)
    launcher.repair_nodes(got.id, spec())
    new = launcher.nodes(got.id)[1].id
    # A costsched started again: a new launcher, the same cloud and documents.
    again = AwsLauncher(session=aws, image_id="ami-12c6146b", gang_placement="auto")
    assert again.status(got.id).replacing == (1,)
    node_says(0, "left")
    node_says(1, "ready")
    assert "round 2" in again.repair_nodes(got.id, spec())
    assert again.nodes(got.id)[1].id == new
    assert len(calls.runs) == 3 and len(live_records(aws)) == 2


def test_a_lost_node_still_reported_is_terminated_before_its_replacement(
        aws, calls: Calls, launcher: AwsLauncher) -> None:
    got = launcher.launch(spec())
    rank1 = launcher.nodes(got.id)[1].id.split("/")[1]
    aws.client("ec2").stop_instances(InstanceIds=[rank1])  # reads lost: stopped
    assert launcher.status(got.id).lost_nodes == (1,)
    seen: list[int] = []
    launcher._client("ec2", "us-east-1").meta.events.register(
        "before-call.ec2.RunInstances", lambda **_: seen.append(len(live_records(aws))))
    launcher.repair_nodes(got.id, spec())
    assert seen == [1]  # only rank 0 was alive when the replacement was asked for
    assert len(live_records(aws)) == 2
    [old] = [r for r in ec2_records(aws) if r["InstanceId"] == rank1]
    assert old["State"]["Name"] == "terminated"


def test_no_capacity_for_the_replacement_ends_the_gang(aws, calls: Calls,
                                                       launcher: AwsLauncher,
                                                       monkeypatch) -> None:
    got = launcher.launch(spec())
    rank0 = launcher.nodes(got.id)[0].id.split("/")[1]
    lose_rank1(launcher, got.id)
    calls.fail_run = 3
    with pytest.raises(CapacityError) as caught:
        launcher.repair_nodes(got.id, spec())
    assert "InsufficientInstanceCapacity" in caught.value.reason
    assert "node 1's replacement" in caught.value.reason
    assert len(live_records(aws)) == 1
    # Ended as after any loss: rank 0 asked to checkpoint and stop, then preempted.
    [command] = calls.commands
    assert command["InstanceIds"] == [rank0]
    assert launcher.status(got.id).state == "running"
    assert launcher.repair_nodes(got.id, spec()) == ""  # no second try
    monkeypatch.setattr(cloud_gang, "STOP_GRACE_SECONDS", 0.0)
    seen = launcher.status(got.id)
    assert seen.state == "preempted" and "node 1 preempted" in seen.detail


def test_a_gang_that_does_not_pause_in_time_is_ended(aws, calls: Calls,
                                                     launcher: AwsLauncher,
                                                     monkeypatch) -> None:
    got = launcher.launch(spec())
    lose_rank1(launcher, got.id)
    launcher.repair_nodes(got.id, spec())
    monkeypatch.setattr(cloud_gang, "STOP_GRACE_SECONDS", 0.0)
    assert "did not pause in time" in launcher.repair_nodes(got.id, spec())
    assert len(calls.commands) == 1
    assert launcher.status(got.id).state == "preempted"


def test_rank_0_whose_command_ended_during_the_pause_ends_the_gang(
        aws, calls: Calls, launcher: AwsLauncher, monkeypatch) -> None:
    got = launcher.launch(spec())
    lose_rank1(launcher, got.id)
    launcher.repair_nodes(got.id, spec())
    new = launcher.nodes(got.id)[1].id.split("/")[1]
    cloud_gang.StoreGangFile(URI, DIGEST, 0).left(1, "exited")  # and its agent ended
    node_says(1, "ready")
    assert "ended by itself" in launcher.repair_nodes(got.id, spec())
    assert cloud_gang.read_round(URI, DIGEST)["round"] == 1  # no round 2 for no rank 0
    [record] = [r for r in ec2_records(aws) if r["InstanceId"] == new]
    assert record["State"]["Name"] == "terminated"  # N after: the replacement ended
    monkeypatch.setattr(cloud_gang, "STOP_GRACE_SECONDS", 0.0)
    assert launcher.status(got.id).state == "preempted"  # recovered as a whole


RESERVATION = "cr-0a1b2c3d4e5f60718"
INTO_BLOCK = {"InstanceMarketOptions": {"MarketType": "capacity-block"},
              "CapacityReservationSpecification": {
                  "CapacityReservationTarget": {"CapacityReservationId": RESERVATION}}}


def in_block(reservation: str = RESERVATION) -> LaunchSpec:
    """The gang's spec in a capacity block bought in us-east-1b."""
    block = Offering("aws", "us-east-1", "us-east-1b", "p3.2xlarge", "capacity_block", "V100",
                     1, 8, 61.0)
    return replace(spec(), offering=block, reservation=reservation)


def test_every_node_and_a_replacement_go_into_the_blocks_reservation(
        aws, calls: Calls, launcher: AwsLauncher) -> None:
    got = launcher.launch(in_block())
    assert len(calls.runs) == 2
    for run in calls.runs:
        assert {k: run[k] for k in INTO_BLOCK} == INTO_BLOCK
        assert run["Placement"]["AvailabilityZone"] == "us-east-1b"
    lose_rank1(launcher, got.id)
    assert "replaced in us-east-1b" in launcher.repair_nodes(got.id, in_block())
    assert len(calls.runs) == 3 and len(live_records(aws)) == 2
    assert {k: calls.runs[-1][k] for k in INTO_BLOCK} == INTO_BLOCK


def test_a_gang_in_booked_capacity_without_its_reservation_is_refused(
        aws, calls: Calls, launcher: AwsLauncher) -> None:
    with pytest.raises(CapacityError, match="no capacity reservation"):
        launcher.launch(in_block(reservation=""))
    assert live_records(aws) == []
