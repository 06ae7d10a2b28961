"""Google Cloud's Cloud Billing export to BigQuery, as bill lines.

One query over the export table (`PROJECT.DATASET.gcp_billing_export_resource_v1_<ACCOUNT>`,
the detailed usage cost table; the standard `gcp_billing_export_v1_<ACCOUNT>` has no
resource names, so its lines match by labels and time only), for the usage that started in
a window, through google-cloud-bigquery. Each row's credits (promotions, sustained and
committed use discounts, free tier) become a line of their own, category credit.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import pandas as pd

from costsched.bills.lines import BadExport, costsched_tags, finish
from costsched.model import InvalidInput, utc

_TABLE = re.compile(r"^(?P<project>[a-z][-a-z0-9.:]{3,62})\.(?P<dataset>[A-Za-z0-9_]{1,1024})"
                    r"\.(?P<table>gcp_billing_export_(?P<detail>resource_)?v1_[A-Za-z0-9_]+)$")
# cost_type: what each documented value is. regular: by its service and SKU (below).
COST_TYPES = {"regular": "", "tax": "tax", "adjustment": "credit", "rounding error": "rounding"}
_EGRESS = re.compile(r"egress|network|data transfer|internet|download", re.IGNORECASE)
_STORAGE = re.compile(r"storage|\bpd\b|disk|snapshot|image", re.IGNORECASE)
_COMPUTE = re.compile(r"instance|core|ram|gpu|nvidia|tpu|preemptible|spot|vm\b",
                      re.IGNORECASE)


def parse_table(name: str) -> tuple[str, bool]:
    """(the table's project, whether it is the detailed resource table); a name that is not
    an export table is an InvalidInput naming what is accepted."""
    found = _TABLE.match(name.strip("`"))
    if found is None:
        raise InvalidInput(f"export {name!r}: expected a BigQuery billing export table, "
                           "PROJECT.DATASET.gcp_billing_export_resource_v1_<ACCOUNT> (or "
                           "the standard gcp_billing_export_v1_<ACCOUNT>)")
    return found["project"], found["detail"] is not None


def query(table: str, detailed: bool) -> str:
    """The SQL sent to BigQuery: the window's rows, with their labels and summed credits."""
    resource = ("resource.name AS resource_name, resource.global_name AS resource_global_name"
                if detailed else "'' AS resource_name, '' AS resource_global_name")
    return (
        "SELECT service.description AS service, sku.description AS sku, "
        "usage_start_time, usage_end_time, project.id AS project_id, "
        "location.region AS region, " + resource + ", "
        "cost, currency, cost_type, usage.amount_in_pricing_units AS usage_amount, "
        "usage.pricing_unit AS usage_unit, labels, "
        "(SELECT IFNULL(SUM(c.amount), 0) FROM UNNEST(credits) AS c) AS credits_amount "
        f"FROM `{table.strip('`')}` "
        # The table is partitioned by export day, never before the usage it exports.
        "WHERE _PARTITIONTIME >= TIMESTAMP_TRUNC(@since, DAY) "
        "AND usage_start_time >= @since AND usage_start_time < @until "
        "ORDER BY usage_start_time")


def category(cost_type: str, service: str, sku: str) -> str:
    """A row's category from its cost type, service and SKU descriptions."""
    fixed = COST_TYPES.get(cost_type, "other")
    if fixed:
        return fixed
    if _EGRESS.search(sku):
        return "egress"
    if service == "Cloud Storage" or _STORAGE.search(sku):
        return "storage"
    if service == "Compute Engine" and _COMPUTE.search(sku):
        return "compute"
    return "other"


def read_bigquery(table: str, since: datetime, until: datetime, client: Any = None
                  ) -> pd.DataFrame:
    """The bill lines of the usage that started in [since, until) in export `table`.
    `client`: a google.cloud.bigquery.Client (default: one on the table's project with the
    default credentials)."""
    project, detailed = parse_table(table)
    source = f"bigquery:{table.strip('`')}"
    from costsched.clouds.base import SdkMissing
    from costsched.clouds.gcp import NoCredentials, QueryFailed, bigquery_rows

    try:
        rows = bigquery_rows(project, query(table, detailed),
                             {"since": utc(since), "until": utc(until)}, client)
    except SdkMissing as exc:
        raise InvalidInput(str(exc)) from None
    except NoCredentials as exc:
        raise InvalidInput(f"gcp: no credentials for BigQuery ({exc}); run "
                           "`gcloud auth application-default login` or set "
                           "GOOGLE_APPLICATION_CREDENTIALS to a service account's key file"
                           ) from None
    except QueryFailed as exc:
        raise InvalidInput(f"export {source}: the query failed ({exc})") from None
    return lines_of(rows, source)


def lines_of(rows: list[dict], source: str) -> pd.DataFrame:
    """The bill lines of the export's rows (as the query names its columns)."""
    out = []
    for n, row in enumerate(rows, start=1):
        where = f"{source} row {n}"
        start, end = (_time(row.get(f), where, f) for f in ("usage_start_time",
                                                             "usage_end_time"))
        labels = {str(label.get("key", "")): str(label.get("value", ""))
                  for label in row.get("labels") or []}
        job, attempt = costsched_tags(labels)
        name = row.get("resource_name") or ""
        global_name = row.get("resource_global_name") or ""
        service, sku = str(row.get("service") or ""), str(row.get("sku") or "")
        cost_type = str(row.get("cost_type") or "regular")
        base = {
            "cloud": "gcp", "account": str(row.get("project_id") or ""), "source": source,
            "line_key": "", "usage_start": start, "usage_end": end,
            "resource_id": name or global_name, "line_type": cost_type,
            "service": service, "usage_type": sku, "region": str(row.get("region") or ""),
            "currency": str(row.get("currency") or "USD"), "job_tag": job,
            "attempt_tag": attempt,
        }
        out.append({**base, "category": category(cost_type, service, sku),
                    "usage_amount": _number(row.get("usage_amount"), where, "usage_amount"),
                    "usage_unit": str(row.get("usage_unit") or ""),
                    "usd": _number(row.get("cost"), where, "cost")})
        credits = _number(row.get("credits_amount"), where, "credits.amount")
        if credits:
            out.append({**base, "category": "credit", "line_type": "credit",
                        "usage_amount": 0.0, "usage_unit": "", "usd": credits})
    frame = pd.DataFrame(out)
    if frame.empty:
        return finish(frame)
    for column in ("usage_start", "usage_end"):
        frame[column] = pd.to_datetime(frame[column], utc=True)
    return finish(frame)


def _time(value: object, where: str, field: str) -> datetime:
    if isinstance(value, datetime):
        return utc(value)
    if not value:
        raise BadExport(f"{where}: field {field} missing: expected a TIMESTAMP")
    try:
        return pd.to_datetime(str(value), utc=True).to_pydatetime()
    except (ValueError, TypeError):
        raise BadExport(f"{where}: field {field} {value!r}: expected a TIMESTAMP") from None


def _number(value: object, where: str, field: str) -> float:
    if value is None or value == "":
        return 0.0
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise BadExport(f"{where}: field {field} {value!r}: expected a number") from None
