"""Azure discovery: the GPU VM sizes Azure sells, from its own APIs.

- The Retail Prices API (public, no credentials): every pay-as-you-go Linux meter of the
  N-series sizes (Azure's GPU sizes: NC, ND, NG, NV), followed through `NextPageLink`;
  it says which sizes are priced, in which regions, on-demand and spot.
- The Compute resource SKUs (`Microsoft.Compute/skus`, with credentials): each size's GPU
  count, vCPUs and memory, and the zones of each region, followed through `nextLink`.

A size's GPU model is read from its name (Standard_NC40ads_H100_v5: H100); a size the
catalog already names keeps its bundled row. A size new to the catalog needs its resource
SKU for its GPU count and memory: without credentials it is counted, not kept. What is
kept goes to the discovered-types file like the other clouds'; `costsched collect` then
prices it from the same Retail Prices API.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd

from costsched import catalog

RETAIL_URL = "https://prices.azure.com/api/retail/prices"
SKUS_URL = "https://management.azure.com/subscriptions/{subscription}/providers/Microsoft.Compute/skus"
SKUS_API_VERSION = "2021-07-01"
SOURCE = "discovered: azure Retail Prices API"
SKUS_SOURCE = "discovered: azure Retail Prices API + Microsoft.Compute/skus"
GPU_SIZE = re.compile(r"^Standard_N[CDGV]")
# GPU model of a size, from the accelerator its name carries (first match wins). Sizes
# named without one are the older series, told apart by their suffix.
_NAMED = (
    (re.compile(r"_GB200_", re.I), None),  # Grace-Blackwell superchips: not in the vocabulary
    (re.compile(r"_H200_", re.I), "H200"),
    (re.compile(r"_H100_", re.I), "H100"),
    (re.compile(r"_MI300X_", re.I), "MI300X"),
    (re.compile(r"^Standard_ND\d+a?msr_A100_v4$|^Standard_NC\d+ads_A100_v4$", re.I), "A100-80GB"),
    (re.compile(r"^Standard_ND\d+asr_v4$", re.I), "A100"),
    (re.compile(r"_A10_v5$", re.I), "A10"),
    (re.compile(r"_T4_v3$", re.I), "T4"),
    (re.compile(r"^Standard_NC\d+r?s_v3$", re.I), "V100"),
    (re.compile(r"^Standard_NC\d+r?s_v2$", re.I), "P100"),
    (re.compile(r"^Standard_NC\d+r?$", re.I), "K80"),
)


def gpu_model(size: str) -> str | None:
    """The catalog's GPU model of an Azure GPU size name, or None if it names none the
    catalog knows."""
    for pattern, model in _NAMED:
        if pattern.search(size):
            return model
    return None


def retail_filter(region: str | None = None) -> str:
    """The OData filter of every pay-as-you-go Virtual Machines meter (one region or all)."""
    where = f" and armRegionName eq '{region}'" if region else ""
    return f"serviceName eq 'Virtual Machines' and priceType eq 'Consumption'{where}"


def pages(session: Any, url: str, params: dict[str, str], items_key: str, next_key: str,
          timeout: float = 30.0) -> Iterable[dict]:
    """Every item of a paged Azure answer, following its next-page link to the last page."""
    seen: set[str] = set()
    next_url: str | None = url
    query: dict[str, str] | None = params
    while next_url:
        answer = session.get(next_url, params=query, timeout=timeout)
        answer.raise_for_status()
        body = answer.json()
        yield from body.get(items_key) or []
        next_url, query = body.get(next_key) or None, None
        if next_url in seen:
            raise RuntimeError(f"azure: next page link repeats: {next_url}")
        if next_url:
            seen.add(next_url)


def retail_sizes(items: Iterable[dict]) -> tuple[dict[str, set[str]], Counter]:
    """{GPU size: regions priced} of Retail Prices items (Linux pay-as-you-go meters)."""
    regions: dict[str, set[str]] = {}
    unknown: set[str] = set()
    for item in items:
        size = str(item.get("armSkuName") or "")
        if not GPU_SIZE.match(size):
            continue
        if "Windows" in str(item.get("productName", "")):
            continue
        if "Low Priority" in f"{item.get('meterName', '')} {item.get('skuName', '')}":
            continue
        if gpu_model(size) is None:
            unknown.add(size)
            continue
        if item.get("armRegionName"):
            regions.setdefault(size, set()).add(item["armRegionName"])
    # One count per size, not per meter.
    return regions, Counter({f"azure: GPU not in the vocabulary ({s})": 1 for s in unknown})


def sku_specs(skus: Iterable[Any]) -> dict[str, dict]:
    """{size: {gpus, vcpus, memory_gb, zones}} of resource SKU entries (REST dicts or the
    SDK's objects) for virtual machines; zones as 'region-zone'."""
    from costsched.clouds.base import message_field as _field

    specs: dict[str, dict] = {}
    for sku in skus:
        if _field(sku, "resource_type", "resourceType") != "virtualMachines":
            continue
        name = str(_field(sku, "name"))
        caps = {str(_field(c, "name")): str(_field(c, "value"))
                for c in _field(sku, "capabilities", default=[]) or []}
        spec = specs.setdefault(name, {"gpus": 0, "vcpus": 0, "memory_gb": 0.0,
                                       "zones": set()})
        spec["gpus"] = int(float(caps.get("GPUs", 0) or 0))
        spec["vcpus"] = int(float(caps.get("vCPUs", 0) or 0))
        spec["memory_gb"] = float(caps.get("MemoryGB", 0) or 0)
        for info in _field(sku, "location_info", "locationInfo", default=[]) or []:
            region = str(_field(info, "location")).lower()
            spec["zones"].update(f"{region}-{z}" for z in _field(info, "zones", default=[]) or [])
    return specs


def discover_azure(session: Any, *, regions: Iterable[str] = (),
                   skus: Iterable[Any] | None = None, retail_url: str = RETAIL_URL,
                   timeout: float = 30.0) -> Any:
    """Every GPU size priced in the Retail Prices API (in `regions`, else everywhere),
    with its specs from `skus` (resource SKU entries; None without credentials)."""
    from price_collectors.discovered import COLUMNS, Discovery
    from price_collectors.discovered import gpu_memory_gb as _gpu_memory

    chosen = sorted(set(regions)) or [None]
    items = (item for region in chosen
             for item in pages(session, retail_url, {"$filter": retail_filter(region)},
                               "Items", "NextPageLink", timeout))
    priced, ignored = retail_sizes(items)
    specs = sku_specs(skus) if skus is not None else {}
    rows = []
    for size in sorted(priced):
        model = gpu_model(size)
        known = catalog.lookup("azure", size)
        spec = specs.get(size)
        if spec is None and known is None:
            ignored["azure: new size without its resource SKU (needs credentials)"] += 1
            continue
        if spec is not None and spec["gpus"] < 1:
            ignored[f"azure: resource SKU lists no whole GPU ({size})"] += 1
            continue
        row = {"cloud": "azure", "instance_type": size, "gpu_model": model,
               "regions": " ".join(sorted(priced[size])), "zones": "",
               "source": SOURCE}
        if spec is not None:
            row.update(gpu_count=spec["gpus"], gpu_memory_gb=_gpu_memory(model),
                       vcpus=spec["vcpus"], memory_gb=spec["memory_gb"],
                       zones=" ".join(sorted(spec["zones"])), source=SKUS_SOURCE)
        else:
            row.update({c: known[c] for c in ("gpu_model", "gpu_count", "gpu_memory_gb",
                                               "vcpus", "memory_gb")})
        rows.append(row)
    types = pd.DataFrame(rows, columns=COLUMNS)
    new = [f"azure {t}" for t in types["instance_type"] if catalog.lookup("azure", t) is None]
    return Discovery(types, ignored, new)


def resource_skus(session: Any, subscription: str, token: str, *, url: str = SKUS_URL,
                  timeout: float = 30.0) -> list[dict]:
    """The subscription's Compute resource SKUs (REST, every page), read with `token`
    (`url` a template with {subscription})."""
    session.headers["Authorization"] = f"Bearer {token}"
    try:
        return list(pages(session, url.format(subscription=subscription),
                          {"api-version": SKUS_API_VERSION}, "value", "nextLink", timeout))
    finally:
        session.headers.pop("Authorization", None)


def credentials() -> tuple[str, Callable[[], str]] | None:
    """(subscription, token getter) when azure-identity and AZURE_SUBSCRIPTION_ID are there;
    None otherwise (discovery then reads the Retail Prices API alone)."""
    import os

    subscription = os.environ.get("AZURE_SUBSCRIPTION_ID")
    if not subscription:
        return None
    try:
        from azure.identity import DefaultAzureCredential
    except ImportError:
        return None
    credential = DefaultAzureCredential()
    return subscription, lambda: credential.get_token(
        "https://management.azure.com/.default").token
