"""AWS Spot Instance Advisor: each GPU instance type's interruption-frequency bucket per
region and OS (<5%, 5-10%, 10-15%, 15-20%, >20% of instances interrupted over the past
month), from the public JSON document the Advisor's page reads (no credentials).

The document: {"ranges": [{"index": 0, "label": "<5%", "max": 5, ...}, ...],
"instance_types": {...}, "spot_advisor": {region: {"Linux"|"Windows": {instance type:
{"s": savings %, "r": range index}}}}}. One observation per (region, GPU instance type,
OS), kind "advisor", value = the range index.
"""

from __future__ import annotations

import json
import os
import urllib.request
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from costsched import catalog
from costsched.clouds import place_problem
from costsched.model import InvalidInput
from costsched.store.signals import SIGNAL_COLUMNS
from price_collectors.base import CollectorUnavailable, json_document

DEFAULT_URL = "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json"
ENV_URL = "COSTSCHED_SPOT_ADVISOR_URL"
SOURCE = "collect:aws:spot-advisor"
OS_NAMES = {"Linux": "linux", "Windows": "windows"}


class SpotAdvisorCollector:
    """The Advisor's buckets of the catalog's AWS GPU instance types."""

    cloud = "aws"
    name = "spot-advisor"

    def __init__(self, regions: list[str] | None = None, url: str | None = None,
                 timeout: float = 30.0) -> None:
        self.regions = list(regions or [])
        self.url = url or os.environ.get(ENV_URL) or DEFAULT_URL
        self.timeout = timeout

    def collect(self, at: datetime) -> pd.DataFrame:
        """Fetch the document and return its observations as of `at`."""
        try:
            with urllib.request.urlopen(self.url, timeout=self.timeout) as answer:  # noqa: S310
                document = json.load(answer)
        except (OSError, ValueError) as exc:
            raise CollectorUnavailable(f"aws: spot advisor {self.url}: {exc}") from None
        frame = parse(document, at, SOURCE)
        return frame[frame["region"].isin(self.regions)] if self.regions else frame


def gpu_types(cloud: str) -> set[str]:
    types = catalog.instance_types()
    return set(types.loc[types["cloud"] == cloud, "instance_type"])


def parse(document: Any, at: datetime, source: str, where: str = "document") -> pd.DataFrame:
    """The observations of an Advisor document (GPU instance types only)."""
    if not isinstance(document, dict) or not isinstance(document.get("spot_advisor"), dict):
        raise InvalidInput(f"{where}: field spot_advisor: expected an object of regions")
    ranges = document.get("ranges")
    labels = {}
    for i, r in enumerate(ranges if isinstance(ranges, list) else []):
        if isinstance(r, dict):
            labels[int(r.get("index", i))] = str(r.get("label", ""))
    wanted = gpu_types("aws")
    rows = []
    for region, systems in document["spot_advisor"].items():
        problem = place_problem("aws", region)
        if problem is not None:
            raise InvalidInput(f"{where}: field spot_advisor.{region}: {problem}")
        if not isinstance(systems, dict):
            raise InvalidInput(f"{where}: field spot_advisor.{region}: expected an object "
                               "of Linux and Windows")
        for os_name, types in systems.items():
            if os_name not in OS_NAMES or not isinstance(types, dict):
                continue
            for instance_type, entry in types.items():
                if instance_type not in wanted:
                    continue
                r = entry.get("r") if isinstance(entry, dict) else None
                if not isinstance(r, int) or not 0 <= r <= 4:
                    raise InvalidInput(f"{where}: field spot_advisor.{region}.{os_name}."
                                       f"{instance_type}.r {r!r}: expected a range index "
                                       "0-4")
                rows.append(("aws", region, "", instance_type, OS_NAMES[os_name], "advisor",
                             float(r), labels.get(r, str(r)), at, source))
    return pd.DataFrame(rows, columns=SIGNAL_COLUMNS)


def read_file(path: Path, at: datetime) -> pd.DataFrame:
    """A saved Advisor document's observations, as of `at` (the document has no time)."""
    document = json_document(path)
    return parse(document, at, f"file:{path.name}", str(path))
