"""Azure spot eviction rates: each GPU VM size's eviction-rate bucket per location
("0-5", "5-10", "10-15", "15-20", "20+" % over the past period), from Azure Resource
Graph's SpotResources table (an access token for https://management.azure.com: the
AZURE_ACCESS_TOKEN variable, else azure-identity's DefaultAzureCredential when installed).

One observation per (location, VM size), kind "eviction", value = the bucket's index.
The token is only ever sent to Resource Graph: never logged, stored or shown.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from costsched.clouds import place_problem
from costsched.model import InvalidInput
from costsched.optimize.hazard import EVICTION_LABELS
from costsched.store.signals import SIGNAL_COLUMNS
from price_collectors.base import CollectorUnavailable, json_document, one_line
from price_collectors.spot_advisor import gpu_types

URL = ("https://management.azure.com/providers/Microsoft.ResourceGraph/resources"
       "?api-version=2021-03-01")
SCOPE = "https://management.azure.com/.default"
ENV_TOKEN = "AZURE_ACCESS_TOKEN"
SOURCE = "collect:azure:resource-graph"
QUERY = ("SpotResources"
         " | where type =~ 'microsoft.compute/skuspotevictionrate/location'"
         " | project skuName = tostring(properties.skuName),"
         " location = tostring(properties.location),"
         " evictionRate = tostring(properties.evictionRate)")
# post(url, headers, body) -> the answer's JSON
Transport = Callable[[str, dict[str, str], dict], Any]


class AzureEvictionCollector:
    """Eviction-rate buckets of the catalog's Azure GPU VM sizes."""

    cloud = "azure"
    name = "eviction-rates"

    def __init__(self, regions: Sequence[str] = (), *, transport: Transport | None = None,
                 token: Callable[[], str] | None = None) -> None:
        self.regions = list(regions)
        self.transport = transport or _post
        self.token = token or access_token

    def collect(self, at: datetime) -> pd.DataFrame:
        headers = {"Authorization": f"Bearer {self.token()}",
                   "Content-Type": "application/json"}
        rows: list[dict] = []
        body: dict[str, Any] = {"query": QUERY}
        while True:
            try:
                answer = self.transport(URL, headers, dict(body))
            except Exception as exc:  # noqa: BLE001 - one line for the summary
                raise CollectorUnavailable(f"azure: resource graph: {one_line(exc)}") from None
            data = answer.get("data") if isinstance(answer, dict) else None
            if not isinstance(data, list):
                raise CollectorUnavailable("azure: resource graph: the answer has no data "
                                           "rows")
            rows.extend(data)
            token = answer.get("$skipToken")
            if not token:
                break
            body["options"] = {"$skipToken": token}
        frame = parse(rows, at, SOURCE)
        if self.regions:
            frame = frame[frame["region"].isin(self.regions)]
        return frame.reset_index(drop=True)


def access_token() -> str:
    token = os.environ.get(ENV_TOKEN)
    if token:
        return token
    try:
        from azure.identity import DefaultAzureCredential
    except ImportError:
        raise CollectorUnavailable(f"azure: no access token for Resource Graph: set "
                                   f"{ENV_TOKEN} or install azure-identity") from None
    try:
        return DefaultAzureCredential().get_token(SCOPE).token
    except Exception as exc:  # noqa: BLE001 - one line, never the secret
        raise CollectorUnavailable(f"azure: no Azure credential: {one_line(exc)}") from None


def _post(url: str, headers: dict[str, str], body: dict) -> Any:
    try:
        import requests
    except ImportError:
        raise CollectorUnavailable("azure: requests is not installed: pip install "
                                   "'costsched[azure]'") from None
    answer = requests.post(url, headers=headers, json=body, timeout=60)
    answer.raise_for_status()
    return answer.json()


def parse(rows: Any, at: datetime, source: str, where: str = "data") -> pd.DataFrame:
    """Observations of Resource Graph rows (projected columns skuName, location,
    evictionRate, or the raw rows' properties), GPU sizes only."""
    if not isinstance(rows, list):
        raise InvalidInput(f"{where}: expected a list of rows")
    wanted = {t.lower(): t for t in gpu_types("azure")}
    out = []
    for i, row in enumerate(rows):
        fields = row.get("properties", row) if isinstance(row, dict) else None
        if not isinstance(fields, dict):
            raise InvalidInput(f"{where}[{i}]: expected an object with skuName, location "
                               "and evictionRate")
        size = str(fields.get("skuName", ""))
        bucket = str(fields.get("evictionRate", "")).replace("%", "").replace(" ", "")
        location = str(fields.get("location", "")).lower()
        if size.lower() not in wanted:
            continue
        if bucket not in EVICTION_LABELS or not location:
            raise InvalidInput(f"{where}[{i}] {size}: evictionRate {bucket!r}: expected one "
                               f"of {', '.join(EVICTION_LABELS)} with a location")
        problem = place_problem("azure", location)
        if problem is not None:
            raise InvalidInput(f"{where}[{i}] {size}: field location: {problem}")
        out.append(("azure", location, "", wanted[size.lower()], "linux", "eviction",
                    float(EVICTION_LABELS.index(bucket)), bucket, at, source))
    return pd.DataFrame(out, columns=SIGNAL_COLUMNS)


def read_file(path: Path, at: datetime) -> pd.DataFrame:
    """A saved Resource Graph answer ({"data": [...]}) as of `at`."""
    path = Path(path)
    document = json_document(path)
    rows = document.get("data") if isinstance(document, dict) else document
    return parse(rows, at, f"file:{path.name}", f"{path}: data")
