"""AWS prices: on-demand from the Price List API, spot history from EC2, region by region.

One unit of work is one region: its on-demand list prices (`pricing.get_products`) and
its spot price changes since the region's watermark (`ec2.describe_spot_price_history`),
both through boto3's paginators. Clients use botocore's adaptive retry mode, so throttling
(ThrottlingException, RequestLimitExceeded) and 5xx answers are retried by botocore with
backoff and client-side rate limiting. Endpoints come from boto3's own configuration
(AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_EC2, AWS_ENDPOINT_URL_PRICING, profiles).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from datetime import datetime, timedelta, timezone
from typing import Any

import pandas as pd

from costsched.clouds import SdkMissing
from costsched.clouds import aws as aws_cloud
from costsched.model import InvalidInput
from price_collectors import recorded
from price_collectors.base import (
    Collector,
    CollectorUnavailable,
    Rejection,
    UnitError,
    UnitResult,
    empty_frame,
    one_line,
    rows_frame,
)

SERVICE_CODE = "AmazonEC2"
# The Price List Query API is served from us-east-1 (also eu-central-1, ap-south-1).
PRICING_REGION = "us-east-1"
SPOT_PRODUCTS = ("Linux/UNIX",)
SPOT_PAGE_SIZE = 1000  # the API's maximum
PRICE_LIST_PAGE_SIZE = 100  # the API's maximum
# First collection of a region (no watermark): this much spot history.
DEFAULT_LOOKBACK = timedelta(days=7)
HISTORY_KEPT = timedelta(days=90)  # EC2 keeps this much spot price history
SPOT_SOURCE = "collect:aws:spot-price-history"
PRICE_LIST_SOURCE = "collect:aws:price-list"
# What pins one Linux on-demand price per instance type in the Price List. The family
# filter (rather than one query per instanceType) keeps it to one or two calls per
# region for the catalog's ~30 types; the rows are then kept for the catalog's types.
PRICE_LIST_TERMS = (
    ("operatingSystem", "Linux"),
    ("tenancy", "Shared"),
    ("preInstalledSw", "NA"),
    ("capacitystatus", "Used"),
    ("instanceFamily", "GPU instance"),
)


def _new_session() -> Any:
    try:
        return aws_cloud.new_session()
    except SdkMissing as exc:
        raise CollectorUnavailable(str(exc)) from None


class AwsClients:
    """Makes boto3 clients from one session: one EC2 client per region, and one Price List
    client shared by all regions (one API, one adaptive rate budget). Client creation is
    serialized (boto3 sessions are not thread-safe); botocore clients are thread-safe."""

    def __init__(self, session: Any = None, config: Any = None,
                 pricing_region: str = PRICING_REGION) -> None:
        self.session = session or _new_session()
        self.config = config or aws_cloud.boto_config()
        self.pricing_region = pricing_region
        self._lock = threading.Lock()
        self._pricing: Any = None

    def check_credentials(self) -> None:
        if self.session.get_credentials() is None:
            raise CollectorUnavailable(
                "aws: no AWS credentials found: run `aws configure`, set AWS_PROFILE, or set "
                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")

    def home_region(self) -> str:
        return self.session.region_name or "us-east-1"

    def ec2(self, region: str) -> Any:
        with self._lock:
            return self.session.client("ec2", region_name=region, config=self.config)

    def pricing(self, region: str) -> Any:  # noqa: ARG002 - the region it will price
        with self._lock:
            if self._pricing is None:
                self._pricing = self.session.client("pricing", region_name=self.pricing_region,
                                                    config=self.config)
            return self._pricing


class AwsCollector(Collector):
    """On-demand and spot prices of the catalog's AWS GPU instance types."""

    cloud = "aws"

    def __init__(
        self,
        *,
        regions: list[str] | tuple[str, ...] = (),
        gpus: list[str] | tuple[str, ...] = (),
        clients: Any = None,
        lookback: timedelta = DEFAULT_LOOKBACK,
        max_workers: int = 32,
        now: datetime | None = None,
    ) -> None:
        super().__init__(regions=regions, gpus=gpus, max_workers=max_workers)
        self._clients = clients
        self.lookback = lookback
        self.now = now
        self._specs = {r["instance_type"]: r for r in self.instance_types().to_dict("records")}

    @property
    def clients(self) -> Any:
        if self._clients is None:
            clients = AwsClients()
            clients.check_credentials()
            self._clients = clients
        return self._clients

    def watermark_filters(self) -> dict[str, list[str]]:
        return {"cloud": ["aws"], "market": ["spot"], "os": ["linux"],
                "instance_type": sorted(self._specs)}

    def plan(self) -> list[str]:
        if self.regions:
            return sorted(set(self.regions))
        clients = self.clients
        try:
            answer = clients.ec2(clients.home_region()).describe_regions(AllRegions=False)
        except Exception as exc:
            raise CollectorUnavailable(f"aws: cannot list regions: {_aws_error(exc)}") from None
        return sorted(r["RegionName"] for r in answer.get("Regions", []))

    def collect_unit(self, unit: str, since: datetime | None) -> UnitResult:
        self.clients  # noqa: B018 - no SDK or no credentials: the cloud, not this unit
        try:
            on_demand, ignored, rejected = self.on_demand(unit)
            spot, spot_rejected = self.spot_history(unit, since)
        except Exception as exc:
            raise UnitError(_aws_error(exc)) from exc
        frames = [f for f in (on_demand, spot) if len(f)]
        frame = pd.concat(frames, ignore_index=True) if frames else empty_frame()
        return UnitResult(frame, ignored=ignored, rejected=rejected + spot_rejected)

    # --- spot ------------------------------------------------------------------------

    def spot_history(self, region: str, since: datetime | None
                     ) -> tuple[pd.DataFrame, list[Rejection]]:
        """Every spot price change of the region's catalog types since `since`.

        EC2 also returns the price in effect at StartTime (with its own, earlier time), so
        the history stays continuous across incremental runs.
        """
        if not self._specs:
            return empty_frame(), []
        now = self.now or datetime.now(timezone.utc)
        # An old watermark (say, from imported 2020 logs) asks for all EC2 still has.
        start = max(since or (now - self.lookback), now - HISTORY_KEPT)
        paginator = self.clients.ec2(region).get_paginator("describe_spot_price_history")
        pages = paginator.paginate(
            InstanceTypes=sorted(self._specs), ProductDescriptions=list(SPOT_PRODUCTS),
            StartTime=start, PaginationConfig={"PageSize": SPOT_PAGE_SIZE},
        )
        items = [item for page in pages for item in page.get("SpotPriceHistory", [])]
        return spot_frame(items, region)

    # --- on-demand -------------------------------------------------------------------

    def on_demand(self, region: str) -> tuple[pd.DataFrame, Counter, list[Rejection]]:
        """The region's Linux on-demand list prices of the catalog's types."""
        if not self._specs:
            return empty_frame(), Counter(), []
        filters = [{"Type": "TERM_MATCH", "Field": field, "Value": value}
                   for field, value in (*PRICE_LIST_TERMS, ("regionCode", region))]
        paginator = self.clients.pricing(region).get_paginator("get_products")
        pages = paginator.paginate(
            ServiceCode=SERVICE_CODE, Filters=filters, FormatVersion="aws_v1",
            PaginationConfig={"PageSize": PRICE_LIST_PAGE_SIZE},
        )
        return price_list_frame((e for p in pages for e in p.get("PriceList", [])),
                                region, self._specs)


def spot_frame(items: list[dict], region: str) -> tuple[pd.DataFrame, list[Rejection]]:
    """`SpotPriceHistory` items as observations, through the same parser as recorded files.

    A malformed item becomes a rejection instead of failing the whole region.
    """
    where = f"describe_spot_price_history {region}"
    try:
        return recorded.spot_history_frame(items, source=SPOT_SOURCE, path=where), []
    except InvalidInput:
        pass  # find the bad items one by one (rare; slower)
    frames, rejected = [], []
    for item in items:
        try:
            frames.append(recorded.spot_history_frame([item], source=SPOT_SOURCE, path=where))
        except InvalidInput as exc:
            get = item.get if isinstance(item, dict) else (lambda _k, _d="": _d)
            rejected.append(Rejection("aws", region, str(get("AvailabilityZone", "")),
                                      str(get("InstanceType", "")), "spot",
                                      get("SpotPrice", None), _after_row(str(exc))))
    good = pd.concat(frames, ignore_index=True) if frames else empty_frame()
    return good, rejected


def price_list_frame(
    entries: Any, region: str, specs: dict[str, dict]
) -> tuple[pd.DataFrame, Counter, list[Rejection]]:
    """Observation rows from Price List entries (JSON strings, as GetProducts returns them)."""
    ignored: Counter = Counter()
    found: dict[str, list[tuple[str, pd.Timestamp]]] = {}
    for entry in entries:
        product = json.loads(entry) if isinstance(entry, str) else entry
        attrs = product.get("product", {}).get("attributes", {})
        instance_type = attrs.get("instanceType", "")
        if instance_type not in specs:
            ignored["price list: type not in catalog"] += 1
            continue
        if not _is_plain_linux(attrs) or attrs.get("regionCode", region) != region:
            ignored["price list: not plain Linux, shared tenancy, in this region"] += 1
            continue
        for price, effective in _on_demand_terms(product):
            found.setdefault(instance_type, []).append((price, effective))
    rows, rejected = [], []
    for instance_type, prices in sorted(found.items()):
        spec = specs[instance_type]
        distinct = {p for p, _ in prices}
        if len(distinct) > 1:
            rejected.append(Rejection("aws", region, "", instance_type, "on_demand",
                                      sorted(distinct), "ambiguous: several price list "
                                      "products match"))
            continue
        price, effective = max(prices, key=lambda p: p[1])
        rows.append(("aws", region, "", instance_type, "on_demand", "linux",
                     spec["gpu_model"], int(spec["gpu_count"]), int(spec["vcpus"]),
                     float(spec["memory_gb"]), price, effective))
    return rows_frame(rows, PRICE_LIST_SOURCE), ignored, rejected


def _is_plain_linux(attrs: dict) -> bool:
    return (attrs.get("operatingSystem") == "Linux" and attrs.get("tenancy") == "Shared"
            and attrs.get("preInstalledSw", "NA") == "NA"
            and attrs.get("capacitystatus", "Used") == "Used"
            and attrs.get("licenseModel", "No License required") == "No License required"
            and attrs.get("operation", "RunInstances") == "RunInstances")


def _on_demand_terms(product: dict) -> list[tuple[str, pd.Timestamp]]:
    """(USD per hour as text, effective date) of each hourly on-demand price dimension."""
    out = []
    for term in product.get("terms", {}).get("OnDemand", {}).values():
        effective = pd.Timestamp(term.get("effectiveDate", "1970-01-01T00:00:00Z"))
        effective = effective.tz_localize("UTC") if effective.tzinfo is None else effective
        for dim in term.get("priceDimensions", {}).values():
            if dim.get("unit") == "Hrs" and "USD" in dim.get("pricePerUnit", {}):
                out.append((dim["pricePerUnit"]["USD"], effective.tz_convert("UTC")))
    return out


def _after_row(message: str) -> str:
    """The reason part of a recorded-file error message ('where: row n: reason')."""
    parts = message.split(": ", 2)
    return parts[2] if len(parts) == 3 and parts[1].startswith("row ") else message


def _aws_error(exc: BaseException) -> str:
    """One line for an AWS failure, naming the error code when AWS gave one."""
    from botocore.exceptions import ClientError, NoCredentialsError

    if isinstance(exc, NoCredentialsError):
        return "no AWS credentials found"
    if isinstance(exc, ClientError):
        err = exc.response.get("Error", {})
        attempts = exc.response.get("ResponseMetadata", {}).get("RetryAttempts")
        tried = f" (after {attempts} retries)" if attempts else ""
        return f"{err.get('Code', 'error')}: {err.get('Message', '')}{tried}".strip()
    return one_line(exc)
