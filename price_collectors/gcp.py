"""GCP prices from the Cloud Billing Catalog API, gated by accelerator availability.

Compute Engine bills a GPU VM by components: per vCPU-hour and per GiB-hour of its
machine family (N1, A2, A3, G2) plus per GPU-hour of its accelerator, each a SKU with a
regional price, on-demand (usageType OnDemand) or spot (usageType Preemptible). This
collector reads those SKUs (`CloudCatalogClient.list_skus`) and prices each catalog
offering as vCPUs x core + GiB x RAM + GPUs x GPU, which is how the bill adds up. A4
machines (B200) have no core or RAM SKU: one SKU per "GPU slice" (one GPU with its share
of vCPUs and memory, "A4 Nvidia B200 (1 gpu slice) running in ...") prices the whole
machine as GPUs x slice. Their spot SKU is known by its description ("Spot Preemptible
A4 ..."), which wins over the usage type it is filed under. What it
leaves out, honestly: the local SSD that a2-ultragpu / a3 machines carry (billed as its
own SKU), sustained-use and committed-use discounts, and any bundled SKU GCP may publish
for a machine type (an offering whose component SKUs are absent stays unpriced and is
listed as such in the coverage, never guessed).

Availability: `AcceleratorTypesClient.aggregated_list` says which zones offer which
accelerator (and how many per VM). GCP prices are regional, so an offering is stored once
per region (zone "") and only in regions where at least one zone offers its accelerator
with enough cards; the zones are kept in `Collection.coverage` for launchers.

The Catalog API returns the latest prices stamped with the request time, not the time the
price took effect, so this is a snapshot source: the runner stores a row only when an
offering's price moved.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

import pandas as pd

from costsched.clouds import SdkMissing
from costsched.clouds.base import message_field as _get
from costsched.clouds.gcp import (
    GCP,
    SKU_GPU_NAMES,
    NoProject,
    credentials_and_project,
    zones_listed,
)
from price_collectors.base import (
    Collector,
    CollectorUnavailable,
    UnitError,
    UnitResult,
    one_line,
    rows_frame,
)

COMPUTE_SERVICE = "services/6F81-5844-456A"  # Compute Engine in the Billing Catalog
SOURCE = "collect:gcp:billing-catalog"
UNIT = "all regions"  # the catalog is one listing for every region
MARKETS = {"OnDemand": "on_demand", "Preemptible": "spot"}
PRICED_MARKETS = ("on_demand", "spot", "flex_start")
# Machine family of an instance type prefix -> the family as SKU descriptions name it.
FAMILIES = {"n1": "n1 predefined", "a2": "a2", "a3": "a3", "g2": "g2", "a4": "a4"}
# Families priced by one SKU per GPU slice (GPU, vCPUs and memory together).
SLICE_FAMILIES = {"a4"}
_RUNNING_IN = r" running in [^()]+$"  # a parenthesised suffix marks DWS/calendar variants
# The suffix of the SKUs that bill flex-start VMs (Dynamic Workload Scheduler): priced as
# market flex_start; other parenthesised variants (calendar mode...) are left out.
FLEX_START_SUFFIX = " (DWS Defined Duration)"
_GPU_SKU = re.compile(r"^(?:spot preemptible |preemptible )?(?P<name>nvidia .+?) gpu"
                      r"(?: attached to (?:spot preemptible |preemptible |a3 )?vms)?"
                      + _RUNNING_IN, re.IGNORECASE)
_VM_SKU = re.compile(r"^(?:spot preemptible |preemptible )?(?P<family>n1 predefined|a2|a3|g2)"
                     r" instance (?P<kind>core|ram)" + _RUNNING_IN, re.IGNORECASE)
_SLICE_SKU = re.compile(r"^(?P<spot>spot preemptible |preemptible )?(?P<family>a4) "
                        r"(?P<name>nvidia .+?) \(1 gpu slice\)" + _RUNNING_IN, re.IGNORECASE)
_N1_COMBO = re.compile(r"^(?P<machine>n1-[a-z]+-\d+)\+(?P<count>\d+)x(?P<accelerator>[a-z0-9-]+)$")
UNITS = {"gpu": "h", "core": "h", "ram": "GiBy.h", "slice": "h"}


class GcpCollector(Collector):
    """On-demand and spot prices of the catalog's GCP GPU offerings."""

    cloud = "gcp"
    snapshot = True

    def __init__(
        self,
        *,
        regions: Sequence[str] = (),
        gpus: Sequence[str] = (),
        project: str | None = None,
        catalog_client: Any = None,
        accelerator_client: Any = None,
        retry_initial: float = 1.0,
    ) -> None:
        super().__init__(regions=regions, gpus=gpus, max_workers=1)
        self.project = project
        self.retry_initial = retry_initial
        self._catalog_client = catalog_client
        self._accelerator_client = accelerator_client
        self._types = self.instance_types()

    @classmethod
    def from_options(
        cls,
        regions: Sequence[str] = (),
        *,
        gpus: Sequence[str] = (),
        workers: int = 32,
        gcp_project: str | None = None,
    ) -> GcpCollector:
        """One unit (the whole catalog): `workers` does not apply."""
        return cls(regions=regions, gpus=gpus, project=gcp_project)

    def plan(self) -> list[str]:
        if self._catalog_client is None or self._accelerator_client is None:
            self._default_clients()
        return [UNIT]

    def _default_clients(self) -> None:
        try:
            from google.cloud import billing_v1, compute_v1
        except ImportError:
            raise CollectorUnavailable("gcp: google-cloud-billing and google-cloud-compute are "
                                       "not installed: pip install 'costsched[gcp]'") from None
        try:
            _, self.project = credentials_and_project(self.project)
        except NoProject:
            raise CollectorUnavailable("gcp: no project to list accelerator availability in: "
                                       "pass --gcp-project or set GOOGLE_CLOUD_PROJECT") from None
        except (LookupError, SdkMissing) as exc:
            raise CollectorUnavailable(str(exc)) from None
        self._catalog_client = self._catalog_client or billing_v1.CloudCatalogClient()
        self._accelerator_client = (self._accelerator_client
                                    or compute_v1.AcceleratorTypesClient())

    def collect_unit(self, unit: str, since: datetime | None) -> UnitResult:  # noqa: ARG002
        retry = self._retry()
        try:
            skus = list(self._catalog_client.list_skus(
                request={"parent": COMPUTE_SERVICE, "page_size": 5000}, retry=retry))
            zones = accelerator_zones(self._accelerator_client.aggregated_list(
                request={"project": self.project or "-"}, retry=retry))
        except Exception as exc:
            raise UnitError(one_line(exc)) from exc
        components, ignored = sku_components(skus, set(self.regions))
        frame, coverage = price_offerings(self._types, components, zones)
        return UnitResult(frame, ignored=ignored, coverage=coverage)

    def _retry(self) -> Any:
        """google-api-core retries of throttling and 5xx answers, page by page."""
        from google.api_core import exceptions, retry

        transient = retry.if_exception_type(
            exceptions.TooManyRequests, exceptions.InternalServerError,
            exceptions.BadGateway, exceptions.ServiceUnavailable, exceptions.GatewayTimeout)
        return retry.Retry(predicate=transient, initial=self.retry_initial,
                           maximum=30 * self.retry_initial, multiplier=2,
                           timeout=300 * self.retry_initial)



def sku_components(skus: Sequence[Any], regions: set[str]
                   ) -> tuple[dict[tuple, tuple[float, datetime]], Counter]:
    """(region, market, kind, name) -> (USD per unit, effective time) of the VM SKUs.

    kind is 'gpu' (name: catalog GPU model), 'core' or 'ram' (name: family as in SKU
    descriptions) or 'slice' (name: the family of SLICE_FAMILIES: its price per GPU with
    that GPU's vCPUs and memory). Component SKUs of other usage types (commitments) are
    counted.
    """
    components: dict[tuple, tuple[float, datetime, int]] = {}
    ignored: Counter = Counter()
    for sku in skus:
        description = str(_get(sku, "description", default=""))
        flex = description.endswith(FLEX_START_SUFFIX)
        if flex:
            description = description.removesuffix(FLEX_START_SUFFIX)
        gpu, vm = _GPU_SKU.match(description), _VM_SKU.match(description)
        piece = _SLICE_SKU.match(description)
        spot_named = False
        if piece:
            if SKU_GPU_NAMES.get(piece["name"].lower()) is None:
                continue
            kind, name, spot_named = "slice", piece["family"].lower(), bool(piece["spot"])
        elif gpu:
            model = SKU_GPU_NAMES.get(gpu["name"].lower())
            if model is None:
                continue  # another GPU (or a virtual-workstation variant)
            kind, name = "gpu", model
        elif vm:
            kind, name = vm["kind"].lower(), vm["family"].lower()
        else:
            continue  # not a GPU VM component (disks, network, other families...)
        category = _get(sku, "category", default={})
        market = MARKETS.get(str(_get(category, "usage_type", "usageType", default="")))
        if spot_named and market is not None:
            market = "spot"  # filed under OnDemand, named spot: the name says what it bills
        if flex and market is not None:
            market = "flex_start"  # billed while a flex-start VM runs, whatever its filing
        if market is None:
            ignored["GCP SKU of another usage type (commitment...)"] += 1
            continue
        price = _unit_price(sku, UNITS[kind])
        if price is None:
            ignored["GCP SKU without an hourly USD price"] += 1
            continue
        for region in _get(sku, "service_regions", "serviceRegions", default=[]) or []:
            if regions and region not in regions:
                continue
            key = (region, market, kind, name)
            # Two SKUs for one component (e.g. H100 "running in" and "attached to A3
            # VMs running in"): the more specific description wins, deterministically.
            rank = len(description)
            if key not in components or rank > components[key][2]:
                if key in components:
                    ignored["GCP SKU superseded by a more specific one"] += 1
                components[key] = (*price, rank)
            else:
                ignored["GCP SKU superseded by a more specific one"] += 1
    return {k: (v[0], v[1]) for k, v in components.items()}, ignored


def _unit_price(sku: Any, unit: str) -> tuple[float, datetime] | None:
    """USD per `unit` of the SKU's newest pricing info, first tier; None if not that."""
    infos = list(_get(sku, "pricing_info", "pricingInfo", default=[]) or [])
    if not infos:
        return None
    info = max(infos, key=lambda i: _time(_get(i, "effective_time", "effectiveTime")))
    expression = _get(info, "pricing_expression", "pricingExpression", default={})
    if _get(expression, "usage_unit", "usageUnit") != unit:
        return None
    rates = list(_get(expression, "tiered_rates", "tieredRates", default=[]) or [])
    if not rates:
        return None
    rate = min(rates, key=lambda r: float(_get(r, "start_usage_amount", "startUsageAmount",
                                               default=0) or 0))
    money = _get(rate, "unit_price", "unitPrice", default={})
    if (_get(money, "currency_code", "currencyCode", default="USD") or "USD") != "USD":
        return None
    units = float(_get(money, "units", default=0) or 0)
    nanos = float(_get(money, "nanos", default=0) or 0)
    return units + nanos / 1e9, _time(_get(info, "effective_time", "effectiveTime"))


def _time(value: Any) -> datetime:
    if value is None or value == "":
        return datetime.now(timezone.utc)
    ts = pd.Timestamp(value)
    ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
    return ts.to_pydatetime()


def accelerator_zones(pages: Any) -> dict[str, dict[str, int]]:
    """accelerator name -> {zone: most cards per VM}, from an aggregated_list answer."""
    return zones_listed(pages, "accelerator_types")


def price_offerings(
    types: pd.DataFrame,
    components: dict[tuple, tuple[float, datetime]],
    zones: dict[str, dict[str, int]],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Observation rows of every (region, market, type) whose components and accelerator
    exist there, and a coverage table saying why the others are unpriced."""
    regions = sorted({k[0] for k in components})
    rows, coverage = [], []
    for spec in types.to_dict("records"):
        parts = machine_parts(spec)
        if parts is None:
            continue
        family, accelerator = parts
        gpus, vcpus, memory = int(spec["gpu_count"]), int(spec["vcpus"]), float(spec["memory_gb"])
        for region in regions:
            in_zones = sorted(z for z, cards in zones.get(accelerator, {}).items()
                              if GCP.region_of_zone(z) == region and cards >= gpus)
            for market in PRICED_MARKETS:
                needed = ({"slice": (region, market, "slice", family)}
                          if family in SLICE_FAMILIES else
                          {"core": (region, market, "core", family),
                           "ram": (region, market, "ram", family),
                           "gpu": (region, market, "gpu", spec["gpu_model"])})
                missing = [k for k, key in needed.items() if key not in components]
                if market == "flex_start" and len(missing) == len(needed):
                    continue  # no flex-start SKU of the type at all: not offered so
                status = ("no zone offers it" if not in_zones else
                          f"no {'/'.join(missing)} SKU" if missing else "priced")
                coverage.append((region, spec["instance_type"], market, ",".join(in_zones),
                                 status))
                if status != "priced":
                    continue
                if family in SLICE_FAMILIES:
                    price, effective = gpus * components[needed["slice"]][0], \
                        components[needed["slice"]][1]
                else:
                    core, ram, gpu = (components[needed[k]] for k in ("core", "ram", "gpu"))
                    price = vcpus * core[0] + memory * ram[0] + gpus * gpu[0]
                    effective = max(core[1], ram[1], gpu[1])
                rows.append(("gcp", region, "", spec["instance_type"], market, "linux",
                             spec["gpu_model"], gpus, vcpus, memory, round(price, 9), effective))
    table = pd.DataFrame(coverage, columns=["region", "instance_type", "market", "zones",
                                            "status"])
    return rows_frame(rows, SOURCE), table


def machine_parts(spec: dict) -> tuple[str, str] | None:
    """(family as SKU descriptions name it, accelerator type name) of a catalog GCP type:
    'n1-standard-8+1xnvidia-tesla-v100' -> ('n1 predefined', 'nvidia-tesla-v100')."""
    name = str(spec["instance_type"])
    combo = _N1_COMBO.match(name)
    if combo:
        return FAMILIES["n1"], combo["accelerator"]
    family = FAMILIES.get(name.split("-")[0])
    accelerator = GCP.accelerators.get(str(spec["gpu_model"]))
    if family is None or accelerator is None:
        return None
    return family, accelerator
