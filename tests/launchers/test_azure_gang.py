"""Azure gangs against the loopback Resource Manager: N VMs in one proximity placement
group, all or nothing; a node lost while rank 0 runs replaced where it ran, the others
kept (launchers.cloud_gang's rounds); a gang ended as one."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.model import Offering
from launchers import cloud_gang
from launchers.base import CapacityError, LaunchSpec
from tests.launchers.azure_fake import Azure
from tests.launchers.test_azure import make

DIGEST = cloud_gang.digest(7, "launch-1")


def spec(tmp_path: Path, nodes: int = 2) -> LaunchSpec:
    return LaunchSpec(job_id=7, job_name="gang", command="torchrun train.py",
                      offering=Offering("azure", "eastus", "", "Standard_NC24ads_A100_v4",
                                        "spot", "A100", 1),
                      checkpoint_uri=str(tmp_path / "ckpt"), attempt="launch-1",
                      task={"num_nodes": nodes})


def node(rank: int) -> str:
    return f"costsched-7-{DIGEST}-{rank}"


def node_says(tmp_path: Path, rank: int, what: str) -> None:
    """What a node's agent writes beside the checkpoints (its gang file's own calls)."""
    doc = cloud_gang.StoreGangFile(str(tmp_path / "ckpt"), DIGEST, rank)
    if what == "left":
        doc.left(1, "paused")
    else:
        doc.ready()


def test_a_gang_is_n_vms_in_one_proximity_placement_group(azure: Azure,
                                                          tmp_path: Path) -> None:
    got = make(azure, tmp_path).launch(spec(tmp_path))

    assert got.id == f"eastus/costsched/gang-7-2-{DIGEST}" and got.state == "running"
    [ppg] = azure.arm.calls("PUT", "/proximityPlacementGroups/")
    assert ppg.json()["properties"]["proximityPlacementGroupType"] == "Standard"
    bodies = [r.json() for r in azure.arm.calls("PUT", "/virtualMachines/")]
    assert [b["tags"]["costsched-node"] for b in bodies] == ["0", "1"]
    assert {b["tags"]["costsched-gang"] for b in bodies} == {DIGEST}
    assert all(b["properties"]["proximityPlacementGroup"]["id"].endswith(
        f"proximityPlacementGroups/costsched-7-{DIGEST}") for b in bodies)
    ips = [n.address for n in make(azure, tmp_path).nodes(got.id)]
    assert all(ips) and cloud_gang.read_round(str(tmp_path / "ckpt"), DIGEST)["ips"] == ips
    assert [i.id for i in make(azure, tmp_path).instances(7)] == [got.id]  # one, by tags
    # The gang was made when its rank 0 was (a later node's creation says nothing).
    for vm in azure.arm.vms():
        rank = int(vm["tags"]["costsched-node"])
        vm["properties"]["timeCreated"] = f"2026-03-01T1{rank}:00:00.1234567+00:00"
    assert str(make(azure, tmp_path).status(got.id).created_at) == \
        "2026-03-01 10:00:00.123456+00:00"


def test_no_capacity_for_a_node_deletes_the_others(azure: Azure, tmp_path: Path) -> None:
    azure.arm.refuse[node(1)] = (409, "SkuNotAvailable")
    with pytest.raises(CapacityError, match="SkuNotAvailable"):
        make(azure, tmp_path).launch(spec(tmp_path))
    assert azure.arm.vms() == []
    assert azure.arm.calls("DELETE", "/proximityPlacementGroups/")


def test_a_lost_node_is_replaced_where_it_ran_and_the_gang_resumes(
        azure: Azure, tmp_path: Path) -> None:
    launcher = make(azure, tmp_path)
    got = launcher.launch(spec(tmp_path))
    uri = str(tmp_path / "ckpt")
    first_rank0 = azure.arm.vm(node(0))["properties"]["vmId"]
    azure.arm.evict(node(1))
    seen = launcher.status(got.id)
    assert (seen.state, seen.lost_nodes, seen.replacing) == ("running", (1,), ())

    azure.arm.pending.add(node(1))  # the replacement takes its time to provision
    said = launcher.repair_nodes(got.id, spec(tmp_path))
    assert "replaced in eastus" in said and "pauses" in said
    assert cloud_gang.read_round(uri, DIGEST)["paused"] is True
    assert len(azure.arm.calls("PUT", f"/virtualMachines/{node(1)}")) == 2
    assert azure.arm.vm(node(0))["tags"][cloud_gang.TAG_REPAIR].startswith("1 ")
    assert launcher.status(got.id).replacing == (1,)
    node_says(tmp_path, 0, "left")
    node_says(tmp_path, 1, "ready")
    assert launcher.repair_nodes(got.id, spec(tmp_path)) == ""  # still provisioning
    azure.arm.vm(node(1))["properties"]["provisioningState"] = "Succeeded"
    assert "round 2" in launcher.repair_nodes(got.id, spec(tmp_path))
    doc = cloud_gang.read_round(uri, DIGEST)
    assert (doc["round"], doc["paused"]) == (2, False) and all(doc["ips"])
    seen = launcher.status(got.id)
    assert (seen.state, seen.lost_nodes, seen.replacing) == ("running", (), ())
    assert azure.arm.vm(node(0))["properties"]["vmId"] == first_rank0  # kept
    assert azure.arm.vm(node(0))["tags"][cloud_gang.TAG_REPAIR] == ""


def test_no_capacity_for_the_replacement_ends_the_gang(azure: Azure, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    launcher = make(azure, tmp_path)
    got = launcher.launch(spec(tmp_path))
    azure.arm.evict(node(1))
    azure.arm.refuse[node(1)] = (409, "AllocationFailed")
    with pytest.raises(CapacityError, match="AllocationFailed"):
        launcher.repair_nodes(got.id, spec(tmp_path))
    assert cloud_gang.TAG_LOST in azure.arm.vm(node(0))["tags"]
    assert azure.arm.calls("POST", f"/virtualMachines/{node(0)}/runCommand")  # checkpoint
    assert launcher.status(got.id).state == "running"  # rank 0 checkpoints first
    monkeypatch.setattr(cloud_gang, "STOP_GRACE_SECONDS", 0.0)
    seen = launcher.status(got.id)
    assert seen.state == "preempted" and "node 1" in seen.detail


def test_terminate_deletes_every_node_then_the_group(azure: Azure, tmp_path: Path) -> None:
    launcher = make(azure, tmp_path)
    got = launcher.launch(spec(tmp_path))
    launcher.terminate(got.id)
    assert azure.arm.vms() == []
    deletes = [r.path.rsplit("/", 2)[-2] for r in azure.arm.calls("DELETE")]
    assert deletes == ["virtualMachines", "virtualMachines", "proximityPlacementGroups"]
    assert launcher.status(got.id).state == "terminated"
