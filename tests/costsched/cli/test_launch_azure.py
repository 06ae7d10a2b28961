"""`plan` then `launch` of a SkyPilot task whose cheapest offering is an Azure spot VM: the
plan says so, and `launch --launcher clouds` (the cloud of the offering the decider picks)
starts it there, through the same credentials and settings a user has: the managed
identity's tokens, COSTSCHED_AZURE_* settings, an az:// checkpoint root."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from costsched.store import PriceStore
from tests.launchers.azure_fake import SUBSCRIPTION

AT = datetime.now(timezone.utc) - timedelta(hours=2)


def row(cloud: str, region: str, size: str, usd: float) -> dict:
    return dict(cloud=cloud, region=region, zone="us-east-1a" if cloud == "aws" else "",
                instance_type=size, market="spot", os="linux", gpu_model="V100", gpu_count=1,
                vcpus=8, memory_gb=61.0, usd_per_hour=usd, effective_at=AT, source="test")


def test_plan_then_launch_lands_on_the_cheapest_azure_spot_vm(
        cli: Any, azure: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        db_path: Path) -> None:
    azure.arm.instant = True
    key = tmp_path / "key.pub"
    key.write_text("ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 nobody")
    for name, value in {"AZURE_SUBSCRIPTION_ID": SUBSCRIPTION,
                        "COSTSCHED_AZURE_MANAGEMENT_ENDPOINT": azure.url,
                        "COSTSCHED_AZURE_SSH_PUBLIC_KEY": str(key),
                        "COSTSCHED_LAUNCH_CHECKPOINT_ROOT": "az://ckpt/jobs"}.items():
        monkeypatch.setenv(name, value)
    PriceStore(str(db_path)).ingest(pd.DataFrame([
        row("aws", "us-east-1", "p3.2xlarge", 0.92),
        row("azure", "eastus", "Standard_NC6s_v3", 0.31),
        row("azure", "westus2", "Standard_NC6s_v3", 0.45)]))
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text("print('training')\n")
    task = project / "sky.yaml"
    task.write_text(yaml.safe_dump({
        "name": "resnet", "workdir": ".", "run": "python train.py",
        "resources": {"accelerators": "V100:1", "use_spot": True}}))

    planned = cli("plan", task, "--json", "--top", "3")
    assert planned.exit_code == 0, planned.output
    best = json.loads(planned.output)
    text = json.dumps(best)
    assert "Standard_NC6s_v3" in text and "eastus" in text

    launched = cli("launch", task, "--launcher", "clouds", "--wait", "0", "--json")
    assert launched.exit_code == 0, launched.output
    [vm] = azure.arm.vms()
    assert vm["location"] == "eastus" and vm["properties"]["priority"] == "Spot"
    assert vm["properties"]["hardwareProfile"]["vmSize"] == "Standard_NC6s_v3"
    assert "eastus/costsched/costsched-" in launched.output  # the VM's handle, shown
    # Credentials: the managed identity's tokens, asked for Resource Manager and storage.
    asked = {r.query.get("resource", "").rstrip("/") for r in azure.imds.requests
             if r.path == "/metadata/identity/oauth2/token"}
    assert {"https://management.azure.com", "https://storage.azure.com"} <= asked
    assert any(n.startswith("jobs/job-") and "/code/" in n
               for n in azure.blob.containers["ckpt"])  # the task's code, in Blob


def _launch_on_azure(cli: Any, tmp_path: Path, db_path: Path) -> Any:
    """`costsched launch` of a V100 spot task with --launcher azure, an Azure price stored."""
    PriceStore(str(db_path)).ingest(pd.DataFrame([
        row("azure", "eastus", "Standard_NC6s_v3", 0.31)]))
    task = tmp_path / "sky.yaml"
    task.write_text(yaml.safe_dump({"name": "resnet", "run": "python train.py",
                                    "resources": {"accelerators": "V100:1", "use_spot": True}}))
    return cli("launch", task, "--launcher", "azure", "--wait", "0")


def test_a_launch_without_an_azure_subscription_is_refused_in_one_line(
        cli: Any, tmp_path: Path, db_path: Path) -> None:
    """No subscription named (no config key, no AZURE_SUBSCRIPTION_ID, no Azure CLI profile
    in the test's HOME): the launch says how to name one, and stores nothing."""
    launched = _launch_on_azure(cli, tmp_path, db_path)
    assert launched.exit_code == 2, launched.output
    assert launched.output.count("\n") == 1 and "Traceback" not in launched.output
    assert "azure: no subscription named" in launched.output
    assert "az account set --subscription" in launched.output
    store = PriceStore(str(db_path))
    assert store.jobs.records() == []


def test_a_launch_without_the_azure_sdk_names_the_sdk_before_the_subscription(
        cli: Any, tmp_path: Path, db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither the SDK nor a subscription: the SDK is named first, as `check` names it (and
    as aws and gcp name theirs), with the extra that installs it."""
    import sys

    for module in ("azure.identity", "azure.mgmt.compute"):  # not importable, as uninstalled
        monkeypatch.setitem(sys.modules, module, None)
    launched = _launch_on_azure(cli, tmp_path, db_path)
    assert launched.exit_code == 2, launched.output
    assert launched.output.count("\n") == 1 and "subscription" not in launched.output
    assert ("azure: azure-identity, azure-mgmt-compute are not installed: pip install "
            "'costsched[azure]'") in launched.output
    assert PriceStore(str(db_path)).jobs.records() == []


def test_a_task_with_secrets_and_no_key_vault_is_refused_before_anything_is_stored(
        cli: Any, azure: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        db_path: Path) -> None:
    monkeypatch.setenv("AZURE_SUBSCRIPTION_ID", SUBSCRIPTION)
    monkeypatch.setenv("COSTSCHED_AZURE_MANAGEMENT_ENDPOINT", azure.url)
    PriceStore(str(db_path)).ingest(pd.DataFrame([
        row("azure", "eastus", "Standard_NC6s_v3", 0.31)]))
    task = tmp_path / "sky.yaml"
    task.write_text(yaml.safe_dump({"name": "resnet", "run": "python train.py",
                                    "secrets": {"HF_TOKEN": None},
                                    "resources": {"accelerators": "V100:1", "use_spot": True}}))
    launched = cli("launch", task, "--launcher", "azure", "--wait", "0",
                   "--secret", "HF_TOKEN=hf_never-shown-0451")
    assert launched.exit_code == 2, launched.output
    assert launched.output.count("\n") == 1 and "Traceback" not in launched.output
    assert launched.output.endswith("sky.yaml: secret HF_TOKEN cannot reach an Azure VM "
                                    "without a Key Vault (a secret is never put in a VM's "
                                    "custom data): set azure.key_vault (a vault's name or "
                                    "URL) in the config\n")
    assert "hf_never-shown-0451" not in launched.output
    assert PriceStore(str(db_path)).jobs.records() == [] and azure.arm.vms() == []
