"""Azure cost exports: CSV blobs listed and read from a loopback Blob service."""

from __future__ import annotations

import pandas as pd
import pytest

from costsched.bills.azure import ENV_SAS, category, lines_of, read_container
from costsched.bills.lines import BadExport
from costsched.model import InvalidInput
from tests.costsched.bills.exports import BlobService, azure_csv, azure_row

VM = "/subscriptions/0000-sub/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm1"
TAGS = {"costsched-job": "6", "costsched-attempt": "j6-m2-0"}


def test_blobs_are_listed_page_by_page_and_read(loopback) -> None:  # noqa: ANN001
    service = BlobService("acct", "costs", {
        "daily/costsched/20240601-20240630/part_0_0001.csv": azure_csv([
            azure_row("06/01/2024", VM, "Virtual Machines", 3.67, tags=TAGS),
            azure_row("06/01/2024", VM, "Bandwidth", 0.05, tags=TAGS)]),
        "daily/costsched/20240601-20240630/part_1_0001.csv": azure_csv([
            azure_row("2024-06-02", VM + "/disk", "Storage", 0.2, tags=TAGS),
            azure_row("2024-06-02", "", "", -1.0, charge="Refund")]),
        "daily/costsched/20240601-20240630/manifest.json": b"{}",
        "elsewhere/x.csv": azure_csv([azure_row("2024-06-02", VM, "Storage", 9.0)]),
    }, page=1)
    loopback.handler = service
    found = list(read_container(f"{loopback.url}/acct/costs/daily/costsched",
                                env={ENV_SAS: "?sv=2022-11-02&sig=secret"}))

    lists = [p for p in loopback.paths if "comp=list" in p]
    assert len(lists) == 3 and all(p.startswith("/acct/costs?restype=container&comp=list&"
                                                 "prefix=daily%2Fcostsched") for p in lists)
    assert "marker=1" in lists[1] and "marker=2" in lists[2]
    gets = [p.split("?")[0] for p in loopback.paths if "comp=list" not in p]
    # The period folder's manifest is read (it names no file: both parts are read).
    assert gets == ["/acct/costs/daily/costsched/20240601-20240630/manifest.json",
                    "/acct/costs/daily/costsched/20240601-20240630/part_0_0001.csv",
                    "/acct/costs/daily/costsched/20240601-20240630/part_1_0001.csv"]
    assert all("sig=secret" in p for p in loopback.paths)
    # Sources are named without the signature.
    assert [w for w, _ in found] == [f"{loopback.url}/acct/costs/daily/costsched/"
                                     f"20240601-20240630/part_{n}_0001.csv" for n in (0, 1)]
    lines = pd.concat([f for _, f in found], ignore_index=True)
    assert lines["category"].tolist() == ["compute", "egress", "storage", "credit"]
    assert lines["usd"].tolist() == pytest.approx([3.67, 0.05, 0.2, -1.0])
    assert lines["job_tag"].tolist() == ["6", "6", "6", ""]
    assert lines["attempt_tag"].iloc[0] == "j6-m2-0"
    assert lines["usage_start"].tolist()[1:3] == [pd.Timestamp("2024-06-01", tz="UTC"),
                                                  pd.Timestamp("2024-06-02", tz="UTC")]
    assert (lines["usage_end"] - lines["usage_start"]).eq(pd.Timedelta(days=1)).all()


def test_refused_and_bad_files_are_one_line(loopback) -> None:  # noqa: ANN001
    loopback.handler = BlobService("acct", "costs", {"a.csv": b"Date,Cost\n"})
    with pytest.raises(InvalidInput) as caught:
        list(read_container(f"{loopback.url}/acct/costs", env={}))
    assert "HTTP 403 AuthenticationFailed; set AZURE_STORAGE_SAS_TOKEN" in str(caught.value)
    with pytest.raises(BadExport, match=r"a.csv: field ResourceId missing: expected an "
                       r"Azure cost export"):
        list(read_container(f"{loopback.url}/acct/costs?sig=secret", env={}))
    row = azure_row("June 1st", VM, "Virtual Machines", 1.0)
    with pytest.raises(BadExport, match=r"^f.csv: field Date 'June 1st': expected a date"):
        lines_of(pd.DataFrame([row]).astype(str), "f.csv")
    with pytest.raises(InvalidInput, match="expected an Azure storage location"):
        list(read_container("ftp://x/y", env={}))


@pytest.mark.parametrize(("charge", "meter", "expected"), [
    ("Usage", "Virtual Machines", "compute"), ("Usage", "Storage", "storage"),
    ("Usage", "Bandwidth", "egress"), ("Tax", "", "tax"), ("Refund", "", "credit"),
    ("RoundingAdjustment", "", "rounding"), ("Purchase", "Virtual Machines", "other"),
])
def test_categories(charge: str, meter: str, expected: str) -> None:
    assert category(charge, meter) == expected
