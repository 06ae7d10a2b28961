"""Azure: region names, egress, the default eviction rate, what the launcher needs to know
of Azure (the Scheduled Events endpoint, the errors that mean "no capacity"), and the HTTP
session with retries that its public REST APIs are read with (requests, imported only when
called). The SDK clients are made in `costsched.clouds.azure_sdk`."""

from __future__ import annotations

import re
from typing import Any

from costsched.clouds.base import Cloud, EgressPrice, PreemptionRate, SdkMissing

AZURE = Cloud(
    name="azure",
    region_pattern=re.compile(r"^[a-z]+\d*$"),
    region_example="eastus",
    zone_pattern=None,  # zones are "1", "2", "3" within a region
    zone_example="1",
    egress=EgressPrice(
        0.087, 0.02,
        "azure.microsoft.com/pricing/details/bandwidth: internet egress from North America "
        "$0.087/GB (first 10 TB/month), between regions within North America $0.02/GB, "
        "within a region free; figures as listed in 2026 (summarized at lucidity.cloud/feeds/"
        "blog/azure-storage-egress-cost)",
    ),
    storage_schemes=("az://",),
    storage_hosts=(".blob.core.windows.net", ".blob.core.usgovcloudapi.net",
                   ".blob.core.chinacloudapi.cn"),
    preemption=PreemptionRate(0.0854, "assumed: no recorded Azure eviction log; the AWS rate"),
)


def http_session(retries: int, backoff: float) -> Any:  # -> requests.Session
    """A requests session that retries 429 and 5xx answers of GETs (honouring
    Retry-After) through urllib3's Retry. SdkMissing without requests."""
    try:
        import requests
        from requests.adapters import HTTPAdapter
        from urllib3.util.retry import Retry
    except ImportError:
        raise SdkMissing("azure: requests is not installed: pip install 'costsched[azure]'"
                         ) from None
    retry = Retry(total=retries, connect=min(2, retries), backoff_factor=backoff,
                  status_forcelist=(429, 500, 502, 503, 504),
                  allowed_methods=frozenset({"GET"}), respect_retry_after_header=True)
    session = requests.Session()
    session.mount("https://", HTTPAdapter(max_retries=retry))
    session.mount("http://", HTTPAdapter(max_retries=retry))
    return session

# Environment variables that carry this cloud's credentials: never stored nor sent to an
# instance (instances use their own role).
CREDENTIAL_ENVS = ("AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PASSWORD")

# The Scheduled Events endpoint of Azure's Instance Metadata Service, as the VM reads it
# (header "Metadata: true"): a Spot VM's eviction is announced there as a Preempt event at
# least 30 seconds before it happens (learn.microsoft.com, "Scheduled Events for Linux VMs").
SCHEDULED_EVENTS_URL = "http://169.254.169.254/metadata/scheduledevents?api-version=2020-07-01"
# The error codes of a VM create that mean this offering cannot be had now: try the next
# (learn.microsoft.com: "Error messages for Azure Spot Virtual Machines", "Resolve errors for
# SKU not available", "Troubleshoot allocation failures", quota errors).
CAPACITY_ERROR_CODES = frozenset({
    "SkuNotAvailable", "AllocationFailed", "ZonalAllocationFailed",
    "OverconstrainedAllocationRequest", "OverconstrainedZonalAllocationRequest",
    "SpotPriceGreaterThanProvidedMaxPrice", "QuotaExceeded", "OperationNotAllowed",
    "AzureSpotIsNotSupportedForThisVMSize"})

