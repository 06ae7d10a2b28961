"""`costsched bills import FILE`: an export downloaded to this machine (an AWS Cost and
Usage Report, an Azure cost export) is read through the same parsers as from its bucket or
container; a file that is not one is refused in one line naming it and what was expected."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.costsched.bills import scenario
from tests.costsched.bills.exports import azure_csv, azure_row, cur_csv_gz, cur_parquet
from tests.costsched.cli.test_bills import filled  # noqa: F401 - a fixture by name


@pytest.mark.parametrize(("name", "write"), [("cur.csv.gz", cur_csv_gz),
                                             ("cur.parquet", cur_parquet)])
def test_a_cur_file_on_disk_is_read_and_matched_as_from_s3(
        cli, filled: Path, tmp_path: Path, name: str, write) -> None:  # noqa: ANN001, F811
    path = tmp_path / name
    path.write_bytes(write(scenario.aws_rows(extra=True)))
    first = cli("bills", "import", path, "--json")
    assert first.exit_code == 0, first.output
    data = json.loads(first.stdout)
    assert data["cloud"] == "aws"
    assert data["files"] == [{"source": str(path.resolve()), "lines": 5}]
    # As the same file read from S3 (test_bills.test_import_from_s3_then_again).
    assert data["matched"] == {"instance": 3, "tags": 0, "time": 0}
    assert data["unmatched"] == 2 and data["tagged"] == 3
    again = json.loads(cli("bills", "import", path, "--json").stdout)
    assert again["lines"] == 5 and again["usd"] == pytest.approx(data["usd"])  # replaced
    shown = cli("report", "--billed", "--until", "2024-06-01T10:00Z", "--json")
    totals = json.loads(shown.stdout)["totals"]
    assert totals["billed_usd"] == pytest.approx(3 * 0.918 * (1 + scenario.TAX / 3.76))


def test_an_azure_cost_export_on_disk_is_read(cli, filled: Path, tmp_path: Path) -> None:  # noqa: ANN001, F811
    path = tmp_path / "part_0.csv"
    path.write_bytes(azure_csv([azure_row("2024-06-01", "/subscriptions/s/virtualMachines/vm9",
                                          "Virtual Machines", 2.0)]))
    result = cli("bills", "import", path)
    assert result.exit_code == 0, result.output
    assert f"read 1 line from {path.resolve()}" in result.output
    assert "azure: 1 line, $2.00 billed" in result.output


EXPECTED = ("expected an export file (.csv, .csv.gz, .gz, .parquet): an AWS Cost and Usage "
            "Report (line_item_* columns) or an Azure cost export (ResourceId, Date, "
            "CostInBillingCurrency, MeterCategory, ChargeType); GCP's billing export is read "
            "from its BigQuery table, PROJECT.DATASET.gcp_billing_export_resource_v1_<ACCOUNT>")


def test_a_file_that_is_no_export_is_one_line_naming_it(cli, filled: Path,  # noqa: ANN001, F811
                                                         tmp_path: Path) -> None:
    other = tmp_path / "sales.csv"
    other.write_text("region,amount\neu,3\n")
    gcp = tmp_path / "gcp-costs.csv"  # what GCP's console downloads: not read here
    gcp.write_text("Billing account name,Service description,SKU description,Cost ($)\n"
                   "main,Compute Engine,N1 core,1.5\n")
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    folder = tmp_path / "exports"
    folder.mkdir()
    cases = {
        other: f"error: {other}: not a billing export costsched reads (its columns: region, "
               f"amount): {EXPECTED}",
        gcp: f"error: {gcp}: not a billing export costsched reads (its columns: Billing "
             f"account name, Service description, SKU description, Cost ($)): {EXPECTED}",
        notes: f"error: {notes}: not an export file by its name: {EXPECTED}",
        tmp_path / "gone.csv.gz": f"error: {tmp_path / 'gone.csv.gz'}: no such file: "
                                  f"{EXPECTED}",
        folder: f"error: {folder}: a folder: {EXPECTED}; give its files one by one (a folder "
                "of deliveries is read from the bucket, where each billing period's newest "
                "delivery is known)",
    }
    for path, said in cases.items():
        result = cli("bills", "import", path)
        assert result.exit_code == 2, result.output
        assert result.stderr.splitlines() == [said]
    bad = tmp_path / "cur.csv.gz"
    bad.write_bytes(gzip.compress(b"line_item_resource_id,cost\ni-1,2\n"))
    result = cli("bills", "import", bad)
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1
    assert (f"{bad.resolve()}: field line_item_usage_start_date missing: expected a Cost and "
            "Usage Report") in result.stderr
    assert json.loads(cli("bills", "lines", "--json").stdout)["lines"] == 0  # none stored
