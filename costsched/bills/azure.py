"""Azure Cost Management exports (CSV in a storage container), as bill lines.

Files are listed with the Blob service's List Blobs call (page by page, following
NextMarker, with each blob's Last-Modified) and read with Get Blob (per billing period,
the newest run only: `costsched.bills.deliveries`), over HTTPS with `requests`,
authorised by a shared access signature: the location's own query string, else
$AZURE_STORAGE_SAS_TOKEN. The signature is never stored, logged or shown: sources are
named without it.

Columns by their documented names, in any case: ResourceId (or the older InstanceId),
Date, CostInBillingCurrency (or the older Cost / PreTaxCost), BillingCurrency,
MeterCategory, MeterSubCategory, Tags, ChargeType, ResourceLocation, Quantity,
UnitOfMeasure, SubscriptionId.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import quote, urlsplit

import pandas as pd

from costsched.bills import deliveries, files
from costsched.bills.lines import (
    BadExport,
    costsched_tags,
    finish,
    numbers,
    parse_tags,
    require,
)
from costsched.model import InvalidInput

ENV_SAS = "AZURE_STORAGE_SAS_TOKEN"
API_VERSION = "2021-08-06"
# ChargeType: what each documented value is; Usage lines by their MeterCategory.
CHARGE_TYPES = {"usage": "", "purchase": "other", "refund": "credit", "adjustment": "credit",
                "roundingadjustment": "rounding", "tax": "tax",
                "unusedreservation": "other", "unusedsavingsplan": "other"}
METER_CATEGORIES = {"virtual machines": "compute", "storage": "storage",
                    "bandwidth": "egress"}
_ALIASES = {"resourceid": ["resourceid", "instanceid"], "date": ["date", "usagedatetime"],
            "cost": ["costinbillingcurrency", "cost", "pretaxcost"],
            "currency": ["billingcurrency", "billingcurrencycode", "currency"]}


def category(charge_type: str, meter_category: str) -> str:
    """A line's category from its ChargeType and MeterCategory."""
    fixed = CHARGE_TYPES.get(charge_type.strip().lower(), "other")
    if fixed:
        return fixed
    return METER_CATEGORIES.get(meter_category.strip().lower(), "other")


def lines_of(table: pd.DataFrame, where: str) -> pd.DataFrame:
    """The bill lines of one cost export file's rows."""
    columns = {c.strip().lower(): c for c in table.columns}
    picked = {name: next((columns[a] for a in aliases if a in columns), None)
              for name, aliases in _ALIASES.items()}
    needed = {"resourceid": "ResourceId", "date": "Date", "cost": "CostInBillingCurrency"}
    for name, shown in needed.items():
        if picked[name] is None:
            require(table.columns, [shown], where, "an Azure cost export "
                    "(ResourceId, Date, CostInBillingCurrency, MeterCategory, ChargeType)")
    for shown in ("MeterCategory", "ChargeType"):
        require(columns, [shown.lower()], where, "an Azure cost export "
                "(ResourceId, Date, CostInBillingCurrency, MeterCategory, ChargeType)")

    def text(name: str | None) -> pd.Series:
        if name is None or name not in table.columns:
            return pd.Series([""] * len(table), dtype=object)
        return table[name].fillna("").astype(str).str.strip()

    def column(name: str) -> str | None:
        return columns.get(name.lower())

    day = _days(text(picked["date"]), where, picked["date"] or "Date")
    tags = [parse_tags(v, where, column("tags") or "Tags") for v in text(column("tags"))]
    found = [costsched_tags(t) for t in tags]
    charge, meter = text(column("chargetype")), text(column("metercategory"))
    frame = pd.DataFrame({
        "cloud": "azure", "account": text(column("subscriptionid")), "source": where,
        "line_key": "", "usage_start": day, "usage_end": day + pd.Timedelta(days=1),
        "resource_id": text(picked["resourceid"]),
        "category": [category(c, m) for c, m in zip(charge, meter, strict=True)],
        "line_type": charge, "service": meter, "usage_type": text(column("metersubcategory")),
        "region": text(column("resourcelocation")).str.lower(),
        "usage_amount": numbers(text(column("quantity")), where, "Quantity"),
        "usage_unit": text(column("unitofmeasure")),
        "usd": numbers(text(picked["cost"]), where, picked["cost"] or "CostInBillingCurrency"),
        "currency": text(picked["currency"]).replace("", "USD"),
        "job_tag": [j for j, _ in found], "attempt_tag": [a for _, a in found],
    })
    return finish(frame)


def _days(values: pd.Series, where: str, field: str) -> pd.Series:
    """Days written as ISO dates or as MM/DD/YYYY (both appear in exports)."""
    iso = pd.to_datetime(values, utc=True, errors="coerce", format="ISO8601")
    us = pd.to_datetime(values, utc=True, errors="coerce", format="%m/%d/%Y")
    out = iso.fillna(us)
    if out.isna().any():
        bad = values[out.isna()].iloc[0]
        raise BadExport(f"{where}: field {field} {bad!r}: expected a date, 2024-06-01 or "
                        "06/01/2024")
    return out.dt.normalize()


# --- the Blob service -------------------------------------------------------------------


def _locate(url: str) -> tuple[str, str, str, str]:
    """(base URL of the container, container, prefix, signature) of a container location:
    https://ACCOUNT.blob.core.windows.net/CONTAINER/PREFIX, or a path-style endpoint
    (an emulator's) http://HOST:PORT/ACCOUNT/CONTAINER/PREFIX."""
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.netloc:
        raise InvalidInput("export: expected an Azure storage location, "
                           "https://ACCOUNT.blob.core.windows.net/CONTAINER/PREFIX")
    segments = parts.path.lstrip("/").split("/")
    path_style = not parts.hostname or not parts.hostname.endswith(".core.windows.net")
    head = 2 if path_style else 1
    if len(segments) < head or not segments[head - 1]:
        raise InvalidInput(f"export {parts.scheme}://{parts.netloc}{parts.path}: expected "
                           "a container in the path, .../CONTAINER/PREFIX")
    base = f"{parts.scheme}://{parts.netloc}/" + "/".join(segments[:head])
    return base, segments[head - 1], "/".join(segments[head:]), parts.query


def read_container(url: str, session: Any = None, env: dict[str, str] | None = None
                   ) -> Iterator[tuple[str, pd.DataFrame]]:
    """(file, its bill lines) for each export file to read under the container location
    `url`, by name: per billing period, the newest run's (`deliveries`). `session`: a
    requests session (default: a new one)."""
    return scan_container(url, session, env).lines()


def scan_container(url: str, session: Any = None, env: dict[str, str] | None = None
                   ) -> deliveries.Scan:
    """The export blobs under `url`, listed, and those to read chosen (`deliveries`): a
    location inside a billing period's folder (a run's) is listed from that folder."""
    import requests

    base, _, prefix, sas = _locate(url)
    sas = sas or (env if env is not None else os.environ).get(ENV_SAS, "").lstrip("?")
    http = session if session is not None else requests.Session()
    listed: list[deliveries.Listed] = []
    marker = ""
    while True:
        query = f"restype=container&comp=list&prefix={quote(deliveries.widen(prefix), safe='')}"
        if marker:
            query += f"&marker={quote(marker, safe='')}"
        body = _get(http, f"{base}?{query}", sas, base).content
        try:
            root = ET.fromstring(body)
        except ET.ParseError:
            raise InvalidInput(f"export {base}: List Blobs did not answer XML") from None
        listed += [deliveries.Listed(blob.findtext("Name") or "",
                                     _modified(blob.findtext("Properties/Last-Modified")))
                   for blob in root.iter("Blob")]
        marker = (root.findtext("NextMarker") or "").strip()
        if not marker:
            break
    if not any(files.is_export_file(o.name) and o.name.startswith(prefix) for o in listed):
        raise InvalidInput(f"export {base}/{prefix}: no export file there; expected "
                           f"{', '.join(files.SUFFIXES)} blobs under that prefix")

    def fetch(name: str) -> bytes:
        return _get(http, f"{base}/{quote(name)}", sas, f"{base}/{name}").content

    return deliveries.Scan(f"{base}/", deliveries.select(listed, prefix, fetch), fetch,
                           lines_of)


def _modified(text: str | None) -> datetime | None:
    """A blob's Last-Modified (RFC 1123, as List Blobs gives it), or None."""
    try:
        return parsedate_to_datetime(text.strip()) if text else None
    except (TypeError, ValueError):
        return None


def _get(http: Any, url: str, sas: str, where: str) -> Any:
    import requests

    full = f"{url}{'&' if '?' in url else '?'}{sas}" if sas else url
    try:
        answer = http.get(full, headers={"x-ms-version": API_VERSION}, timeout=60)
    except requests.RequestException as exc:
        raise InvalidInput(f"export {where}: cannot reach the storage account "
                           f"({type(exc).__name__})") from None
    if answer.status_code != 200:
        code = answer.headers.get("x-ms-error-code", "") or answer.reason or ""
        raise InvalidInput(f"export {where}: HTTP {answer.status_code} {code}".rstrip()
                           + ("; set AZURE_STORAGE_SAS_TOKEN to a shared access signature "
                              "that may list and read the container"
                              if answer.status_code in (401, 403) else ""))
    return answer
