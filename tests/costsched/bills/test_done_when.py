"""`report --billed` over an imported AWS export and a BigQuery export of the same
placements: matched totals, and an injected difference (a tax line, an egress charge)
itemised."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costsched.bills.imports import import_export
from costsched.report.billed import build_billed
from costsched.store import PriceStore
from tests.costsched.bills import scenario
from tests.costsched.bills.exports import FakeBigQuery, bigquery_client, cur_csv_gz, cur_parquet

PREFIX = "s3://cur-bucket/exports/costsched/"
TABLE = "proj.billing.gcp_billing_export_resource_v1_0A1B2C_3D4E5F_6A7B8C"
KEYS = ["exports/costsched/data/BILLING_PERIOD=2024-06/costsched-00001.csv.gz",
        "exports/costsched/data/BILLING_PERIOD=2024-06/costsched-00002.snappy.parquet"]


def _export(s3, store: PriceStore, extra: bool) -> None:  # noqa: ANN001
    rows = scenario.aws_rows(extra)
    # The month's export in two files (AWS rewrites them in place as the month goes on).
    s3.put_object(Bucket="cur-bucket", Key=KEYS[0], Body=cur_csv_gz(rows[:2]))
    s3.put_object(Bucket="cur-bucket", Key=KEYS[1], Body=cur_parquet(rows[2:]))
    import_export(store, PREFIX, now=scenario.NOW, client=s3)
    fake = FakeBigQuery([scenario.gcp_rows(extra)[:1], scenario.gcp_rows(extra)[1:]])
    import_export(store, TABLE, since=scenario.T, until=scenario.NOW, now=scenario.NOW,
                  client=bigquery_client(fake))


def _by_name(report) -> dict[str, dict]:  # noqa: ANN001
    return {r["name"]: r for r in report.jobs.to_dict("records")}


@pytest.fixture()
def store(empty_url: str):  # noqa: ANN201 - SQLite and PostgreSQL
    opened = PriceStore(empty_url)
    yield opened
    opened.dispose()


def test_matched_totals_then_an_injected_tax_and_egress_itemised(s3, store: PriceStore
                                                                  ) -> None:  # noqa: ANN001
    scenario.fill(store)
    _export(s3, store, extra=False)
    report = build_billed(store, now=scenario.NOW, threshold=0.05)
    jobs = _by_name(report)
    assert jobs["aws-job"]["estimated_usd"] == pytest.approx(2.754)
    assert jobs["gcp-job"]["estimated_usd"] == pytest.approx(4.0)
    for name in ("aws-job", "gcp-job"):  # the bill matches the estimate
        assert jobs[name]["billed_usd"] == pytest.approx(jobs[name]["estimated_usd"])
        assert jobs[name]["difference_usd"] == pytest.approx(0.0, abs=1e-9)
        assert not jobs[name]["flagged"]
    assert report.totals["unmatched_lines"] == 1  # the other instance, kept and counted
    assert report.totals["unmatched_usd"] == pytest.approx(1.006)

    _export(s3, store, extra=True)  # the exports again, now with a tax line and egress
    _export(s3, store, extra=True)  # and once more: nothing is counted twice
    report = build_billed(store, now=scenario.NOW, threshold=0.05)
    jobs = _by_name(report)
    aws, gcp = jobs["aws-job"], jobs["gcp-job"]
    # The account's tax names no resource: the job's share is its part of the account's
    # usage over the tax line's hours (the other instance's $1.006 is not the job's).
    tax = scenario.TAX * 2.754 / (2.754 + 1.006)
    assert aws["billed_usd"] == pytest.approx(2.754 + tax)
    assert aws["tax_usd"] == pytest.approx(tax)
    assert aws["compute_usd"] == pytest.approx(0.0, abs=1e-9)
    assert aws["difference_usd"] == pytest.approx(tax)
    assert aws["flagged"]  # 0.205 / 2.754 = 7.4% > 5%
    assert gcp["billed_usd"] == pytest.approx(4.0 + scenario.EGRESS)
    assert gcp["egress_usd"] == pytest.approx(scenario.EGRESS)
    assert gcp["tax_usd"] == 0.0 and gcp["compute_usd"] == pytest.approx(0.0, abs=1e-9)
    assert not gcp["flagged"]  # 3% <= 5%
    items = ["compute_usd", "storage_usd", "egress_usd", "tax_usd", "credits_usd",
             "rounding_usd", "other_usd"]
    for row in report.days.to_dict("records"):  # the items add up to each day's difference
        assert sum(row[i] for i in items) == pytest.approx(row["difference_usd"])
    assert report.totals["unmatched_lines"] == 2  # the other instance, and the tax line
    assert report.totals["unmatched_usd"] == pytest.approx(1.006 + scenario.TAX - tax)
    assert report.totals["billed_usd"] + report.totals["unmatched_usd"] == pytest.approx(
        2.754 + 1.006 + scenario.TAX + 4.0 + scenario.EGRESS)  # every dollar billed, once
    days = report.days[report.days["name"] == "gcp-job"]
    assert days["day"].dt.strftime("%Y-%m-%d").tolist() == ["2024-06-01"]


def test_the_command_line_shows_the_same(s3, cli, db_path: Path) -> None:  # noqa: ANN001
    store = PriceStore(str(db_path))
    scenario.fill(store)
    _export(s3, store, extra=True)
    store.dispose()
    result = cli("report", "--billed", "--until", "2024-06-01T10:00Z", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    jobs = {j["name"]: j for j in data["jobs"]}
    tax = scenario.TAX * 2.754 / (2.754 + 1.006)
    assert jobs["aws-job"]["tax_usd"] == pytest.approx(tax)
    assert jobs["gcp-job"]["egress_usd"] == pytest.approx(scenario.EGRESS)
    assert data["totals"]["billed_usd"] == pytest.approx(2.754 + 4.0 + tax + 0.12)
    assert data["threshold"] == 0.05
    result = cli("report", "--billed", "--until", "2024-06-01T10:00Z")
    assert result.exit_code == 0, result.output
    assert "Billed against estimated, per job" in result.output
    assert "aws-job" in result.output and "$0.2051" in result.output
