"""The EC2 launcher against moto (instances, tags, spot options, user data, interruption,
termination) and botocore's Stubber (provider error codes); the startup script it sends is
run for real under bash with a stand-in agent."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

pytest.importorskip("moto")
import boto3  # noqa: E402
from botocore.stub import Stubber  # noqa: E402
from moto import mock_aws  # noqa: E402

from costsched.clouds import aws as aws_cloud  # noqa: E402
from costsched.model import InvalidInput, Offering  # noqa: E402
from costsched.service import jobs as service  # noqa: E402
from costsched.store import PriceStore  # noqa: E402
from launchers.aws import STOP_COMMAND, AwsLauncher  # noqa: E402
from launchers.aws_gang import client_token  # noqa: E402
from launchers.base import TAG_ATTEMPT, TAG_JOB, CapacityError, LaunchSpec  # noqa: E402
from launchers.userdata import read_payload, startup_script  # noqa: E402
from tests.conftest import moto_regions  # noqa: E402
from tests.costsched.service.test_jobs import set_prices  # noqa: E402

HOSTILE_NAME = "x'; rm -rf / #"
HOSTILE_COMMAND = "python train.py $(curl evil) `id` \"; rm -rf / #' && echo pwned"
SECRET = "AKIAFAKESECRETKEY123"


def offering(market: str = "spot", zone: str = "us-east-1b") -> Offering:
    return Offering("aws", "us-east-1", zone, "p3.2xlarge", market, "V100", 1, 8, 61.0)


def spec(market: str = "spot", attempt: str = "launch-1", job_id: int = 7,
         zone: str = "us-east-1b") -> LaunchSpec:
    return LaunchSpec(job_id=job_id, job_name=HOSTILE_NAME, command=HOSTILE_COMMAND,
                      offering=offering(market, zone), checkpoint_uri="s3://bucket/ckpt/$(x)",
                      attempt=attempt, envs={"LR": "0.1; reboot", "SWEEP": "$HOME"})


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", SECRET)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret-access-key-value")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    moto_regions(monkeypatch)
    with mock_aws():
        yield boto3.session.Session(region_name="us-east-1")


@pytest.fixture
def launcher(aws) -> AwsLauncher:
    aws.client("iam").create_instance_profile(InstanceProfileName="costsched")
    return AwsLauncher(session=aws, image_id="ami-12c6146b", iam_instance_profile="costsched")


def describe(session, ec2_id: str) -> dict:
    ec2 = session.client("ec2", region_name="us-east-1")
    return ec2.describe_instances(InstanceIds=[ec2_id])["Reservations"][0]["Instances"][0]


def user_data(session, ec2_id: str) -> str:
    ec2 = session.client("ec2", region_name="us-east-1")
    value = ec2.describe_instance_attribute(InstanceId=ec2_id, Attribute="userData")
    return base64.b64decode(value["UserData"]["Value"]).decode()


def test_spot_launch_tags_zone_and_market(aws, launcher: AwsLauncher) -> None:
    got = launcher.launch(spec())
    region, ec2_id = got.id.split("/")
    record = describe(aws, ec2_id)
    tags = {t["Key"]: t["Value"] for t in record["Tags"]}
    assert (region, got.job_id, got.attempt) == ("us-east-1", 7, "launch-1")
    assert got.offering_key == offering().key
    assert tags[TAG_JOB] == "7" and tags[TAG_ATTEMPT] == "launch-1"
    assert tags["Name"] == f"costsched-7-{HOSTILE_NAME}"
    assert record["InstanceType"] == "p3.2xlarge"
    assert record["Placement"]["AvailabilityZone"] == "us-east-1b"
    assert record["InstanceLifecycle"] == "spot"
    assert record["ClientToken"] == client_token(7, "launch-1")
    volumes = aws.client("ec2", region_name="us-east-1").describe_volumes(
        Filters=[{"Name": "attachment.instance-id", "Values": [ec2_id]}])["Volumes"]
    assert volumes and all({"Key": TAG_JOB, "Value": "7"} in v["Tags"] for v in volumes)
    assert launcher.status(got.id).state == "running"
    # When EC2 made it: what proves it the launch of its tag's move (the sweep).
    assert launcher.status(got.id).created_at == record["LaunchTime"] is not None


def test_run_request_spot_and_on_demand_options(launcher: AwsLauncher) -> None:
    spot = launcher.run_request(spec("spot"))
    assert spot["InstanceMarketOptions"] == {
        "MarketType": "spot",
        "SpotOptions": {"SpotInstanceType": "one-time",
                        "InstanceInterruptionBehavior": "terminate"}}
    assert spot["IamInstanceProfile"] == {"Name": "costsched"}
    assert (spot["MinCount"], spot["MaxCount"]) == (1, 1)
    regional = launcher.run_request(spec("on_demand", zone=""))
    assert "InstanceMarketOptions" not in regional and "Placement" not in regional


def test_on_demand_instance_has_no_spot_lifecycle(aws, launcher: AwsLauncher) -> None:
    got = launcher.launch(spec("on_demand", zone=""))
    assert "InstanceLifecycle" not in describe(aws, got.id.split("/")[1])
    assert got.offering_key[4] == "on_demand"


def test_user_data_carries_the_job_inert_and_no_credentials(aws, launcher) -> None:
    got = launcher.launch(spec())
    script = user_data(aws, got.id.split("/")[1])
    job = read_payload(script)
    assert job["command"] == HOSTILE_COMMAND and job["job_name"] == HOSTILE_NAME
    assert job["envs"] == {"LR": "0.1; reboot", "SWEEP": "$HOME"}
    assert job["checkpoint_uri"] == "s3://bucket/ckpt/$(x)"
    assert job["notice_url"] == aws_cloud.SPOT_NOTICE_URL
    for field in (HOSTILE_COMMAND, HOSTILE_NAME, "rm -rf", "curl evil", "reboot", "launch-1"):
        assert field not in script
    assert SECRET not in script and "fake-secret-access-key-value" not in script
    assert "AWS_" not in script
    assert "pip install 'costsched[aws]'" in script


def test_credentials_in_job_env_are_refused(launcher: AwsLauncher) -> None:
    bad = LaunchSpec(7, "j", "true", offering(), "s3://b/p", "a",
                     envs={"AWS_SECRET_ACCESS_KEY": "x"})
    with pytest.raises(InvalidInput, match="AWS_SECRET_ACCESS_KEY"):
        launcher.launch(bad)


def test_startup_script_runs_the_agent_with_the_exact_fields(tmp_path: Path) -> None:
    """The whole script under bash, with a stand-in `launchers.agent` that records its argv
    and environment: hostile fields arrive byte for byte and nothing in them ran."""
    root = tmp_path / "root"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "python").symlink_to(sys.executable)  # stands for the made venv
    fake = tmp_path / "fake"
    (fake / "launchers").mkdir(parents=True)
    real = Path(__file__).resolve().parents[2] / "launchers"  # its supervisor: the real one
    (fake / "launchers" / "__init__.py").write_text(f"__path__.append({str(real)!r})\n")
    out = tmp_path / "agent.json"
    (fake / "launchers" / "agent.py").write_text(
        "import json, os, sys\n"
        "STATUS, CHECKPOINTS = 'status.json', 'checkpoints'\n"
        "if __name__ == '__main__':\n"
        "    json.dump({'argv': sys.argv[1:], 'env': dict(os.environ)}, "
        f"open({str(out)!r}, 'w'))\n")
    pwned = tmp_path / "pwned"
    command = f"touch {pwned}; $(touch {pwned}) `touch {pwned}` '; touch {pwned} #"
    job = LaunchSpec(9, f"n'$(touch {pwned})", command, offering(), f"/ck/$(touch {pwned})",
                     "a1", envs={"LR": f"$(touch {pwned})"})
    script = startup_script(job, install=f"touch {tmp_path / 'installed'}",
                            notice_url=aws_cloud.SPOT_NOTICE_URL, root=str(root))
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path),
           "PYTHONPATH": os.pathsep.join([str(fake), str(real.parent)])}
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    seen = json.loads(out.read_text())
    workdir = f"{root}/work/job-9"
    assert seen["argv"] == ["--job-id", "9", "--checkpoint-uri", f"/ck/$(touch {pwned})",
                            "--workdir", workdir, "--notice-url", aws_cloud.SPOT_NOTICE_URL,
                            "--attempt", "a1", "--heartbeat-seconds", "60", "--", command]
    assert seen["env"]["LR"] == f"$(touch {pwned})"
    assert (tmp_path / "installed").exists() and Path(workdir).is_dir()
    assert not pwned.exists()


def test_relaunch_of_the_same_attempt_finds_the_instance(aws, launcher) -> None:
    first = launcher.launch(spec())
    again = AwsLauncher(session=aws, image_id="ami-12c6146b").launch(spec())
    assert again.id == first.id
    other = launcher.launch(spec(attempt="migration-2"))
    assert other.id != first.id
    assert client_token(7, "launch-1") != client_token(7, "migration-2")
    assert client_token(7, "launch-1") == client_token(7, "launch-1")
    assert sorted(i.id for i in launcher.instances(7)) == sorted([first.id, other.id])


def test_instances_by_job_and_across_regions(aws) -> None:
    launcher = AwsLauncher(session=aws, image_id="ami-12c6146b")
    seven = launcher.launch(spec(job_id=7))
    eight = launcher.launch(spec(job_id=8))
    aws.client("ec2", region_name="us-east-1").run_instances(  # not costsched's
        ImageId="ami-12c6146b", MinCount=1, MaxCount=1, InstanceType="t3.micro")
    assert [i.id for i in launcher.instances(8)] == [eight.id]
    assert {i.id for i in launcher.instances()} == {seven.id, eight.id}
    # A launcher that launched nothing asks every region (describe_regions).
    fresh = AwsLauncher(session=aws, image_id="ami-12c6146b")
    assert {i.id for i in fresh.instances()} == {seven.id, eight.id}


def test_spot_interruption_reads_preempted(aws, launcher: AwsLauncher) -> None:
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.ec2.models import ec2_backends
    from moto.ec2.models.instances import StateReason

    got = launcher.launch(spec())
    ec2_id = got.id.split("/")[1]
    backend = ec2_backends[DEFAULT_ACCOUNT_ID]["us-east-1"]
    backend.terminate_instances([ec2_id])
    backend.get_instance(ec2_id).state_reason = StateReason(  # what EC2 records on interruption
        "Server.SpotInstanceTermination: Spot instance termination",
        "Server.SpotInstanceTermination")
    seen = launcher.status(got.id)
    assert seen.state == "preempted" and "Spot instance termination" in seen.detail
    assert not seen.live
    # When it was lost is EC2's own time of the transition (StateTransitionReason), so the
    # placement is charged until then, not until a pass saw it gone.
    reason = describe(aws, ec2_id)["StateTransitionReason"]
    assert seen.lost_at is not None and seen.lost_at.tzinfo is not None
    assert seen.lost_at.strftime("%Y-%m-%d %H:%M:%S") in reason


def test_terminate_is_idempotent_and_reads_terminated(aws, launcher: AwsLauncher) -> None:
    got = launcher.launch(spec())
    launcher.terminate(got.id)
    launcher.terminate(got.id)
    assert launcher.status(got.id).state == "terminated"
    assert describe(aws, got.id.split("/")[1])["State"]["Name"] == "terminated"
    launcher.terminate("us-east-1/i-0123456789abcdef0")  # never existed: nothing to do


def test_status_of_unknown_or_malformed_ids(launcher: AwsLauncher) -> None:
    with pytest.raises(InvalidInput, match="not found"):
        launcher.status("us-east-1/i-0123456789abcdef0")
    with pytest.raises(InvalidInput, match="REGION/INSTANCE_ID"):
        launcher.status("i-0123456789abcdef0")


def test_request_stop_sends_sigterm_through_ssm(aws, launcher: AwsLauncher) -> None:
    got = launcher.launch(spec())
    launcher.request_stop(got.id)
    ssm = aws.client("ssm", region_name="us-east-1")
    [command] = ssm.list_commands()["Commands"]
    assert command["DocumentName"] == "AWS-RunShellScript"
    assert command["InstanceIds"] == [got.id.split("/")[1]]
    assert command["Parameters"] == {"commands": [STOP_COMMAND]}
    assert "-TERM" in STOP_COMMAND


def test_default_image_from_the_public_ssm_parameter(aws) -> None:
    launcher = AwsLauncher(session=aws)
    stub_ssm = launcher._client("ssm", "us-east-1")
    with Stubber(stub_ssm) as stub:
        stub.add_response("get_parameter", {"Parameter": {"Value": "ami-0dl"}},
                          {"Name": aws_cloud.GPU_IMAGE_PARAMETER})
        assert launcher.image("us-east-1") == "ami-0dl"
        assert launcher.image("us-east-1") == "ami-0dl"  # asked once per region
    assert AwsLauncher(session=aws, image_id={"us-east-1": "ami-1"}).image("us-east-1") == \
        "ami-1"


@pytest.mark.parametrize("code", sorted(aws_cloud.CAPACITY_ERROR_CODES))
def test_capacity_errors_become_capacity_error(aws, code: str) -> None:
    launcher = AwsLauncher(session=aws, image_id="ami-12c6146b")
    ec2 = launcher._client("ec2", "us-east-1")
    with Stubber(ec2) as stub:
        stub.add_response("describe_instances", {"Reservations": []})
        stub.add_client_error("run_instances", service_error_code=code,
                              service_message="We currently do not have sufficient\ncapacity")
        with pytest.raises(CapacityError) as caught:
            launcher.launch(spec())
    assert caught.value.offering == offering()
    assert code in caught.value.reason and "\n" not in str(caught.value)


def test_other_errors_are_one_line_runtime_errors(aws) -> None:
    launcher = AwsLauncher(session=aws, image_id="ami-12c6146b")
    ec2 = launcher._client("ec2", "us-east-1")
    with Stubber(ec2) as stub:
        stub.add_response("describe_instances", {"Reservations": []})
        stub.add_client_error("run_instances", service_error_code="InvalidAMIID.NotFound",
                              service_message="The image id 'ami-x' does not exist")
        with pytest.raises(RuntimeError) as caught:
            launcher.launch(spec())
    assert not isinstance(caught.value, CapacityError)
    assert "InvalidAMIID.NotFound" in str(caught.value) and "\n" not in str(caught.value)


def test_only_aws_offerings(launcher: AwsLauncher) -> None:
    gcp = Offering("gcp", "us-central1", "", "a2-highgpu-1g", "spot", "A100", 1)
    assert not launcher.can_launch(gcp) and launcher.can_launch(offering())


def test_statuses_equal_status_one_by_one(aws) -> None:
    """Mixed states across two regions; unknown, malformed and foreign ids left out."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.ec2.models import ec2_backends
    from moto.ec2.models.instances import StateReason

    launcher = AwsLauncher(session=aws, image_id="ami-12c6146b")
    running = launcher.launch(spec(job_id=7))
    ended = launcher.launch(spec(job_id=8))
    launcher.terminate(ended.id)
    taken = launcher.launch(spec(job_id=9))
    backend = ec2_backends[DEFAULT_ACCOUNT_ID]["us-east-1"]
    backend.terminate_instances([taken.id.split("/")[1]])
    backend.get_instance(taken.id.split("/")[1]).state_reason = StateReason(
        "Server.SpotInstanceTermination: Spot instance termination",
        "Server.SpotInstanceTermination")
    west = AwsLauncher(session=aws, image_id="ami-12c6146b").launch(dataclasses.replace(
        spec(job_id=10), offering=dataclasses.replace(offering(), region="us-west-2",
                                                      zone="us-west-2a")))
    foreign = aws.client("ec2", region_name="us-east-1").run_instances(
        ImageId="ami-12c6146b", MinCount=1, MaxCount=1, InstanceType="t3.micro"
    )["Instances"][0]["InstanceId"]
    ours = [running.id, ended.id, taken.id, west.id]
    one_by_one = {i: launcher.status(i) for i in ours}
    assert [one_by_one[i].state for i in ours] == ["running", "terminated", "preempted",
                                                   "running"]
    asked = [*ours, "us-east-1/i-0123456789abcdef0", "not-an-id", f"us-east-1/{foreign}",
             running.id]
    assert launcher.statuses(asked) == one_by_one
    assert launcher.statuses([]) == {}


def _record(ec2_id: str, job_id: int, state: str = "running") -> dict:
    return {"InstanceId": ec2_id, "InstanceType": "p3.2xlarge",
            "State": {"Name": state, "Code": 16},
            "Placement": {"AvailabilityZone": "us-east-1b"},
            "Tags": [{"Key": TAG_JOB, "Value": str(job_id)},
                     {"Key": TAG_ATTEMPT, "Value": "launch-1"}]}


def test_statuses_ask_by_filter_in_chunks_of_ids(aws) -> None:
    """The exact requests: per region, a tag filter and up to 200 instance ids a call,
    following the pages; never one call per instance."""
    from launchers.aws import ID_CHUNK

    launcher = AwsLauncher(session=aws, image_id="ami-12c6146b")
    east_ids = [f"i-{n:017x}" for n in range(1, 251)]
    west_id = "i-0000000000000fff1"

    def filters(ids: list[str]) -> list[dict]:
        return [{"Name": "tag-key", "Values": [TAG_JOB]},
                {"Name": "instance-id", "Values": ids}]

    east = launcher._client("ec2", "us-east-1")
    west = launcher._client("ec2", "us-west-2")
    first, second = east_ids[:ID_CHUNK], east_ids[ID_CHUNK:]
    with Stubber(east) as east_stub, Stubber(west) as west_stub:
        # The first chunk comes in two pages; an id EC2 does not know is simply not listed.
        east_stub.add_response("describe_instances", {
            "Reservations": [{"Instances": [_record(i, n) for n, i in enumerate(first[:150])]}],
            "NextToken": "page-2"}, {"Filters": filters(first)})
        east_stub.add_response("describe_instances", {
            "Reservations": [{"Instances": [_record(i, 150 + n)
                                            for n, i in enumerate(first[150:199])]}]},
            {"Filters": filters(first), "NextToken": "page-2"})
        east_stub.add_response("describe_instances", {
            "Reservations": [{"Instances": [_record(i, 200, "stopped") for i in second]}]},
            {"Filters": filters(second)})
        west_stub.add_response("describe_instances", {
            "Reservations": [{"Instances": [_record(west_id, 300)]}]},
            {"Filters": filters([west_id])})
        asked = [f"us-east-1/{i}" for i in east_ids] + [f"us-west-2/{west_id}"]
        seen = launcher.statuses(asked)
        east_stub.assert_no_pending_responses()
        west_stub.assert_no_pending_responses()
    assert len(seen) == 250 and f"us-east-1/{first[199]}" not in seen
    assert seen[f"us-east-1/{first[0]}"].state == "running"
    assert seen[f"us-east-1/{second[0]}"].state == "terminated"
    assert seen[f"us-west-2/{west_id}"].job_id == 300


def test_statuses_errors_are_one_line(aws) -> None:
    launcher = AwsLauncher(session=aws, image_id="ami-12c6146b")
    with Stubber(launcher._client("ec2", "us-east-1")) as stub:
        stub.add_client_error("describe_instances", service_error_code="UnauthorizedOperation",
                              service_message="You are not\nauthorized")
        with pytest.raises(RuntimeError) as caught:
            launcher.statuses(["us-east-1/i-0123456789abcdef0"])
    assert "UnauthorizedOperation" in str(caught.value) and "\n" not in str(caught.value)


TASK = {"ports": ["8080", "9000-9005"], "disk_size": 250, "disk_tier": "high",
        "image_id": {"us-east-1": "ami-12c6146b"}, "labels": {"team": "nlp"},
        "mounts": [{"path": "/data", "source": "s3://data/set", "mode": "COPY"}]}


def test_a_tasks_disk_image_ports_and_labels_reach_ec2(aws) -> None:
    launcher = AwsLauncher(session=aws, image_id="ami-not-this-one")
    got = launcher.launch(dataclasses.replace(spec(), task=TASK))
    ec2 = aws.client("ec2", region_name="us-east-1")
    record = describe(aws, got.id.split("/")[1])
    assert record["ImageId"] == "ami-12c6146b"  # the task's image for its region
    assert {"Key": "team", "Value": "nlp"} in record["Tags"]
    [group] = [g for g in record["SecurityGroups"] if g["GroupName"] == "costsched-7-ports"]
    rules = ec2.describe_security_groups(GroupIds=[group["GroupId"]])["SecurityGroups"][0]
    assert sorted((p["FromPort"], p["ToPort"]) for p in rules["IpPermissions"]) == [
        (8080, 8080), (9000, 9005)]
    assert any(g["GroupName"] == "default" for g in record["SecurityGroups"])
    request = launcher.run_request(dataclasses.replace(spec(attempt="again"), task=TASK))
    [disk] = request["BlockDeviceMappings"]
    image = ec2.describe_images(ImageIds=["ami-12c6146b"])["Images"][0]
    assert disk["DeviceName"] == image["RootDeviceName"]
    assert disk["Ebs"] == {"VolumeSize": 250, "VolumeType": "gp3", "Iops": 16000,
                           "Throughput": 1000, "DeleteOnTermination": True}
    assert request["SecurityGroupIds"][-1] == group["GroupId"]  # made once per job
    job = read_payload(request["UserData"])
    assert job["mounts"] == TASK["mounts"] and job["mount_root"] == ""


def test_a_local_file_mount_cannot_reach_an_instance(launcher: AwsLauncher) -> None:
    task = {"mounts": [{"path": "/cfg", "source": "/home/me/cfg", "mode": "COPY"}]}
    with pytest.raises(InvalidInput, match="file mount /cfg: '/home/me/cfg' is a local path"):
        launcher.run_request(dataclasses.replace(spec(), task=task))


def test_no_credentials_is_one_line_not_botocores_error(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path) -> None:  # noqa: ANN001
    """No credentials anywhere (no environment, no files, no instance role): the first call
    says so in one line, what to do included, before botocore signs anything."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                 "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no instance role to ask
    launcher = AwsLauncher(session=boto3.session.Session(region_name="us-east-1"),
                           image_id="ami-12c6146b")
    with pytest.raises(InvalidInput, match=r"^aws: no AWS credentials found: run `aws "
                                           r"configure`") as refused:
        launcher.launch(spec())
    assert "\n" not in str(refused.value)
    with pytest.raises(InvalidInput, match="no AWS credentials found"):
        launcher.status("us-east-1/i-0123456789abcdef0")
    # `launch` asks first: nothing is stored for a job that could not start.
    store = PriceStore(str(tmp_path / "store.sqlite"))
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    job = tmp_path / "job.yaml"
    job.write_text("name: j\nrun: 'true'\nthroughputs: {V100: 1.0}\nsteps: 100\n")
    with pytest.raises(InvalidInput, match="no AWS credentials found"):
        service.launch(store, job, launcher=launcher)
    assert store.jobs.records() == []
    store.dispose()
