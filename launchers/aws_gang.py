"""EC2 gangs (launchers.cloud_gang): N instances of one offering in one zone, launched one
run_instances call a node (each with its rank's user data and its own client token),
all or nothing, optionally in a cluster placement group of the gang's own.

A gang's handle is REGION/gang-<job>-<N>-<digest>; its nodes are the instances tagged
costsched-gang=<digest>, their ranks in costsched-node. When a node cannot be had
(InsufficientInstanceCapacity, a spot request EC2 refuses...), the nodes already started
are terminated and the launch fails as one CapacityError: the next zone or offering is
tried, as for a job of one instance.

A node other than rank 0 lost while rank 0 runs (a spot interruption...) is replaced where
it ran, the other nodes kept (`repair`: one instance with the node's user data, the gang's
next round); no capacity for it there ends the gang, to be recovered as a whole.

A cluster placement group is made for a gang of GPU instances of a family that takes one
(`cloud_gang.AWS_CLUSTER_FAMILIES`) unless `launch.gang_placement` is "off"; it is deleted
when the gang is terminated. EC2 deletes a group only once its instances are gone, so one
still in use then is deleted by a later launch or termination of a gang in its region.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from costsched.clouds import aws as aws_cloud
from costsched.model import GANG_RESUMES, InvalidInput
from launchers import cloud_gang
from launchers.base import TAG_ATTEMPT, TAG_JOB, CapacityError, Instance, LaunchSpec
from launchers.cloud_errors import translate
from launchers.gang import NodeState

_LIVE = ("pending", "running")
_GROUP_GONE = ("InvalidPlacementGroup.Unknown", "InvalidGroup.NotFound")
CHUNK = 200  # tag values per describe_instances filter
TAG_PLACEMENT = "costsched-placement"  # on each node: its gang's placement group
TAG_ROUND = "costsched-gang-round"  # on a replacement node: the round it was started for


class Ec2(Protocol):
    """What a gang needs of the EC2 launcher (launchers.aws.AwsLauncher)."""

    placement: str

    def _client(self, service: str, region: str) -> Any: ...

    def run_request(self, spec: LaunchSpec, secret_refs: Any = None,
                    node: dict[str, Any] | None = None) -> dict[str, Any]: ...

    def put_secrets(self, spec: LaunchSpec) -> dict[str, str]: ...

    def _forget_secrets(self, region: str, record: dict[str, Any]) -> None: ...

    def _instance(self, region: str, record: dict[str, Any]) -> Instance: ...

    def request_stop(self, instance_id: str) -> None: ...

    def error(self, exc: Any) -> tuple[str, str]: ...


def client_token(job_id: int, attempt: str) -> str:
    """run_instances' idempotency token: the same (job, attempt) asks for the same instance
    (a node of a gang: its attempt names the node, and the round of a replacement)."""
    return hashlib.sha256(f"costsched:{job_id}:{attempt}".encode()).hexdigest()[:64]


def group_name(job_id: int, gang_digest: str) -> str:
    """The cluster placement group of a gang."""
    return f"costsched-{job_id}-{gang_digest}"


def _tags(record: dict[str, Any]) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in record.get("Tags", [])}


def _rank(record: dict[str, Any]) -> int:
    value = _tags(record).get(cloud_gang.TAG_NODE, "")
    return int(value) if value.isdigit() else -1


# --- reading -----------------------------------------------------------------------------

def records(ec2: Ec2, region: str, digests: Sequence[str]) -> dict[str, list[dict]]:
    """The instances of each gang of `digests` in `region` (paginated, CHUNK digests a
    call): {digest: [describe_instances records]}."""
    found: dict[str, list[dict]] = {d: [] for d in digests}
    paginator = ec2._client("ec2", region).get_paginator("describe_instances")
    for start in range(0, len(digests), CHUNK):
        chunk = list(digests[start:start + CHUNK])
        for page in paginator.paginate(Filters=[
                {"Name": f"tag:{cloud_gang.TAG_GANG}", "Values": chunk}]):
            for reservation in page["Reservations"]:
                for record in reservation["Instances"]:
                    found.setdefault(_tags(record).get(cloud_gang.TAG_GANG, ""),
                                     []).append(record)
    return found


def by_rank(ec2: Ec2, region: str, listed: Iterable[dict]) -> dict[int, dict]:
    """One record a rank: its live instance, else its newest."""
    chosen: dict[int, dict] = {}
    for record in listed:
        rank = _rank(record)
        kept = chosen.get(rank)
        if kept is None:
            chosen[rank] = record
            continue
        live, kept_live = (ec2._instance(region, r).state in _LIVE for r in (record, kept))
        if (live, str(record.get("LaunchTime", ""))) > (kept_live,
                                                         str(kept.get("LaunchTime", ""))):
            chosen[rank] = record
    return chosen


def node_states(ec2: Ec2, region: str, ranked: dict[int, dict]) -> list[NodeState]:
    out = []
    for rank, record in sorted(ranked.items()):
        seen = ec2._instance(region, record)
        out.append(NodeState(rank, seen.id, seen.state, seen.detail,
                             str(record.get("PrivateIpAddress") or "")))
    return out


def gang_instance(ec2: Ec2, region: str, gang: str, listed: list[dict]) -> Instance:
    """The gang `gang` (its handle's name) from its instances' records, acting as a gang
    must when a node is lost (`cloud_gang.settle`)."""
    job_id, nodes, _ = cloud_gang.parse(gang) or (-1, 0, "")
    handle = f"{region}/{gang}"
    ranked = by_rank(ec2, region, listed)
    if not ranked:
        return cloud_gang.instance(handle, job_id, "", ("aws", region, "", "", "", "linux"),
                                   "terminated", "no node of the gang is known to EC2")
    first = ranked.get(0) or ranked[min(ranked)]
    head = ec2._instance(region, first)
    states = node_states(ec2, region, ranked)
    lost = _tags(first).get(cloud_gang.TAG_LOST, "")
    view = cloud_gang.repair_view(states, nodes, lost,
                                  _tags(first).get(cloud_gang.TAG_REPAIR, ""))
    if view is not None:  # a lost node replaced where it ran (`repair`)
        state, detail, lost_nodes, replacing = view
        return cloud_gang.instance(handle, head.job_id, head.attempt, head.offering_key,
                                   state, detail, lost_nodes, replacing, created=head.created_at)
    client = ec2._client("ec2", region)
    states = cloud_gang.given_up(states, lost, _tags(first).get(cloud_gang.TAG_REPAIR, ""))
    state, detail = cloud_gang.settle(
        states, nodes, lost,
        stop_rank0=lambda: ec2.request_stop(head.id),
        mark_lost=lambda at: client.create_tags(
            Resources=[first["InstanceId"]],
            Tags=[{"Key": cloud_gang.TAG_LOST, "Value": at}]))
    return cloud_gang.instance(handle, head.job_id, head.attempt, head.offering_key, state,
                               detail, created=head.created_at)


def group(ec2: Ec2, region: str, listed: Iterable[dict]) -> list[Instance]:
    """Instances of `listed` records as costsched knows them: a gang's nodes as one."""
    singles, gangs = [], {}
    for record in listed:
        tags = _tags(record)
        digest = tags.get(cloud_gang.TAG_GANG)
        if digest is None:
            singles.append(ec2._instance(region, record))
            continue
        job = tags.get(TAG_JOB, "")
        nodes = tags.get(cloud_gang.TAG_NODES, "")
        gangs.setdefault(f"gang-{job}-{nodes}-{digest}", []).append(record)
    return singles + [gang_instance(ec2, region, name, found)
                      for name, found in sorted(gangs.items())]


def nodes(ec2: Ec2, region: str, gang: str) -> list[NodeState]:
    parsed = cloud_gang.parse(gang)
    if parsed is None:
        raise InvalidInput(f"instance {region}/{gang}: not a gang")
    return node_states(ec2, region, by_rank(ec2, region,
                                            records(ec2, region, [parsed[2]])[parsed[2]]))


def status(ec2: Ec2, region: str, gang: str) -> Instance:
    parsed = cloud_gang.parse(gang)
    if parsed is None:
        raise InvalidInput(f"instance {region}/{gang}: expected gang-JOB-NODES-DIGEST")
    return gang_instance(ec2, region, gang, records(ec2, region, [parsed[2]])[parsed[2]])


def statuses(ec2: Ec2, region: str, gangs: Sequence[str]) -> dict[str, Instance]:
    """Many gangs of one region in one describe call per CHUNK gangs."""
    parsed = {g: cloud_gang.parse(g) for g in gangs}
    wanted = [p[2] for p in parsed.values() if p is not None]
    found = records(ec2, region, wanted)
    return {f"{region}/{g}": gang_instance(ec2, region, g, found[p[2]])
            for g, p in parsed.items() if p is not None and found[p[2]]}


def node_id(ec2: Ec2, region: str, gang: str, rank: int) -> str:
    """The instance handle of node `rank` (InvalidInput when the gang has no such node)."""
    for node in nodes(ec2, region, gang):
        if node.rank == rank:
            return node.id
    raise InvalidInput(f"instance {region}/{gang}: no node {rank}")


# --- launching ---------------------------------------------------------------------------

def launch(ec2: Ec2, spec: LaunchSpec) -> Instance:
    """Every node of the gang, or none (see the module's docstring)."""
    from botocore.exceptions import ClientError

    offering = spec.offering
    region = offering.region
    count = cloud_gang.nodes_of(spec)
    digest = cloud_gang.digest(spec.job_id, spec.attempt)
    gang = cloud_gang.name(spec.job_id, count, spec.attempt)
    client = ec2._client("ec2", region)
    # A launch interrupted before (costsched stopped): its live nodes are kept.
    started = {rank: record for rank, record in
               by_rank(ec2, region, records(ec2, region, [digest])[digest]).items()
               if ec2._instance(region, record).state in _LIVE}
    zone = spec.zone() or next(
        (r["Placement"]["AvailabilityZone"] for r in started.values()), "")
    placement = ""
    rank = 0
    try:
        if cloud_gang.wants_placement(ec2.placement, spec,
                                      offering.instance_type.split(".", 1)[0],
                                      cloud_gang.AWS_CLUSTER_FAMILIES):
            sweep_groups(ec2, region)
            placement = group_name(spec.job_id, digest)
            _make_group(client, placement, spec.job_id, digest)
        refs = ec2.put_secrets(spec)
        for rank in range(count):
            if rank in started:
                continue
            request = ec2.run_request(spec, refs, node=cloud_gang.node_payload(spec, rank))
            where = {**({"AvailabilityZone": zone} if zone else {}),
                     **({"GroupName": placement} if placement else {})}
            if where:
                request["Placement"] = where
            if placement:
                for kind in request["TagSpecifications"]:
                    kind["Tags"].append({"Key": TAG_PLACEMENT, "Value": placement})
            record = client.run_instances(**request)["Instances"][0]
            started[rank] = record
            zone = zone or record.get("Placement", {}).get("AvailabilityZone", "")
        ips = _addresses(client, started, count)
        cloud_gang.publish_addresses(spec.checkpoint_uri, digest, ips)
    except ClientError as exc:
        code, message = ec2.error(exc)
        _end(ec2, region, [r["InstanceId"] for r in started.values()], placement)
        _forget(ec2, region, spec)
        why = (f"{code}: {message} (node {rank} of {count}; the gang's "
               f"{len(started)} started nodes were terminated)")
        if code in aws_cloud.CAPACITY_ERROR_CODES:
            raise CapacityError(offering, why) from None
        raise translate("aws", f"{offering.location}: a gang of {count} "
                        f"{offering.instance_type}, node {rank} (its {len(started)} started "
                        "nodes were terminated)", exc) from exc
    except Exception:
        _end(ec2, region, [r["InstanceId"] for r in started.values()], placement)
        _forget(ec2, region, spec)
        raise
    return gang_instance(ec2, region, gang, list(started.values()))


def repair(ec2: Ec2, region: str, gang: str, spec: LaunchSpec) -> str:
    """Replace the gang's lost nodes where they ran, the other nodes kept (the launcher's
    `repair_nodes`, under the job's lease); each call does what can be done now and says
    it in one line ('' when nothing):

    1. rank 0 is marked (TAG_REPAIR: the round, when, the ranks) and the round paused in
       the gang's address document: every node stops its job, rank 0 checkpointing;
    2. each lost instance EC2 still has is terminated, then ONE instance started for it:
       the same offering, rank 0's zone and placement group, the same tags, the rank's
       user data, a client token naming the round (N instances at most);
    3. once rank 0 said it left the round (its checkpoint published) and each replacement
       said it is set up, the next round is published with every node's address: each
       agent starts the job again from the newest checkpoint.

    A costsched restarted midway carries on from rank 0's mark and the documents.
    CapacityError when a replacement cannot start there: the gang was ended (rank 0 asked
    to stop), to be moved as a whole where N fit, as after any loss; so is a gang that does
    not pause in time or whose replacement is not set up in time."""
    parsed = cloud_gang.parse(gang)
    if parsed is None:
        raise InvalidInput(f"instance {region}/{gang}: expected gang-JOB-NODES-DIGEST")
    _, count, digest = parsed
    client = ec2._client("ec2", region)
    listed = records(ec2, region, [digest])[digest]
    ranked = by_rank(ec2, region, listed)
    head = ranked.get(0)
    if head is None or ec2._instance(region, head).state != "running" \
            or _tags(head).get(cloud_gang.TAG_LOST):
        return ""  # rank 0 gone, or the gang ends: it is recovered as a whole
    mark = cloud_gang.parse_mark(_tags(head).get(cloud_gang.TAG_REPAIR, ""))
    doc = cloud_gang.read_round(spec.checkpoint_uri, digest)
    began = mark is None  # what the job's log is told once: a later pass that waits says ''
    if mark is None:
        lost = cloud_gang.lost_ranks(node_states(ec2, region, ranked), count)
        if not lost:
            return ""
        mark = (int(doc.get("round", 1)), time.time(), lost)
        _tag(client, head, cloud_gang.TAG_REPAIR, cloud_gang.repair_mark(*mark))
    number, paused_at, ranks = mark
    names = ", ".join(str(r) for r in ranks)
    where = head["Placement"]["AvailabilityZone"]
    if doc.get("round") == number and not doc.get("paused"):
        cloud_gang.publish_addresses(spec.checkpoint_uri, digest, doc.get("ips", []),
                                     number, paused=True)
    started = {r: rec for r, rec in ranked.items() if r not in ranks}
    try:
        for rank in ranks:
            started[rank] = _replacement(ec2, spec, head, listed, rank, number + 1)
    except CapacityError as exc:
        _give_up(ec2, region, client, head, records(ec2, region, [digest])[digest])
        raise CapacityError(exc.offering, f"{exc.reason}: the gang was ended") from None
    waited = time.time() - paused_at
    left, how = cloud_gang.read_left(spec.checkpoint_uri, digest)
    if left >= number and how != "paused":  # its command ended by itself: so did its agent
        _give_up(ec2, region, client, head, records(ec2, region, [digest])[digest])
        return (f"node {names} was lost and rank 0's command ended by itself before it "
                "paused: the gang was ended")
    if left < number:
        if waited > cloud_gang.STOP_GRACE_SECONDS:
            _give_up(ec2, region, client, head, records(ec2, region, [digest])[digest])
            return f"node {names} was lost and the gang did not pause in time: it was ended"
        return (f"node {names} was lost: replaced in {where}, the other nodes kept; the "
                "gang pauses (rank 0 checkpoints)") if began else ""
    if any(cloud_gang.read_ready(spec.checkpoint_uri, digest, r) < number for r in ranks) \
            or any(ec2._instance(region, started[r]).state != "running" for r in ranks):
        if waited > cloud_gang.REPAIR_READY_SECONDS:
            _give_up(ec2, region, client, head, records(ec2, region, [digest])[digest])
            return (f"node {names}'s replacement was not set up after {waited / 60:,.0f} "
                    "min: the gang was ended")
        return (f"node {names} was lost: replaced in {where}, the other nodes kept; "
                f"{GANG_RESUMES}") if began else ""
    cloud_gang.publish_addresses(spec.checkpoint_uri, digest,
                                 _addresses(client, started, count), number + 1)
    client.delete_tags(Resources=[head["InstanceId"]],
                       Tags=[{"Key": cloud_gang.TAG_REPAIR}])
    return (f"node {names} was lost: replaced in {where}, the other nodes kept; the gang "
            f"resumes from its newest checkpoint (round {number + 1})")


def _tag(client: Any, record: dict, key: str, value: str) -> None:
    client.create_tags(Resources=[record["InstanceId"]], Tags=[{"Key": key, "Value": value}])


def _give_up(ec2: Ec2, region: str, client: Any, head: dict,
             listed: list[dict]) -> None:
    """End the gang as after any loss (`cloud_gang.settle`): its replacements terminated,
    rank 0 asked to checkpoint and stop, the gang read as preempted once it had the time
    to (`cloud_gang.given_up`)."""
    _tag(client, head, cloud_gang.TAG_LOST, cloud_gang.lost_tag())
    started = [r["InstanceId"] for r in listed if _tags(r).get(TAG_ROUND)
               and r["State"]["Name"] in _LIVE]
    if started:
        client.terminate_instances(InstanceIds=started)
    with contextlib.suppress(RuntimeError):  # cannot reach it: the gang ends all the same
        ec2.request_stop(f"{region}/{head['InstanceId']}")


def _replacement(ec2: Ec2, spec: LaunchSpec, head: dict, listed: list[dict], rank: int,
                 number: int) -> dict:
    """The instance replacing node `rank` for round `number`: the one started already
    (before a restart of costsched), else a new one once the lost one is gone."""
    from botocore.exceptions import ClientError

    region = spec.offering.region
    client = ec2._client("ec2", region)
    mine = [r for r in listed if _rank(r) == rank]
    for record in mine:
        if _tags(record).get(TAG_ROUND) == str(number) and record["State"]["Name"] in _LIVE:
            return record
    lost = [r["InstanceId"] for r in mine
            if r["State"]["Name"] not in ("shutting-down", "terminated")]
    if lost:  # N at most: the lost node is gone before its replacement starts
        client.terminate_instances(InstanceIds=lost)
    request = ec2.run_request(spec, ec2.put_secrets(spec),
                              node=cloud_gang.node_payload(spec, rank))
    # One token a try: a replacement lost in its turn is replaced by a new instance.
    request["ClientToken"] = client_token(
        spec.job_id, f"{spec.attempt}/node{rank}/round{number}/{len(mine)}")
    placement = _tags(head).get(TAG_PLACEMENT, "")
    request["Placement"] = {"AvailabilityZone": head["Placement"]["AvailabilityZone"],
                            **({"GroupName": placement} if placement else {})}
    extra = [{"Key": TAG_ROUND, "Value": str(number)}]
    if placement:
        extra.append({"Key": TAG_PLACEMENT, "Value": placement})
    for kind in request["TagSpecifications"]:
        kind["Tags"].extend(extra)
    try:
        return client.run_instances(**request)["Instances"][0]
    except ClientError as exc:
        code, message = ec2.error(exc)
        why = (f"{code}: {message} (node {rank}'s replacement, of "
               f"{cloud_gang.nodes_of(spec)})")
        if code in aws_cloud.CAPACITY_ERROR_CODES:
            raise CapacityError(spec.offering, why) from None
        raise translate("aws", f"{spec.offering.location}: node {rank}'s replacement",
                        exc) from exc


def _forget(ec2: Ec2, region: str, spec: LaunchSpec) -> None:
    """A failed launch's secrets: no node will read them."""
    if spec.secret_names:
        ec2._forget_secrets(region, {"Tags": [{"Key": TAG_JOB, "Value": str(spec.job_id)},
                                              {"Key": TAG_ATTEMPT, "Value": spec.attempt}]})


def _addresses(client: Any, started: dict[int, dict], count: int) -> list[str]:
    """The nodes' private addresses, rank 0 first (asked again where the launch answer
    had none)."""
    missing = [r["InstanceId"] for r in started.values() if not r.get("PrivateIpAddress")]
    if missing:
        answer = client.describe_instances(InstanceIds=missing)
        again = {r["InstanceId"]: r for res in answer["Reservations"] for r in res["Instances"]}
        started.update({rank: again.get(r["InstanceId"], r) for rank, r in started.items()})
    ips = [str(started[rank].get("PrivateIpAddress") or "") for rank in range(count)]
    if not all(ips):
        raise RuntimeError("a node of the gang has no private address: its nodes cannot "
                           "reach each other")
    return ips


def _make_group(client: Any, placement: str, job_id: int, digest: str) -> None:
    from botocore.exceptions import ClientError

    try:
        client.create_placement_group(
            GroupName=placement, Strategy="cluster",
            TagSpecifications=[{"ResourceType": "placement-group", "Tags": [
                {"Key": TAG_JOB, "Value": str(job_id)},
                {"Key": cloud_gang.TAG_GANG, "Value": digest}]}])
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") != "InvalidPlacementGroup.Duplicate":
            raise


# --- ending ------------------------------------------------------------------------------

def terminate(ec2: Ec2, region: str, gang: str,
              terminate_one: Callable[[str], None]) -> None:
    """Every node of the gang, then its placement group (idempotent)."""
    parsed = cloud_gang.parse(gang)
    if parsed is None:
        raise InvalidInput(f"instance {region}/{gang}: expected gang-JOB-NODES-DIGEST")
    listed = records(ec2, region, [parsed[2]])[parsed[2]]
    ids = [r["InstanceId"] for r in listed
           if r["State"]["Name"] not in ("shutting-down", "terminated")]
    for ec2_id in ids:
        terminate_one(f"{region}/{ec2_id}")
    for placement in sorted({_tags(r).get(TAG_PLACEMENT, "") for r in listed} - {""}):
        _delete_group(ec2, region, placement)


def _end(ec2: Ec2, region: str, ec2_ids: list[str], placement: str) -> None:
    """A failed launch's nodes, then its placement group."""
    if ec2_ids:
        ec2._client("ec2", region).terminate_instances(InstanceIds=ec2_ids)
    if placement:
        _delete_group(ec2, region, placement)


def _delete_group(ec2: Ec2, region: str, placement: str) -> bool:
    """Delete a placement group; False when EC2 still has instances in it."""
    from botocore.exceptions import ClientError

    try:
        ec2._client("ec2", region).delete_placement_group(GroupName=placement)
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "")
        if code in _GROUP_GONE:
            return True
        if code == "InvalidPlacementGroup.InUse":
            return False
        raise
    return True


def sweep_groups(ec2: Ec2, region: str) -> list[str]:
    """Delete the region's gang placement groups that no live instance uses any more (left
    while their instances shut down); the names deleted."""
    client = ec2._client("ec2", region)
    groups = client.describe_placement_groups(Filters=[
        {"Name": "tag-key", "Values": [cloud_gang.TAG_GANG]}]).get("PlacementGroups", [])
    if not groups:
        return []
    tagged = {g["GroupName"]: _tags(g).get(cloud_gang.TAG_GANG, "") for g in groups}
    found = records(ec2, region, sorted(set(tagged.values())))
    deleted = []
    for name, digest in sorted(tagged.items()):
        listed = found.get(digest, [])
        # A group with no instance yet may be a launch's under way: left alone.
        if not listed or any(r["State"]["Name"] not in ("shutting-down", "terminated")
                             for r in listed):
            continue
        if _delete_group(ec2, region, name):
            deleted.append(name)
    return deleted
