"""An export file on this machine (downloaded from the cloud's bucket or container), read
as the cloud's export is: an AWS Cost and Usage Report (CUR 2.0 or legacy, CSV, gzip CSV or
Parquet) or an Azure cost export (CSV). Which cloud's it is, its columns say.

GCP's billing export is a BigQuery table (read with `bills import PROJECT.DATASET.TABLE`);
a file saved from it has other columns, which no parser here reads.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from costsched.bills import aws, azure, files
from costsched.bills.lines import BadExport

EXPECTED = (f"an export file ({', '.join(files.SUFFIXES)}): an AWS Cost and Usage Report "
            "(line_item_* columns) or an Azure cost export (ResourceId, Date, "
            "CostInBillingCurrency, MeterCategory, ChargeType); GCP's billing export is read "
            "from its BigQuery table, PROJECT.DATASET.gcp_billing_export_resource_v1_<ACCOUNT>")


def is_local(location: str) -> bool:
    """Whether `location` names a file on this machine: one that is there, or a path with a
    folder or an export file's suffix (a bucket, container or table is none of these)."""
    if "://" in location:
        return False
    path = Path(location).expanduser()
    return path.exists() or "/" in location or files.is_export_file(location)


def read_file(location: str) -> tuple[str, str, pd.DataFrame]:
    """(cloud, source, bill lines) of the export file at `location`; BadExport, one line
    naming the file and what was expected, for anything else."""
    path = Path(location).expanduser()
    if path.is_dir():
        raise BadExport(f"{location}: a folder: expected {EXPECTED}; give its files one by "
                        "one (a folder of deliveries is read from the bucket, where each "
                        "billing period's newest delivery is known)")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise BadExport(f"{location}: no such file: expected {EXPECTED}") from None
    except OSError as exc:
        raise BadExport(f"{location}: cannot read it ({exc.strerror or exc}): expected "
                        f"{EXPECTED}") from None
    if not files.is_export_file(path.name):
        raise BadExport(f"{location}: not an export file by its name: expected {EXPECTED}")
    source = str(path.resolve())
    table = files.read_table(data, source)
    cloud = cloud_of_columns(table.columns)
    if cloud is None:
        raise BadExport(f"{location}: not a billing export costsched reads (its columns: "
                        f"{_some(table.columns)}): expected {EXPECTED}")
    return cloud, source, (aws.lines_of if cloud == "aws" else azure.lines_of)(table, source)


def cloud_of_columns(columns: pd.Index) -> str | None:
    """'aws' for a Cost and Usage Report's columns, 'azure' for a cost export's, else None."""
    names = [aws.column_name(str(c)) for c in columns]
    if any(n.startswith("line_item_") for n in names):
        return "aws"
    lower = {str(c).strip().lower() for c in columns}
    if {"metercategory", "chargetype"} & lower:
        return "azure"
    return None


def _some(columns: pd.Index) -> str:
    shown = [str(c) for c in columns[:6]]
    return ", ".join(shown) + (", ..." if len(columns) > 6 else "") if shown else "none"
