"""Compute Engine gangs (launchers.cloud_gang): N instances of one offering in one zone,
inserted one a node (each with its rank's startup script), all or nothing, optionally under
a compact placement policy of the gang's own.

A gang's handle is ZONE/gang-<job>-<N>-<digest>; node `rank` is the instance
costsched-<job>-<digest>-<rank> of that zone, labelled costsched-gang=<digest> and
costsched-node=<rank>, so that the handle alone names every node. When a node cannot be had
(ZONE_RESOURCE_POOL_EXHAUSTED, a quota...), the nodes already inserted are deleted and the
launch fails as one CapacityError: the next zone or offering is tried.

A node other than rank 0 lost while rank 0 runs (preempted: deleted) is inserted again
under its name, the other nodes kept (`repair`); no capacity for it there ends the gang,
to be recovered as a whole.

A compact placement policy (groupPlacementPolicy collocation COLLOCATED, vmCount N) is made
for a gang of GPU instances of a series that takes one (`cloud_gang.GCP_COMPACT_SERIES`)
unless `launch.gang_placement` is "off"; it is deleted after the gang's nodes.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from costsched.model import GANG_RESUMES, InvalidInput
from launchers import cloud_gang
from launchers.base import CapacityError, Instance, LaunchSpec
from launchers.cloud_errors import translate
from launchers.cloud_times import utc
from launchers.gang import NodeState

OPERATION_TIMEOUT = 600.0
_NAMESPACE = uuid.UUID("0b7c9e52-3f0e-4d0e-9b8c-67616e672d31")


class Gce(Protocol):
    """What a gang needs of the Compute Engine launcher (launchers.gcp.GcpLauncher)."""

    project: str
    client: Any
    placement: str
    _deleted: set[str]

    def zone(self, spec: LaunchSpec) -> str: ...

    def instance_resource(self, spec: LaunchSpec, zone: str,
                          node: Mapping[str, Any] | None = None,
                          policy: str = "", secret_refs: Mapping[str, str] | None = None
                          ) -> Any: ...

    def put_secrets(self, spec: LaunchSpec) -> dict[str, str]: ...

    def _forget_key(self, key: str) -> None: ...

    def policies(self) -> Any: ...

    def _open_ports(self, spec: LaunchSpec) -> None: ...

    def _instance(self, zone: str, record: Any) -> Instance: ...

    def request_stop(self, instance_id: str) -> None: ...

    def set_items(self, zone: str, name: str, items: Mapping[str, str]) -> None: ...


def node_name(job_id: int, gang_digest: str, rank: int) -> str:
    """The instance of node `rank` (RFC 1035, under 63 characters)."""
    return f"costsched-{job_id}-{gang_digest}-{rank}"


def policy_name(job_id: int, gang_digest: str) -> str:
    return f"costsched-{job_id}-{gang_digest}"


def policy_url(project: str, region: str, name: str) -> str:
    return f"projects/{project}/regions/{region}/resourcePolicies/{name}"


def _parse(zone: str, gang: str) -> tuple[int, int, str]:
    parsed = cloud_gang.parse(gang)
    if parsed is None:
        raise InvalidInput(f"instance {zone}/{gang}: expected gang-JOB-NODES-DIGEST")
    return parsed


def _address(record: Any) -> str:
    interfaces = list(record.network_interfaces or [])
    return str(interfaces[0].network_i_p or "") if interfaces else ""


# --- reading -----------------------------------------------------------------------------

def node_records(gce: Gce, zone: str, gang: str) -> dict[int, Any]:
    """{rank: the node's instance} of the nodes Compute Engine has (one get a node)."""
    from google.api_core import exceptions

    job_id, count, digest = _parse(zone, gang)
    found = {}
    for rank in range(count):
        try:
            found[rank] = gce.client.get(project=gce.project, zone=zone,
                                         instance=node_name(job_id, digest, rank))
        except exceptions.NotFound:
            continue
    return found


def node_states(gce: Gce, zone: str, gang: str, records: Mapping[int, Any]) -> list[NodeState]:
    """Every node, rank 0 first; one Compute Engine no longer has is gone: deleted by
    costsched (terminated), else preempted (a spot instance is deleted when preempted)."""
    job_id, count, digest = _parse(zone, gang)
    out = []
    for rank in range(count):
        name = node_name(job_id, digest, rank)
        record = records.get(rank)
        if record is not None:
            seen = gce._instance(zone, record)
            out.append(NodeState(rank, seen.id, seen.state, seen.detail, _address(record)))
        elif f"{zone}/{gang}" in gce._deleted:
            out.append(NodeState(rank, f"{zone}/{name}", "terminated", "deleted by costsched"))
        else:
            out.append(NodeState(rank, f"{zone}/{name}", "preempted",
                                 "gone: deleted by Compute Engine after a preemption, or "
                                 "outside costsched"))
    return out


def gang_instance(gce: Gce, zone: str, gang: str, records: Mapping[int, Any]) -> Instance:
    """The gang from its nodes' instances, acting as a gang must when a node is lost
    (`cloud_gang.settle`)."""
    job_id, count, digest = _parse(zone, gang)
    handle = f"{zone}/{gang}"
    states = node_states(gce, zone, gang, records)
    if not records:
        state = "terminated" if handle in gce._deleted else "preempted"
        return cloud_gang.instance(handle, job_id, "", ("gcp", "", zone, "", "", "linux"),
                                   state, "no node of the gang is left: "
                                   + states[0].detail if states else "no node")
    first = records.get(0) or records[min(records)]
    head = gce._instance(zone, first)
    items = _items(first)
    lost = items.get(cloud_gang.TAG_LOST, "")
    mark = items.get(cloud_gang.TAG_REPAIR, "") if 0 in records else ""
    # Each node that runs, from when Compute Engine says (billed from then: `running`).
    running = tuple((n.rank, started_at(records[n.rank])) for n in states
                    if n.state == "running" and n.rank in records)
    view = cloud_gang.repair_view(states, count, lost, mark)
    if view is not None:  # a lost node replaced where it ran (`repair`)
        state, detail, lost_nodes, replacing = view
        return cloud_gang.instance(handle, head.job_id, head.attempt, head.offering_key,
                                   state, detail, lost_nodes, replacing, created=head.created_at,
                                   running=running)
    states = cloud_gang.given_up(states, lost, mark)
    rank0 = node_name(job_id, digest, 0)
    state, detail = cloud_gang.settle(
        states, count, lost,
        stop_rank0=lambda: gce.request_stop(f"{zone}/{rank0}"),
        mark_lost=lambda at: gce.set_items(zone, rank0, {cloud_gang.TAG_LOST: at}))
    started = [started_at(records[r]) if r in records else None
               for r in range(count)] if state == "running" else []
    return cloud_gang.instance(handle, head.job_id, head.attempt, head.offering_key, state,
                               detail, started=started, created=head.created_at,
                               running=running)


def started_at(record: Any) -> datetime | None:
    """When Compute Engine says an instance last began running (`lastStartTimestamp`,
    RFC 3339); None when it does not say."""
    return utc(record.last_start_timestamp)


def stopped_at(record: Any) -> datetime | None:
    """When Compute Engine says an instance last stopped (`lastStopTimestamp`, RFC 3339:
    a spot instance preempted with termination action STOP); None when it does not say."""
    return utc(record.last_stop_timestamp)


def created_at(record: Any) -> datetime | None:
    """When Compute Engine made an instance (`creationTimestamp`, RFC 3339, there from its
    insert on); None when it does not say."""
    return utc(record.creation_timestamp)


def _items(record: Any) -> dict[str, str]:
    return {i.key: i.value for i in record.metadata.items} if record.metadata else {}


def status(gce: Gce, zone: str, gang: str) -> Instance:
    return gang_instance(gce, zone, gang, node_records(gce, zone, gang))


def nodes(gce: Gce, zone: str, gang: str) -> list[NodeState]:
    return node_states(gce, zone, gang, node_records(gce, zone, gang))


def group(gce: Gce, listed: Iterable[tuple[str, Any]]) -> list[Instance]:
    """(zone, instance) pairs as costsched knows them: a gang's nodes as one."""
    singles, gangs = [], {}
    for zone, record in listed:
        labels = dict(record.labels)
        digest = labels.get(cloud_gang.TAG_GANG)
        rank = labels.get(cloud_gang.TAG_NODE, "")
        if digest is None or not rank.isdigit():
            singles.append(gce._instance(zone, record))
            continue
        job = record.name.split("-")[1]
        gang = f"gang-{job}-{labels.get(cloud_gang.TAG_NODES, '')}-{digest}"
        gangs.setdefault((zone, gang), {})[int(rank)] = record
    return singles + [gang_instance(gce, zone, gang, found)
                      for (zone, gang), found in sorted(gangs.items())]


# --- launching ---------------------------------------------------------------------------

def launch(gce: Gce, spec: LaunchSpec, capacity_reason: Any) -> Instance:
    """Every node of the gang, or none (see the module's docstring); `capacity_reason`
    tells a capacity error from another (launchers.gcp)."""
    from google.api_core import exceptions
    from google.cloud import compute_v1

    offering = spec.offering
    zone = gce.zone(spec)
    count = cloud_gang.nodes_of(spec)
    digest = cloud_gang.digest(spec.job_id, spec.attempt)
    gang = cloud_gang.name(spec.job_id, count, spec.attempt)
    series = offering.instance_type.split("-", 1)[0]  # n1-standard-8+1x...: n1; a2-...: a2
    policy = ""
    if cloud_gang.wants_placement(gce.placement, spec, series, cloud_gang.GCP_COMPACT_SERIES):
        policy = policy_name(spec.job_id, digest)
    inserted: list[str] = []
    rank = 0
    try:
        if task_ports(spec):
            gce._open_ports(spec)
        if policy:
            _make_policy(gce, offering.region, policy, count, spec.job_id)
        refs = gce.put_secrets(spec)
        for rank in range(count):
            node = cloud_gang.node_payload(spec, rank)
            resource = gce.instance_resource(
                spec, zone, node=node,
                policy=policy_url(gce.project, offering.region, policy) if policy else "",
                secret_refs=refs)
            request = compute_v1.InsertInstanceRequest(
                project=gce.project, zone=zone, instance_resource=resource,
                request_id=str(uuid.uuid5(_NAMESPACE, f"{spec.job_id}:{spec.attempt}:{rank}")))
            # Inserted before a crash: the same (job, attempt, rank) is the same node.
            with contextlib.suppress(exceptions.Conflict):
                gce.client.insert(request=request).result(timeout=OPERATION_TIMEOUT)
            inserted.append(resource.name)
        records = node_records(gce, zone, gang)
        ips = [_address(records[r]) if r in records else "" for r in range(count)]
        if not all(ips):
            raise RuntimeError(f"gcp {zone}: a node of the gang has no internal address: "
                               "its nodes cannot reach each other")
        cloud_gang.publish_addresses(spec.checkpoint_uri, digest, ips)
    except exceptions.GoogleAPICallError as exc:
        _end(gce, zone, offering.region, inserted, policy)
        gce._forget_key(digest)  # the gang's secrets: no node will read them
        reason = capacity_reason(exc)
        why = (f"node {rank} of {count}; the gang's {len(inserted)} inserted nodes were "
               "deleted")
        if reason is not None:
            raise CapacityError(offering, f"{reason} ({why})") from None
        raise translate("gcp", f"{zone}: a gang of {count} {offering.instance_type}, node "
                        f"{rank} (its {len(inserted)} inserted nodes were deleted)",
                        exc) from exc
    except Exception:
        _end(gce, zone, offering.region, inserted, policy)
        gce._forget_key(digest)
        raise
    return gang_instance(gce, zone, gang, records)


def repair(gce: Gce, zone: str, gang: str, spec: LaunchSpec, capacity_reason: Any) -> str:
    """Replace the gang's lost nodes where they ran, the other nodes kept (the launcher's
    `repair_nodes`, under the job's lease), as `launchers.aws_gang.repair` does on EC2:
    rank 0 marked (its metadata item TAG_REPAIR) and the round paused; each lost node's
    instance deleted if Compute Engine still has it, then inserted again under its name,
    in its zone, with its labels, startup script and placement policy; the next round
    published once rank 0 left the paused one and each replacement is set up. Each call
    does what can be done now and says it in one line ('' when nothing). A live instance
    under a replaced node's name is its replacement (the lost one was deleted first):
    a costsched restarted midway carries on. CapacityError when a replacement cannot be
    inserted there: the gang was ended, to be moved as a whole where N fit."""
    from google.api_core import exceptions

    job_id, count, digest = _parse(zone, gang)
    records = node_records(gce, zone, gang)
    head = records.get(0)
    if head is None or gce._instance(zone, head).state != "running":
        return ""  # rank 0 gone: the gang is recovered as a whole
    items = _items(head)
    if items.get(cloud_gang.TAG_LOST):
        return ""
    rank0 = node_name(job_id, digest, 0)
    mark = cloud_gang.parse_mark(items.get(cloud_gang.TAG_REPAIR, ""))
    doc = cloud_gang.read_round(spec.checkpoint_uri, digest)
    began = mark is None  # what the job's log is told once: a later pass that waits says ''
    if mark is None:
        lost = cloud_gang.lost_ranks(node_states(gce, zone, gang, records), count)
        if not lost:
            return ""
        mark = (int(doc.get("round", 1)), time.time(), lost)
        gce.set_items(zone, rank0, {cloud_gang.TAG_REPAIR: cloud_gang.repair_mark(*mark)})
    number, paused_at, ranks = mark
    names = ", ".join(str(r) for r in ranks)
    if doc.get("round") == number and not doc.get("paused"):
        cloud_gang.publish_addresses(spec.checkpoint_uri, digest, doc.get("ips", []),
                                     number, paused=True)
    try:
        for rank in ranks:
            _replace(gce, zone, spec, records.get(rank), rank, number + 1)
    except exceptions.GoogleAPICallError as exc:
        reason = capacity_reason(exc)
        _give_up(gce, zone, job_id, digest, ranks)
        if reason is not None:
            raise CapacityError(spec.offering, f"{reason} (node {names}'s replacement): "
                                "the gang was ended") from None
        raise translate("gcp", f"{zone}: node {names}'s replacement (the gang was ended)",
                        exc) from exc
    records = node_records(gce, zone, gang)
    waited = time.time() - paused_at
    left, how = cloud_gang.read_left(spec.checkpoint_uri, digest)
    if left >= number and how != "paused":  # its command ended by itself: so did its agent
        _give_up(gce, zone, job_id, digest, ranks)
        return (f"node {names} was lost and rank 0's command ended by itself before it "
                "paused: the gang was ended")
    if left < number:
        if waited > cloud_gang.STOP_GRACE_SECONDS:
            _give_up(gce, zone, job_id, digest, ranks)
            return f"node {names} was lost and the gang did not pause in time: it was ended"
        return (f"node {names} was lost: replaced in {zone}, the other nodes kept; the "
                "gang pauses (rank 0 checkpoints)") if began else ""
    if any(cloud_gang.read_ready(spec.checkpoint_uri, digest, r) < number for r in ranks) \
            or any(r not in records or gce._instance(zone, records[r]).state != "running"
                   for r in ranks):
        if waited > cloud_gang.REPAIR_READY_SECONDS:
            _give_up(gce, zone, job_id, digest, ranks)
            return (f"node {names}'s replacement was not set up after {waited / 60:,.0f} "
                    "min: the gang was ended")
        return (f"node {names} was lost: replaced in {zone}, the other nodes kept; "
                f"{GANG_RESUMES}") if began else ""
    ips = [_address(records[r]) if r in records else "" for r in range(count)]
    if not all(ips):
        return ""  # its address comes with its network interface: the next pass
    cloud_gang.publish_addresses(spec.checkpoint_uri, digest, ips, number + 1)
    gce.set_items(zone, rank0, {cloud_gang.TAG_REPAIR: ""})
    return (f"node {names} was lost: replaced in {zone}, the other nodes kept; the gang "
            f"resumes from its newest checkpoint (round {number + 1})")


def _replace(gce: Gce, zone: str, spec: LaunchSpec, record: Any, rank: int,
             number: int) -> None:
    """Node `rank` inserted again for round `number`, once its lost instance is gone (N
    instances at most); nothing when its replacement is there already."""
    from google.api_core import exceptions
    from google.cloud import compute_v1

    name = node_name(spec.job_id, cloud_gang.digest(spec.job_id, spec.attempt), rank)
    # The request names the instance it replaces: a replacement lost in its turn is
    # inserted anew, a repeated call (the same lost instance) is the same insert.
    lost_id = str(getattr(record, "id", "") or "") if record is not None else ""
    if record is not None:
        if gce._instance(zone, record).state in ("pending", "running"):
            return  # inserted before (a costsched restarted midway)
        _delete(gce, zone, name)
    offering = spec.offering
    series = offering.instance_type.split("-", 1)[0]
    policy = ""
    if cloud_gang.wants_placement(gce.placement, spec, series, cloud_gang.GCP_COMPACT_SERIES):
        policy = policy_url(gce.project, offering.region,
                            policy_name(spec.job_id, cloud_gang.digest(spec.job_id,
                                                                       spec.attempt)))
    resource = gce.instance_resource(spec, zone, node=cloud_gang.node_payload(spec, rank),
                                     policy=policy, secret_refs=gce.put_secrets(spec))
    request = compute_v1.InsertInstanceRequest(
        project=gce.project, zone=zone, instance_resource=resource,
        request_id=str(uuid.uuid5(
            _NAMESPACE, f"{spec.job_id}:{spec.attempt}:{rank}:round{number}:{lost_id}")))
    with contextlib.suppress(exceptions.Conflict):  # inserted before a crash
        gce.client.insert(request=request).result(timeout=OPERATION_TIMEOUT)


def _give_up(gce: Gce, zone: str, job_id: int, digest: str, ranks: Sequence[int]) -> None:
    """End the gang as after any loss: its replacements deleted, rank 0 asked to
    checkpoint and stop, the gang read as preempted once it had the time to."""
    rank0 = node_name(job_id, digest, 0)
    gce.set_items(zone, rank0, {cloud_gang.TAG_LOST: cloud_gang.lost_tag()})
    for rank in ranks:
        _delete(gce, zone, node_name(job_id, digest, rank))
    with contextlib.suppress(RuntimeError):
        gce.request_stop(f"{zone}/{rank0}")


def task_ports(spec: LaunchSpec) -> bool:
    from launchers import task_resources

    return bool(task_resources.port_ranges(spec.task))


def _make_policy(gce: Gce, region: str, name: str, count: int, job_id: int) -> None:
    from google.api_core import exceptions
    from google.cloud import compute_v1

    policy = compute_v1.ResourcePolicy(
        name=name, description=f"costsched job {job_id}: its gang's nodes close together",
        group_placement_policy=compute_v1.ResourcePolicyGroupPlacementPolicy(
            collocation="COLLOCATED", vm_count=count))
    with contextlib.suppress(exceptions.Conflict):  # made by this launch before a crash
        gce.policies().insert(project=gce.project, region=region,
                              resource_policy_resource=policy).result(
                                  timeout=OPERATION_TIMEOUT)


# --- ending ------------------------------------------------------------------------------

def _delete(gce: Gce, zone: str, name: str) -> None:
    from google.api_core import exceptions

    with contextlib.suppress(exceptions.NotFound):  # gone already
        gce.client.delete(project=gce.project, zone=zone, instance=name).result(
            timeout=OPERATION_TIMEOUT)


def _delete_policy(gce: Gce, region: str, name: str) -> None:
    from google.api_core import exceptions

    # None made (a series that takes none), or not ours to delete: a policy costs nothing.
    with contextlib.suppress(exceptions.NotFound, exceptions.Forbidden):
        gce.policies().delete(project=gce.project, region=region,
                              resource_policy=name).result(timeout=OPERATION_TIMEOUT)


def _end(gce: Gce, zone: str, region: str, names: Sequence[str], policy: str) -> None:
    """A failed launch's nodes, then its placement policy."""
    for name in names:
        _delete(gce, zone, name)
    if policy:
        _delete_policy(gce, region, policy)


def terminate(gce: Gce, zone: str, gang: str) -> None:
    """Every node of the gang (each delete waited for), then its placement policy."""
    job_id, count, digest = _parse(zone, gang)
    gce._deleted.add(f"{zone}/{gang}")
    for rank in range(count):
        _delete(gce, zone, node_name(job_id, digest, rank))
    gce._forget_key(digest)  # the gang's secrets (cloud_secrets.key is its digest)
    if gce.placement != "off":  # whether or not it had one (its nodes may be gone)
        _delete_policy(gce, zone.rsplit("-", 1)[0], policy_name(job_id, digest))
