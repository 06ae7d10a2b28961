"""Azure's compute quotas GPU VMs draw on, per region: each VM family's vCPUs, the region's
total vCPUs (`cores`) and its low-priority vCPUs (`lowPriorityCores`, Spot VMs'), with
their use (`usage.list(location)` of azure-mgmt-compute, through the Azure launcher's
clients: `costsched.clouds.azure_sdk.AzureClients`).

Permission: Microsoft.Compute/locations/usages/read (in costsched's custom role,
docs/azure.md). A missing one is named in one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from costsched.clouds import SdkMissing
from costsched.clouds import azure as azure_cloud
from costsched.vocabulary import counted, unprefixed
from price_collectors.quota_reading import QuotaReading, QuotasUnreadable, reading_frame

SOURCE = "azure compute usages"
WORKERS = 8
PERMISSION = "Microsoft.Compute/locations/usages/read"


class AzureQuotaReader:
    cloud = "azure"

    def __init__(self, clients: Any = None) -> None:
        self._clients = clients

    @property
    def clients(self) -> Any:  # costsched.clouds.azure_sdk.AzureClients
        if self._clients is None:
            self._clients = _default_clients()
        return self._clients

    def read(self, regions: Sequence[str] = ()) -> QuotaReading:
        """The usages of `regions` (default the configured azure.location), WORKERS at once."""
        names = list(regions) or [_configured_location()]
        rows: list[dict] = []
        failed: dict[str, str] = {}
        clients = self.clients
        with ThreadPoolExecutor(max_workers=min(WORKERS, len(names))) as pool:
            for region, found in zip(names, pool.map(self._region, names), strict=True):
                if isinstance(found, QuotasUnreadable):
                    raise found  # a permission missing: the same in every region
                if isinstance(found, str):
                    failed[region] = found
                else:
                    rows.extend(found)
        error = fix = ""
        if failed:
            region, why = next(iter(sorted(failed.items())))
            error, fix = (f"azure: {counted(len(failed), 'region')} not read, {region}: {why}",
                          "run `costsched quotas --refresh` again")
        return QuotaReading("azure", reading_frame(rows), account=str(clients.subscription_id),
                            error=error, fix=fix, failed=failed)

    def _region(self, region: str) -> list[dict] | str | QuotasUnreadable:
        http_error, _, refused = _errors()
        try:
            usages = list(self.clients.compute.usage.list(region))
        except (http_error, refused) as exc:
            if getattr(exc, "status_code", None) in (401, 403):
                return QuotasUnreadable(
                    f"azure: {PERMISSION} is not allowed in subscription "
                    f"{self.clients.subscription_id} ({_code(exc)}): plans cannot tell "
                    "which offerings the subscription's quotas hold",
                    "give this identity the costsched role (docs/azure.md, Permissions)")
            return _text(exc)
        return [_row(region, u) for u in usages
                if azure_cloud.QUOTA_USAGE.search(str(u.name.value))]


def _row(region: str, usage: Any) -> dict:
    name = usage.name
    return {"scope": region, "code": str(name.value),
            "name": str(getattr(name, "localized_value", "") or name.value), "unit": "vCPUs",
            "limit": float(usage.limit), "used": float(usage.current_value), "source": SOURCE}


def _default_clients() -> Any:
    try:
        from costsched.clouds.azure_sdk import AzureClients, require_sdk

        require_sdk()  # said first: without the SDK, no subscription or login helps
        return AzureClients.from_config()
    except SdkMissing as exc:
        raise QuotasUnreadable(str(exc), "pip install 'costsched[azure]'") from None
    except Exception as exc:  # noqa: BLE001 - no subscription, no credential: one line
        said = unprefixed(" ".join(str(exc).split()), "azure")[:200]
        fix = "" if "az account set" in said else "az login && az account set --subscription ID"
        raise QuotasUnreadable(f"azure: quotas not read: {said}", fix) from None


def _configured_location() -> str:
    from costsched.config import effective

    return effective().azure.location


def _errors() -> tuple[type[Exception], type[Exception], type[Exception]]:
    from costsched.clouds.azure_sdk import sdk_errors

    return sdk_errors()


def _code(exc: Exception) -> str:
    return str(getattr(getattr(exc, "error", None), "code", "") or
               getattr(exc, "status_code", "") or type(exc).__name__)


def _text(exc: Exception) -> str:
    error = getattr(exc, "error", None)
    message = getattr(error, "message", None) or str(exc)
    return f"{_code(exc)}: {' '.join(str(message).split())[:200]}"
