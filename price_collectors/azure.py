"""Azure prices from the public Retail Prices REST API (no credentials needed).

One unit of work is one GPU model's VM sizes across all regions (or, with `--region`,
one region's GPU sizes), fetched with an OData `$filter` and followed through its
`NextPageLink` pages. Retries of 429 and 5xx answers (honouring Retry-After) are done by
urllib3's `Retry` under the requests session. Spot meters ("... Spot") are the spot
market; regular meters are on-demand; "Low Priority" meters (Azure Batch's older
pre-emptible VMs, retired) and Windows meters are counted as ignored, not stored.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pandas as pd

from costsched.clouds import SdkMissing
from costsched.clouds.azure import http_session
from price_collectors.base import (
    Collector,
    CollectorUnavailable,
    Rejection,
    UnitError,
    UnitResult,
    rows_frame,
)

DEFAULT_URL = "https://prices.azure.com/api/retail/prices"
ENV_URL = "COSTSCHED_AZURE_PRICES_URL"
SOURCE = "collect:azure:retail-prices"
SKUS_PER_QUERY = 15  # keeps the filter, and so the URL, short
MAX_WORKERS = 8


def price_filter(skus: Sequence[str], region: str | None = None) -> str:
    """The OData filter for Linux-or-not pay-as-you-go prices of `skus` (one region or all)."""
    sizes = " or ".join(f"armSkuName eq '{s}'" for s in skus)
    where = f" and armRegionName eq '{region}'" if region else ""
    return (f"serviceName eq 'Virtual Machines' and priceType eq 'Consumption'{where}"
            f" and ({sizes})")


class AzureCollector(Collector):
    """Pay-as-you-go and spot prices of the catalog's Azure GPU VM sizes."""

    cloud = "azure"

    def __init__(
        self,
        *,
        regions: Sequence[str] = (),
        gpus: Sequence[str] = (),
        base_url: str | None = None,
        retries: int = 6,
        backoff: float = 0.5,
        timeout: float = 30.0,
        max_workers: int = MAX_WORKERS,
    ) -> None:
        super().__init__(regions=regions, gpus=gpus, max_workers=max_workers)
        self.base_url = base_url or os.environ.get(ENV_URL) or DEFAULT_URL
        self.retries = retries
        self.backoff = backoff
        self.timeout = timeout
        types = self.instance_types()
        self._specs = {r["instance_type"]: r for r in types.to_dict("records")}
        self._by_gpu = {gpu: sorted(group["instance_type"])
                        for gpu, group in types.groupby("gpu_model")}

    @classmethod
    def from_options(
        cls,
        regions: Sequence[str] = (),
        *,
        gpus: Sequence[str] = (),
        workers: int = 32,
        gcp_project: str | None = None,
    ) -> AzureCollector:
        """`workers` units at once, at most MAX_WORKERS (this collector's default)."""
        return cls(regions=regions, gpus=gpus, max_workers=min(workers, MAX_WORKERS))

    def plan(self) -> list[str]:
        self._session().close()  # CollectorUnavailable now, before any unit, without requests
        return sorted(set(self.regions)) if self.regions else sorted(self._by_gpu)

    def collect_unit(self, unit: str, since: datetime | None) -> UnitResult:  # noqa: ARG002
        # Retail prices are current prices with their own effective dates: `since` is moot.
        region = unit if self.regions else None
        skus = sorted(self._specs) if self.regions else self._by_gpu[unit]
        session = self._session()
        items: list[dict] = []
        try:
            for start in range(0, len(skus), SKUS_PER_QUERY):
                items.extend(self._pages(session, price_filter(skus[start:start + SKUS_PER_QUERY],
                                                               region)))
        except Exception as exc:
            raise UnitError(_http_error(exc)) from exc
        finally:
            session.close()
        return items_frame(items, self._specs, set(self.regions))

    def _session(self) -> Any:
        try:
            session = http_session(self.retries, self.backoff)
        except SdkMissing as exc:
            raise CollectorUnavailable(str(exc)) from None
        session.headers["Accept"] = "application/json"
        return session

    def _pages(self, session: Any, odata_filter: str) -> list[dict]:
        """Every item of a query, following NextPageLink to the last page."""
        items: list[dict] = []
        url: str | None = self.base_url
        params: dict[str, str] | None = {"$filter": odata_filter}
        seen: set[str] = set()
        while url:
            answer = session.get(url, params=params, timeout=self.timeout)
            answer.raise_for_status()
            body = answer.json()
            items.extend(body.get("Items", []))
            url, params = body.get("NextPageLink") or None, None
            if url in seen:
                raise UnitError(f"NextPageLink repeats: {url}")
            if url:
                seen.add(url)
        return items


def items_frame(items: list[dict], specs: dict[str, dict], regions: set[str]) -> UnitResult:
    """Observation rows of Retail Prices items; what is left out is counted by reason."""
    ignored: Counter = Counter()
    found: dict[tuple, set] = {}
    for item in items:
        reason = _skip_reason(item, specs, regions)
        if reason:
            ignored[reason] += 1
            continue
        names = f"{item.get('meterName', '')} {item.get('skuName', '')}"
        market = "spot" if "Spot" in names else "on_demand"
        effective = pd.Timestamp(item.get("effectiveStartDate") or "1970-01-01T00:00:00Z")
        effective = effective.tz_localize("UTC") if effective.tzinfo is None else effective
        key = (item["armRegionName"], item["armSkuName"], market, effective.tz_convert("UTC"))
        found.setdefault(key, set()).add(item.get("retailPrice"))
    rows, rejected = [], []
    for (region, sku, market, effective), prices in sorted(found.items()):
        if len(prices) > 1:
            rejected.append(Rejection("azure", region, "", sku, market, sorted(prices, key=str),
                                      "ambiguous: several meters match"))
            continue
        spec = specs[sku]
        rows.append(("azure", region, "", sku, market, "linux", spec["gpu_model"],
                     int(spec["gpu_count"]), int(spec["vcpus"]), float(spec["memory_gb"]),
                     prices.pop(), effective))
    return UnitResult(rows_frame(rows, SOURCE), ignored=ignored, rejected=rejected)


def _skip_reason(item: dict, specs: dict[str, dict], regions: set[str]) -> str | None:
    names = f"{item.get('meterName', '')} {item.get('skuName', '')}"
    if item.get("armSkuName") not in specs:
        return "VM size not in catalog"
    if "Windows" in item.get("productName", ""):
        return "Windows meter"
    if "Low Priority" in names:
        return "Low Priority meter"
    if item.get("type", "Consumption") != "Consumption":
        return "not pay-as-you-go"
    if item.get("currencyCode", "USD") != "USD":
        return "not USD"
    if item.get("unitOfMeasure", "1 Hour") != "1 Hour" or item.get("tierMinimumUnits", 0):
        return "not a plain hourly price"
    if not item.get("armRegionName") or (regions and item["armRegionName"] not in regions):
        return "other region"
    return None


def _http_error(exc: BaseException) -> str:
    import requests

    inner = exc.args[0] if exc.args else None
    reason = getattr(inner, "reason", None)
    if isinstance(exc, requests.exceptions.RetryError):
        return f"gave up after retries: {reason or exc}"
    if isinstance(exc, requests.HTTPError) and exc.response is not None:
        return f"HTTP {exc.response.status_code} from {exc.response.url.split('?')[0]}"
    if isinstance(exc, requests.ConnectionError):
        host = getattr(getattr(inner, "pool", None), "host", None) or "the API"
        why = type(reason).__name__ if reason is not None else type(exc).__name__
        return f"cannot connect to {host} ({why})"
    if isinstance(exc, UnitError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
