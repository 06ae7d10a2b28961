"""AWS Cost and Usage Report 2.0 (Data Exports) and legacy CUR files in S3, as bill lines.

Columns are read by their documented names (CUR 2.0: `line_item_usage_start_date`, ...);
legacy CUR's `lineItem/UsageStartDate` and Athena's `line_item_usage_start_date` are the same
names once normalised. Tags: CUR 2.0's `resource_tags` map (`user_costsched_job`), legacy
CUR's `resourceTags/user:costsched-job` or `resource_tags_user_costsched_job` columns, each
present once the tag is activated as a cost allocation tag. Per billing period, only the
newest delivery's files are read (`costsched.bills.deliveries`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pandas as pd

from costsched.bills import deliveries, files
from costsched.bills.lines import (
    BadExport,
    costsched_tags,
    finish,
    numbers,
    parse_tags,
    require,
    times,
)
from costsched.model import InvalidInput

NEEDED = ["line_item_resource_id", "line_item_usage_start_date", "line_item_usage_end_date",
          "line_item_line_item_type", "line_item_product_code", "line_item_usage_type",
          "line_item_unblended_cost"]
# line_item_line_item_type: what each documented value is, for `report --billed`. A type
# not named here (AWS adds some) is "other"; usage types decide what a usage line is.
TAX_TYPES = {"Tax"}
CREDIT_TYPES = {"Credit", "Refund", "BundledDiscount", "EdpDiscount", "PrivateRateDiscount",
                "Discount", "DistributorDiscount", "SavingsPlanNegation"}
USAGE_TYPES = {"Usage", "DiscountedUsage", "SavingsPlanCoveredUsage"}
_COMPUTE = re.compile(r"(^|[-:])(BoxUsage|SpotUsage|DedicatedUsage|HostUsage|"
                      r"UnusedBox|ReservedHostUsage)\b")
_EGRESS = re.compile(r"DataTransfer|-Bytes$|NatGateway-Bytes|CloudFront")
_STORAGE = re.compile(r"EBS:|VolumeUsage|SnapshotUsage|TimedStorage|Requests-Tier")


def column_name(name: str) -> str:
    """A legacy CUR header (`lineItem/UsageStartDate`) as CUR 2.0 names it
    (`line_item_usage_start_date`); CUR 2.0 and Athena names are kept."""
    if name.startswith("resourceTags/"):
        return name
    if "/" not in name:
        return name
    head, field = name.split("/", 1)
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", f"{head}_{field[:1].lower()}{field[1:]}")
    return snake.lower()


def category(line_type: str, usage_type: str, product: str) -> str:
    """A line's category from its line type, usage type and product code."""
    if line_type in TAX_TYPES:
        return "tax"
    if line_type in CREDIT_TYPES:
        return "credit"
    if line_type not in USAGE_TYPES:
        return "other"
    if _EGRESS.search(usage_type):
        return "egress"
    if _STORAGE.search(usage_type) or product == "AmazonS3":
        return "storage"
    if _COMPUTE.search(usage_type) and product in ("AmazonEC2", ""):
        return "compute"
    return "other"


def lines_of(table: pd.DataFrame, where: str) -> pd.DataFrame:
    """The bill lines of one export file's rows (`where`: the file, for messages)."""
    table = table.rename(columns=column_name)
    require(table.columns, NEEDED, where, "a Cost and Usage Report (CUR 2.0 or legacy)")
    n = len(table)

    def text(column: str) -> pd.Series:
        if column not in table.columns:
            return pd.Series([""] * n, dtype=object)
        return table[column].fillna("").astype(str).str.strip()

    line_type, usage_type, product = (text("line_item_line_item_type"),
                                      text("line_item_usage_type"),
                                      text("line_item_product_code"))
    if (line_type == "").any():
        raise BadExport(f"{where}: field line_item_line_item_type '': expected a line type "
                        "such as Usage, Tax, Credit, Refund, DiscountedUsage")
    tags = _tags(table, where)
    found = [costsched_tags(t) for t in tags]
    region = text("product_region_code")
    if "product_region_code" not in table.columns:
        region = text("product_region")
    identity = text("identity_line_item_id")
    interval = text("identity_time_interval")
    keyed = (identity != "") & (interval != "")
    frame = pd.DataFrame({
        "cloud": "aws",
        "account": text("line_item_usage_account_id"),
        "source": where,
        "line_key": ("aws:" + identity + "/" + interval).where(keyed, ""),
        "usage_start": times(table["line_item_usage_start_date"], where,
                             "line_item_usage_start_date"),
        "usage_end": times(table["line_item_usage_end_date"], where,
                           "line_item_usage_end_date"),
        "resource_id": text("line_item_resource_id"),
        "category": [category(t, u, p) for t, u, p in zip(line_type, usage_type, product,
                                                          strict=True)],
        "line_type": line_type, "service": product, "usage_type": usage_type,
        "region": region,
        "usage_amount": numbers(text("line_item_usage_amount"), where,
                                "line_item_usage_amount"),
        "usage_unit": text("pricing_unit"),
        "usd": numbers(table["line_item_unblended_cost"], where, "line_item_unblended_cost"),
        "currency": text("line_item_currency_code").replace("", "USD"),
        "job_tag": [j for j, _ in found], "attempt_tag": [a for _, a in found],
    })
    return finish(frame)


def _tags(table: pd.DataFrame, where: str) -> list[dict[str, str]]:
    """Each row's tags: CUR 2.0's resource_tags map, or legacy CUR's one column per tag."""
    if "resource_tags" in table.columns:
        return [parse_tags(v, where, "resource_tags") for v in table["resource_tags"]]
    columns = [c for c in table.columns
               if c.startswith(("resourceTags/", "resource_tags_"))]
    rows = table[columns].fillna("").astype(str).to_dict("records") if columns else \
        [{}] * len(table)
    return [{k: v for k, v in row.items() if v} for row in rows]


# --- S3 ---------------------------------------------------------------------------------


def split_uri(uri: str) -> tuple[str, str]:
    """(bucket, prefix) of an s3:// URI."""
    if not uri.startswith("s3://") or len(uri) <= 5:
        raise InvalidInput(f"export {uri!r}: expected an S3 location, "
                           "s3://BUCKET/PREFIX (the Data Export's folder)")
    bucket, _, prefix = uri[5:].partition("/")
    return bucket, prefix


def read_s3(uri: str, client: Any = None, page_size: int = 1000
            ) -> Iterator[tuple[str, pd.DataFrame]]:
    """(file, its bill lines) for each export file to read under `uri` (s3://bucket/prefix:
    one file, or a folder listed page by page), in key order: per billing period, the
    newest delivery's (`deliveries`). `client`: a boto3 S3 client (default: one from the
    default session)."""
    return scan_s3(uri, client, page_size).lines()


def scan_s3(uri: str, client: Any = None, page_size: int = 1000) -> deliveries.Scan:
    """The export files under `uri`, listed, and those to read chosen (`deliveries`): a
    location inside a billing period's folder is listed from that folder."""
    from costsched.clouds.aws import new_session, sdk_errors

    bucket, prefix = split_uri(uri)
    s3 = client if client is not None else new_session().client("s3")
    refused, failed = sdk_errors()
    try:
        listed = [deliveries.Listed(o["Key"], o.get("LastModified"))
                  for page in s3.get_paginator("list_objects_v2").paginate(
                      Bucket=bucket, Prefix=deliveries.widen(prefix),
                      PaginationConfig={"PageSize": page_size})
                  for o in page.get("Contents", [])]
    except (refused, failed) as exc:
        raise InvalidInput(f"export {uri}: cannot list it ({_error(exc)})") from None
    if not any(files.is_export_file(o.name) and o.name.startswith(prefix) for o in listed):
        raise InvalidInput(f"export {uri}: no export file there; expected "
                           f"{', '.join(files.SUFFIXES)} files under that prefix")

    def fetch(key: str) -> bytes:
        try:
            return s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        except (refused, failed) as exc:
            raise InvalidInput(f"s3://{bucket}/{key}: cannot read it ({_error(exc)})"
                               ) from None

    return deliveries.Scan(f"s3://{bucket}/", deliveries.select(listed, prefix, fetch),
                           fetch, lines_of)


def _error(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        error = response.get("Error", {})
        return f"{error.get('Code', '')}: {error.get('Message', '')}".strip(": ")
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
