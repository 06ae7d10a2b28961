"""Azure: region names, egress, the default eviction rate, what the launcher needs to know
of Azure (the Scheduled Events endpoint, the errors that mean "no capacity"), and the HTTP
session with retries that its public REST APIs are read with (requests, imported only when
called). The SDK clients are made in `costsched.clouds.azure_sdk`."""

from __future__ import annotations

import re
from typing import Any

from costsched.clouds.base import Cloud, EgressPrice, PreemptionRate, SdkMissing

# The public regions Azure lists (2026-05, learn.microsoft.com/azure/reliability/
# regions-list, their programmatic names). A region opened since is accepted by its shape
# (base.py).
REGIONS = frozenset({
    "australiacentral", "australiacentral2", "australiaeast", "australiasoutheast",
    "austriaeast", "belgiumcentral", "brazilsouth", "brazilsoutheast", "canadacentral",
    "canadaeast", "centralindia", "centralus", "chilecentral", "eastasia", "eastus", "eastus2",
    "francecentral", "francesouth", "germanynorth", "germanywestcentral", "indonesiacentral",
    "israelcentral", "italynorth", "japaneast", "japanwest", "jioindiacentral", "jioindiawest",
    "koreacentral", "koreasouth", "malaysiawest", "mexicocentral", "newzealandnorth",
    "northcentralus", "northeurope", "norwayeast", "norwaywest", "polandcentral",
    "qatarcentral", "southafricanorth", "southafricawest", "southcentralus", "southeastasia",
    "southindia", "spaincentral", "swedencentral", "switzerlandnorth", "switzerlandwest",
    "uaecentral", "uaenorth", "uksouth", "ukwest", "westcentralus", "westeurope", "westindia",
    "westus", "westus2", "westus3",
})

AZURE = Cloud(
    name="azure",
    # Lower-case letters holding a direction, and an optional number (eastus, westeurope,
    # germanywestcentral, eastus2).
    region_pattern=re.compile(r"[a-z]*(?:north|south|east|west|central)[a-z]*[1-9]?"),
    region_example="eastus",
    zone_pattern=None,  # zones are "1", "2", "3" within a region
    zone_example="1",
    regions=REGIONS,
    zone_names=("1", "2", "3"),
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


# Names and ids as Resource Manager takes them (learn.microsoft.com/azure/azure-resource-
# manager/management/resource-name-rules): what a config key of Azure's must look like.
IMAGE_URN = re.compile(r"(?P<publisher>[^:\s]+):(?P<offer>[^:\s]+):(?P<sku>[^:\s]+)"
                       r":(?P<version>[^:\s]+)")
SUBSCRIPTION_ID = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")
STORAGE_ACCOUNT = re.compile(r"[a-z0-9]{3,24}")
# costsched's VNets are named PREFIX-LOCATION, 64 characters at most
VNET_PREFIX = re.compile(r"[A-Za-z0-9][\w.-]{0,39}")
_ID = r"/subscriptions/[0-9a-fA-F-]{36}/resourceGroups/[-\w.()]{1,90}/providers/"
RESOURCE_IDS = {
    "subnet": (re.compile(_ID + r"Microsoft\.Network/virtualNetworks/[^/]+/subnets/[^/]+",
                          re.IGNORECASE),
               "/subscriptions/SUB/resourceGroups/GROUP/providers/Microsoft.Network/"
               "virtualNetworks/VNET/subnets/SUBNET"),
    "identity": (re.compile(_ID + r"Microsoft\.ManagedIdentity/userAssignedIdentities/[^/]+",
                            re.IGNORECASE),
                 "/subscriptions/SUB/resourceGroups/GROUP/providers/"
                 "Microsoft.ManagedIdentity/userAssignedIdentities/NAME"),
    "image": (re.compile(_ID + r"Microsoft\.Compute/\S+", re.IGNORECASE),
              "/subscriptions/SUB/resourceGroups/GROUP/providers/Microsoft.Compute/images/NAME "
              "(or a gallery image's version)"),
}


def resource_id_problem(kind: str, value: str) -> str | None:
    """What is wrong with `value` as the resource id of a `kind` of RESOURCE_IDS; None."""
    pattern, shape = RESOURCE_IDS[kind]
    if pattern.fullmatch(value.strip()):
        return None
    return f"expected {'an' if kind[0] in 'aeiou' else 'a'} {kind}'s id, {shape}"


def image_problem(value: str) -> str | None:
    """What is wrong with `value` as a VM image: a Marketplace URN or an image's id."""
    if IMAGE_URN.fullmatch(value.strip()) or not resource_id_problem("image", value):
        return None
    return ("expected PUBLISHER:OFFER:SKU:VERSION (microsoft-dsvm:ubuntu-hpc:2204:latest) "
            "or an image's resource id (/subscriptions/.../providers/Microsoft.Compute/...)")


# Key Vault (learn.microsoft.com/azure/key-vault/general/about-keys-secrets-certificates):
# a vault's name is 3-24 letters, digits and single dashes, starting with a letter and not
# ending with a dash; its URL is https://NAME.vault.azure.net (other clouds: their suffix).
KEY_VAULT_NAME = re.compile(r"(?=.{3,24}$)[A-Za-z](?:[A-Za-z0-9]|-(?=[A-Za-z0-9]))*")
KEY_VAULT_HOSTS = (".vault.azure.net", ".vault.usgovcloudapi.net", ".vault.azure.cn")


def key_vault_url(value: str) -> str:
    """The URL of config azure.key_vault (a vault's name, in Azure's public cloud, or its
    URL); ValueError saying what is expected."""
    text = value.strip().rstrip("/")
    name, dot, suffix = text.removeprefix("https://").partition(".")
    if not dot and not text.startswith("https://") and KEY_VAULT_NAME.fullmatch(name):
        return f"https://{name.lower()}{KEY_VAULT_HOSTS[0]}"
    if text.startswith("https://") and f".{suffix.lower()}" in KEY_VAULT_HOSTS \
            and KEY_VAULT_NAME.fullmatch(name):
        return f"https://{name.lower()}.{suffix.lower()}"
    raise ValueError("expected a key vault's name (3-24 letters, digits and dashes, starting "
                     "with a letter) or its URL, https://NAME.vault.azure.net")


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

# Resource Manager's codes of a call the identity's role does not allow, and of a token
# refused (learn.microsoft.com: "Troubleshoot common Azure deployment errors"); throttling
# and servers' failures are told by their HTTP status (429, 5xx).
PERMISSION_ERROR_CODES = frozenset({"AuthorizationFailed", "LinkedAuthorizationFailed"})
CREDENTIAL_ERROR_CODES = frozenset({
    "InvalidAuthenticationToken", "InvalidAuthenticationTokenTenant",
    "ExpiredAuthenticationToken", "AuthenticationFailed"})

# --- quotas ---------------------------------------------------------------------------------

# Compute's usages per region (`usage.list(location)`, with limit and current value): a
# regular VM draws on its size's family quota ("standardNCSv3Family") and on the region's
# total ("cores"); a Spot VM on the region's low-priority vCPUs ("lowPriorityCores") only.
REGIONAL_CORES = "cores"
SPOT_CORES = "lowPriorityCores"
QUOTA_USAGE = re.compile(r"family$|^cores$|^lowprioritycores$", re.I)
_SIZE = re.compile(r"^Standard_(?P<series>[A-Z]+)\d+(?P<features>[a-z]*)"
                   r"(?P<rest>(_[A-Za-z0-9]+)*)$")


def quota_families(size: str, gpu_model: str = "") -> tuple[str, ...]:
    """The names a size's family quota may go by in the usage list, in the order tried
    (matched without case): Azure spells them its own way (Standard_NC6s_v3:
    standardNCSv3Family; NC4as_T4_v3: standardNCASv3_T4Family; ND96isr_H100_v5:
    standardNDSH100v5Family; ND96asr_v4: standardNDASv4_A100Family), so each shape is
    tried. RDMA (r) and isolated (i) letters are not part of a family's name."""
    found = _SIZE.match(size)
    if found is None:
        return ()
    series = found["series"]
    features = found["features"].replace("r", "").replace("i", "").upper()
    parts = [p for p in found["rest"].split("_") if p]
    version = next((p for p in parts if re.fullmatch(r"v\d+", p)), "")
    accelerators = [p for p in parts if p != version]
    if gpu_model and not accelerators:
        accelerators = [gpu_model.split("-")[0]]
    out = []
    for accelerator in [*accelerators, ""]:
        out.append(f"standard{series}{features}{accelerator}{version}Family")
        if accelerator:
            out.append(f"standard{series}{features}{version}_{accelerator}Family")
    return tuple(dict.fromkeys(out))


def quota_needs(region: str, instance_type: str, market: str, gpu_model: str,
                gpu_count: int, vcpus: int) -> tuple:
    """Spot: the region's low-priority vCPUs; regular: the family's vCPUs and the region's."""
    from costsched.clouds.quota_need import Need

    if vcpus <= 0:
        return ()
    if market == "spot":
        return (Need("azure", region, (SPOT_CORES,), "vCPUs", float(vcpus),
                     "Total Regional Low-priority vCPUs"),)
    out = [Need("azure", region, (REGIONAL_CORES,), "vCPUs", float(vcpus),
                "Total Regional vCPUs")]
    families = quota_families(instance_type, gpu_model)
    if families:
        out.append(Need("azure", region, families, "vCPUs", float(vcpus)))
    return tuple(out)


# Of CAPACITY_ERROR_CODES, those of a quota ("OperationNotAllowed" only when its message says
# quota): "... results in exceeding approved standardNCSv3Family Cores quota ...".
QUOTA_ERROR_CODES = frozenset({"QuotaExceeded", "OperationNotAllowed"})
_FAMILY_IN_MESSAGE = re.compile(r"approved (?P<family>\w+Family) (?:Cores|vCPUs) quota", re.I)


def quota_in_message(message: str) -> str:
    """The quota a refusal's message names ('' where it names none): a family's, the
    region's low-priority vCPUs, or its total vCPUs."""
    found = _FAMILY_IN_MESSAGE.search(message)
    if found:
        return found["family"]
    flat = message.lower().replace(" ", "").replace("-", "")
    if "lowpriority" in flat:
        return SPOT_CORES
    if "totalregional" in flat or "regionalcores" in flat:
        return REGIONAL_CORES
    return ""


def quota_request(code: str, scope: str, value: float, account: str = "") -> str:
    """The Azure CLI line (the quota extension) that asks for `value` vCPUs of `code` in
    region `scope`."""
    subscription = account or "SUBSCRIPTION_ID"
    return (f"az quota update --resource-name {code} --scope /subscriptions/{subscription}"
            f"/providers/Microsoft.Compute/locations/{scope} --limit-object "
            f"value={value:g} --resource-type dedicated")
