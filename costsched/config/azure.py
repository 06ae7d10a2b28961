"""The [azure] section: where the azure launcher makes its VMs. Each key is checked against
Resource Manager's rules for its kind of name or id (`costsched.clouds.azure`)."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from costsched.clouds import azure as azure_names
from costsched.clouds import region_problem
from costsched.config.fields import EntryError, Section, checked


class AzureConfig(Section):
    """Where the azure launcher makes its VMs (docs/azure.md); credentials are azure-identity's
    (environment, Azure CLI login, managed identity), never configured here."""

    subscription_id: str | None = None  # none: $AZURE_SUBSCRIPTION_ID, else the CLI's default
    resource_group: str = "costsched"
    create_resource_group: bool = False  # made in `location` when missing
    location: str = "eastus"  # the resource group's, when costsched makes it
    # Location -> subnet resource id; a location not named gets costsched's own VNet there.
    subnets: dict[str, str] = Field(default_factory=dict)
    vnet: str = "costsched"  # the name prefix of costsched's own VNets: costsched-<location>
    image: str = "microsoft-dsvm:ubuntu-hpc:2204:latest"  # PUBLISHER:OFFER:SKU:VERSION or an id
    identity: str | None = None  # a user-assigned managed identity's resource id
    storage_account: str | None = None  # the account of az://CONTAINER/PATH locations
    key_vault: str | None = None  # a vault's name or URL: where a job's secrets wait for its VM
    ssh_public_key: str | None = None  # a file; none: no key anyone holds
    public_ip: bool = True  # each VM's way out (code, packages, checkpoints)
    management_endpoint: str = "https://management.azure.com"

    @field_validator("subscription_id")
    @classmethod
    def _subscription(cls, value: str | None) -> str | None:
        return checked(value, lambda v: None if azure_names.SUBSCRIPTION_ID.fullmatch(v)
                        else "expected a subscription id such as "
                             "00000000-0000-0000-0000-000000000000")

    @field_validator("location")
    @classmethod
    def _location(cls, value: str) -> str:
        return str(checked(value, lambda v: region_problem(v, ("azure",))))

    @field_validator("subnets")
    @classmethod
    def _subnets(cls, value: dict[str, str]) -> dict[str, str]:
        for location, subnet in value.items():
            problem = region_problem(location, ("azure",)) or (
                azure_names.resource_id_problem("subnet", subnet)
                if isinstance(subnet, str) else "expected a subnet's id")
            if problem:
                raise EntryError(location, subnet, problem)
        return value

    @field_validator("image")
    @classmethod
    def _image(cls, value: str) -> str:
        return str(checked(value, azure_names.image_problem))

    @field_validator("identity")
    @classmethod
    def _identity(cls, value: str | None) -> str | None:
        return checked(value, lambda v: azure_names.resource_id_problem("identity", v))

    @field_validator("storage_account")
    @classmethod
    def _account(cls, value: str | None) -> str | None:
        return checked(value, lambda v: None if azure_names.STORAGE_ACCOUNT.fullmatch(v)
                        else "expected 3-24 lowercase letters and digits (a storage "
                             "account's name)")

    @field_validator("key_vault")
    @classmethod
    def _key_vault(cls, value: str | None) -> str | None:
        def problem(text: str) -> str | None:
            try:
                azure_names.key_vault_url(text)
            except ValueError as exc:
                return str(exc)
            return None

        return checked(value, problem)

    @field_validator("vnet")
    @classmethod
    def _vnet(cls, value: str) -> str:
        return str(checked(value, lambda v: None if azure_names.VNET_PREFIX.fullmatch(v)
                            else "expected 1-40 letters, digits, '_', '.', '-', starting "
                                 "with a letter or digit (VNets are named VNET-LOCATION)"))

    @field_validator("ssh_public_key")
    @classmethod
    def _ssh_key(cls, value: str | None) -> str | None:
        return checked(value, lambda v: None if v.strip() else "expected a public key "
                        "file's path, e.g. ~/.ssh/id_ed25519.pub")

    @field_validator("resource_group")
    @classmethod
    def _group(cls, value: str) -> str:
        if not re.fullmatch(r"[-\w.()]{0,89}[-\w()]", value):
            raise ValueError("expected 1-90 letters, digits, '_', '-', '.', '(', ')', not "
                             "ending in '.'")
        return value

    @field_validator("management_endpoint")
    @classmethod
    def _endpoint(cls, value: str) -> str:
        if not value.startswith("https://"):
            raise ValueError("expected an https:// URL, e.g. https://management.azure.com")
        return value.rstrip("/")
