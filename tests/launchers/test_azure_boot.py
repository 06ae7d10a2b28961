"""The boot path on Azure, executed: costsched launches a spot job with the azure launcher
against the loopback Resource Manager, and the test plays the VM: it runs the custom data
Azure holds for it under bash in a sandbox, with the loopback metadata service (managed
identity tokens, Scheduled Events) and Blob storage. The agent fetches and verifies the code
from Blob, runs setup and the job, publishes checkpoints; a Preempt event makes it checkpoint
and stop; Azure deletes the evicted VM; costsched recovers the job on another VM, which
resumes from the checkpoint and finishes with the bytes of an uninterrupted run."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pandas as pd
import pytest
import yaml

from costsched.clouds.azure_sdk import AzureClients
from costsched.config import AzureConfig
from costsched.service import jobs as service
from costsched.store import PriceStore
from launchers.azure import AzureLauncher
from launchers.checkpoints import open_store
from launchers.userdata import checkout_install
from tests.job_folders import folder_of
from tests.launchers.azure_fake import SUBSCRIPTION, Azure, StaticToken
from tests.launchers.test_boot_path import AT, PROJECT, STEPS, Instance, wait_for, write_job


def azure_launcher(azure: Azure, root: Path, key: Path) -> AzureLauncher:
    key.write_text("ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 nobody")
    clients = AzureClients(SUBSCRIPTION, StaticToken(), endpoint=azure.url, poll_seconds=0.01)
    settings = AzureConfig(ssh_public_key=str(key), identity=(
        f"/subscriptions/{SUBSCRIPTION}/resourceGroups/costsched/providers/"
        "Microsoft.ManagedIdentity/userAssignedIdentities/checkpoints"))
    return AzureLauncher(clients=clients, settings=settings, root=str(root),
                         install=checkout_install(sysconfig.get_paths()["purelib"]))


def vm(azure: Azure, sandbox: Path, name: str, image_has_env: bool = False) -> Instance:
    """The VM Azure made: its custom data run as cloud-init runs a script, with the
    metadata service saying this VM's name (`Instance` for `image_has_env`)."""
    azure.imds.vm = name
    custom = azure.arm.vm(name)["properties"]["osProfile"]["customData"]
    env = {k: v for k, v in azure.env().items() if k != "AZURE_STORAGE_ACCOUNT"}
    return Instance(base64.b64decode(custom).decode(), sandbox, env,
                    image_has_env=image_has_env)


@pytest.mark.results
def test_spot_vm_boots_is_evicted_and_the_job_recovers_on_another(
        tmp_path: Path, azure: Azure) -> None:
    launcher = azure_launcher(azure, tmp_path / "i1" / "root", tmp_path / "key.pub")
    store = PriceStore(f"sqlite:///{tmp_path / 'store.sqlite'}")
    store.ingest(pd.DataFrame([dict(
        cloud="azure", region="eastus", zone="", instance_type="Standard_NC6s_v3",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=6, memory_gb=112.0,
        usd_per_hour=0.31, effective_at=AT, source="test")]))
    path = write_job(tmp_path)
    spec = yaml.safe_load(path.read_text())
    spec["constraints"]["regions"] = ["eastus"]
    path.write_text(yaml.safe_dump(spec))

    [job] = service.launch(store, [path], launcher=launcher, checkpoint_root="az://ckpt/jobs")
    first_id = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    first_name = first_id.rsplit("/", 1)[1]
    put = azure.arm.calls("PUT", f"/virtualMachines/{first_name}")[0].json()
    assert put["properties"]["priority"] == "Spot"
    assert put["properties"]["evictionPolicy"] == "Delete"
    code = store.jobs.get(job.id).spec["code"]
    folder = folder_of(store, job.id)
    assert f"jobs/{folder}/code/{code['sha256']}.tar.gz" in azure.blob.containers["ckpt"]

    checkpoints = open_store(f"az://ckpt/jobs/{folder_of(store, job.id)}")
    first = vm(azure, tmp_path / "i1", first_name)
    try:
        wait_for(lambda: any(c.part("state.npz") for c in checkpoints.list()))
        azure.imds.preempt()  # the Scheduled Event: at least 30 s before the eviction
        status = first.wait()
    finally:
        first.kill()
    assert status["state"] == "stopped" and status["detail"] == "preemption notice", status
    first_log = (first.workdir / "job.log").read_text()
    assert "stopped at step" in first_log and "done at step" not in first_log
    stopped_at = int(first_log.split("stopped at step")[1].split()[0])
    asked = [r for r in azure.imds.requests if r.path == "/metadata/scheduledevents"]
    assert asked and all(r.headers.get("metadata") == "true" for r in asked)
    assert any(r.headers["authorization"] == "Bearer storage-token" and r.method == "PUT"
               for r in azure.blob.requests)  # the VM wrote with its managed identity

    azure.arm.evict(first_name)  # eviction policy Delete: Azure deletes the VM
    azure.imds.calm()
    launcher.root = str(tmp_path / "i2" / "root")
    done = service.reconcile(store, launcher)
    assert any("preempted; recovery" in line for line in done), done
    second_id = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    assert second_id != first_id and azure.arm.vm(second_id.rsplit("/", 1)[1]) is not None
    assert len(azure.arm.vms()) == 1  # one VM at a time: never the job twice

    second = vm(azure, tmp_path / "i2", second_id.rsplit("/", 1)[1], image_has_env=True)
    try:
        status = second.wait()
    finally:
        second.kill()
    assert status["state"] == "succeeded", status
    assert f"resumed at step {stopped_at}" in (second.workdir / "job.log").read_text()
    assert (second.workdir / "setup-ran").exists()
    reference = tmp_path / "reference"
    subprocess.run([sys.executable, "train.py", "--steps", STEPS], cwd=PROJECT, check=True,
                   env={**os.environ, "CHECKPOINT_DIR": str(reference)}, capture_output=True)
    result = [c.part("result.npy") for c in checkpoints.list() if c.part("result.npy")][-1]
    got = checkpoints.fetch(result, tmp_path / "got")
    assert got.read_bytes() == (reference / "result.npy").read_bytes()
