"""AWS Data Exports (CUR 2.0) and legacy CUR files in moto's S3, read as bill lines."""

from __future__ import annotations

import gzip
import json
from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

from costsched.bills.aws import category, column_name, lines_of, read_s3
from costsched.bills.lines import BadExport
from costsched.model import InvalidInput
from tests.costsched.bills.exports import cur_csv_gz, cur_parquet, cur_row

T = datetime(2024, 6, 1, 0, 0, tzinfo=timezone.utc)
H = timedelta(hours=1)
TAGS = {"user_costsched_job": "3", "user_costsched_attempt": "j3-m7-0"}


def _put(s3, key: str, body: bytes) -> None:  # noqa: ANN001
    s3.put_object(Bucket="cur-bucket", Key=key, Body=body)


def test_files_of_a_prefix_are_read_page_by_page_csv_and_parquet(s3) -> None:  # noqa: ANN001
    base = "exports/costsched/data/BILLING_PERIOD=2024-06/"
    _put(s3, base + "costsched-00001.csv.gz", cur_csv_gz([
        cur_row(T, T + H, "SpotUsage:p3.2xlarge", 0.918, resource="i-0abc", tags=TAGS,
                line_id="l1"),
        cur_row(T, T + H, "USE1-DataTransfer-Regional-Bytes", 0.02, amount=2.0, unit="GB",
                resource="i-0abc", tags=TAGS, line_id="l2")]))
    _put(s3, base + "costsched-00002.snappy.parquet", cur_parquet([
        cur_row(T, T + H, "USE1-EBS:VolumeUsage.gp3", 0.011, resource="vol-1", tags=TAGS,
                unit="GB-Mo", line_id="l3"),
        cur_row(T, T + 24 * H, "", 0.09, line_type="Tax", product="AmazonEC2", region="",
                line_id="l4")]))
    _put(s3, "exports/costsched/metadata/BILLING_PERIOD=2024-06/manifest.json", b"{}")
    _put(s3, "elsewhere/costsched-00001.csv.gz", cur_csv_gz([cur_row(T, T + H, "x", 5.0)]))

    found = list(read_s3("s3://cur-bucket/exports/costsched/", s3, page_size=1))

    assert [w for w, _ in found] == ["s3://cur-bucket/" + base + "costsched-00001.csv.gz",
                                     "s3://cur-bucket/" + base + "costsched-00002.snappy.parquet"]
    lines = pd.concat([f for _, f in found], ignore_index=True)
    assert lines["category"].tolist() == ["compute", "egress", "storage", "tax"]
    assert lines["usd"].tolist() == pytest.approx([0.918, 0.02, 0.011, 0.09])
    # Tags from CUR 2.0's map column, as JSON text (CSV) and as a Parquet map.
    assert lines["job_tag"].tolist() == ["3", "3", "3", ""]
    assert lines["attempt_tag"].tolist() == ["j3-m7-0", "j3-m7-0", "j3-m7-0", ""]
    assert lines["resource_id"].tolist() == ["i-0abc", "i-0abc", "vol-1", ""]
    assert lines["usage_start"].iloc[0] == pd.Timestamp(T)
    assert lines["usage_end"].iloc[3] == pd.Timestamp(T + 24 * H)
    assert lines["usage_amount"].iloc[0] == 1.0 and lines["usage_unit"].iloc[0] == "Hrs"
    # The export's own identity of a line, by cloud: the same line read again is the same.
    assert lines["line_key"].iloc[0] == f"aws:l1/{T:%Y-%m-%dT%H:%M:%SZ}/" \
        f"{T + H:%Y-%m-%dT%H:%M:%SZ}"


def test_legacy_cur_headers_and_tag_columns() -> None:
    table = pd.DataFrame([{
        "lineItem/ResourceId": "i-0abc", "lineItem/UsageStartDate": "2024-06-01T00:00:00Z",
        "lineItem/UsageEndDate": "2024-06-01T01:00:00Z", "lineItem/LineItemType": "Usage",
        "lineItem/ProductCode": "AmazonEC2", "lineItem/UsageType": "BoxUsage:p3.2xlarge",
        "lineItem/UnblendedCost": "3.06", "product/region": "us-east-1",
        "resourceTags/user:costsched-job": "4", "resourceTags/user:team": "vision"}],
        dtype=str)
    lines = lines_of(table, "s3://b/legacy.csv")
    assert lines[["category", "job_tag", "region", "line_key"]].iloc[0].tolist()[:3] == \
        ["compute", "4", "us-east-1"]
    assert lines["line_key"].iloc[0] != ""  # a digest: no identity column in this file
    athena = pd.DataFrame([{**{column_name(c): v for c, v in table.iloc[0].items()
                               if not c.startswith("resourceTags/")},
                            "resource_tags_user_costsched_job": "5"}])
    assert lines_of(athena, "x.parquet")["job_tag"].tolist() == ["5"]


@pytest.mark.parametrize(("line_type", "usage_type", "product", "expected"), [
    ("Usage", "SpotUsage:p3.2xlarge", "AmazonEC2", "compute"),
    ("SavingsPlanCoveredUsage", "USE1-BoxUsage:p4d.24xlarge", "AmazonEC2", "compute"),
    ("Usage", "USE1-DataTransfer-Regional-Bytes", "AmazonEC2", "egress"),
    ("Usage", "USW2-DataTransfer-Out-Bytes", "AWSDataTransfer", "egress"),
    ("Usage", "EBS:VolumeUsage.gp3", "AmazonEC2", "storage"),
    ("Usage", "TimedStorage-ByteHrs", "AmazonS3", "storage"),
    ("Tax", "", "AmazonEC2", "tax"),
    ("Credit", "", "AmazonEC2", "credit"),
    ("Refund", "SpotUsage:p3.2xlarge", "AmazonEC2", "credit"),
    ("SavingsPlanRecurringFee", "", "ComputeSavingsPlans", "other"),
    ("Usage", "USE1-ElasticIP:IdleAddress", "AmazonEC2", "other"),
])
def test_categories(line_type: str, usage_type: str, product: str, expected: str) -> None:
    assert category(line_type, usage_type, product) == expected


def test_bad_files_are_one_line_naming_file_field_and_accepted(s3) -> None:  # noqa: ANN001
    _put(s3, "bad/a.csv.gz", b"not gzip at all")
    with pytest.raises(BadExport) as caught:
        list(read_s3("s3://cur-bucket/bad/", s3))
    assert str(caught.value).startswith("s3://cur-bucket/bad/a.csv.gz: not a gzip-compressed "
                                        "CSV file")
    assert "\n" not in str(caught.value)

    row = cur_row(T, T + H, "SpotUsage:p3.2xlarge", 1.0)
    table = pd.DataFrame([row]).drop(columns="line_item_unblended_cost")
    with pytest.raises(BadExport, match=r"^f.csv: field line_item_unblended_cost missing: "
                       r"expected a Cost and Usage Report .* with the columns "):
        lines_of(table, "f.csv")
    with pytest.raises(BadExport, match=r"^f.csv: field line_item_unblended_cost 'lots': "
                       r"expected a number"):
        lines_of(pd.DataFrame([{**row, "line_item_unblended_cost": "lots"}]), "f.csv")
    with pytest.raises(BadExport, match=r"^f.csv: field line_item_usage_start_date "
                       r"'yesterday': expected an ISO 8601 time"):
        lines_of(pd.DataFrame([{**row, "line_item_usage_start_date": "yesterday"}]), "f.csv")
    with pytest.raises(BadExport, match=r"field resource_tags '\{oops': expected tags as a "
                       r"JSON object"):
        lines_of(pd.DataFrame([{**row, "resource_tags": "{oops"}]), "f.csv")


def test_an_unreadable_location_is_one_line(s3) -> None:  # noqa: ANN001
    with pytest.raises(InvalidInput, match=r"^export s3://no-bucket/x: cannot list it "
                       r"\(NoSuchBucket"):
        list(read_s3("s3://no-bucket/x", s3))
    with pytest.raises(InvalidInput, match="no export file there"):
        list(read_s3("s3://cur-bucket/empty/", s3))
    with pytest.raises(InvalidInput, match="expected an S3 location"):
        list(read_s3("cur-bucket/x", s3))
    _put(s3, "j/a.json", json.dumps({}).encode())
    _put(s3, "j/b.csv", gzip.compress(b"x"))  # a .csv that is gzip: not UTF-8 text
    with pytest.raises(BadExport, match="^s3://cur-bucket/j/b.csv: not a UTF-8 CSV file"):
        list(read_s3("s3://cur-bucket/j/", s3))
