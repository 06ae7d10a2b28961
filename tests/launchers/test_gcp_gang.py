"""Compute Engine gangs against a fake InstancesClient and ResourcePoliciesClient that keep
the exact request objects the SDK would send: N inserts of one zone with the same labels and
startup script but for the rank, the compact placement policy, all-or-nothing deletes when a
node meets no capacity, a lost node, and termination of every node."""

from __future__ import annotations

from pathlib import Path

import pytest

compute_v1 = pytest.importorskip("google.cloud.compute_v1")
from google.api_core import exceptions  # noqa: E402

from costsched.model import InvalidInput, Offering  # noqa: E402
from launchers import cloud_gang, gcp_gang  # noqa: E402
from launchers.base import TAG_ATTEMPT, TAG_JOB, CapacityError, LaunchSpec  # noqa: E402
from launchers.gcp import META_SPEC, META_STOP, GcpLauncher  # noqa: E402
from launchers.userdata import read_payload  # noqa: E402
from tests.launchers.test_gcp import FakeInstances, Operation  # noqa: E402

A2 = "a2-highgpu-1g"
N1 = "n1-standard-8+1xnvidia-tesla-v100"


class GangInstances(FakeInstances):
    """FakeInstances that gives each inserted instance its internal address, as Compute
    Engine does once the insert is done, and fails the n-th insert when asked."""

    def __init__(self) -> None:
        super().__init__()
        self.fail_nth: tuple[int, Exception] | None = None

    def insert(self, request: compute_v1.InsertInstanceRequest) -> Operation:
        if self.fail_nth is not None and len(self.inserted) + 1 == self.fail_nth[0]:
            self.inserted.append(request)
            return Operation(self.fail_nth[1])
        done = super().insert(request)
        made = self.store.get((request.zone, request.instance_resource.name))
        if made is not None and not made.network_interfaces[0].network_i_p:
            made.network_interfaces[0].network_i_p = f"10.128.0.{len(self.store) + 1}"
        return done


class FakePolicies:
    """ResourcePoliciesClient's insert and delete, keeping the requests."""

    def __init__(self) -> None:
        self.inserted: list[tuple[str, str, compute_v1.ResourcePolicy]] = []
        self.deleted: list[tuple[str, str, str]] = []
        self.names: set[str] = set()

    def insert(self, *, project: str, region: str,
               resource_policy_resource: compute_v1.ResourcePolicy) -> Operation:
        self.inserted.append((project, region, resource_policy_resource))
        if resource_policy_resource.name in self.names:
            return Operation(exceptions.Conflict("already exists"))
        self.names.add(resource_policy_resource.name)
        return Operation()

    def delete(self, *, project: str, region: str, resource_policy: str) -> Operation:
        self.deleted.append((project, region, resource_policy))
        if resource_policy not in self.names:
            return Operation(exceptions.NotFound(f"{resource_policy} not found"))
        self.names.discard(resource_policy)
        return Operation()


def spec(tmp_path: Path, instance_type: str = A2, nodes: int = 2,
         attempt: str = "launch-1") -> LaunchSpec:
    gpu = "A100" if instance_type == A2 else "V100"
    return LaunchSpec(job_id=7, job_name="gang", command="torchrun train.py",
                      offering=Offering("gcp", "us-central1", "us-central1-a", instance_type,
                                        "spot", gpu, 1),
                      checkpoint_uri=str(tmp_path / "ckpt"), attempt=attempt,
                      envs={"LR": "0.1"}, task={"num_nodes": nodes})


@pytest.fixture
def fake() -> GangInstances:
    return GangInstances()


@pytest.fixture
def policies() -> FakePolicies:
    return FakePolicies()


@pytest.fixture
def launcher(fake: GangInstances, policies: FakePolicies) -> GcpLauncher:
    return GcpLauncher(project="proj", instances_client=fake, policies_client=policies,
                       service_account="runner@proj.iam.gserviceaccount.com",
                       gang_placement="auto")


def test_two_node_inserts_labels_metadata_and_compact_policy(tmp_path, fake, policies,
                                                            launcher) -> None:
    got = launcher.launch(spec(tmp_path))
    digest = cloud_gang.digest(7, "launch-1")
    assert got.id == f"us-central1-a/gang-7-2-{digest}"
    assert got.state == "pending" and got.offering_key == spec(tmp_path).offering.key
    # The compact placement policy, made first, for 2 VMs.
    policy_name = f"costsched-7-{digest}"
    assert policies.inserted == [("proj", "us-central1", compute_v1.ResourcePolicy(
        name=policy_name, description="costsched job 7: its gang's nodes close together",
        group_placement_policy=compute_v1.ResourcePolicyGroupPlacementPolicy(
            collocation="COLLOCATED", vm_count=2)))]
    # Two inserts in one zone, one offering, the same labels but for the rank.
    assert [(r.project, r.zone) for r in fake.inserted] == [("proj", "us-central1-a")] * 2
    assert len({r.request_id for r in fake.inserted}) == 2
    bodies = [r.instance_resource for r in fake.inserted]
    assert [b.name for b in bodies] == [f"costsched-7-{digest}-0", f"costsched-7-{digest}-1"]
    assert {b.machine_type for b in bodies} == {"zones/us-central1-a/machineTypes/" + A2}
    for rank, body in enumerate(bodies):
        assert dict(body.labels) == {TAG_JOB: "7", TAG_ATTEMPT: "launch-1",
                                     cloud_gang.TAG_GANG: digest,
                                     cloud_gang.TAG_NODE: str(rank),
                                     cloud_gang.TAG_NODES: "2"}
        assert list(body.resource_policies) == [
            f"projects/proj/regions/us-central1/resourcePolicies/{policy_name}"]
        assert body.scheduling.provisioning_model == "SPOT"
    items = [{i.key: i.value for i in b.metadata.items} for b in bodies]
    assert items[0][META_SPEC] == items[1][META_SPEC]
    payloads = [read_payload(i["startup-script"]) for i in items]
    assert [p.pop("gang") for p in payloads] == [
        {"rank": 0, "nodes": 2, "gpus": 1, "digest": digest},
        {"rank": 1, "nodes": 2, "gpus": 1, "digest": digest}]
    assert payloads[0] == payloads[1]
    # The nodes' internal addresses beside the checkpoints, rank 0 first.
    ips = [fake.store[("us-central1-a", b.name)].network_interfaces[0].network_i_p
           for b in bodies]
    assert cloud_gang.read_addresses(str(tmp_path / "ckpt"), digest) == ips
    for made in fake.store.values():
        made.status = "RUNNING"
    assert launcher.status(got.id).state == "running"
    # The gang was made when its rank 0 was (a later node's creation says nothing).
    fake.store[("us-central1-a", bodies[0].name)].creation_timestamp = \
        "2026-03-01T04:00:00.000-08:00"
    fake.store[("us-central1-a", bodies[1].name)].creation_timestamp = \
        "2026-03-01T13:00:00.000+00:00"
    assert str(launcher.status(got.id).created_at) == "2026-03-01 12:00:00+00:00"
    assert [(n.rank, n.state, n.address) for n in launcher.nodes(got.id)] == [
        (0, "running", ips[0]), (1, "running", ips[1])]
    assert [i.id for i in launcher.instances(7)] == [got.id]
    assert launcher.statuses([got.id])[got.id].state == "running"


def test_no_compact_policy_for_n1_or_when_off(tmp_path, fake, policies) -> None:
    auto = GcpLauncher(project="proj", instances_client=fake, policies_client=policies,
                       gang_placement="auto")
    auto.launch(spec(tmp_path, N1))
    off = GcpLauncher(project="proj", instances_client=fake, policies_client=policies,
                      gang_placement="off")
    off.launch(spec(tmp_path, A2, attempt="launch-2"))
    assert policies.inserted == []
    assert all(not r.instance_resource.resource_policies for r in fake.inserted)
    assert len(fake.inserted) == 4


def test_no_capacity_for_the_second_node_deletes_the_first(tmp_path, fake, policies,
                                                          launcher) -> None:
    fake.fail_nth = (2, exceptions.from_http_status(
        400, "The zone does not have enough resources available",
        errors=[compute_v1.Errors(code="ZONE_RESOURCE_POOL_EXHAUSTED", message="details")]))
    with pytest.raises(CapacityError) as caught:
        launcher.launch(spec(tmp_path))
    assert "ZONE_RESOURCE_POOL_EXHAUSTED" in caught.value.reason
    assert "node 1 of 2" in caught.value.reason and "\n" not in str(caught.value)
    digest = cloud_gang.digest(7, "launch-1")
    assert fake.deleted == [("proj", "us-central1-a", f"costsched-7-{digest}-0")]
    assert fake.store == {}  # nothing left running, nor billed
    assert policies.deleted == [("proj", "us-central1", f"costsched-7-{digest}")]
    assert policies.names == set()


def node_says(tmp_path: Path, rank: int, what: str) -> None:
    """What a node's agent writes beside the checkpoints (its gang file's own calls)."""
    doc = cloud_gang.StoreGangFile(str(tmp_path / "ckpt"), cloud_gang.digest(7, "launch-1"),
                                   rank)
    if what == "left":
        doc.left(1, "paused")
    else:
        doc.ready()


def test_a_lost_node_is_inserted_again_alone_and_the_gang_resumes(tmp_path, fake,
                                                                  launcher) -> None:
    got = launcher.launch(spec(tmp_path))
    digest = cloud_gang.digest(7, "launch-1")
    uri = str(tmp_path / "ckpt")
    for made in fake.store.values():
        made.status = "RUNNING"
    rank0 = fake.store[("us-central1-a", f"costsched-7-{digest}-0")]
    del fake.store[("us-central1-a", f"costsched-7-{digest}-1")]  # preempted: deleted
    seen = launcher.status(got.id)
    assert (seen.state, seen.lost_nodes, seen.replacing) == ("running", (1,), ())
    assert META_STOP not in {i.key for i in rank0.metadata.items}  # rank 0 runs on
    said = launcher.repair_nodes(got.id, spec(tmp_path))
    assert "replaced in us-central1-a" in said
    assert cloud_gang.read_round(uri, digest)["paused"] is True
    # The exact insert of the replacement: node 1's, but for its request id.
    assert len(fake.inserted) == 3 and len(fake.store) == 2
    again, first = fake.inserted[2], fake.inserted[1]
    assert (again.project, again.zone) == ("proj", "us-central1-a")
    assert again.instance_resource == first.instance_resource
    assert again.request_id not in {r.request_id for r in fake.inserted[:2]}
    assert launcher.status(got.id).replacing == (1,)
    node_says(tmp_path, 0, "left")
    node_says(tmp_path, 1, "ready")
    assert launcher.repair_nodes(got.id, spec(tmp_path)) == ""  # still provisioning
    assert cloud_gang.read_round(uri, digest)["round"] == 1
    fake.store[("us-central1-a", f"costsched-7-{digest}-1")].status = "RUNNING"
    assert "round 2" in launcher.repair_nodes(got.id, spec(tmp_path))
    assert len(fake.inserted) == 3 and len(fake.store) == 2
    ips = [n.address for n in launcher.nodes(got.id)]
    assert all(ips)
    assert cloud_gang.read_round(uri, digest) == {"round": 2, "paused": False, "nodes": 2,
                                                  "ips": ips}
    seen = launcher.status(got.id)
    assert (seen.state, seen.lost_nodes, seen.replacing) == ("running", (), ())
    assert fake.store[("us-central1-a", f"costsched-7-{digest}-0")] is rank0  # kept


def test_no_capacity_for_the_replacement_ends_the_gang(tmp_path, fake, launcher,
                                                       monkeypatch) -> None:
    got = launcher.launch(spec(tmp_path))
    digest = cloud_gang.digest(7, "launch-1")
    for made in fake.store.values():
        made.status = "RUNNING"
    del fake.store[("us-central1-a", f"costsched-7-{digest}-1")]
    fake.fail_nth = (3, exceptions.from_http_status(
        400, "The zone does not have enough resources available",
        errors=[compute_v1.Errors(code="ZONE_RESOURCE_POOL_EXHAUSTED", message="details")]))
    with pytest.raises(CapacityError) as caught:
        launcher.repair_nodes(got.id, spec(tmp_path))
    assert "ZONE_RESOURCE_POOL_EXHAUSTED" in caught.value.reason
    rank0 = fake.store[("us-central1-a", f"costsched-7-{digest}-0")]
    items = {i.key: i.value for i in rank0.metadata.items}
    assert items[META_STOP] == "TRUE" and cloud_gang.TAG_LOST in items
    assert len(fake.store) == 1
    assert launcher.repair_nodes(got.id, spec(tmp_path)) == ""
    assert launcher.status(got.id).state == "running"  # rank 0 checkpoints
    monkeypatch.setattr(cloud_gang, "STOP_GRACE_SECONDS", 0.0)
    seen = launcher.status(got.id)
    assert seen.state == "preempted" and "node 1" in seen.detail


def test_terminate_deletes_every_node_then_the_policy(tmp_path, fake, policies,
                                                      launcher) -> None:
    got = launcher.launch(spec(tmp_path, nodes=3))
    launcher.terminate(got.id)
    digest = cloud_gang.digest(7, "launch-1")
    assert fake.deleted == [("proj", "us-central1-a", f"costsched-7-{digest}-{r}")
                            for r in range(3)]
    assert fake.store == {} and policies.names == set()
    seen = launcher.status(got.id)
    assert seen.state == "terminated" and not seen.live
    assert [n.state for n in launcher.nodes(got.id)] == ["terminated"] * 3
    launcher.terminate(got.id)  # idempotent


def test_request_stop_of_a_gang_flags_rank_0(tmp_path, fake, launcher) -> None:
    got = launcher.launch(spec(tmp_path))
    launcher.request_stop(got.id)
    [flagged] = fake.metadata_set
    assert {i.key: i.value for i in flagged.items}[META_STOP] == "TRUE"
    digest = cloud_gang.digest(7, "launch-1")
    rank1 = fake.store[("us-central1-a", f"costsched-7-{digest}-1")]
    assert META_STOP not in {i.key for i in rank1.metadata.items}


def test_gang_node_names_fit_compute_engine() -> None:
    name = gcp_gang.node_name(10**17, "0123456789ab", 63)
    assert len(name) <= 63


def test_statuses_of_gangs_in_one_list_and_a_gang_with_no_node_left(tmp_path, fake,
                                                                   launcher) -> None:
    kept = launcher.launch(spec(tmp_path, attempt="kept"))
    gone = launcher.launch(spec(tmp_path, attempt="gone"))
    for made in fake.store.values():
        made.status = "RUNNING"
    digest = cloud_gang.digest(7, "gone")
    for rank in (0, 1):  # both spot nodes preempted: Compute Engine deleted them
        del fake.store[("us-central1-a", f"costsched-7-{digest}-{rank}")]
    fake.listed.clear()
    seen = launcher.statuses([kept.id, gone.id, "us-central1-a/gang-x"])
    assert len(fake.listed) == 1  # one aggregated list for every gang
    assert seen[kept.id].state == "running"
    assert seen[gone.id].state == "preempted" and not seen[gone.id].live
    assert set(seen) == {kept.id, gone.id}


def test_logs_of_a_node_are_its_serial_console(tmp_path, fake, launcher,
                                               monkeypatch) -> None:
    got = launcher.launch(spec(tmp_path))
    digest = cloud_gang.digest(7, "launch-1")
    asked = []

    def serial(*, project: str, zone: str, instance: str) -> compute_v1.SerialPortOutput:
        asked.append((project, zone, instance))
        if (zone, instance) not in fake.store:
            raise exceptions.NotFound(instance)
        return compute_v1.SerialPortOutput(contents=f"boot\n{instance} says hi\n")

    monkeypatch.setattr(fake, "get_serial_port_output", serial, raising=False)
    assert launcher.logs(got.id, tail=1, node=1) == f"costsched-7-{digest}-1 says hi"
    assert launcher.logs(got.id) == f"boot\ncostsched-7-{digest}-0 says hi"
    assert asked[0] == ("proj", "us-central1-a", f"costsched-7-{digest}-1")
    with pytest.raises(InvalidInput, match="no node 2"):
        launcher.logs(got.id, node=2)
    launcher.terminate(got.id)
    assert launcher.logs(got.id) == ""


TASK = """\
name: gang-recovers
num_nodes: 2
resources:
  infra: gcp/us-central1
  accelerators: A100:1
  use_spot: true
run: python train.py
"""


def test_through_the_service_no_capacity_to_replace_a_node_brings_a_new_gang(
        tmp_path, fake, launcher, monkeypatch) -> None:
    import pandas as pd

    from costsched.service import jobs as service
    from costsched.store import PriceStore

    at = pd.Timestamp("2026-01-01T00:00:00Z").to_pydatetime()
    store = PriceStore(f"sqlite:///{tmp_path / 'store.sqlite'}")
    store.ingest(pd.DataFrame([dict(
        cloud="gcp", region="us-central1", zone="us-central1-a", instance_type=A2,
        market="spot", os="linux", gpu_model="A100", gpu_count=1, vcpus=12, memory_gb=85.0,
        usd_per_hour=1.2, effective_at=at, source="test")]))
    path = tmp_path / "task.yaml"
    path.write_text(TASK)
    [job] = service.launch(store, [path], launcher=launcher, at=at,
                           checkpoint_root=str(tmp_path / "ckpts"))
    first = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    assert "/gang-" in first and len(fake.store) == 2
    for made in fake.store.values():
        made.status = "RUNNING"
    assert service.reconcile(store, launcher) == ["job 1: launch target_launched -> done"]
    rank1 = launcher.nodes(first)[1].id.split("/")[1]
    del fake.store[("us-central1-a", rank1)]  # preempted: Compute Engine deleted it
    fake.fail_nth = (3, exceptions.from_http_status(  # and no capacity to insert it again
        400, "The zone does not have enough resources available",
        errors=[compute_v1.Errors(code="ZONE_RESOURCE_POOL_EXHAUSTED", message="details")]))
    [said] = service.reconcile(store, launcher)  # rank 0 checkpoints first
    assert said.endswith("the gang was ended, to move where its nodes fit"), said
    assert "node 1 could not be replaced in us-" in said, said
    fake.fail_nth = None
    monkeypatch.setattr(cloud_gang, "STOP_GRACE_SECONDS", 0.0)
    done = service.reconcile(store, launcher)
    assert any("preempted; recovery" in line for line in done), done
    second = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    assert second != first and "/gang-" in second
    assert len(fake.store) == 2  # the new gang's two nodes; the old ones deleted
    assert [n.state for n in launcher.nodes(first)] == ["terminated", "terminated"]
    assert [i.id for i in launcher.instances(job.id)] == [second]
    store.dispose()


def test_through_the_service_a_preempted_node_is_replaced_in_place(tmp_path, fake,
                                                                   launcher) -> None:
    import pandas as pd

    from costsched.service import jobs as service
    from costsched.store import PriceStore

    at = pd.Timestamp("2026-01-01T00:00:00Z").to_pydatetime()
    store = PriceStore(f"sqlite:///{tmp_path / 'store.sqlite'}")
    store.ingest(pd.DataFrame([dict(
        cloud="gcp", region="us-central1", zone="us-central1-a", instance_type=A2,
        market="spot", os="linux", gpu_model="A100", gpu_count=1, vcpus=12, memory_gb=85.0,
        usd_per_hour=1.2, effective_at=at, source="test")]))
    path = tmp_path / "task.yaml"
    path.write_text(TASK)
    [job] = service.launch(store, [path], launcher=launcher, at=at,
                           checkpoint_root=str(tmp_path / "ckpts"))
    first = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    for made in fake.store.values():
        made.status = "RUNNING"
    service.reconcile(store, launcher)
    rank0 = launcher.nodes(first)[0].id
    rank1 = launcher.nodes(first)[1].id.split("/")[1]
    del fake.store[("us-central1-a", rank1)]  # preempted: Compute Engine deleted it
    [said] = service.reconcile(store, launcher)  # the replacement, said once
    assert "node 1 was lost: replaced in us-central1-a, the other nodes kept" in said, said
    assert len(fake.inserted) == 3 and len(fake.store) == 2  # one replacement, N alive
    assert fake.inserted[2].instance_resource == fake.inserted[1].instance_resource
    uri = store.jobs.get(job.id).checkpoint_location
    digest = cloud_gang.digest(job.id, launcher.status(first).attempt)
    cloud_gang.StoreGangFile(uri, digest, 0).left(1, "paused")
    cloud_gang.StoreGangFile(uri, digest, 1).ready()
    fake.store[("us-central1-a", rank1)].status = "RUNNING"
    service.reconcile(store, launcher)
    assert cloud_gang.read_round(uri, digest)["round"] == 2
    assert str(store.jobs.placements(job.id)["instance"].iloc[-1]) == first
    assert launcher.nodes(first)[0].id == rank0
    assert [n.state for n in launcher.nodes(first)] == ["running", "running"]
    assert launcher.status(first).state == "running"
    store.dispose()
