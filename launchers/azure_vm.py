"""An Azure VM as costsched asks for it: its name, tags and the Resource Manager document of
`PUT .../virtualMachines/{name}` (learn.microsoft.com, "Virtual Machines - Create Or
Update"), with its network interface and public address made with it and deleted with it
(deleteOption Delete), so that a Spot VM evicted with eviction policy Delete leaves nothing
behind. Pure functions: no SDK, no call.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from collections.abc import Mapping
from typing import Any

from costsched.clouds import azure as azure_cloud
from costsched.model import InvalidInput
from launchers import cloud_gang, task_resources
from launchers.base import TAG_ATTEMPT, TAG_JOB, LaunchSpec
from launchers.cloud_steps import tag_value

TAG_OFFERING = "costsched-offering"  # the offering's key, "|"-joined
ADMIN = "costsched"
NETWORK_API = "2020-11-01"  # the Microsoft.Network version the VM's inline NIC is made with
# Managed disk kinds by a task's disk_tier (the OS disk: Ultra and Premium v2 cannot be one).
DISK_TIERS = {"low": "Standard_LRS", "medium": "StandardSSD_LRS", "high": "Premium_LRS",
              "ultra": "Premium_LRS", "best": "Premium_LRS"}
_TAG_NAME = re.compile(r"[<>%&\\?/]")  # characters Azure refuses in a tag's name


def vm_name(job_id: int, attempt: str) -> str:
    """A VM name (and Linux computer name: 64 characters at most) unique per (job, attempt)."""
    digest = hashlib.sha256(f"costsched:{job_id}:{attempt}".encode()).hexdigest()[:12]
    return f"costsched-{job_id}-{digest}"


def job_of(name: str) -> int:
    """The job a VM's name (`vm_name`, `node_name`) says; -1 when it says none."""
    part = name.split("-")[1] if name.count("-") >= 2 else ""
    return int(part) if part.isdigit() else -1


def node_name(job_id: int, gang_digest: str, rank: int) -> str:
    """The VM of a gang's node `rank`."""
    return f"costsched-{job_id}-{gang_digest}-{rank}"


def image_reference(image: str) -> dict[str, str]:
    """An image as Resource Manager takes it: PUBLISHER:OFFER:SKU:VERSION (a Marketplace
    URN) or a resource id (/subscriptions/.../images/... or a gallery image version)."""
    if image.startswith("/subscriptions/"):
        return {"id": image}
    found = azure_cloud.IMAGE_URN.fullmatch(image)
    if not found:
        raise InvalidInput(f"azure image {image!r}: expected PUBLISHER:OFFER:SKU:VERSION "
                           "(microsoft-dsvm:ubuntu-hpc:2204:latest) or an image's resource id")
    return found.groupdict()


def tags(spec: LaunchSpec, node: Mapping[str, Any] | None = None) -> dict[str, str]:
    """The VM's tags: the job, the attempt, the offering and where its checkpoints (and its
    agent's heartbeat) are (and a gang's digest, rank and size), then the task's labels;
    Azure's tag values are 256 characters at most."""
    out = {_TAG_NAME.sub("-", k)[:512]: v[:256]
           for k, v in task_resources.label_pairs(spec.task).items()}
    out.update({TAG_JOB: str(spec.job_id), TAG_ATTEMPT: spec.attempt,
                TAG_OFFERING: "|".join(spec.offering.key), **tag_value(spec.checkpoint_uri)})
    if node is not None:
        out.update({cloud_gang.TAG_GANG: node["digest"], cloud_gang.TAG_NODE: str(node["rank"]),
                    cloud_gang.TAG_NODES: str(node["nodes"])})
    return out


def document(spec: LaunchSpec, *, name: str, script: str, subnet: str, image: str,
             ssh_key: str, identity: str | None = None, public_ip: bool = True,
             security_group: str = "", placement_group: str = "",
             node: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The body of the VM's PUT: Spot (eviction policy Delete, max price the job's cap or
    -1: never evicted for price) or Regular priority, the offering's size and zone, the
    startup script as custom data (cloud-init runs a script that starts with #!), boot
    diagnostics on (its serial log is `logs`), and the identity that reads the checkpoints."""
    offering = spec.offering
    task = spec.task
    if len(script.encode()) > 65535:  # customData's limit, before base64
        raise InvalidInput(f"job {spec.job_name}: its startup script is "
                           f"{len(script.encode())} bytes; Azure's custom data holds 65535")
    disk: dict[str, Any] = {"createOption": "FromImage", "deleteOption": "Delete",
                            "managedDisk": {"storageAccountType": DISK_TIERS[
                                task.get("disk_tier") or "high"]}}
    if task.get("disk_size"):
        disk["diskSizeGB"] = int(task["disk_size"])
    ip_config: dict[str, Any] = {"subnet": {"id": subnet}}
    if public_ip:
        ip_config["publicIPAddressConfiguration"] = {
            "name": f"{name}-ip", "sku": {"name": "Standard"},
            "properties": {"deleteOption": "Delete"}}
    nic: dict[str, Any] = {"primary": True, "deleteOption": "Delete",
                           "ipConfigurations": [{"name": "ipconfig",
                                                 "properties": ip_config}]}
    if security_group:
        nic["networkSecurityGroup"] = {"id": security_group}
    properties: dict[str, Any] = {
        "hardwareProfile": {"vmSize": offering.instance_type},
        "storageProfile": {"imageReference": image_reference(
            task_resources.image(task, offering.region) or image), "osDisk": disk},
        "osProfile": {
            "computerName": name, "adminUsername": ADMIN,
            "customData": base64.b64encode(script.encode()).decode("ascii"),
            "linuxConfiguration": {"disablePasswordAuthentication": True, "ssh": {
                "publicKeys": [{"path": f"/home/{ADMIN}/.ssh/authorized_keys",
                                "keyData": ssh_key}]}}},
        "networkProfile": {"networkApiVersion": NETWORK_API, "networkInterfaceConfigurations": [
            {"name": f"{name}-nic", "properties": nic}]},
        "diagnosticsProfile": {"bootDiagnostics": {"enabled": True}},
        "priority": "Regular",
    }
    if offering.market == "spot":
        cap = spec.max_usd_per_hour
        properties.update({"priority": "Spot", "evictionPolicy": "Delete",
                           "billingProfile": {"maxPrice": float(cap) if cap else -1}})
    if placement_group:
        properties["proximityPlacementGroup"] = {"id": placement_group}
    body: dict[str, Any] = {"location": offering.region, "tags": tags(spec, node),
                            "properties": properties}
    zone = spec.zone()  # the offering's, else the one the job keeps to
    if zone:
        body["zones"] = [zone]
    if identity:
        body["identity"] = {"type": "UserAssigned", "userAssignedIdentities": {identity: {}}}
    return body


# An OpenSSH public key line: its type, then its base64 body (learn.microsoft.com: Azure
# takes RSA and Ed25519 keys).
_PUBLIC_KEY = re.compile(r"(ssh-rsa|ssh-ed25519|ecdsa-sha2-nistp\d+|sk-\S+) AAAA[\w+/=]+( .*)?")
MAX_PUBLIC_KEY = 16 * 1024  # an RSA key of 16,384 bits is about 2.8 KB


def public_ssh_key(path: str) -> str:
    """The OpenSSH public key in the file config azure.ssh_public_key names; one line when
    it cannot be read, is too large, or is not a public key. A private key is refused (it
    would be sent to Azure in the VM's document) and never shown."""
    where = f"config azure.ssh_public_key {path!r}"
    try:
        with open(os.path.expanduser(path), "rb") as file:
            data = file.read(MAX_PUBLIC_KEY + 1)
    except OSError as exc:
        raise InvalidInput(f"{where}: cannot be read ({exc.strerror or type(exc).__name__})"
                           ": expected a public key file such as ~/.ssh/id_ed25519.pub"
                           ) from None
    text = data.decode("utf-8", "replace").strip()
    if b"PRIVATE KEY" in data:
        raise InvalidInput(f"{where}: is a private key, never sent anywhere: name its "
                           "public half (the .pub file beside it)")
    if len(data) > MAX_PUBLIC_KEY or not _PUBLIC_KEY.fullmatch(text):
        raise InvalidInput(f"{where}: not an OpenSSH public key: expected one line "
                           "'ssh-rsa AAAA...' or 'ssh-ed25519 AAAA...' (ssh-keygen -y -f KEY)")
    return text


def ephemeral_ssh_key() -> str:
    """An OpenSSH public key whose private half is thrown away at once: Azure asks for a
    key on a Linux VM without passwords, and no one needs to log in to costsched's VMs."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=3072)
    return key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                         serialization.PublicFormat.OpenSSH).decode()


# What a launch on Azure imports (module: its package), as `costsched check` looks for them.
SDKS = {"azure.identity": "azure-identity", "azure.mgmt.compute": "azure-mgmt-compute",
        "azure.mgmt.network": "azure-mgmt-network",
        "azure.mgmt.resource": "azure-mgmt-resource"}


def require_sdks() -> None:
    """InvalidInput naming the packages of SDKS that are not installed, and the extra that
    installs them (checked before the subscription: `costsched check`'s order)."""
    from costsched.clouds.base import installed

    missing = [package for module, package in SDKS.items() if not installed(module)]
    if missing:
        from costsched.clouds.azure_sdk import EXTRA

        raise InvalidInput(f"azure: {', '.join(missing)} "
                           f"{'is' if len(missing) == 1 else 'are'} not installed: {EXTRA}")
