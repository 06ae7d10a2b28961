"""A job's secrets on Azure: Key Vault through the SDK on a fake transport that keeps every
request (the launcher's side), and on loopback with the loopback metadata service (the
VM's side, in this process). The launcher sets one secret per name of the attempt, the
VM's document carries no value, the VM's boot code reads them with its managed identity
into its launch file only; ending the VM deletes and purges them, a failed launch too;
leftovers of a crashed launch are swept; a purge the vault forbids is recovered from. No
value is in a log, an error, the custom data or a request to Resource Manager."""

from __future__ import annotations

import base64
import dataclasses
import json
import logging
import os
import re
import shutil
import stat
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("azure.keyvault.secrets")

from costsched.clouds.azure_sdk import AzureClients  # noqa: E402
from costsched.config import AzureConfig  # noqa: E402
from costsched.model import InvalidInput  # noqa: E402
from costsched.redact import redact  # noqa: E402
from launchers import azure_secrets, cloud_secrets  # noqa: E402
from launchers.azure import AzureLauncher  # noqa: E402
from launchers.azure_secrets import KeyVault, read_on_vm, secret_name  # noqa: E402
from launchers.base import CapacityError, LaunchSpec  # noqa: E402
from launchers.userdata import read_payload  # noqa: E402
from tests.launchers.azure_fake import SUBSCRIPTION, VAULT_TOKEN, Azure, StaticToken  # noqa: E402
from tests.launchers.keyvault_fake import VAULT, Vault, serve, transport  # noqa: E402
from tests.launchers.test_azure import IDENTITY, KEY, spec  # noqa: E402

VALUE = "hf_az-s3cr3t-51c0ffee"
KEY7 = cloud_secrets.key(7, "move-1-0")
NAME = f"costsched-7-{KEY7}-HF-TOKEN"
TAGS = {"costsched-job": "7", cloud_secrets.TAG_KEY: KEY7, "costsched-env": "HF_TOKEN"}


def secret_spec(attempt: str = "move-1-0", job_id: int = 7, **fields: Any) -> LaunchSpec:
    job = spec(attempt=attempt, job_id=job_id, **fields)
    return dataclasses.replace(job, envs={**job.envs, "HF_TOKEN": VALUE},
                               secret_names=("HF_TOKEN",))


def make(azure: Azure, tmp_path: Path, vault: Vault | None, root: str = "/opt/costsched"
         ) -> AzureLauncher:
    key = tmp_path / "key.pub"
    key.write_text(KEY)
    clients = AzureClients(SUBSCRIPTION, StaticToken(), endpoint=azure.url, poll_seconds=0.01)
    settings = AzureConfig(ssh_public_key=str(key), identity=IDENTITY,
                           key_vault=VAULT if vault is not None else None)
    secrets = None if vault is None else KeyVault(
        VAULT, StaticToken(VAULT_TOKEN), transport=transport(vault))
    return AzureLauncher(clients=clients, settings=settings, secrets=secrets, root=root,
                         install="true")


def custom_data(azure: Azure, name: str) -> str:
    return base64.b64decode(azure.arm.vm(name)["properties"]["osProfile"]["customData"]
                            ).decode()


def test_launch_sets_the_attempts_secret_and_the_vm_carries_no_value(
        azure: Azure, tmp_path: Path) -> None:
    vault = Vault()
    instance = make(azure, tmp_path, vault).launch(secret_spec())

    assert vault.requests == [
        ("GET", "/secrets", {"api-version": "7.5"}, None),  # the sweep: nothing left
        ("PUT", f"/secrets/{NAME}", {"api-version": "7.5"}, {"value": VALUE, "tags": TAGS})]
    assert vault.challenges >= 1  # the SDK asked the vault's authority first, bodiless
    name = instance.id.rsplit("/", 1)[1]
    script = custom_data(azure, name)
    job = read_payload(script)
    assert job["secret_refs"] == {"HF_TOKEN": NAME}
    assert (job["secret_store"], job["secret_api"]) == ("akv", VAULT)
    assert "HF_TOKEN" not in job["envs"] and VALUE not in script
    assert VALUE not in json.dumps(job)
    assert all(VALUE.encode() not in r.body and VALUE not in r.path for r in azure.arm.requests)
    assert azure.arm.vm(name)["tags"][cloud_secrets.TAG_KEY] == KEY7


def test_a_launch_without_secrets_asks_the_vault_nothing(azure: Azure, tmp_path: Path) -> None:
    vault = Vault()
    launcher = make(azure, tmp_path, vault)
    instance = launcher.launch(spec())
    assert cloud_secrets.TAG_KEY not in azure.arm.vm(instance.id.rsplit("/", 1)[1])["tags"]
    launcher.terminate(instance.id)
    assert vault.requests == [] and vault.challenges == 0


def test_no_vault_is_refused_in_one_line_naming_the_key(azure: Azure, tmp_path: Path) -> None:
    launcher = make(azure, tmp_path, None)
    said = launcher.cannot_run({"secrets": ["HF_TOKEN"]})
    assert said == ("secret HF_TOKEN cannot reach an Azure VM without a Key Vault (a secret "
                    "is never put in a VM's custom data): set azure.key_vault (a vault's name "
                    "or URL) in the config")
    assert redact(said) == said  # whole, as printed
    assert launcher.cannot_run({"secrets": []}) == ""
    with pytest.raises(InvalidInput, match="set azure.key_vault") as refused:
        launcher.launch(secret_spec())
    assert VALUE not in str(refused.value)
    assert azure.arm.vms() == []


def test_ending_the_vm_deletes_and_purges_that_attempts_secrets_only(
        azure: Azure, tmp_path: Path) -> None:
    vault = Vault()
    launcher = make(azure, tmp_path, vault)
    first = launcher.launch(secret_spec(attempt="move-1-0"))
    launcher.launch(secret_spec(attempt="move-2-0"))  # a move's target: kept
    del vault.requests[:]
    launcher.terminate(first.id)
    assert vault.calls() == [("GET", "/secrets"), ("DELETE", f"/secrets/{NAME}"),
                             ("GET", f"/deletedsecrets/{NAME}"),
                             ("DELETE", f"/deletedsecrets/{NAME}")]
    assert vault.names() == [secret_name(7, "move-2-0", "HF_TOKEN")] and not vault.deleted
    launcher.terminate(first.id)  # again: the VM is gone, nothing else asked
    assert len(vault.requests) == 4


def test_a_launch_that_fails_deletes_its_secrets(azure: Azure, tmp_path: Path) -> None:
    vault = Vault()
    launcher = make(azure, tmp_path, vault)
    from launchers.azure_vm import vm_name

    azure.arm.refuse[vm_name(7, "move-1-0")] = (409, "SkuNotAvailable")
    with pytest.raises(CapacityError) as refused:
        launcher.launch(secret_spec())
    assert VALUE not in str(refused.value)
    assert vault.names() == [] and vault.deleted == {}  # deleted, then purged


def test_a_gang_has_one_copy_read_by_every_node_and_deleted_with_it(
        azure: Azure, tmp_path: Path) -> None:
    vault = Vault()
    launcher = make(azure, tmp_path, vault)
    gang = launcher.launch(secret_spec(attempt="launch-1", task={"num_nodes": 2}))
    digest = cloud_secrets.key(7, "launch-1")  # the gang's digest names its secrets too
    assert [m for m, _ in vault.calls()] == ["GET", "PUT"]
    refs = {json.dumps(read_payload(custom_data(azure, f"costsched-7-{digest}-{r}"))[
        "secret_refs"]) for r in (0, 1)}
    assert refs == {json.dumps({"HF_TOKEN": secret_name(7, "launch-1", "HF_TOKEN")})}
    assert gang.id.endswith(digest)
    launcher.terminate(gang.id)
    assert vault.names() == [] and vault.deleted == {}


def test_leftovers_of_a_crashed_launch_are_swept_once_old(azure: Azure, tmp_path: Path) -> None:
    vault = Vault(page=1)  # listed a page at a time
    launcher = make(azure, tmp_path, vault)
    live = launcher.launch(secret_spec(attempt="move-1-0"))
    launcher.secrets.put(secret_spec(attempt="crashed-1", job_id=8))  # no VM asked
    crashed = secret_name(8, "crashed-1", "HF_TOKEN")
    vault.secrets["unrelated"] = type(vault.secrets[NAME.lower()])("unrelated", "x", {})
    instances = launcher.instances()
    assert launcher.secrets.sweep(instances) == []  # too young
    later = time.time() + cloud_secrets.SWEEP_AFTER_SECONDS + 60
    assert launcher.secrets.sweep(instances, now=later) == [crashed]
    assert vault.names() == [NAME, "unrelated"]  # the live VM's, and one not costsched's
    listed = [q for m, p, q, _ in vault.requests if (m, p) == ("GET", "/secrets")]
    assert any("$skiptoken" in q for q in listed)  # every page read
    assert live.state == "running"


def test_a_vault_that_forbids_purges_keeps_them_deleted_and_a_relaunch_recovers(
        azure: Azure, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    vault = Vault()
    vault.purge_protected = True
    launcher = make(azure, tmp_path, vault)
    with caplog.at_level(logging.WARNING, logger="costsched.azure_secrets"):
        launcher.secrets.put(secret_spec())
        launcher.secrets.delete(7, "move-1-0")
        launcher.secrets.delete(7, "move-1-0")  # nothing left: said once
    assert list(vault.deleted) == [NAME.lower()] and vault.names() == []
    [warned] = [r.getMessage() for r in caplog.records]
    assert "not purged (Forbidden: Operation \"purge\" is not allowed" in warned
    del vault.requests[:]
    assert launcher.secrets.put(secret_spec()) == {"HF_TOKEN": NAME}  # the same attempt
    assert vault.calls() == [("PUT", f"/secrets/{NAME}"),  # 409: deleted, recoverable
                             ("POST", f"/deletedsecrets/{NAME}/recover"),
                             ("GET", f"/secrets/{NAME}/"),  # recovered: there again
                             ("PUT", f"/secrets/{NAME}")]
    assert vault.secrets[NAME.lower()].value == VALUE and not vault.deleted


def test_errors_and_logs_never_carry_a_value(azure: Azure, tmp_path: Path,
                                             caplog: pytest.LogCaptureFixture) -> None:
    vault = Vault()
    vault.forbid.add(("PUT", "secrets"))
    launcher = make(azure, tmp_path, vault)
    with caplog.at_level(logging.DEBUG), pytest.raises(RuntimeError) as refused:
        launcher.launch(secret_spec())
    said = str(refused.value)
    assert said == (f"azure key vault {VAULT}: {NAME} not set (Forbidden: Caller is not "
                    "authorized to perform action on resource.)")
    assert redact(said) == said
    assert VALUE not in caplog.text and azure.arm.vms() == []


def test_names_are_key_vaults_and_apart_without_case() -> None:
    names = [secret_name(7, "a", n) for n in ("HF_TOKEN", "hf_token", "Hf_Token", "_X",
                                              "A" * 200)]
    assert names[0] == f"costsched-7-{cloud_secrets.key(7, 'a')}-HF-TOKEN"
    assert len({n.lower() for n in names}) == len(names)
    assert all(re.fullmatch(r"[0-9A-Za-z-]{1,127}", n) for n in names)


# --- the VM's side -------------------------------------------------------------------------

def test_the_vm_reads_its_secrets_with_its_managed_identity(azure: Azure) -> None:
    vault = Vault()
    with serve(vault) as server:
        KeyVault(VAULT, StaticToken(VAULT_TOKEN), transport=transport(vault)).put(
            secret_spec())
        got = read_on_vm(server.url, {"HF_TOKEN": NAME})
    assert got == {"HF_TOKEN": VALUE}
    [token] = [r for r in azure.imds.requests if r.path.endswith("/oauth2/token")]
    assert token.headers["metadata"] == "true"
    assert token.query == {"api-version": "2018-02-01", "resource": "https://vault.azure.net"}
    assert vault.requests[-1] == ("GET", f"/secrets/{NAME}/", {"api-version": "7.5"}, None)
    assert ("DELETE", f"/secrets/{NAME}") not in vault.calls()  # its role reads only


def test_a_secret_the_vm_cannot_read_is_one_line_without_a_value(azure: Azure) -> None:
    vault = Vault()
    with serve(vault) as server:
        KeyVault(VAULT, StaticToken(VAULT_TOKEN), transport=transport(vault)).put(
            secret_spec())
        vault.forbid.add(("GET", "secrets"))
        with pytest.raises(RuntimeError) as refused:
            read_on_vm(server.url, {"HF_TOKEN": NAME})
    assert str(refused.value) == (f"azure key vault: secret HF_TOKEN ({NAME}): HTTP 403 "
                                  "(Forbidden)")


def test_the_boot_code_puts_them_in_the_launch_file_alone(
        azure: Azure, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The custom data's Python, run in this process as the VM runs it at boot (without
    systemd: the shell's loop would start the supervisor on the launch file it prints)."""
    vault = Vault()
    root = tmp_path / "root"
    with serve(vault) as server:
        launcher = make(azure, tmp_path, vault, root=str(root))
        assert launcher.secrets.client is not None  # the launcher's: on the fake transport
        launcher.secrets.url = server.url  # the VM's way to the same vault: loopback
        instance = launcher.launch(secret_spec())
        script = custom_data(azure, instance.id.rsplit("/", 1)[1])
        boot = script.split("<<'COSTSCHED_BOOT'\n", 1)[1].split("\nCOSTSCHED_BOOT", 1)[0]
        monkeypatch.setenv("COSTSCHED_BOOT_ROOT", str(root))
        monkeypatch.setattr(shutil, "which", lambda *_: None)  # no systemctl
        exec(compile(boot, "custom-data", "exec"), {"__name__": "__boot__"})  # noqa: S102
    printed = capsys.readouterr()
    launch = Path(printed.out.strip().splitlines()[-1])
    assert launch == root / "run" / "job-7.json"
    assert stat.S_IMODE(os.stat(launch.parent).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(launch).st_mode) == 0o600
    assert json.loads(launch.read_text())["env"]["HF_TOKEN"] == VALUE
    assert VALUE not in printed.out + printed.err and VALUE not in script
    assert vault.names() == [NAME]  # the VM deletes nothing: the launcher does
    assert [r for r in azure.imds.requests
            if r.query.get("resource") == azure_secrets.vault_resource(VAULT)]
