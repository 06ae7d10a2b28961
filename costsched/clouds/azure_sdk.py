"""Azure's SDKs, made in one place: the credential (azure-identity's DefaultAzureCredential:
the environment, a workload identity, a managed identity, the Azure CLI's login...), the
subscription, and the management clients made from them. The launcher, its checkpoint
store, `check` and any other reader use these (a quota reader:
`AzureClients.from_config().compute.usage.list(location)`).

The SDKs are imported only when a function here is called: SdkMissing without the `azure`
extra. No credential is ever read into a value costsched keeps or shows: `subscription`
says where the subscription came from, never a token.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

from costsched.clouds.base import SdkMissing
from costsched.model import InvalidInput

EXTRA = "pip install 'costsched[azure]'"
DEFAULT_ENDPOINT = "https://management.azure.com"
ENV_SUBSCRIPTION = "AZURE_SUBSCRIPTION_ID"
POLL_SECONDS = 5.0  # between looks at a long-running operation without Retry-After


def _need(module: str) -> Any:
    from importlib import import_module

    try:
        return import_module(module)
    except ImportError:
        parts = module.split(".")  # the package that ships it: azure-mgmt-compute, azure-core
        package = "-".join(parts[:3] if parts[1] == "mgmt" else parts[:2])
        raise SdkMissing(f"azure: {package} is not installed: {EXTRA}") from None


def require_sdk() -> None:
    """SdkMissing, naming the extra to install, unless the compute SDK (what every use of
    Azure here needs) is installed."""
    _need("azure.mgmt.compute")


def sdk_errors() -> tuple[type[Exception], type[Exception], type[Exception]]:
    """(HttpResponseError, ResourceNotFoundError, ClientAuthenticationError) of azure-core."""
    errors = _need("azure.core.exceptions")
    return (errors.HttpResponseError, errors.ResourceNotFoundError,
            errors.ClientAuthenticationError)


def default_credential(**options: Any) -> Any:  # -> azure.core.credentials.TokenCredential
    """azure-identity's DefaultAzureCredential, without its interactive browser login."""
    identity = _need("azure.identity")
    return identity.DefaultAzureCredential(exclude_interactive_browser_credential=True,
                                           **options)


def key_vault_client(url: str, credential: Any = None, **options: Any) -> Any:
    """azure-keyvault-secrets' SecretClient of the vault at `url` (`options`: azure-core's,
    and the client's `api_version`)."""
    secrets = _need("azure.keyvault.secrets")
    return secrets.SecretClient(url, credential if credential is not None
                                else default_credential(), **options)


def cli_profile(env: Mapping[str, str] = os.environ) -> Path:
    """The Azure CLI's profile (its subscriptions): $AZURE_CONFIG_DIR or ~/.azure."""
    folder = env.get("AZURE_CONFIG_DIR") or str(Path.home() / ".azure")
    return Path(folder) / "azureProfile.json"


def subscription(configured: str | None = None,
                 env: Mapping[str, str] = os.environ) -> tuple[str, str]:
    """(subscription id, where it was found): config azure.subscription_id, else
    $AZURE_SUBSCRIPTION_ID, else the Azure CLI's default subscription (`az account set`)."""
    if configured:
        return configured, "config azure.subscription_id"
    if env.get(ENV_SUBSCRIPTION, "").strip():
        return env[ENV_SUBSCRIPTION].strip(), f"environment variable {ENV_SUBSCRIPTION}"
    path = cli_profile(env)
    try:
        # The CLI writes it with a byte-order mark.
        profile = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        profile = {}
    for item in profile.get("subscriptions", []) if isinstance(profile, dict) else []:
        if isinstance(item, dict) and item.get("isDefault") and item.get("id"):
            return str(item["id"]), f"the Azure CLI's default subscription ({path})"
    raise InvalidInput("azure: no subscription named: set azure.subscription_id in the "
                       f"config or {ENV_SUBSCRIPTION}, or choose one with `az account set "
                       "--subscription ID`")


class AzureClients:
    """The management clients of one subscription, each made when first used. `options`
    go to every client (azure-core's: `connection_timeout`, `read_timeout`, `retry_total`,
    `connection_verify`...)."""

    def __init__(self, subscription_id: str, credential: Any = None,
                 endpoint: str = DEFAULT_ENDPOINT, poll_seconds: float = POLL_SECONDS,
                 **options: Any) -> None:
        self.subscription_id = subscription_id
        self.credential = credential if credential is not None else default_credential()
        self.endpoint = endpoint.rstrip("/")
        self.options = {"polling_interval": poll_seconds, **options}

    @classmethod
    def from_config(cls, config: Any = None, credential: Any = None,
                    **options: Any) -> AzureClients:
        """The clients the configuration names (`costsched.config.AzureConfig`; by default
        the effective one's)."""
        if config is None:
            from costsched.config import effective

            config = effective().azure
        found, _ = subscription(config.subscription_id)
        return cls(found, credential, config.management_endpoint, **options)

    def _make(self, module: str, name: str) -> Any:
        client = getattr(_need(module), name)
        # The token's audience is the public cloud's Resource Manager whatever the endpoint
        # (the SDK's default scope): an emulator or a proxy answers for it.
        return client(self.credential, self.subscription_id, base_url=self.endpoint,
                      **self.options)

    @cached_property
    def compute(self) -> Any:  # azure.mgmt.compute.ComputeManagementClient
        return self._make("azure.mgmt.compute", "ComputeManagementClient")

    @cached_property
    def network(self) -> Any:  # azure.mgmt.network.NetworkManagementClient
        return self._make("azure.mgmt.network", "NetworkManagementClient")

    @cached_property
    def resources(self) -> Any:  # azure.mgmt.resource...ResourceManagementClient
        return self._make("azure.mgmt.resource.resources", "ResourceManagementClient")
