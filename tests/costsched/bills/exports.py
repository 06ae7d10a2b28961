"""Billing exports written by the tests from the clouds' documented column names: AWS Data
Exports (CUR 2.0) files in moto's S3, GCP BigQuery jobs.query / getQueryResults bodies served
through a fake transport, Azure cost export CSVs served by a loopback Blob service."""

from __future__ import annotations

import gzip
import io
import json
from datetime import datetime, timezone
from email.utils import format_datetime
from urllib.parse import parse_qs, unquote, urlsplit

import pandas as pd
import requests

# --- AWS: CUR 2.0 rows ---------------------------------------------------------------------

CUR_COLUMNS = ["identity_line_item_id", "identity_time_interval", "bill_payer_account_id",
               "line_item_usage_account_id", "line_item_line_item_type",
               "line_item_usage_start_date", "line_item_usage_end_date",
               "line_item_product_code", "line_item_usage_type", "line_item_operation",
               "line_item_resource_id", "line_item_usage_amount", "pricing_unit",
               "line_item_currency_code", "line_item_unblended_rate",
               "line_item_unblended_cost", "product_region_code", "pricing_term",
               "resource_tags"]


def iso(at: datetime) -> str:
    return at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def cur_row(start: datetime, end: datetime, usage_type: str, cost: float, *,
            line_type: str = "Usage", resource: str = "", amount: float = 1.0,
            unit: str = "Hrs", product: str = "AmazonEC2", region: str = "us-east-1",
            tags: dict | None = None, term: str = "Spot", line_id: str = "") -> dict:
    """One CUR 2.0 line item, by the documented column names."""
    return {
        "identity_line_item_id": line_id, "identity_time_interval":
            f"{iso(start)}/{iso(end)}" if line_id else "",
        "bill_payer_account_id": "111122223333", "line_item_usage_account_id": "111122223333",
        "line_item_line_item_type": line_type, "line_item_usage_start_date": iso(start),
        "line_item_usage_end_date": iso(end), "line_item_product_code": product,
        "line_item_usage_type": usage_type, "line_item_operation": "RunInstances",
        "line_item_resource_id": resource, "line_item_usage_amount": amount,
        "pricing_unit": unit, "line_item_currency_code": "USD",
        "line_item_unblended_rate": cost / amount if amount else 0.0,
        "line_item_unblended_cost": cost, "product_region_code": region,
        "pricing_term": term, "resource_tags": tags or {},
    }


def cur_csv_gz(rows: list[dict]) -> bytes:
    """CUR 2.0 CSV, gzip: the resource_tags map as JSON text."""
    frame = pd.DataFrame(rows, columns=CUR_COLUMNS)
    frame["resource_tags"] = frame["resource_tags"].map(json.dumps)
    return gzip.compress(frame.to_csv(index=False).encode())


def cur_parquet(rows: list[dict]) -> bytes:
    """CUR 2.0 Parquet: resource_tags as a map<string, string> column."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = pd.DataFrame(rows, columns=CUR_COLUMNS)
    columns = {c: pa.array(frame[c].astype(str).tolist()) for c in CUR_COLUMNS
               if c not in ("resource_tags", "line_item_unblended_cost",
                            "line_item_usage_amount", "line_item_unblended_rate")}
    for c in ("line_item_unblended_cost", "line_item_usage_amount", "line_item_unblended_rate"):
        columns[c] = pa.array(frame[c].astype(float).tolist())
    columns["resource_tags"] = pa.array([list(t.items()) for t in frame["resource_tags"]],
                                        type=pa.map_(pa.string(), pa.string()))
    out = io.BytesIO()
    pq.write_table(pa.table(columns), out)
    return out.getvalue()


# --- GCP: the BigQuery REST API's answers -----------------------------------------------------

BQ_FIELDS = [
    {"name": "service", "type": "STRING", "mode": "NULLABLE"},
    {"name": "sku", "type": "STRING", "mode": "NULLABLE"},
    {"name": "usage_start_time", "type": "TIMESTAMP", "mode": "NULLABLE"},
    {"name": "usage_end_time", "type": "TIMESTAMP", "mode": "NULLABLE"},
    {"name": "project_id", "type": "STRING", "mode": "NULLABLE"},
    {"name": "region", "type": "STRING", "mode": "NULLABLE"},
    {"name": "resource_name", "type": "STRING", "mode": "NULLABLE"},
    {"name": "resource_global_name", "type": "STRING", "mode": "NULLABLE"},
    {"name": "cost", "type": "FLOAT", "mode": "NULLABLE"},
    {"name": "currency", "type": "STRING", "mode": "NULLABLE"},
    {"name": "cost_type", "type": "STRING", "mode": "NULLABLE"},
    {"name": "usage_amount", "type": "FLOAT", "mode": "NULLABLE"},
    {"name": "usage_unit", "type": "STRING", "mode": "NULLABLE"},
    {"name": "labels", "type": "RECORD", "mode": "REPEATED", "fields": [
        {"name": "key", "type": "STRING", "mode": "NULLABLE"},
        {"name": "value", "type": "STRING", "mode": "NULLABLE"}]},
    {"name": "credits_amount", "type": "FLOAT", "mode": "NULLABLE"},
]


def bq_row(start: datetime, end: datetime, sku: str, cost: float, *,
           service: str = "Compute Engine", resource: str = "", labels: dict | None = None,
           cost_type: str = "regular", credits: float = 0.0, amount: float = 1.0,
           unit: str = "hour", region: str = "us-central1") -> dict:
    """One row of the export query's answer, as the REST API writes it ({"f": [{"v"}]})."""
    micros = [str(int(t.timestamp() * 1_000_000)) for t in (start, end)]
    global_name = f"//compute.googleapis.com/projects/proj/zones/{region}-a/instances/1234" \
        if resource else ""
    values = [service, sku, *micros, "proj", region, resource, global_name, str(cost), "USD",
              cost_type, str(amount), unit,
              [{"v": {"f": [{"v": k}, {"v": v}]}} for k, v in (labels or {}).items()],
              str(credits)]
    return {"f": [{"v": v} for v in values]}


class FakeBigQuery:
    """A requests-compatible session for google-cloud-bigquery's client: jobs.query answers
    the first page, getQueryResults the next ones (pageToken); every request is kept."""

    is_mtls = False  # google-cloud-core asks its transport

    def __init__(self, pages: list[list[dict]], project: str = "proj") -> None:
        self.pages = pages
        self.project = project
        self.requests: list[tuple[str, str, dict | None]] = []

    def request(self, method: str, url: str, data=None, headers=None, timeout=None,  # noqa: ANN001
                **kwargs) -> requests.Response:
        body = json.loads(data) if data else None
        self.requests.append((method, url, body))
        parts = urlsplit(url)
        job = {"projectId": self.project, "jobId": "job_bills", "location": "US"}
        if method == "POST" and parts.path.endswith(f"/projects/{self.project}/queries"):
            page = 0
        elif method == "GET" and parts.path.endswith(f"/projects/{self.project}/jobs/job_bills"):
            # jobs.get: the finished query job, read before its next pages
            return _response(method, url, 200, {
                "kind": "bigquery#job", "id": f"{self.project}:US.job_bills",
                "jobReference": job, "status": {"state": "DONE"},
                "configuration": {"jobType": "QUERY", "query": {
                    "query": self.requests[0][2]["query"], "useLegacySql": False}},
                "statistics": {"creationTime": "1717200000000", "query": {}}})
        elif method == "GET" and f"/projects/{self.project}/queries/job_bills" in parts.path:
            token = parse_qs(parts.query).get("pageToken", [""])[0]
            page = int(token.removeprefix("page-")) if token else 0
        else:
            return _response(method, url, 404,
                             {"error": {"code": 404, "message": f"no {method} {url}"}})
        answer = {"kind": "bigquery#queryResponse" if method == "POST"
                  else "bigquery#getQueryResultsResponse",
                  "jobReference": job, "jobComplete": True,
                  "schema": {"fields": BQ_FIELDS},
                  "totalRows": str(sum(len(p) for p in self.pages)),
                  "rows": self.pages[page] if self.pages else []}
        if page + 1 < len(self.pages):
            answer["pageToken"] = f"page-{page + 1}"
        return _response(method, url, 200, answer)


def _response(method: str, url: str, status: int, body: dict) -> requests.Response:
    answer = requests.Response()
    answer.request = requests.Request(method, url).prepare()
    answer.url = url
    answer.status_code = status
    answer._content = json.dumps(body).encode()
    answer.headers["Content-Type"] = "application/json; charset=UTF-8"
    answer.encoding = "utf-8"
    return answer


def bigquery_client(session: FakeBigQuery):  # noqa: ANN201 - a bigquery.Client
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import bigquery

    return bigquery.Client(project=session.project, credentials=AnonymousCredentials(),
                           _http=session)


# --- Azure: cost export CSVs and the Blob service ----------------------------------------------

AZURE_COLUMNS = ["SubscriptionId", "Date", "ResourceId", "ResourceLocation", "MeterCategory",
                 "MeterSubCategory", "MeterName", "Quantity", "UnitOfMeasure",
                 "CostInBillingCurrency", "BillingCurrency", "ChargeType", "Tags"]


def azure_row(day: str, resource: str, meter: str, cost: float, *, charge: str = "Usage",
              tags: dict | None = None, sub: str = "NC24ads A100 v4 Series") -> dict:
    tags_text = ",".join(f'"{k}": "{v}"' for k, v in (tags or {}).items())  # as exported
    return {"SubscriptionId": "0000-sub", "Date": day, "ResourceId": resource,
            "ResourceLocation": "EastUS", "MeterCategory": meter, "MeterSubCategory": sub,
            "MeterName": "x", "Quantity": 1, "UnitOfMeasure": "1 Hour",
            "CostInBillingCurrency": cost, "BillingCurrency": "USD", "ChargeType": charge,
            "Tags": tags_text}


def azure_csv(rows: list[dict]) -> bytes:
    return pd.DataFrame(rows, columns=AZURE_COLUMNS).to_csv(index=False).encode()


class BlobService:
    """The Blob service's List Blobs (pages of `page` names, NextMarker) and Get Blob for
    one container, path-style: /ACCOUNT/CONTAINER."""

    def __init__(self, account: str, container: str, blobs: dict[str, bytes],
                 page: int = 1, modified: dict[str, datetime] | None = None) -> None:
        self.base = f"/{account}/{container}"
        self.blobs = blobs
        self.page = page
        self.modified = modified if modified is not None else {}  # Last-Modified by name

    def __call__(self, request) -> tuple[int, dict[str, str], bytes]:  # noqa: ANN001
        parts = urlsplit(request.path)
        query = parse_qs(parts.query)
        if query.get("sig") != ["secret"]:
            return 403, {"x-ms-error-code": "AuthenticationFailed"}, b""
        if parts.path == self.base and query.get("comp") == ["list"]:
            prefix = query.get("prefix", [""])[0]
            names = sorted(n for n in self.blobs if n.startswith(prefix))
            start = int(query.get("marker", ["0"])[0])
            shown = names[start:start + self.page]
            more = start + self.page < len(names)
            xml = ("<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults "
                   f"ContainerName=\"{self.base}\"><Prefix>{prefix}</Prefix><Blobs>"
                   + "".join(f"<Blob><Name>{n}</Name><Properties>{self._modified(n)}"
                             f"<Content-Length>{len(self.blobs[n])}</Content-Length>"
                             "</Properties></Blob>" for n in shown)
                   + f"</Blobs><NextMarker>{start + self.page if more else ''}</NextMarker>"
                   "</EnumerationResults>")
            return 200, {"Content-Type": "application/xml"}, xml.encode()
        name = unquote(parts.path.removeprefix(self.base + "/"))
        if name in self.blobs:
            return 200, {"Content-Type": "application/octet-stream"}, self.blobs[name]
        return 404, {"x-ms-error-code": "BlobNotFound"}, b""

    def _modified(self, name: str) -> str:
        at = self.modified.get(name)
        return "" if at is None else \
            f"<Last-Modified>{format_datetime(at.astimezone(timezone.utc), usegmt=True)}" \
            "</Last-Modified>"
