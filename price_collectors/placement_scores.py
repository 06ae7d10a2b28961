"""EC2 spot placement scores: how likely a spot request for an instance type and a
capacity is to be filled, 1-10 per region (`GetSpotPlacementScores`, boto3's ec2 client;
needs credentials with ec2:GetSpotPlacementScores).

One request per GPU instance type (a score speaks for the set of types asked together),
for `capacity` instances in the regions asked (all the API knows when none), regional
scores (SingleAvailabilityZone false: zone scores name zone ids, not the zone names
prices use). One observation per (region, instance type), kind "placement".
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from costsched.clouds import place_problem
from costsched.model import InvalidInput
from costsched.store.signals import SIGNAL_COLUMNS
from price_collectors.base import CollectorUnavailable, json_document, one_line
from price_collectors.spot_advisor import gpu_types

SOURCE = "collect:aws:placement-scores"
API_REGION = "us-east-1"  # the API answers for every region from any one


class PlacementScoreCollector:
    """Spot placement scores of the catalog's AWS GPU instance types."""

    cloud = "aws"
    name = "placement-scores"

    def __init__(self, regions: Sequence[str] = (), *, types: Sequence[str] = (),
                 capacity: int = 1, client: Any = None) -> None:
        self.regions = list(regions)
        self.types = sorted(types or gpu_types("aws"))
        self.capacity = capacity
        self._client = client

    def client(self) -> Any:
        if self._client is None:
            try:
                import boto3
            except ImportError:
                raise CollectorUnavailable("aws: boto3 is not installed: pip install "
                                           "'costsched[aws]'") from None
            from costsched.clouds.aws import boto_config

            self._client = boto3.client("ec2", region_name=API_REGION, config=boto_config())
        return self._client

    def collect(self, at: datetime) -> pd.DataFrame:
        rows = []
        for instance_type in self.types:
            try:
                answers = self._scores(instance_type)
            except Exception as exc:  # noqa: BLE001 - one line for the summary
                if "credentials" in str(exc).lower():
                    raise CollectorUnavailable(f"aws: no AWS credentials found for spot "
                                               f"placement scores ({one_line(exc)})") from None
                raise CollectorUnavailable(f"aws: spot placement scores: {one_line(exc)}"
                                           ) from None
            rows.extend(parse(answers, instance_type, at, SOURCE))
        return pd.DataFrame(rows, columns=SIGNAL_COLUMNS)

    def _scores(self, instance_type: str) -> list[dict]:
        request: dict[str, Any] = {"InstanceTypes": [instance_type],
                                   "TargetCapacity": self.capacity,
                                   "SingleAvailabilityZone": False}
        if self.regions:
            request["RegionNames"] = self.regions
        scores: list[dict] = []
        while True:
            answer = self.client().get_spot_placement_scores(**request)
            scores.extend(answer.get("SpotPlacementScores", []))
            token = answer.get("NextToken")
            if not token:
                return scores
            request["NextToken"] = token


def parse(scores: Any, instance_type: str, at: datetime, source: str,
          where: str = "SpotPlacementScores") -> list[tuple]:
    """Observation rows of one answer's SpotPlacementScores for `instance_type`."""
    if not isinstance(scores, list):
        raise InvalidInput(f"{where}: expected a list of {{Region, Score}}")
    rows = []
    for i, item in enumerate(scores):
        if not isinstance(item, dict):
            raise InvalidInput(f"{where}[{i}]: expected {{Region, Score}}, got {item!r}")
        score, region = item.get("Score"), item.get("Region")
        # The API's scores are whole numbers 1-10: true, 9.5 or "7" are not scores.
        if isinstance(score, bool) or not isinstance(score, int) or not 1 <= score <= 10:
            raise InvalidInput(f"{where}[{i}]: field Score {score!r}: expected a whole "
                               "number from 1 to 10")
        problem = (place_problem("aws", region) if isinstance(region, str) and region
                   else f"region {region!r}: expected an AWS region such as us-east-1")
        if problem:
            raise InvalidInput(f"{where}[{i}]: field Region: {problem}")
        zone = str(item.get("AvailabilityZoneId") or "")
        rows.append(("aws", str(region), zone, instance_type, "linux", "placement",
                     float(score), f"{int(score)}/10", at, source))
    return rows


def read_file(path: Path, at: datetime) -> pd.DataFrame:
    """A saved answer: {"InstanceType": ..., "SpotPlacementScores": [...]} or a list of
    them (the request's instance type is not in the API's answer, so the file names it)."""
    path = Path(path)
    document = json_document(path)
    answers = document if isinstance(document, list) else [document]
    rows = []
    for i, answer in enumerate(answers):
        kind = answer.get("InstanceType") if isinstance(answer, dict) else None
        if not isinstance(kind, str) or not kind:
            raise InvalidInput(f"{path}: answer {i}: field InstanceType: expected the "
                               "instance type the scores are for")
        rows.extend(parse(answer.get("SpotPlacementScores"), kind, at, f"file:{path.name}",
                          f"{path}: answer {i}: SpotPlacementScores"))
    return pd.DataFrame(rows, columns=SIGNAL_COLUMNS)
