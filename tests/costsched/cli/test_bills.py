"""`costsched bills import` and `report --billed` on the command line: one line for bad
input, never a traceback, and no signature shown."""

from __future__ import annotations

import gzip
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from costsched.store import PriceStore
from tests.costsched.bills import scenario
from tests.costsched.bills.conftest import _hermetic_aws, s3  # noqa: F401 - fixtures
from tests.costsched.bills.exports import (
    BlobService,
    FakeBigQuery,
    azure_csv,
    azure_row,
    bigquery_client,
    cur_csv_gz,
)
from tests.price_collectors.conftest import loopback  # noqa: F401 - a fixture by name

TABLE = "proj.billing.gcp_billing_export_resource_v1_0A1B2C_3D4E5F_6A7B8C"


@pytest.fixture()
def filled(db_path: Path) -> Path:
    store = PriceStore(str(db_path))
    scenario.fill(store)
    store.dispose()
    return db_path


def test_import_from_s3_then_again(cli, filled: Path, s3) -> None:  # noqa: ANN001, F811
    s3.put_object(Bucket="cur-bucket", Key="e/a.csv.gz",
                  Body=cur_csv_gz(scenario.aws_rows(extra=True)))
    first = cli("bills", "import", "s3://cur-bucket/e/", "--json")
    assert first.exit_code == 0, first.output
    data = json.loads(first.stdout)
    assert data["files"] == [{"source": "s3://cur-bucket/e/a.csv.gz", "lines": 5}]
    assert data["matched"] == {"instance": 3, "tags": 0, "time": 0}
    assert data["tagged"] == 3  # the job's spot lines carry its tag
    assert data["unmatched"] == 2  # another workload's instance; the account's tax line
    assert data["unmatched_usd"] == pytest.approx(1.006 + scenario.TAX)
    again = json.loads(cli("bills", "import", "s3://cur-bucket/e/", "--json").stdout)
    assert again["lines"] == 5 and again["usd"] == pytest.approx(data["usd"])
    shown = cli("report", "--billed", "--until", "2024-06-01T10:00Z", "--json")
    totals = json.loads(shown.stdout)["totals"]
    assert totals["billed_usd"] == pytest.approx(3 * 0.918 * (1 + scenario.TAX / 3.76))
    # The GCP job has no imported bill: its estimate is not called unbilled.
    assert totals["not_covered_usd"] == pytest.approx(4.0)


def test_a_bad_export_is_one_line(cli, filled: Path, s3) -> None:  # noqa: ANN001, F811
    s3.put_object(Bucket="cur-bucket", Key="bad/a.csv.gz", Body=b"plain text")
    result = cli("bills", "import", "s3://cur-bucket/bad/")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: s3://cur-bucket/bad/a.csv.gz: not a "
                                    "gzip-compressed CSV file")
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output
    s3.put_object(Bucket="cur-bucket", Key="bad/a.csv.gz",
                  Body=gzip.compress(b"line_item_resource_id,cost\ni-1,2\n"))
    result = cli("bills", "import", "s3://cur-bucket/bad/")
    assert result.exit_code == 2
    assert "a.csv.gz: field line_item_usage_start_date missing: expected a Cost and Usage " \
        "Report" in result.stderr
    result = cli("bills", "import", "somewhere")
    assert result.exit_code == 2 and "expected s3://BUCKET/PREFIX" in result.stderr
    assert PriceStore(str(filled)).engine  # the store is still there, nothing stored
    result = cli("report", "--billed", "--since", "soon")
    assert result.exit_code == 2 and "--since 'soon': expected an ISO 8601 time" in result.stderr
    result = cli("report", "--billed", "--html", filled.parent / "r.html")
    assert result.exit_code == 2 and "--html: not with --billed" in result.stderr


def test_import_from_bigquery(cli, filled: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from google.cloud import bigquery

    fake = FakeBigQuery([scenario.gcp_rows(extra=True)])
    client = bigquery_client(fake)
    monkeypatch.setattr(bigquery, "Client", lambda project: client)
    result = cli("bills", "import", TABLE, "--since", "2024-06-01", "--until",
                 "2024-06-02", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["files"] == [{"source": f"bigquery:{TABLE}", "lines": 3}]
    params = {p["name"]: p["parameterValue"]["value"]
              for p in fake.requests[0][2]["queryParameters"]}
    assert params == {"since": "2024-06-01 00:00:00+00:00",
                      "until": "2024-06-02 00:00:00+00:00"}


def test_bigquery_without_credentials_is_one_line(cli, filled: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(filled.parent / "none.json"))
    result = cli("bills", "import", TABLE)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: gcp: no credentials for BigQuery")
    assert len(result.stderr.strip().splitlines()) == 1


def test_import_from_azure_hides_the_signature(cli, filled: Path, loopback,  # noqa: ANN001, F811
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    loopback.handler = BlobService("acct", "costs", {"x/part_0.csv": azure_csv(
        [azure_row("2024-06-01", "/subscriptions/s/virtualMachines/vm9", "Virtual Machines",
                   2.0)])})
    monkeypatch.setenv("AZURE_STORAGE_SAS_TOKEN", "sv=2022-11-02&sig=secret")
    result = cli("bills", "import", f"{loopback.url}/acct/costs/x")
    assert result.exit_code == 0, result.output
    assert "read 1 line from " in result.output and "secret" not in result.output
    assert "1 unmatched ($2.00), kept" in result.output


def test_import_says_what_older_deliveries_it_skipped_and_dropped(
        cli, filled: Path, loopback, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001, F811
    folder = "x/20240601-20240630/"
    blobs = {f"{folder}run-1/part_0.csv": azure_csv([azure_row("2024-06-01", "vm9",
                                                               "Virtual Machines", 2.0)])}
    times = {f"{folder}run-1/part_0.csv": datetime(2024, 6, 2, 6, tzinfo=timezone.utc)}
    loopback.handler = BlobService("acct", "costs", blobs, modified=times)
    monkeypatch.setenv("AZURE_STORAGE_SAS_TOKEN", "sv=2022-11-02&sig=secret")
    first = cli("bills", "import", f"{loopback.url}/acct/costs/x")
    assert first.exit_code == 0, first.output
    assert "superseded" not in first.output
    blobs[f"{folder}run-2/part_0.csv"] = azure_csv([  # the next day's month-to-date run
        azure_row("2024-06-01", "vm9", "Virtual Machines", 2.5),
        azure_row("2024-06-02", "vm9", "Virtual Machines", 3.0)])
    times[f"{folder}run-2/part_0.csv"] = datetime(2024, 6, 3, 6, tzinfo=timezone.utc)
    again = cli("bills", "import", f"{loopback.url}/acct/costs/x")
    assert again.exit_code == 0, again.output
    assert "skipped 1 superseded file:" in again.output
    assert "dropped 1 stored line of 1 file of older deliveries" in again.output
    assert "2 unmatched ($5.50), kept" in again.output  # June 1 once, as revised
    data = json.loads(cli("bills", "import", f"{loopback.url}/acct/costs/x", "--json").stdout)
    assert data["skipped"] == [f"{loopback.url}/acct/costs/{folder}run-1/part_0.csv"]
    assert data["dropped"] == [] and data["dropped_lines"] == 0 and data["usd"] == 5.5


def test_lines_lists_the_unmatched_largest_first(cli, filled: Path, s3) -> None:  # noqa: ANN001, F811
    untagged = [{**row, "resource_tags": {}} for row in scenario.aws_rows(extra=True)]
    s3.put_object(Bucket="cur-bucket", Key="e/a.csv.gz", Body=cur_csv_gz(untagged))
    imported = cli("bills", "import", "s3://cur-bucket/e/")
    assert imported.exit_code == 0, imported.output
    assert "activate costsched-job and costsched-attempt as cost allocation tags" in \
        imported.output  # the export's lines carry no costsched tag
    result = cli("bills", "lines", "--unmatched", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["lines"] == 2
    assert [(r["resource_id"], r["category"]) for r in data["shown"]] == [
        ("i-0other", "compute"), ("", "tax")]
    assert all(r["job_id"] is None and r["matched_by"] == "" for r in data["shown"])
    every = json.loads(cli("bills", "lines", "--limit", "1", "--json").stdout)
    assert every["lines"] == 5 and len(every["shown"]) == 1
    assert every["shown"][0]["usd"] == pytest.approx(1.006)
    shown = cli("bills", "lines", "--since", "2024-06-01", "--until", "2024-06-02")
    assert shown.exit_code == 0 and "5 lines, $4.04" in shown.output
    assert "i-0aaa" in shown.output and "instance" in shown.output
