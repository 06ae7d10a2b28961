"""The azure launcher against the loopback Resource Manager: the exact requests it sends
(the VM's document, its network, Run Command, deletes), how it reads VMs back (running,
evicted, deleted), capacity errors, adoption by tags, and what it refuses."""

from __future__ import annotations

import base64
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from costsched.clouds import azure as azure_cloud
from costsched.clouds.azure_sdk import AzureClients
from costsched.config import AzureConfig
from costsched.model import InvalidInput, Offering
from launchers import heartbeats
from launchers.azure import STOP_COMMAND, AzureLauncher
from launchers.base import CapacityError, LaunchSpec
from launchers.userdata import read_payload
from tests.launchers.azure_fake import SUBSCRIPTION, Azure, StaticToken

IDENTITY = (f"/subscriptions/{SUBSCRIPTION}/resourceGroups/costsched/providers/"
            "Microsoft.ManagedIdentity/userAssignedIdentities/checkpoints")
KEY = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 nobody"


def make(azure: Azure, tmp_path: Path, **settings: Any) -> AzureLauncher:
    key = tmp_path / "key.pub"
    key.write_text(KEY)
    clients = AzureClients(SUBSCRIPTION, StaticToken(), endpoint=azure.url, poll_seconds=0.01)
    config = AzureConfig(**{"ssh_public_key": str(key), "identity": IDENTITY, **settings})
    return AzureLauncher(clients=clients, settings=config, gang_placement="auto")


def offering(market: str = "spot", region: str = "eastus", zone: str = "",
             size: str = "Standard_NC6s_v3") -> Offering:
    return Offering(cloud="azure", region=region, zone=zone, instance_type=size,
                    market=market, gpu_model="V100", gpu_count=1, vcpus=6, memory_gb=112.0)


def spec(market: str = "spot", **fields: Any) -> LaunchSpec:
    base = dict(job_id=7, job_name="train", command="python train.py", offering=offering(market),
                checkpoint_uri="az://ckpt/jobs/job-7", attempt="move-1-0")
    return LaunchSpec(**{**base, **fields})


def test_a_spot_vm_is_one_documented_put_with_its_network_made_once(
        azure: Azure, tmp_path: Path) -> None:
    launcher = make(azure, tmp_path)
    instance = launcher.launch(spec())

    name = instance.id.rsplit("/", 1)[1]
    assert instance.id == f"eastus/costsched/{name}" and instance.state == "running"
    assert (instance.job_id, instance.attempt) == (7, "move-1-0")
    assert instance.offering_key == ("azure", "eastus", "", "Standard_NC6s_v3", "spot", "linux")
    calls = [(r.method, r.path.split("/providers/")[-1]) for r in azure.arm.requests]
    assert calls == [
        ("GET", "Microsoft.Network/virtualNetworks/costsched-eastus"),  # none yet
        ("PUT", "Microsoft.Network/virtualNetworks/costsched-eastus"),
        ("GET", "Microsoft.Network/locations/eastus/operations/op-1"),
        ("GET", "Microsoft.Network/virtualNetworks/costsched-eastus"),  # its final state
        ("PUT", f"Microsoft.Compute/virtualMachines/{name}"),
        ("GET", "Microsoft.Compute/locations/eastus/operations/op-4"),
        ("GET", f"Microsoft.Compute/virtualMachines/{name}"),
        ("GET", f"Microsoft.Compute/virtualMachines/{name}"),  # status, with instance view
    ]
    assert all(r.query["api-version"] for r in azure.arm.requests)
    vnet = azure.arm.calls("PUT", "/virtualNetworks/")[0].json()
    assert vnet["location"] == "eastus"
    assert vnet["properties"]["subnets"][0]["properties"]["addressPrefix"] == "10.8.0.0/20"
    body = azure.arm.calls("PUT", "/virtualMachines/")[0].json()
    props = body["properties"]
    assert body["location"] == "eastus" and "zones" not in body
    assert body["identity"] == {"type": "UserAssigned", "userAssignedIdentities": {IDENTITY: {}}}
    assert body["tags"]["costsched-job"] == "7" and body["tags"]["costsched-attempt"] == "move-1-0"
    assert body["tags"]["costsched-offering"] == "azure|eastus||Standard_NC6s_v3|spot|linux"
    assert (props["priority"], props["evictionPolicy"]) == ("Spot", "Delete")
    assert props["billingProfile"] == {"maxPrice": -1}  # never evicted for price
    assert props["hardwareProfile"] == {"vmSize": "Standard_NC6s_v3"}
    assert props["storageProfile"]["imageReference"] == {
        "publisher": "microsoft-dsvm", "offer": "ubuntu-hpc", "sku": "2204", "version": "latest"}
    assert props["storageProfile"]["osDisk"]["deleteOption"] == "Delete"
    nic = props["networkProfile"]["networkInterfaceConfigurations"][0]["properties"]
    assert nic["deleteOption"] == "Delete"
    ip = nic["ipConfigurations"][0]["properties"]
    assert ip["subnet"]["id"].endswith("/virtualNetworks/costsched-eastus/subnets/default")
    assert ip["publicIPAddressConfiguration"]["properties"]["deleteOption"] == "Delete"
    os_profile = props["osProfile"]
    assert os_profile["linuxConfiguration"]["disablePasswordAuthentication"] is True
    assert os_profile["linuxConfiguration"]["ssh"]["publicKeys"][0]["keyData"] == KEY
    script = base64.b64decode(os_profile["customData"]).decode()
    assert script.startswith("#!/bin/bash")  # cloud-init runs it at first boot
    job = read_payload(script)
    assert job["notice_url"] == azure_cloud.SCHEDULED_EVENTS_URL
    # the agent runs under its supervisor, as on the other clouds: a dead one is started
    # again (a systemd unit, else the script's own loop), its job never twice
    assert '"$root/bin/python" -m launchers.agent_supervisor "$launch"' in script
    assert "ExecStart=@ROOT@/bin/python -m launchers.agent_supervisor" in job["unit"]
    # The VM is given the account's URL: it needs no configuration to find the store.
    assert job["checkpoint_uri"] == "https://costschedckpt.blob.core.windows.net/ckpt/jobs/job-7"
    assert body["tags"]["costsched-checkpoints"] == job["checkpoint_uri"]

    launcher.launch(spec(attempt="move-2-0"))  # another VM in eastus: the same network
    assert len(azure.arm.calls("PUT", "/virtualNetworks/")) == 1


def test_on_demand_and_a_capped_spot_vm(azure: Azure, tmp_path: Path) -> None:
    launcher = make(azure, tmp_path)
    launcher.launch(spec("on_demand"))
    launcher.launch(spec(attempt="move-2-0", max_usd_per_hour=0.75,
                         offering=offering(zone="2")))

    regular, capped = (r.json() for r in azure.arm.calls("PUT", "/virtualMachines/"))
    assert regular["properties"]["priority"] == "Regular"
    assert "evictionPolicy" not in regular["properties"]
    assert "billingProfile" not in regular["properties"]
    assert capped["properties"]["billingProfile"] == {"maxPrice": 0.75}  # the job's cap
    assert capped["zones"] == ["2"]


def test_no_capacity_is_a_capacity_error_and_leaves_no_vm(azure: Azure, tmp_path: Path) -> None:
    launcher = make(azure, tmp_path)
    first = spec()
    name = launcher.document(first, "x")["properties"]["osProfile"]["computerName"]
    from launchers.azure_vm import vm_name

    azure.arm.refuse[vm_name(7, "move-1-0")] = (409, "SkuNotAvailable")
    with pytest.raises(CapacityError, match="SkuNotAvailable"):
        launcher.launch(first)
    azure.arm.fail[vm_name(7, "move-2-0")] = "AllocationFailed"  # said by the operation
    with pytest.raises(CapacityError, match="AllocationFailed") as caught:
        launcher.launch(spec(attempt="move-2-0"))
    assert caught.value.offering.instance_type == "Standard_NC6s_v3" and name == "x"
    assert azure.arm.calls("DELETE", vm_name(7, "move-2-0"))  # the failed VM is deleted
    assert azure.arm.vms() == []
    azure.arm.refuse[vm_name(7, "move-3-0")] = (400, "InvalidParameter")
    with pytest.raises(RuntimeError, match="InvalidParameter") as other:
        launcher.launch(spec(attempt="move-3-0"))
    assert not isinstance(other.value, CapacityError)


def test_the_same_attempt_is_the_same_vm_and_is_adopted_by_its_tags(
        azure: Azure, tmp_path: Path) -> None:
    first = make(azure, tmp_path).launch(spec())
    again = make(azure, tmp_path)  # a costsched started again
    assert [(i.id, i.attempt) for i in again.instances(7)] == [(first.id, "move-1-0")]
    assert again.instances(8) == []
    assert again.launch(spec()).id == first.id  # the PUT of the same VM: no second one
    assert len(azure.arm.vms()) == 1
    # Resource Manager's timeCreated (seven digits of fraction), read as UTC.
    [vm] = azure.arm.vms()
    made = vm["properties"]["timeCreated"]
    assert again.status(first.id).created_at == datetime.fromisoformat(made)
    assert again.status(first.id).created_at.utcoffset() == timedelta(0)


def test_statuses_read_one_list_and_name_evictions(azure: Azure, tmp_path: Path) -> None:
    launcher = make(azure, tmp_path)
    running = launcher.launch(spec())
    evicted = launcher.launch(spec(attempt="move-2-0"))
    deleted = launcher.launch(spec(attempt="move-3-0"))
    launcher.terminate(deleted.id)
    azure.arm.evict(evicted.id.rsplit("/", 1)[1])
    azure.arm.requests.clear()

    seen = launcher.statuses([running.id, evicted.id, deleted.id, "not/a handle"])

    assert {i: s.state for i, s in seen.items()} == {
        running.id: "running", evicted.id: "preempted", deleted.id: "terminated"}
    assert "evict" in seen[evicted.id].detail
    assert [r.method for r in azure.arm.requests] == ["GET"]  # one list of the group
    assert launcher.status(evicted.id).state == "preempted"


def test_stop_is_run_command_and_terminate_deletes(azure: Azure, tmp_path: Path) -> None:
    launcher = make(azure, tmp_path)
    instance = launcher.launch(spec())
    launcher.request_stop(instance.id)
    [run] = azure.arm.calls("POST", "/runCommand")
    assert run.json() == {"commandId": "RunShellScript", "script": [STOP_COMMAND]}
    launcher.terminate(instance.id)
    launcher.terminate(instance.id)  # gone already: fine
    assert launcher.status(instance.id).state == "terminated"
    with pytest.raises(InvalidInput, match="LOCATION/RESOURCE_GROUP/NAME"):
        launcher.status("us-east-1/i-0123")


def test_a_missing_resource_group_is_said_or_made(azure: Azure, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="resource group jobs does not exist: `az group "
                       "create -n jobs -l eastus`"):
        make(azure, tmp_path, resource_group="jobs").launch(spec())
    launcher = make(azure, tmp_path, resource_group="jobs", create_resource_group=True,
                    location="westus2")
    instance = launcher.launch(spec())
    assert instance.id.startswith("eastus/jobs/costsched-7-")
    [made] = [r for r in azure.arm.calls("PUT") if r.path.lower().endswith("/resourcegroups/jobs")]
    assert made.json()["location"] == "westus2"


def test_ports_open_through_a_security_group_of_the_job(azure: Azure, tmp_path: Path) -> None:
    make(azure, tmp_path).launch(spec(task={"ports": ["8080", "9000-9005"]}))
    [group] = azure.arm.calls("PUT", "/networkSecurityGroups/costsched-7-ports-eastus")
    rules = [r["properties"] for r in group.json()["properties"]["securityRules"]]
    assert [(r["destinationPortRange"], r["access"], r["direction"]) for r in rules] == [
        ("8080", "Allow", "Inbound"), ("9000-9005", "Allow", "Inbound")]
    body = azure.arm.calls("PUT", "/virtualMachines/")[0].json()
    nic = body["properties"]["networkProfile"]["networkInterfaceConfigurations"][0]
    assert nic["properties"]["networkSecurityGroup"]["id"].endswith("costsched-7-ports-eastus")


def test_secrets_without_a_vault_and_bad_images_are_refused_in_one_line(
        azure: Azure, tmp_path: Path) -> None:
    launcher = make(azure, tmp_path)
    with pytest.raises(InvalidInput, match="secret HF_TOKEN cannot reach .* set azure.key_vault"):
        launcher.launch(spec(envs={"HF_TOKEN": "x"}, secret_names=("HF_TOKEN",)))
    with pytest.raises(InvalidInput, match="azure image 'ubuntu': expected PUBLISHER:OFFER"):
        launcher.launch(spec(task={"image_id": "ubuntu"}))
    assert azure.arm.vms() == []


def test_logs_are_the_serial_console_of_boot_diagnostics(azure: Azure, tmp_path: Path) -> None:
    launcher = make(azure, tmp_path)
    instance = launcher.launch(spec())
    azure.arm.serial[instance.id.rsplit("/", 1)[1]] = "\n".join(f"line {i}" for i in range(9))
    assert launcher.logs(instance.id, tail=2) == "line 7\nline 8"
    assert azure.arm.calls("POST", "/retrieveBootDiagnosticsData")


def test_a_wedged_vm_is_deleted_a_fresh_one_left_alone(azure: Azure, tmp_path: Path) -> None:
    launcher = make(azure, tmp_path)
    instance = launcher.launch(spec())
    uri = "https://costschedckpt.blob.core.windows.net/ckpt/jobs/job-7"
    heartbeats.publish(uri, "move-1-0", {"pid": 1, "at": time.time()})
    assert launcher.recover_agent(instance.id) is False
    heartbeats.publish(uri, "move-1-0", {"pid": 1, "at": time.time() - 3600})
    assert launcher.recover_agent(instance.id) is True
    assert launcher.status(instance.id).state == "terminated"
    assert [n for n in azure.blob.containers["ckpt"] if "move-1-0" in n]  # in the store
