"""`costsched check` on Azure, against the loopback Resource Manager and Blob service: what
the account can do, one line per capability, and the line that fixes each gap; never a
token or a secret."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from costsched.clouds.azure_sdk import AzureClients
from costsched.config import Config
from costsched.service.check import check_azure
from tests.launchers.azure_fake import SUBSCRIPTION, StaticToken

SECRET = "s3cr3t-client-value-000"


def config(**azure_settings: Any) -> Config:
    return Config.model_validate({
        "azure": {"subscription_id": SUBSCRIPTION, **azure_settings},
        "launch": {"checkpoint_root": "az://ckpt/jobs"}})


def probe(fake: Any, **settings: Any) -> Any:
    return check_azure(config=config(**settings), credential=StaticToken(),
                       clients=lambda sub, cred: AzureClients(sub, cred, fake.url,
                                                              retry_total=0),
                       seconds=5.0)


def test_an_account_that_can_do_everything(azure: Any) -> None:
    found = probe(azure)
    assert (found.collect_prices, found.launch, found.checkpoints) == (True, True, True)
    assert found.problem is None
    assert [(c.name, c.ok) for c in found.calls] == [
        ("token for Resource Manager", True), ("resource group costsched", True),
        ("virtual machines list (costsched)", True), ("compute usages (eastus)", True),
        ("checkpoint container (az://ckpt/jobs)", True)]
    assert found.quotas == ""
    assert "arm-token" not in json.dumps(found.as_dict())


def test_a_managed_identity_is_named_only_on_an_azure_vm(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from costsched.service import check_azure as module

    monkeypatch.setenv("AZURE_CONFIG_DIR", str(tmp_path / "no-cli"))
    monkeypatch.delenv("AZURE_SUBSCRIPTION_ID", raising=False)
    for name, _ in module.ENV_SOURCES:
        monkeypatch.delenv(name, raising=False)
    tag = tmp_path / "chassis_asset_tag"
    assert module.sources(tag) == []  # no such file: not an Azure VM, nothing claimed
    tag.write_text("Not Specified\n")
    assert module.sources(tag) == []
    tag.write_text(module.AZURE_ASSET_TAG + "\n")
    assert module.sources(tag) == ["managed identity (this is an Azure VM)"]
    bare = check_azure(config=Config.model_validate({}), asset_tag=tmp_path / "none")
    assert bare.credentials == [] and bare.problem.startswith("no Azure subscription named")


def test_a_missing_permission_names_the_role_to_give(azure: Any) -> None:
    azure.arm.forbid.add("/virtualMachines")
    found = probe(azure)
    assert not found.launch and found.collect_prices
    assert found.problem.startswith("virtual machines list (costsched): AuthorizationFailed")
    assert "costsched role" in found.fixes[0]


def test_a_missing_quota_permission_is_one_line_naming_it(azure: Any) -> None:
    azure.arm.forbid.add("/usages")
    found = probe(azure)
    assert found.launch and found.problem is None  # launching is not stopped by it
    assert found.quotas == ("Microsoft.Compute/locations/usages/read is not allowed: plans "
                            "cannot tell which offerings the subscription's quotas hold")
    assert any(n.startswith("quotas: Microsoft.Compute/locations/usages/read") for n in
               found.notes)


def test_a_missing_resource_group_and_container(azure: Any) -> None:
    found = probe(azure, resource_group="other")
    assert found.problem == "resource group other does not exist"
    assert found.fixes[0].startswith("az group create -n other -l eastus")
    del azure.blob.containers["ckpt"]
    found = probe(azure)
    assert found.launch and not found.checkpoints
    assert "container ckpt does not exist" in found.calls[-1].detail


def test_credentials_that_fail_are_one_line_without_their_text() -> None:
    from azure.core.exceptions import ClientAuthenticationError

    class Refusing:
        def get_token(self, *scopes: str, **_: Any) -> Any:
            raise ClientAuthenticationError(f"AADSTS7000215: invalid secret {SECRET}")

    found = check_azure(config=config(), credential=Refusing(), seconds=5.0)
    assert found.problem.startswith("no usable Azure credentials")
    assert found.fixes == ["az login"] and found.collect_prices and not found.launch
    assert SECRET not in json.dumps(found.as_dict())


def test_no_subscription_keeps_the_prices(monkeypatch: pytest.MonkeyPatch) -> None:
    found = check_azure(config=Config(), seconds=5.0)
    assert found.collect_prices and not found.launch
    # (no call tried the prices: what was looked for is said, and what tries the network)
    assert found.prices_untried.startswith("`requests` is installed; prices.azure.com was "
                                           "not called"), found.prices_untried
    assert found.prices_untried.endswith("`costsched collect --cloud azure` tries it")
    assert found.problem == "no Azure subscription named (launch, checkpoints)"
    assert "az account set" in found.fixes[0]


def test_the_key_vault_answers_and_takes_a_secret(azure: Any) -> None:
    from launchers.azure_secrets import KeyVault
    from tests.launchers.azure_fake import VAULT_TOKEN
    from tests.launchers.keyvault_fake import VAULT, Vault, transport

    vault = Vault()
    found = check_azure(config=config(key_vault="costsched-test"), credential=StaticToken(),
                        clients=lambda sub, cred: AzureClients(sub, cred, azure.url,
                                                               retry_total=0),
                        seconds=5.0, vault=KeyVault(VAULT, StaticToken(VAULT_TOKEN),
                                                    transport=transport(vault)))
    assert [(c.name, c.ok, c.detail) for c in found.calls[-2:]] == [
        (f"key vault {VAULT} (list secrets)", True, "answers (0 secrets on the first page)"),
        (f"key vault {VAULT} (set a secret)", True, "allowed (secret costsched-check set)")]
    assert vault.calls() == [("GET", "/secrets"), ("PUT", "/secrets/costsched-check")]
    assert vault.requests[-1][3] == {"value": "written by costsched check (not a secret)",
                                     "tags": {"costsched": "check"}}
    assert found.problem is None and found.launch


def test_a_key_vault_that_refuses_says_the_role_to_give(azure: Any) -> None:
    from launchers.azure_secrets import KeyVault
    from tests.launchers.azure_fake import VAULT_TOKEN
    from tests.launchers.keyvault_fake import VAULT, Vault, transport

    vault = Vault()
    vault.forbid.add(("PUT", "secrets"))
    found = check_azure(config=config(key_vault=VAULT), credential=StaticToken(),
                        clients=lambda sub, cred: AzureClients(sub, cred, azure.url,
                                                               retry_total=0),
                        seconds=5.0, vault=KeyVault(VAULT, StaticToken(VAULT_TOKEN),
                                                    transport=transport(vault)))
    assert found.calls[-1].ok is False and found.calls[-1].detail.startswith(
        "Forbidden: Caller is not authorized")
    [note] = [n for n in found.notes if n.startswith("secrets:")]
    assert note.endswith("fix: give this identity Key Vault Secrets Officer on the vault "
                         "(docs/azure.md, Permissions)")
    assert found.problem is None and found.launch  # jobs without secrets still run


def test_no_key_vault_is_a_note(azure: Any) -> None:
    found = probe(azure)
    assert "secrets: no key vault (azure.key_vault): a job with secrets is refused on " \
        "Azure" in found.notes


def test_without_requests_the_prices_note_says_what_is_missing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """No `requests`: prices cannot be collected, and the note says so with the fix, never
    that prices come with nothing needed."""
    from costsched.service import check_azure as module

    monkeypatch.setattr(module, "installed", lambda name: False)
    found = check_azure(config=Config(), seconds=5.0)
    assert not found.collect_prices and not found.prices_untried
    assert found.notes[0] == ("prices come from the public Azure Retail Prices API: no "
                              "credentials needed, only `requests` (not installed; fix: pip "
                              "install 'costsched[azure]')")
