"""`costsched check` on Azure: prices (public: no credentials), then the SDKs, the
subscription, a token from azure-identity's sources (environment, workload or managed
identity, the Azure CLI's login), and one harmless call per capability: the resource group
(where VMs go), a list of its VMs (launch), the checkpoint container when
launch.checkpoint_root is in Blob (checkpoints), and the Key Vault of azure.key_vault (a
list of its secrets, and the one harmless secret `costsched-check` set: whether jobs' secrets
can go through it). Each call is bounded by
calls.timeout_seconds and not retried; a failure is one line (its code and the first line
of its message, redacted), never a traceback, a token or a secret.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from costsched.service.check_causes import NETWORK_FIX, first_line, network_cause
from costsched.service.check_result import (
    AZURE_EXTRA,
    Call,
    CloudCheck,
    call_seconds,
    installed,
)

ARM_SCOPE = "https://management.azure.com/.default"
ENV_SOURCES = (("AZURE_CLIENT_SECRET", "a service principal's secret"),
               ("AZURE_CLIENT_CERTIFICATE_PATH", "a service principal's certificate"),
               ("AZURE_FEDERATED_TOKEN_FILE", "a workload identity"))


# The chassis asset tag every Azure VM carries (read by cloud-init to know it runs there).
AZURE_ASSET_TAG = "7783-7084-3265-9085-8269-3286-77"
ASSET_TAG_FILE = Path("/sys/class/dmi/id/chassis_asset_tag")


def on_azure_vm(asset_tag: Path = ASSET_TAG_FILE) -> bool:
    """Whether this machine is an Azure VM (whose managed identity azure-identity tries)."""
    try:
        return asset_tag.read_text().strip() == AZURE_ASSET_TAG
    except OSError:
        return False


def sources(asset_tag: Path = ASSET_TAG_FILE) -> list[str]:
    """Where azure-identity will find credentials here (named, never read); [] if none."""
    from costsched.clouds.azure_sdk import cli_profile

    found = [f"environment variables AZURE_TENANT_ID, AZURE_CLIENT_ID ({what})"
             for name, what in ENV_SOURCES if os.environ.get(name)]
    if on_azure_vm(asset_tag):
        found.append("managed identity (this is an Azure VM)")
    if cli_profile().exists():
        found.append(f"Azure CLI login ({cli_profile().parent})")
    return found


def check(config: Any = None, credential: Any = None,
          clients: Callable[[str, Any], Any] | None = None,
          seconds: float | None = None, vault: Any = None,
          asset_tag: Path = ASSET_TAG_FILE) -> CloudCheck:
    """Azure's capabilities (see the module's doc). `config`: the [azure] section and
    launch.checkpoint_root (the effective configuration's by default); `credential`,
    `clients(subscription, credential)` and `vault` (a launchers.azure_secrets.KeyVault):
    the SDK's (tests give their own); `asset_tag`: the file that tells an Azure VM."""
    out = CloudCheck("azure", extra_installed=installed("requests"))
    out.collect_prices = out.extra_installed
    if out.collect_prices:
        from costsched.clouds.hints import collect_hint

        out.prices_untried = (f"`requests` is installed; prices.azure.com was not called, so "
                              f"the network is not known to reach it: {collect_hint(['azure'])} "
                              "tries it")
    out.notes.append("prices come from the public Azure Retail Prices API: no credentials "
                     "needed" + ("" if out.collect_prices else
                                 f", only `requests` (not installed; fix: {AZURE_EXTRA})"))
    sdks = all(installed(m) for m in ("azure.identity", "azure.mgmt.compute",
                                       "azure.mgmt.network", "azure.storage.blob"))
    if not out.extra_installed or not sdks:
        out.extra_installed = False
        out.problem = "the Azure SDKs are not installed (launch, checkpoints)"
        out.fixes.append(AZURE_EXTRA)
        return out
    from costsched.clouds.azure_sdk import AzureClients, sdk_errors, subscription
    from costsched.model import InvalidInput

    if config is None:
        from costsched.config import effective

        config = effective()
    seconds = call_seconds() if seconds is None else seconds
    out.credentials = sources(asset_tag)
    try:
        sub, where = subscription(config.azure.subscription_id)
    except InvalidInput:
        out.problem = "no Azure subscription named (launch, checkpoints)"
        out.fixes.append("az login && az account set --subscription ID (or set "
                         "azure.subscription_id)")
        return out
    out.notes.append(f"subscription {sub} (from {where})")
    http_error, missing, refused = sdk_errors()
    if credential is None:
        from costsched.clouds.azure_sdk import default_credential

        credential = default_credential(process_timeout=max(1, int(seconds)))
    try:
        credential.get_token(ARM_SCOPE)
    except Exception as exc:  # noqa: BLE001 - every source failed: their text may hold secrets
        cause = network_cause(exc, seconds)
        out.calls.append(Call("token for Resource Manager", False,
                              f"network: {cause}" if cause else type(exc).__name__))
        out.problem = (f"network: {cause} (while getting a token)" if cause else
                       "no usable Azure credentials (environment, managed identity, "
                       "Azure CLI login)")
        out.fixes.append(NETWORK_FIX if cause else "az login")
        return out
    out.calls.append(Call("token for Resource Manager", True, "granted"))
    made = clients(sub, credential) if clients is not None else AzureClients(
        sub, credential, config.azure.management_endpoint, connection_timeout=seconds,
        read_timeout=seconds, retry_total=0)
    group = config.azure.resource_group

    def ask(name: str, call: Callable[[], str]) -> bool:
        try:
            out.calls.append(Call(name, True, call()))
            return True
        except missing as exc:
            out.calls.append(Call(name, False, _said(exc)))
        except InvalidInput as exc:  # the checkpoint container, said by its store
            out.calls.append(Call(name, False, first_line(str(exc), 200)))
        except (http_error, refused) as exc:
            out.calls.append(Call(name, False, _said(exc)))
            if getattr(exc, "status_code", None) == 403 and not out.problem:
                out.problem = f"{name}: {_said(exc)}"
                out.fixes.append("give this identity the costsched role (docs/azure.md, "
                                 "Permissions)")
        except Exception as exc:  # noqa: BLE001 - the network, classified in one line
            cause = network_cause(exc, seconds) or type(exc).__name__
            out.calls.append(Call(name, False, f"network: {cause}"))
            if not out.problem:
                out.problem, _ = f"network: {cause}", out.fixes.append(NETWORK_FIX)
        return False

    if not ask(f"resource group {group}", lambda: _group(made, group)) \
            and out.calls[-1].detail.startswith("ResourceGroupNotFound") and not out.problem:
        if config.azure.create_resource_group:
            out.notes.append(f"resource group {group}: made at the first launch")
        else:
            out.problem = f"resource group {group} does not exist"
            out.fixes.append(f"az group create -n {group} -l {config.azure.location} "
                             "(or set azure.create_resource_group = true)")
    out.launch = ask(f"virtual machines list ({group})",
                     lambda: _vms(made, group)) and not out.problem
    _quotas(out, made, config.azure.location, (http_error, refused))
    out.checkpoints = _checkpoints(out, config.launch.checkpoint_root, ask)
    _key_vault(out, config.azure.key_vault, credential, seconds, vault)
    return out


def _key_vault(out: CloudCheck, configured: str | None, credential: Any, seconds: float,
               vault: Any = None) -> None:
    """Whether jobs' secrets can go through the vault of azure.key_vault: it answers (a list
    of its secrets) and this identity may set a secret; a gap is a note with its fix (jobs
    without secrets run all the same)."""
    if not configured:
        out.notes.append("secrets: no key vault (azure.key_vault): a job with secrets is "
                         "refused on Azure")
        return
    from costsched.clouds.azure import key_vault_url

    url = key_vault_url(configured)
    if vault is None:
        if not installed("azure.keyvault.secrets"):
            out.notes.append("secrets: azure-keyvault-secrets is not installed; fix: "
                             f"{AZURE_EXTRA}")
            return
        from launchers.azure_secrets import KeyVault

        vault = KeyVault(url, credential, connection_timeout=seconds, read_timeout=seconds,
                         retry_total=0)
    from launchers.azure_secrets import said

    for name, call in ((f"key vault {url} (list secrets)", vault.check_list),
                       (f"key vault {url} (set a secret)", vault.check_set)):
        try:
            out.calls.append(Call(name, True, call()))
            continue
        except Exception as exc:  # noqa: BLE001 - Key Vault's or the network's: one line
            cause = network_cause(exc, seconds)
            detail = f"network: {cause}" if cause else first_line(said(exc), 200)
        out.calls.append(Call(name, False, detail))
        fix = (NETWORK_FIX if cause else "give this identity Key Vault Secrets Officer on "
               "the vault (docs/azure.md, Permissions)")
        out.notes.append(f"secrets: {name}: {detail}; fix: {fix}")
        return


def _quotas(out: CloudCheck, made: Any, location: str,
            errors: tuple[type[Exception], ...]) -> None:
    """Whether Compute's usages of a location (its quotas) can be read: the permission
    missing, named in `out.quotas` and a note with its fix."""
    name = f"compute usages ({location})"
    try:
        usages = list(made.compute.usage.list(location))
    except errors as exc:
        out.calls.append(Call(name, False, _said(exc)))
        if getattr(exc, "status_code", None) == 403:
            out.quotas = ("Microsoft.Compute/locations/usages/read is not allowed: plans "
                          "cannot tell which offerings the subscription's quotas hold")
            out.notes.append(f"quotas: {out.quotas}; fix: give this identity the costsched "
                             "role (docs/azure.md, Permissions)")
        else:
            out.quotas = f"quotas not read: {_said(exc)}"
        return
    except Exception as exc:  # noqa: BLE001 - the network: one line
        out.calls.append(Call(name, False, f"network: {type(exc).__name__}"))
        out.quotas = f"quotas not read: network: {type(exc).__name__}"
        return
    out.calls.append(Call(name, True, f"{len(usages)} usages"))


def _group(made: Any, group: str) -> str:
    found = made.resources.resource_groups.get(group)
    return f"exists in {found.get('location', '?')}"


def _vms(made: Any, group: str) -> str:
    pages = made.compute.virtual_machines.list(group).by_page()
    return f"allowed ({len(list(next(pages, [])))} VMs on the first page)"


def _checkpoints(out: CloudCheck, root: str | None,
                 ask: Callable[[str, Callable[[], str]], bool]) -> bool:
    """Whether Blob checkpoints can be kept: the configured container answers, or (none
    configured in Blob) the credentials work."""
    from launchers.checkpoints.azure import is_blob_url

    if not root or not (root.startswith("az://") or is_blob_url(root)):
        out.notes.append("Blob checkpoints: the credentials work; a container's own "
                         "permissions are checked when a job first writes to it")
        return out.launch

    def container() -> str:
        from launchers.checkpoints import open_store

        open_store(root).check()
        return "answers"

    return ask(f"checkpoint container ({root})", container)


def _said(exc: Exception) -> str:
    """An azure-core error in one line: its code and its message's first line, redacted."""
    code = str(getattr(getattr(exc, "error", None), "code", "") or
               getattr(exc, "error_code", "") or getattr(exc, "status_code", "") or "")
    message = getattr(getattr(exc, "error", None), "message", None) or \
        getattr(exc, "message", None) or type(exc).__name__
    text = first_line(str(message), 160)
    return f"{code}: {text}" if code and not text.startswith(code) else text
