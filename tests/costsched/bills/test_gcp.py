"""GCP's Cloud Billing export to BigQuery, through google-cloud-bigquery and a fake
transport that asserts the query sent and answers documented jobs.query and
getQueryResults bodies."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

from costsched.bills.gcp import category, lines_of, parse_table, query, read_bigquery
from costsched.bills.lines import BadExport
from costsched.model import InvalidInput
from tests.costsched.bills.exports import FakeBigQuery, bigquery_client, bq_row

T = datetime(2024, 6, 1, 0, 0, tzinfo=timezone.utc)
H = timedelta(hours=1)
TABLE = "proj.billing.gcp_billing_export_resource_v1_0A1B2C_3D4E5F_6A7B8C"
LABELS = {"costsched-job": "5", "costsched-attempt": "j5-m9-0", "team": "vision"}


def test_the_query_and_its_pages() -> None:
    fake = FakeBigQuery([
        [bq_row(T, T + H, "Nvidia Tesla A100 GPU running in Americas", 2.93,
                resource="costsched-5-j5-m9-0", labels=LABELS, credits=-0.5),
         bq_row(T, T + H, "Network Internet Egress from Americas to Americas", 0.12,
                resource="costsched-5-j5-m9-0", labels=LABELS, unit="gibibyte")],
        [bq_row(T, T + H, "Balanced PD Capacity", 0.01, labels=LABELS, unit="gibibyte month"),
         bq_row(T, T + 24 * H, "", 0.3, service="Invoice", cost_type="tax")],
    ])
    lines = read_bigquery(TABLE, T, T + 24 * H, bigquery_client(fake))

    method, url, body = fake.requests[0]
    assert (method, url.split("?")[0]) == (
        "POST", "https://bigquery.googleapis.com/bigquery/v2/projects/proj/queries")
    assert body["query"] == query(TABLE, detailed=True)
    assert f"FROM `{TABLE}`" in body["query"] and "@since" in body["query"]
    assert body["useLegacySql"] is False
    assert {p["name"]: p["parameterValue"]["value"] for p in body["queryParameters"]} == {
        "since": "2024-06-01 00:00:00+00:00", "until": "2024-06-02 00:00:00+00:00"}
    # jobs.get, then getQueryResults for the second page
    paths = [(m, u.split("?")[0].rsplit("/", 2)[-2]) for m, u, _ in fake.requests[1:]]
    assert paths == [("GET", "jobs"), ("GET", "queries")]
    assert "pageToken=page-1" in fake.requests[2][1]

    assert lines["category"].tolist() == ["compute", "credit", "egress", "storage", "tax"]
    assert lines["usd"].tolist() == pytest.approx([2.93, -0.5, 0.12, 0.01, 0.3])
    assert lines["resource_id"].iloc[0] == "costsched-5-j5-m9-0"
    assert lines["job_tag"].tolist()[:4] == ["5"] * 4 and lines["job_tag"].iloc[4] == ""
    assert lines["attempt_tag"].iloc[0] == "j5-m9-0"
    assert lines["usage_start"].iloc[0] == pd.Timestamp(T)
    assert set(lines["source"]) == {f"bigquery:{TABLE}"}
    assert lines["line_key"].is_unique


def test_the_standard_table_has_no_resource_columns() -> None:
    table = "proj.billing.gcp_billing_export_v1_0A1B2C_3D4E5F_6A7B8C"
    assert parse_table(table) == ("proj", False)
    assert "resource.name" not in query(table, detailed=False)
    fake = FakeBigQuery([[bq_row(T, T + H, "Spot Preemptible Nvidia Tesla A100 GPU", 1.0)]])
    assert len(read_bigquery(table, T, T + H, bigquery_client(fake))) == 1


@pytest.mark.parametrize(("cost_type", "service", "sku", "expected"), [
    ("regular", "Compute Engine", "A2 Instance Core running in Americas", "compute"),
    ("regular", "Compute Engine", "Spot Preemptible Nvidia Tesla V100 GPU", "compute"),
    ("regular", "Compute Engine", "Network Inter Zone Egress", "egress"),
    ("regular", "Compute Engine", "SSD backed PD Capacity", "storage"),
    ("regular", "Cloud Storage", "Standard Storage US Multi-region", "storage"),
    ("regular", "Cloud Storage", "Download Worldwide Destinations (excluding Asia & "
     "Australia)", "egress"),
    ("tax", "Invoice", "", "tax"),
    ("adjustment", "Compute Engine", "", "credit"),
    ("rounding error", "Invoice", "", "rounding"),
    ("regular", "BigQuery", "Analysis", "other"),
])
def test_categories(cost_type: str, service: str, sku: str, expected: str) -> None:
    assert category(cost_type, service, sku) == expected


def test_bad_rows_and_names_are_one_line() -> None:
    with pytest.raises(InvalidInput, match=r"^export 'proj.billing.costs': expected a "
                       "BigQuery billing export table"):
        parse_table("proj.billing.costs")
    row = {"usage_start_time": T, "usage_end_time": T + H, "cost": "lots"}
    with pytest.raises(BadExport, match=r"^bigquery:t row 1: field cost 'lots': expected a "
                       "number"):
        lines_of([row], "bigquery:t")
    with pytest.raises(BadExport, match=r"^bigquery:t row 2: field usage_start_time missing"):
        lines_of([{**row, "cost": 1}, {**row, "usage_start_time": None}], "bigquery:t")


def test_a_failed_query_is_one_line() -> None:
    fake = FakeBigQuery([], project="other")  # answers 404 to any other project's query
    client = bigquery_client(fake)
    client.project = "proj"
    with pytest.raises(InvalidInput, match=rf"^export bigquery:{TABLE}: the query failed "
                       r"\(.*no POST"):
        read_bigquery(TABLE, T, T + H, client)
