"""An EC2 instance's network (`launchers.aws`): its VPC, the VPC's default security group,
and the security group of a job's own that opens its task's ports."""

from __future__ import annotations

from typing import Any

from costsched.model import InvalidInput
from launchers import task_resources
from launchers.aws_answers import error_of
from launchers.base import TAG_JOB, LaunchSpec
from launchers.cloud_errors import translate


def vpc(ec2: Any, region: str, subnet: str | None) -> str:
    if subnet:
        return str(ec2.describe_subnets(SubnetIds=[subnet])["Subnets"][0]["VpcId"])
    vpcs = ec2.describe_vpcs(Filters=[{"Name": "is-default", "Values": ["true"]}])["Vpcs"]
    if not vpcs:
        raise InvalidInput(f"aws {region}: no default VPC to open the task's ports in; "
                           "give the launcher a subnet")
    return str(vpcs[0]["VpcId"])


def default_group(ec2: Any, region: str, subnet: str | None) -> list[str]:
    """The VPC's default security group: what the instance has without a ports group."""
    groups = ec2.describe_security_groups(Filters=[
        {"Name": "vpc-id", "Values": [vpc(ec2, region, subnet)]},
        {"Name": "group-name", "Values": ["default"]}])["SecurityGroups"]
    return [str(g["GroupId"]) for g in groups[:1]]


def ports_group(ec2: Any, spec: LaunchSpec, region: str, subnet: str | None) -> str:
    """A security group of the job's own opening the task's ports (TCP, from anywhere,
    as SkyPilot opens them), made once per job and region."""
    from botocore.exceptions import ClientError

    in_vpc = vpc(ec2, region, subnet)
    name = f"costsched-{spec.job_id}-ports"
    found = ec2.describe_security_groups(Filters=[
        {"Name": "vpc-id", "Values": [in_vpc]},
        {"Name": "group-name", "Values": [name]}])["SecurityGroups"]
    if found:
        return str(found[0]["GroupId"])
    group = str(ec2.create_security_group(
        GroupName=name, VpcId=in_vpc, Description=f"costsched job {spec.job_id}: task ports",
        TagSpecifications=[{"ResourceType": "security-group", "Tags": [
            {"Key": TAG_JOB, "Value": str(spec.job_id)}]}])["GroupId"])
    try:
        ec2.authorize_security_group_ingress(GroupId=group, IpPermissions=[
            {"IpProtocol": "tcp", "FromPort": lo, "ToPort": hi,
             "IpRanges": [{"CidrIp": "0.0.0.0/0"}]}
            for lo, hi in task_resources.port_ranges(spec.task)])
    except ClientError as exc:
        code, _ = error_of(exc)
        if code != "InvalidPermission.Duplicate":
            raise translate("aws", f"{region}: open ports", exc) from exc
    return group
