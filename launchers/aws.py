"""EC2: spot (one-time, terminate on interruption) or on-demand instances of a GPU image,
started with user data that installs costsched and runs the job under its agent.

An instance's handle is "REGION/INSTANCE_ID" (us-east-1/i-0abc...), so that a costsched
started again finds it without searching every region. Preemption is seen from inside
through the instance metadata notice (the agent) and from outside through the instance's
state reason (`status`). `request_stop` reaches the agent through SSM Run Command: the
instance profile needs the SSM core policy (AmazonSSMManagedInstanceCore), as the Deep
Learning AMIs ship the SSM agent.

A job of N nodes runs as a gang of N instances, known by one handle
"REGION/gang-<job>-<N>-<digest>" (launchers.aws_gang, launchers.cloud_gang). What EC2's answers
say is read by launchers.aws_answers; the instance's network is launchers.aws_network's.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Collection, Mapping, Sequence
from typing import Any, ClassVar

from costsched.clouds import aws as aws_cloud
from costsched.model import BOOKED_MARKETS, BookedOffering, InvalidInput, Offering
from costsched.vocabulary import word
from launchers import (
    aws_booking,
    aws_gang,
    aws_network,
    aws_secrets,
    cloud_gang,
    task_resources,
    wedged,
)
from launchers.aws_answers import error_of, instance_state, quota_refused
from launchers.base import (
    TAG_ATTEMPT,
    TAG_JOB,
    CapacityError,
    CloudError,
    Instance,
    Launcher,
    LaunchSpec,
    Purchased,
)
from launchers.cloud_errors import translate, translated
from launchers.cloud_steps import ec2_tagged, tag_value, with_steps
from launchers.cloud_times import transition_time, utc
from launchers.gang import NodeState
from launchers.userdata import DEFAULT_ROOT, startup_script

DEFAULT_INSTALL = "pip install 'costsched[aws]'"
TAG_OFFERING = "costsched-offering"  # the offering's key, "|"-joined: the zone may be ""
STOP_COMMAND = "pkill -TERM -f 'launchers[.]agent --job-id'"
_NOT_FOUND = ("InvalidInstanceID.NotFound", "InvalidInstanceID.Malformed")
# Instance ids per describe_instances call in `statuses`: EC2 takes up to 200 values in
# one filter. Asked by filter, an unknown id is left out instead of failing the call.
ID_CHUNK = 200
log = logging.getLogger("costsched.aws")


NO_CREDENTIALS = ("aws: no AWS credentials found: run `aws configure`, set AWS_PROFILE, or "
                  "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (`costsched check` says "
                  "what each cloud can do)")


@translated("aws")
class AwsLauncher(Launcher):
    name = "aws"
    runs_gangs: ClassVar[bool] = True  # a multi-node job as N instances (launchers.aws_gang)
    error = staticmethod(error_of)

    def __init__(self, session: Any = None, image_id: str | Mapping[str, str] | None = None,
                 key_name: str | None = None, subnet_ids: Mapping[str, str] | None = None,
                 security_group_ids: Mapping[str, Sequence[str]] | None = None,
                 iam_instance_profile: str | None = None,
                 install: str = DEFAULT_INSTALL, root: str = DEFAULT_ROOT,
                 mount_root: str = "", gang_placement: str | None = None) -> None:
        """`image_id`: one AMI for every region, or one per region; by default the newest
        GPU Deep Learning AMI of the region. `subnet_ids` and `security_group_ids` are keyed
        by zone or region (the zone's entry first). `iam_instance_profile`: a name or ARN.
        `install` (shell, one line) installs costsched on the instance and `root` is where
        its environment and the jobs' working directories go (launchers.userdata);
        `mount_root`, a folder the task's file mounts go under ('' for their own paths).
        `gang_placement`: "auto" (a cluster placement group for a GPU gang whose type takes
        one) or "off"; by default config launch.gang_placement."""
        self.session = session if session is not None else aws_cloud.new_session()
        self.image_id = image_id
        self.key_name = key_name
        self.subnet_ids = dict(subnet_ids or {})
        self.security_group_ids = {k: list(v) for k, v in (security_group_ids or {}).items()}
        self.iam_instance_profile = iam_instance_profile
        self.install = install
        self.root = root
        self.mount_root = mount_root
        self._placement = (None if gang_placement is None
                           else cloud_gang.check_placement(gang_placement))
        self.regions: set[str] = set()  # where this launcher launched or found instances
        self._clients: dict[tuple[str, str], Any] = {}
        self._images: dict[str, str] = {}

    def check_ready(self) -> None:
        # Said in one line before any call, not as botocore's error mid-launch.
        if self.session.get_credentials() is None:
            raise InvalidInput(NO_CREDENTIALS)

    def _client(self, service: str, region: str) -> Any:
        key = (service, region)
        if key not in self._clients:
            if not self._clients:
                self.check_ready()
            self._clients[key] = self.session.client(service, region_name=region,
                                                     config=aws_cloud.boto_config())
        return self._clients[key]

    def can_launch(self, offering: Offering) -> bool:
        return offering.cloud == "aws" and offering.market != "flex_start"

    # -- booked capacity -----------------------------------------------------------------

    def purchase(self, booked: BookedOffering, token: str, job_id: int | None) -> Purchased:
        """Buy the capacity block `booked` (`launchers.aws_booking`)."""
        if booked.offering.market != "capacity_block":
            raise InvalidInput(f"{word(booked.offering.market)}: the aws launcher buys capacity "
                               "blocks only")
        region = booked.offering.region
        self.regions.add(region)
        return aws_booking.purchase(self._client("ec2", region), booked, token, job_id)

    def purchased(self, booked: BookedOffering, token: str) -> Purchased | None:
        return aws_booking.find(self._client("ec2", booked.offering.region), token)

    @property
    def placement(self) -> str:
        """Whether gangs are packed in a cluster placement group: "auto" or "off"."""
        if self._placement is None:
            self._placement = cloud_gang.setting_from_config()
        return self._placement

    # -- launch ------------------------------------------------------------------------

    def image(self, region: str) -> str:
        """The AMI to boot in `region`."""
        if isinstance(self.image_id, str):
            return self.image_id
        if isinstance(self.image_id, Mapping) and region in self.image_id:
            return self.image_id[region]
        if region not in self._images:
            self._images[region] = self._newest_gpu_image(region)
        return self._images[region]

    def _newest_gpu_image(self, region: str) -> str:
        from botocore.exceptions import ClientError

        try:
            answer = self._client("ssm", region).get_parameter(
                Name=aws_cloud.GPU_IMAGE_PARAMETER)
            return str(answer["Parameter"]["Value"])
        except ClientError:
            pass  # no SSM access or no such parameter there: look the images up by name
        images = self._client("ec2", region).describe_images(
            Owners=[aws_cloud.GPU_IMAGE_OWNER],
            Filters=[{"Name": "name", "Values": [aws_cloud.GPU_IMAGE_NAME_FILTER]},
                     {"Name": "state", "Values": ["available"]}])["Images"]
        if not images:
            raise RuntimeError(f"aws {region}: no image named "
                               f"{aws_cloud.GPU_IMAGE_NAME_FILTER!r}: give an image id")
        return str(max(images, key=lambda i: i.get("CreationDate", ""))["ImageId"])

    def _lookup(self, table: Mapping[str, Any], offering: Offering, zone: str = "") -> Any:
        zone = zone or offering.zone
        return table.get(zone) if zone in table else table.get(offering.region)

    def run_request(self, spec: LaunchSpec, secret_refs: Mapping[str, str] | None = None,
                    node: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The run_instances arguments for `spec`; `secret_refs`: the SSM parameters the
        instance reads the job's secrets from (`put_secrets`); `node`: the instance's place
        in a gang (`cloud_gang.node_payload`)."""
        offering = spec.offering
        label = f"costsched-{spec.job_id}-{spec.job_name}"
        token = aws_gang.client_token(spec.job_id, spec.attempt)
        tags = [{"Key": TAG_JOB, "Value": str(spec.job_id)},
                {"Key": TAG_ATTEMPT, "Value": spec.attempt},
                {"Key": TAG_OFFERING, "Value": "|".join(offering.key)}]
        if node is not None:
            tags += [{"Key": cloud_gang.TAG_GANG, "Value": node["digest"]},
                     {"Key": cloud_gang.TAG_NODE, "Value": str(node["rank"])},
                     {"Key": cloud_gang.TAG_NODES, "Value": str(node["nodes"])}]
            label = f"costsched-{spec.job_id}-node{node['rank']}-{spec.job_name}"
            token = aws_gang.client_token(spec.job_id, f"{spec.attempt}/node{node['rank']}")
        tags.append({"Key": "Name", "Value": label[:255]})
        task = spec.task
        image = (task_resources.image(task, offering.region, "aws")
                 or self.image(offering.region))
        tags += [{"Key": k, "Value": v} for k, v in {  # and where its heartbeat is
            **task_resources.label_pairs(task), **tag_value(spec.checkpoint_uri)}.items()]
        request: dict[str, Any] = {
            "ImageId": image,
            "InstanceType": offering.instance_type,
            "MinCount": 1,
            "MaxCount": 1,
            "ClientToken": token,
            "UserData": startup_script(spec, install=self.install, root=self.root,
                                       notice_url=aws_cloud.SPOT_NOTICE_URL,
                                       mount_root=self.mount_root, secret_refs=secret_refs,
                                       node=node),
            "TagSpecifications": [{"ResourceType": kind, "Tags": tags}
                                  for kind in ("instance", "volume")],
            # The instance ends when its system shuts down (the agent may power it off).
            "InstanceInitiatedShutdownBehavior": "terminate",
        }
        zone = spec.zone()  # the offering's, else the one the job keeps to
        if zone:
            request["Placement"] = {"AvailabilityZone": zone}
        if offering.market == "spot":
            request["InstanceMarketOptions"] = {
                "MarketType": "spot",
                "SpotOptions": {"SpotInstanceType": "one-time",
                                "InstanceInterruptionBehavior": "terminate"}}
        elif offering.market in BOOKED_MARKETS:  # into its capacity reservation
            if not spec.reservation:
                raise CapacityError(offering, "no capacity reservation to launch into")
            request.update(aws_booking.launch_options(offering.market, spec.reservation))
        if self.key_name:
            request["KeyName"] = self.key_name
        subnet = self._lookup(self.subnet_ids, offering, zone)
        if subnet:
            request["SubnetId"] = subnet
        if task.get("disk_size") or task.get("disk_tier"):
            root_device, size = self._root_disk(offering.region, image)
            request["BlockDeviceMappings"] = [{"DeviceName": root_device, "Ebs": task_resources.ebs(
                task, int(task.get("disk_size") or size))}]
        groups = list(self._lookup(self.security_group_ids, offering, zone) or [])
        if task_resources.port_ranges(task):
            ec2 = self._client("ec2", offering.region)
            groups = [*(groups or aws_network.default_group(ec2, offering.region, subnet)),
                      aws_network.ports_group(ec2, spec, offering.region, subnet)]
        if groups:
            request["SecurityGroupIds"] = groups
        if self.iam_instance_profile:
            key = "Arn" if self.iam_instance_profile.startswith("arn:") else "Name"
            request["IamInstanceProfile"] = {key: self.iam_instance_profile}
        return request

    def put_secrets(self, spec: LaunchSpec) -> dict[str, str]:
        """The job's secrets as SecureString SSM parameters of the instance's region (the
        instance reads them with its own role at boot, then deletes them: launchers.
        aws_secrets), so that they are not in the instance's user data; {name: parameter
        name}. Leftovers of launches that crashed are swept first."""
        if not spec.secret_names:
            return {}
        ssm = self._client("ssm", spec.offering.region)
        self.sweep_secrets(spec.offering.region)
        return aws_secrets.put(ssm, spec)

    def sweep_secrets(self, region: str) -> list[str]:
        """Delete the region's secret parameters that no live instance will read (a launch
        that crashed left them); their names. Never fails a launch: said in the log."""
        from botocore.exceptions import ClientError

        try:
            live = self._describe(region, [{"Name": "tag-key", "Values": [TAG_JOB]}])
            return aws_secrets.sweep(self._client("ssm", region), live)
        except ClientError as exc:
            log.warning("aws %s: leftover secrets not swept: %s", region, error_of(exc)[0])
            return []

    def _forget_secrets(self, region: str, record: dict[str, Any]) -> None:
        """Delete the secret parameters of the instance's launch attempt (idempotent)."""
        from botocore.exceptions import ClientError

        tags = {t["Key"]: t["Value"] for t in record.get("Tags", [])}
        job = tags.get(TAG_JOB, "")
        if not job.isdigit() or TAG_ATTEMPT not in tags:
            return
        try:
            aws_secrets.delete(self._client("ssm", region), int(job), tags[TAG_ATTEMPT])
        except ClientError as exc:
            log.warning("aws %s: the secrets of job %s not deleted: %s", region, job,
                        error_of(exc)[0])

    def _root_disk(self, region: str, image: str) -> tuple[str, int]:
        """(the image's root device name, its size in GB)."""
        found = self._client("ec2", region).describe_images(ImageIds=[image])["Images"]
        if not found:
            raise InvalidInput(f"aws {region}: image {image!r} not found")
        root = found[0].get("RootDeviceName") or "/dev/xvda"
        sizes = [m["Ebs"].get("VolumeSize", 0) for m in found[0].get("BlockDeviceMappings", [])
                 if m.get("DeviceName") == root and "Ebs" in m]
        return root, int(sizes[0]) if sizes else 8

    def launch(self, spec: LaunchSpec) -> Instance:
        try:
            return self._launch(spec)
        except CapacityError as exc:  # the account's quota, when EC2's code says so
            refused = quota_refused(exc, cloud_gang.nodes_of(spec))
            if refused is None:
                raise
            raise refused from None

    def _launch(self, spec: LaunchSpec) -> Instance:
        from botocore.exceptions import ClientError

        offering = spec.offering
        if not self.can_launch(offering):
            raise InvalidInput(f"cloud {offering.cloud!r}: the aws launcher starts aws "
                               "offerings only")
        region = offering.region
        self.regions.add(region)
        if cloud_gang.nodes_of(spec) > 1:
            return aws_gang.launch(self, spec)
        # A costsched that crashed after asking finds its instance (the ClientToken covers
        # a retry in flight on EC2's side).
        for found in self._describe(region, [
                {"Name": f"tag:{TAG_JOB}", "Values": [str(spec.job_id)]},
                {"Name": f"tag:{TAG_ATTEMPT}", "Values": [spec.attempt]}]):
            return found
        try:
            refs = self.put_secrets(spec)
            answer = self._client("ec2", region).run_instances(**self.run_request(spec, refs))
        except ClientError as exc:
            code, message = error_of(exc)
            if spec.secret_names:  # no instance will read them
                self._forget_secrets(region, {"Tags": [
                    {"Key": TAG_JOB, "Value": str(spec.job_id)},
                    {"Key": TAG_ATTEMPT, "Value": spec.attempt}]})
            if code in aws_cloud.CAPACITY_ERROR_CODES:
                raise CapacityError(offering, f"{code}: {message}") from None
            raise translate("aws", f"{offering.location}: run_instances "
                            f"{offering.instance_type}", exc) from exc
        return self._instance(region, answer["Instances"][0])

    # -- reading -------------------------------------------------------------------------

    def _instance(self, region: str, record: dict[str, Any]) -> Instance:
        tags = {t["Key"]: t["Value"] for t in record.get("Tags", [])}
        key = tuple(tags.get(TAG_OFFERING, "").split("|"))
        if len(key) != 6:  # not tagged by this version: rebuild what the record says
            zone = record.get("Placement", {}).get("AvailabilityZone", "")
            market = "spot" if record.get("InstanceLifecycle") == "spot" else "on_demand"
            key = ("aws", region, zone, record.get("InstanceType", ""), market, "linux")
        state, detail = instance_state(record)
        job = tags.get(TAG_JOB, "")
        return Instance(id=f"{region}/{record['InstanceId']}",
                        job_id=int(job) if job.isdigit() else -1,
                        attempt=tags.get(TAG_ATTEMPT, ""), offering_key=key,  # type: ignore[arg-type]
                        state=state, detail=detail, started_at=record.get("LaunchTime"),
                        created_at=utc(record.get("LaunchTime")),
                        lost_at=transition_time(record.get("StateTransitionReason"))
                        if state == "preempted" else None)

    def _describe(self, region: str, filters: list[dict[str, Any]]) -> list[Instance]:
        """The instances found, a gang's nodes as one, with the steps their heartbeats say."""
        pages = self._client("ec2", region).get_paginator("describe_instances").paginate(
            Filters=filters)
        records = [record for page in pages for reservation in page["Reservations"]
                   for record in reservation["Instances"]]
        return with_steps(aws_gang.group(self, region, records), map(ec2_tagged, records))

    @staticmethod
    def _split(instance_id: str, gangs: bool = False) -> tuple[str, str]:
        """(region, EC2 instance id), or with `gangs` (region, gang name) for a gang."""
        region, _, ec2_id = instance_id.partition("/")
        gang = gangs and cloud_gang.parse(ec2_id) is not None
        if not region or not (ec2_id.startswith("i-") or gang):
            raise InvalidInput(f"instance {instance_id!r}: expected REGION/INSTANCE_ID, "
                               "like us-east-1/i-0123456789abcdef0"
                               + (", or REGION/gang-JOB-NODES-DIGEST" if gangs else ""))
        return region, ec2_id

    def status(self, instance_id: str) -> Instance:
        from botocore.exceptions import ClientError

        region, ec2_id = self._split(instance_id, gangs=True)
        if ec2_id.startswith("gang-"):
            return aws_gang.status(self, region, ec2_id)
        try:
            answer = self._client("ec2", region).describe_instances(InstanceIds=[ec2_id])
        except ClientError as exc:
            code, _ = error_of(exc)
            if code in _NOT_FOUND:
                raise InvalidInput(f"instance {instance_id!r}: not found in aws {region}"
                                   ) from None
            raise translate("aws", f"{region}: describe_instances {ec2_id}", exc) from exc
        records = [r for res in answer["Reservations"] for r in res["Instances"]]
        if not records:
            raise InvalidInput(f"instance {instance_id!r}: not found in aws {region}")
        return with_steps([self._instance(region, records[0])], map(ec2_tagged, records))[0]

    def statuses(self, instance_ids: Sequence[str]) -> dict[str, Instance]:
        """Per region, describe_instances filtered on costsched's tag and on up to
        ID_CHUNK instance ids at a time (paginated): 1,000 instances in one region are
        five calls, not 1,000. Ids unknown to EC2 (or not tagged by costsched) and
        malformed ones are left out."""
        by_region: dict[str, list[str]] = {}
        gangs: dict[str, list[str]] = {}
        for instance_id in dict.fromkeys(instance_ids):
            try:
                region, ec2_id = self._split(instance_id, gangs=True)
            except InvalidInput:
                continue
            (gangs if ec2_id.startswith("gang-") else by_region).setdefault(
                region, []).append(ec2_id)
        from botocore.exceptions import ClientError

        found: dict[str, Instance] = {}
        for region, names in sorted(gangs.items()):
            found.update(aws_gang.statuses(self, region, names))
        for region, ec2_ids in sorted(by_region.items()):
            for start in range(0, len(ec2_ids), ID_CHUNK):
                chunk = ec2_ids[start:start + ID_CHUNK]
                try:
                    described = self._describe(region, [
                        {"Name": "tag-key", "Values": [TAG_JOB]},
                        {"Name": "instance-id", "Values": chunk}])
                except ClientError as exc:
                    raise translate("aws", f"{region}: describe_instances of {len(chunk)} "
                                    "instances", exc) from exc
                found.update((instance.id, instance) for instance in described)
        wanted = set(instance_ids)
        return {i: found[i] for i in found if i in wanted}

    def instances(self, job_id: int | None = None) -> list[Instance]:
        if job_id is None:
            tag_filter = {"Name": "tag-key", "Values": [TAG_JOB]}
        else:
            tag_filter = {"Name": f"tag:{TAG_JOB}", "Values": [str(job_id)]}
        regions = sorted(self.regions) or self._all_regions()
        return [found for region in regions for found in self._describe(region, [tag_filter])]

    def tagged(self, places: Collection[tuple[str, str]] = ()) -> list[Instance]:
        """`Launcher.tagged`: the regions launches were tried in asked too."""
        self.regions.update(region for cloud, region in places if cloud == "aws")
        return self.instances()

    def _all_regions(self) -> list[str]:
        home = self.session.region_name or "us-east-1"
        answer = self._client("ec2", home).describe_regions()
        return sorted(r["RegionName"] for r in answer["Regions"])

    # -- acting --------------------------------------------------------------------------

    def nodes(self, instance_id: str) -> list[NodeState]:
        """The nodes of a gang, rank 0 first (`launchers.gang.ReportsNodes`); a job of one
        instance is its only node."""
        region, ec2_id = self._split(instance_id, gangs=True)
        if ec2_id.startswith("gang-"):
            return aws_gang.nodes(self, region, ec2_id)
        seen = self.status(instance_id)
        return [NodeState(0, seen.id, seen.state, seen.detail)]

    def repair_nodes(self, instance_id: str, spec: LaunchSpec) -> str:
        """`Launcher.repair_nodes` for a gang: its lost nodes replaced where they ran, the
        others kept (`launchers.aws_gang.repair`)."""
        region, ec2_id = self._split(instance_id, gangs=True)
        if not ec2_id.startswith("gang-"):
            return ""
        return aws_gang.repair(self, region, ec2_id, spec)

    def request_stop(self, instance_id: str) -> None:
        """SIGTERM to the agent through SSM Run Command; the agent checkpoints the job.
        A gang's rank 0 is asked: its checkpoints are the job's."""
        from botocore.exceptions import ClientError

        region, ec2_id = self._split(instance_id, gangs=True)
        if ec2_id.startswith("gang-"):
            ec2_id = self._split(aws_gang.node_id(self, region, ec2_id, 0))[1]
        try:
            self._client("ssm", region).send_command(
                InstanceIds=[ec2_id], DocumentName="AWS-RunShellScript",
                Comment="costsched: checkpoint and stop",
                Parameters={"commands": [STOP_COMMAND]})
        except ClientError as exc:
            found = translate("aws", f"{region}: signal {ec2_id} through SSM", exc)
            if isinstance(found, CloudError) and found.kind == "refused":
                raise CloudError("aws", found.call, found.cause, kind="refused",
                                 fix="its instance profile needs "
                                 "AmazonSSMManagedInstanceCore") from exc
            raise found from exc

    def terminate(self, instance_id: str) -> None:
        """Ends the instance; a gang's every node, then its placement group."""
        from botocore.exceptions import ClientError

        region, ec2_id = self._split(instance_id, gangs=True)
        if ec2_id.startswith("gang-"):
            return aws_gang.terminate(self, region, ec2_id, self.terminate)
        ec2 = self._client("ec2", region)
        try:
            ec2.terminate_instances(InstanceIds=[ec2_id])
            answer = ec2.describe_instances(InstanceIds=[ec2_id])
        except ClientError as exc:
            code, _ = error_of(exc)
            if code in _NOT_FOUND:
                return  # gone already
            raise translate("aws", f"{region}: terminate_instances {ec2_id}", exc) from exc
        for reservation in answer["Reservations"]:
            for record in reservation["Instances"]:
                self._forget_secrets(region, record)

    def recover_agent(self, instance_id: str) -> bool:
        """An instance whose heartbeat is stale: its supervisor starts a dead agent again
        (launchers.agent_supervisor), so the launcher acts only on a wedged instance, one
        whose heartbeat is older than `wedged.WEDGED_SECONDS`: it is terminated, to be
        relaunched from the job's newest checkpoint. False (left alone) otherwise."""
        from botocore.exceptions import ClientError

        region, ec2_id = self._split(instance_id, gangs=True)
        if ec2_id.startswith("gang-"):  # rank 0 writes the gang's heartbeat
            ec2_id = self._split(aws_gang.node_id(self, region, ec2_id, 0))[1]
        try:
            answer = self._client("ec2", region).describe_instance_attribute(
                InstanceId=ec2_id, Attribute="userData")
        except ClientError as exc:  # the service says the agent is gone meanwhile
            log.warning("aws %s: the user data of %s: %s", region, ec2_id, error_of(exc)[0])
            return False
        encoded = (answer.get("UserData") or {}).get("Value") or ""
        if not wedged.is_wedged(base64.b64decode(encoded).decode("utf-8", "replace")):
            return False
        self.terminate(instance_id)
        return True

    def logs(self, instance_id: str, tail: int = 200, node: int = 0) -> str:
        """The tail of the instance's console output (the startup script and the agent log
        there), when EC2 has one; of a gang's node `node` (0: rank 0)."""
        from botocore.exceptions import ClientError

        region, ec2_id = self._split(instance_id, gangs=True)
        if ec2_id.startswith("gang-"):
            ec2_id = self._split(aws_gang.node_id(self, region, ec2_id, node))[1]
        try:
            answer = self._client("ec2", region).get_console_output(InstanceId=ec2_id,
                                                                    Latest=True)
        except ClientError:
            return ""
        return "\n".join(str(answer.get("Output") or "").splitlines()[-tail:])
