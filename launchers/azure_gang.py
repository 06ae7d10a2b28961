"""Azure gangs (launchers.cloud_gang): N VMs of one offering in one location (and zone),
created one a node (each with its rank's startup script), all or nothing, in a proximity
placement group of the gang's own.

A gang's handle is LOCATION/RESOURCE_GROUP/gang-<job>-<N>-<digest>; node `rank` is the VM
costsched-<job>-<digest>-<rank> there, tagged costsched-gang=<digest> and
costsched-node=<rank>, so that the handle alone names every node. When a node cannot be had
(SkuNotAvailable, AllocationFailed, a quota...), the nodes already created are deleted and
the launch fails as one CapacityError: the next offering is tried.

A node other than rank 0 lost while rank 0 runs (evicted: deleted) is created again under
its name, the other nodes kept (`repair`), as on EC2 and Compute Engine; no capacity for it
there ends the gang, to be recovered as a whole. The repair's marks are tags of rank 0's VM.

The proximity placement group is made for a gang of GPU VMs unless `launch.gang_placement`
is "off", and deleted after the gang's VMs.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from costsched.model import GANG_RESUMES, InvalidInput
from launchers import azure_vm, cloud_gang
from launchers.base import CapacityError, Instance, LaunchSpec
from launchers.gang import NodeState


class Az(Protocol):
    """What a gang needs of the Azure launcher (launchers.azure.AzureLauncher)."""

    group: str
    compute: Any
    clients: Any
    placement: str
    wait_seconds: float
    _deleted: set[str]

    def errors(self) -> tuple[type[Exception], type[Exception]]: ...

    def document(self, spec: LaunchSpec, name: str, node: Mapping[str, Any] | None = None,
                 placement_group: str = "", security_group: str = "",
                 secret_refs: Mapping[str, str] | None = None) -> dict[str, Any]: ...

    def put_secrets(self, spec: LaunchSpec) -> dict[str, str]: ...

    def ports_group(self, spec: LaunchSpec) -> str: ...

    def create(self, offering: Any, name: str, body: Mapping[str, Any]) -> None: ...

    def delete_vm(self, name: str, wait: bool = True, group: str | None = None) -> None: ...

    def instance(self, group: str, doc: Mapping[str, Any]) -> Instance: ...

    def handle(self, location: str, name: str, group: str | None = None) -> str: ...

    def request_stop(self, instance_id: str) -> None: ...


def _parse(gang: str) -> tuple[int, int, str]:
    parsed = cloud_gang.parse(gang)
    if parsed is None:
        raise InvalidInput(f"instance {gang}: expected gang-JOB-NODES-DIGEST")
    return parsed


def rank0(gang: str) -> str:
    job_id, _, digest = _parse(gang)
    return azure_vm.node_name(job_id, digest, 0)


def placement_group(job_id: int, gang_digest: str) -> str:
    return f"costsched-{job_id}-{gang_digest}"


def _tags(doc: Mapping[str, Any] | None) -> dict[str, str]:
    return dict((doc or {}).get("tags") or {})


def set_tags(az: Az, group: str, name: str, changes: Mapping[str, str]) -> None:
    """Set tags of a VM, keeping its others (PATCH replaces the whole set)."""
    doc = az.compute.virtual_machines.get(group, name)
    tags = {**_tags(doc), **changes}
    az.compute.virtual_machines.begin_update(group, name, {"tags": tags}).wait(
        az.wait_seconds)


# --- reading -----------------------------------------------------------------------------

def node_docs(az: Az, group: str, gang: str) -> dict[int, Any]:
    """{rank: the node's VM} of the nodes Azure has (one get a node)."""
    _, missing = az.errors()
    job_id, count, digest = _parse(gang)
    found = {}
    for rank in range(count):
        with contextlib.suppress(missing):
            found[rank] = az.compute.virtual_machines.get(
                group, azure_vm.node_name(job_id, digest, rank), expand="instanceView")
    return found


def address(az: Az, group: str, doc: Mapping[str, Any]) -> str:
    """A node's private address, from its network interface ('' while it has none)."""
    _, missing = az.errors()
    nics = ((doc.get("properties") or {}).get("networkProfile") or {}).get(
        "networkInterfaces") or []
    if not nics:
        return ""
    try:
        nic = az.clients.network.network_interfaces.get(group, str(nics[0]["id"]).rsplit(
            "/", 1)[-1])
    except missing:
        return ""
    configs = (nic.get("properties") or {}).get("ipConfigurations") or []
    return str((configs[0].get("properties") or {}).get("privateIPAddress") or "") \
        if configs else ""


def node_states(az: Az, location: str, group: str, gang: str, docs: Mapping[int, Any],
                addresses: bool = False) -> list[NodeState]:
    """Every node, rank 0 first; one Azure no longer has is gone: deleted by costsched
    (terminated), else preempted (a Spot VM is deleted when evicted)."""
    job_id, count, digest = _parse(gang)
    out = []
    for rank in range(count):
        name = azure_vm.node_name(job_id, digest, rank)
        doc = docs.get(rank)
        if doc is not None:
            seen = az.instance(group, doc)
            out.append(NodeState(rank, seen.id, seen.state, seen.detail,
                                 address(az, group, doc) if addresses else ""))
        elif az.handle(location, gang, group) in az._deleted:
            out.append(NodeState(rank, az.handle(location, name, group), "terminated",
                                 "deleted by costsched"))
        else:
            out.append(NodeState(rank, az.handle(location, name, group), "preempted",
                                 "gone: deleted by Azure after an eviction, or outside "
                                 "costsched"))
    return out


def gang_instance(az: Az, location: str, group: str, gang: str,
                  docs: Mapping[int, Any]) -> Instance:
    """The gang from its nodes' VMs, acting as a gang must when a node is lost
    (`cloud_gang.settle`)."""
    job_id, count, _ = _parse(gang)
    handle = az.handle(location, gang, group)
    states = node_states(az, location, group, gang, docs)
    if not docs:
        state = "terminated" if handle in az._deleted else "preempted"
        return cloud_gang.instance(handle, job_id, "", ("azure", location, "", "", "", "linux"),
                                   state, "no node of the gang is left: " + states[0].detail)
    first = docs.get(0) or docs[min(docs)]
    head = az.instance(group, first)
    tags = _tags(first)
    lost = tags.get(cloud_gang.TAG_LOST, "")
    mark = tags.get(cloud_gang.TAG_REPAIR, "") if 0 in docs else ""
    view = cloud_gang.repair_view(states, count, lost, mark)
    if view is not None:  # a lost node replaced where it ran (`repair`)
        state, detail, lost_nodes, replacing = view
        return cloud_gang.instance(handle, head.job_id, head.attempt, head.offering_key,
                                   state, detail, lost_nodes, replacing, created=head.created_at)
    states = cloud_gang.given_up(states, lost, mark)
    first_name = rank0(gang)
    state, detail = cloud_gang.settle(
        states, count, lost,
        stop_rank0=lambda: az.request_stop(az.handle(location, first_name, group)),
        mark_lost=lambda at: set_tags(az, group, first_name,
                                      {cloud_gang.TAG_LOST: at}))
    return cloud_gang.instance(handle, head.job_id, head.attempt, head.offering_key, state,
                               detail, created=head.created_at)


def status(az: Az, location: str, group: str, gang: str) -> Instance:
    return gang_instance(az, location, group, gang, node_docs(az, group, gang))


def nodes(az: Az, location: str, group: str, gang: str) -> list[NodeState]:
    return node_states(az, location, group, gang, node_docs(az, group, gang), addresses=True)


def group(az: Az, resource_group: str, listed: Iterable[Any]) -> list[Instance]:
    """VMs as costsched knows them: a gang's nodes as one."""
    singles, gangs = [], {}
    for doc in listed:
        tags = _tags(doc)
        digest, rank = tags.get(cloud_gang.TAG_GANG), tags.get(cloud_gang.TAG_NODE, "")
        if digest is None or not rank.isdigit():
            singles.append(az.instance(resource_group, doc))
            continue
        gang = f"gang-{tags.get('costsched-job', '')}-{tags.get(cloud_gang.TAG_NODES, '')}-" \
               f"{digest}"
        gangs.setdefault((str(doc.get("location", "")), gang), {})[int(rank)] = doc
    return singles + [gang_instance(az, location, resource_group, gang, found)
                      for (location, gang), found in sorted(gangs.items())]


# --- launching ---------------------------------------------------------------------------

def _placement(az: Az, spec: LaunchSpec) -> str:
    """The gang's proximity placement group (made now), or '' when it gets none."""
    if az.placement == "off" or spec.offering.gpu_count <= 0:
        return ""
    name = placement_group(spec.job_id, cloud_gang.digest(spec.job_id, spec.attempt))
    made = az.compute.proximity_placement_groups.create_or_update(az.group, name, {
        "location": spec.offering.region,
        "tags": {"costsched-job": str(spec.job_id)},
        "properties": {"proximityPlacementGroupType": "Standard"}})
    return str(made["id"])


def launch(az: Az, spec: LaunchSpec, secret_refs: Mapping[str, str] | None = None
           ) -> Instance:
    """Every node of the gang, or none (see the module's docstring); `secret_refs`: where
    each node reads the job's secrets (one copy for the gang: `AzureLauncher.put_secrets`)."""
    offering = spec.offering
    count = cloud_gang.nodes_of(spec)
    digest = cloud_gang.digest(spec.job_id, spec.attempt)
    gang = cloud_gang.name(spec.job_id, count, spec.attempt)
    made: list[str] = []
    ppg = ""
    try:
        ports = az.ports_group(spec)
        ppg = _placement(az, spec)
        for rank in range(count):
            name = azure_vm.node_name(spec.job_id, digest, rank)
            body = az.document(spec, name, node=cloud_gang.node_payload(spec, rank),
                               placement_group=ppg, security_group=ports,
                               secret_refs=secret_refs)
            made.append(name)  # a failed create may leave a VM behind: it is deleted too
            az.create(offering, name, body)
        docs = node_docs(az, az.group, gang)
        ips = [address(az, az.group, docs[r]) if r in docs else "" for r in range(count)]
        if not all(ips):
            raise RuntimeError(f"azure {offering.region}: a node of the gang has no private "
                               "address: its nodes cannot reach each other")
        cloud_gang.publish_addresses(spec.checkpoint_uri, digest, ips)
    except CapacityError as exc:
        _end(az, made, ppg)
        raise CapacityError(offering, f"{exc.reason} (node {len(made) - 1} of {count}; the "
                            f"gang's {len(made) - 1} other nodes were deleted)") from None
    except Exception:
        _end(az, made, ppg)
        raise
    return gang_instance(az, offering.region, az.group, gang, docs)


def repair(az: Az, location: str, resource_group: str, gang: str, spec: LaunchSpec) -> str:
    """Replace the gang's lost nodes where they ran, the other nodes kept (the launcher's
    `repair_nodes`), as `launchers.gcp_gang.repair` does on Compute Engine: rank 0 tagged
    with the repair's mark and the round paused; each lost node's VM deleted if Azure
    still has it, then created again under its name with its rank's startup script; the
    next round published once rank 0 left the paused one and each replacement is set up.
    Each call does what can be done now and says it in one line ('' when nothing).
    CapacityError when a replacement cannot be created there: the gang was ended."""
    job_id, count, digest = _parse(gang)
    docs = node_docs(az, resource_group, gang)
    head = docs.get(0)
    if head is None or az.instance(resource_group, head).state != "running":
        return ""  # rank 0 gone: the gang is recovered as a whole
    tags = _tags(head)
    if tags.get(cloud_gang.TAG_LOST):
        return ""
    first = rank0(gang)
    mark = cloud_gang.parse_mark(tags.get(cloud_gang.TAG_REPAIR, ""))
    doc = cloud_gang.read_round(spec.checkpoint_uri, digest)
    began = mark is None
    if mark is None:
        lost = cloud_gang.lost_ranks(node_states(az, location, resource_group, gang, docs),
                                     count)
        if not lost:
            return ""
        mark = (int(doc.get("round", 1)), time.time(), lost)
        set_tags(az, resource_group, first, {cloud_gang.TAG_REPAIR: cloud_gang.repair_mark(*mark)})
    number, paused_at, ranks = mark
    names = ", ".join(str(r) for r in ranks)
    if doc.get("round") == number and not doc.get("paused"):
        cloud_gang.publish_addresses(spec.checkpoint_uri, digest, doc.get("ips", []),
                                     number, paused=True)
    try:
        for rank in ranks:
            _replace(az, resource_group, spec, docs.get(rank), rank)
    except CapacityError as exc:
        _give_up(az, location, resource_group, gang, ranks)
        raise CapacityError(spec.offering, f"{exc.reason} (node {names}'s replacement): the "
                            "gang was ended") from None
    docs = node_docs(az, resource_group, gang)
    waited = time.time() - paused_at
    left, how = cloud_gang.read_left(spec.checkpoint_uri, digest)
    if left >= number and how != "paused":
        _give_up(az, location, resource_group, gang, ranks)
        return (f"node {names} was lost and rank 0's command ended by itself before it "
                "paused: the gang was ended")
    if left < number:
        if waited > cloud_gang.STOP_GRACE_SECONDS:
            _give_up(az, location, resource_group, gang, ranks)
            return f"node {names} was lost and the gang did not pause in time: it was ended"
        return (f"node {names} was lost: replaced in {location}, the other nodes kept; the "
                "gang pauses (rank 0 checkpoints)") if began else ""
    if any(cloud_gang.read_ready(spec.checkpoint_uri, digest, r) < number for r in ranks) \
            or any(r not in docs or az.instance(resource_group, docs[r]).state != "running"
                   for r in ranks):
        if waited > cloud_gang.REPAIR_READY_SECONDS:
            _give_up(az, location, resource_group, gang, ranks)
            return (f"node {names}'s replacement was not set up after {waited / 60:,.0f} "
                    "min: the gang was ended")
        return (f"node {names} was lost: replaced in {location}, the other nodes kept; "
                f"{GANG_RESUMES}") if began else ""
    ips = [address(az, resource_group, docs[r]) if r in docs else "" for r in range(count)]
    if not all(ips):
        return ""  # its address comes with its network interface: the next pass
    cloud_gang.publish_addresses(spec.checkpoint_uri, digest, ips, number + 1)
    set_tags(az, resource_group, first, {cloud_gang.TAG_REPAIR: ""})
    return (f"node {names} was lost: replaced in {location}, the other nodes kept; the gang "
            f"resumes from its newest checkpoint (round {number + 1})")


def _replace(az: Az, resource_group: str, spec: LaunchSpec, doc: Any, rank: int) -> None:
    """Node `rank` created again once its lost VM is gone; nothing when its replacement is
    there already (a costsched restarted midway)."""
    digest = cloud_gang.digest(spec.job_id, spec.attempt)
    name = azure_vm.node_name(spec.job_id, digest, rank)
    if doc is not None:
        if az.instance(resource_group, doc).state in ("pending", "running"):
            return
        az.delete_vm(name, group=resource_group)
    ppg = ""
    if az.placement != "off" and spec.offering.gpu_count > 0:
        ppg = _ppg_id(az, resource_group, placement_group(spec.job_id, digest))
    body = az.document(spec, name, node=cloud_gang.node_payload(spec, rank),
                       placement_group=ppg, security_group=az.ports_group(spec),
                       secret_refs=az.put_secrets(spec))  # the gang's, set again
    az.create(spec.offering, name, body)


def _ppg_id(az: Az, resource_group: str, name: str) -> str:
    _, missing = az.errors()
    try:
        return str(az.compute.proximity_placement_groups.get(resource_group, name)["id"])
    except missing:
        return ""


def _give_up(az: Az, location: str, resource_group: str, gang: str,
             ranks: Sequence[int]) -> None:
    """End the gang as after any loss: its replacements deleted, rank 0 asked to
    checkpoint and stop, the gang read as preempted once it had the time to."""
    job_id, _, digest = _parse(gang)
    first = rank0(gang)
    set_tags(az, resource_group, first, {cloud_gang.TAG_LOST: cloud_gang.lost_tag()})
    for rank in ranks:
        az.delete_vm(azure_vm.node_name(job_id, digest, rank), group=resource_group)
    with contextlib.suppress(RuntimeError):
        az.request_stop(az.handle(location, first, resource_group))


# --- ending ------------------------------------------------------------------------------

def _end(az: Az, names: Sequence[str], ppg: str) -> None:
    """A failed launch's VMs, then its proximity placement group."""
    for name in names:
        az.delete_vm(name)
    if ppg:
        _delete_ppg(az, az.group, ppg.rsplit("/", 1)[-1])


def _delete_ppg(az: Az, resource_group: str, name: str) -> None:
    _, missing = az.errors()
    with contextlib.suppress(missing):  # none made (placement off), or gone already
        az.compute.proximity_placement_groups.delete(resource_group, name)


def terminate(az: Az, location: str, resource_group: str, gang: str) -> None:
    """Every VM of the gang (each delete waited for), then its proximity placement group."""
    job_id, count, digest = _parse(gang)
    for rank in range(count):
        az.delete_vm(azure_vm.node_name(job_id, digest, rank), group=resource_group)
    if az.placement != "off":
        _delete_ppg(az, resource_group, placement_group(job_id, digest))
