"""A price's place must exist: its region one of its cloud's (by the shape each cloud
documents, so a region opened later is accepted) and its zone in that region. Anything else
refuses the file at import in one line naming the file, row and field; nothing is stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.service import import_prices
from costsched.store import PriceStore
from costsched.validation import region_problem, zone_problem

HEADER = ("cloud,region,zone,instance_type,market,os,gpu_model,gpu_count,vcpus,memory_gb,"
          "usd_per_hour,effective_at,source\n")
ROWS = {"aws": "aws,{region},{zone},p3.2xlarge,spot,linux,V100,1,8,61.0,0.92,"
               "2026-01-01T00:00:00Z,test\n",
        "gcp": "gcp,{region},{zone},n1-standard-8+1xnvidia-tesla-v100,spot,linux,V100,1,8,"
               "30.0,0.9,2026-01-01T00:00:00Z,test\n",
        "azure": "azure,{region},{zone},Standard_NC6s_v3,spot,linux,V100,1,6,112.0,0.9,"
                 "2026-01-01T00:00:00Z,test\n"}
# Regions of each cloud as listed by the clouds (2025), from every geography.
REAL = {"aws": ["us-east-1", "us-west-2", "ca-west-1", "mx-central-1", "sa-east-1",
                "eu-central-2", "eu-south-1", "il-central-1", "me-central-1", "af-south-1",
                "ap-southeast-5", "ap-northeast-3", "ap-east-2", "us-gov-west-1",
                "cn-northwest-1"],
        "gcp": ["us-central1", "us-east5", "us-south1", "northamerica-northeast2",
                "southamerica-west1", "europe-west12", "europe-north2", "me-central2",
                "africa-south1", "asia-southeast2", "australia-southeast1"],
        "azure": ["eastus", "eastus2", "westus3", "southcentralus", "westeurope",
                  "germanywestcentral", "uksouth", "swedencentral", "japaneast",
                  "australiaeast", "brazilsouth", "southafricanorth", "jioindiawest",
                  "newzealandnorth", "uaenorth"]}


def import_one(tmp_path: Path, cloud: str, region: str, zone: str = "") -> tuple[list, int]:
    path = tmp_path / "prices.csv"
    path.write_text(HEADER + ROWS[cloud].format(region=region, zone=zone))
    store = PriceStore(str(tmp_path / "store.sqlite"))
    try:
        result = import_prices(store, [path])
        return result.errors, result.inserted
    finally:
        store.dispose()


@pytest.mark.parametrize(("cloud", "region", "zone", "says"), [
    ("aws", "us-east-1", "us-east-1zz", "zone 'us-east-1zz': not a zone of aws"),
    ("aws", "us-east-1", "us-west-2a", "zone 'us-west-2a': a zone of us-west-2, not of "
                                       "region us-east-1"),
    ("aws", "us-moon-1", "", "region 'us-moon-1': not a region of aws"),
    ("aws", "us-central1", "", "region 'us-central1': not a region of aws"),
    ("aws", "us-east-1", "us-east-1q", "zone 'us-east-1q': not a zone of us-east-1; its "
                                       "zones are us-east-1a, us-east-1b"),
    ("gcp", "us-central1", "us-central1-z", "zone 'us-central1-z': not a zone of us-central1; "
                                            "its zones are us-central1-a"),
    ("gcp", "us-central1", "us-east1-b", "zone 'us-east1-b': a zone of us-east1"),
    ("gcp", "mars-central1", "", "region 'mars-central1': not a region of gcp"),
    ("azure", "bogus", "", "region 'bogus': not a region of azure"),
    ("azure", "eastus", "eastus-1", "zone 'eastus-1': not an Azure availability zone"),
])
def test_a_place_that_does_not_exist_refuses_the_file(tmp_path: Path, cloud: str,
                                                      region: str, zone: str,
                                                      says: str) -> None:
    errors, inserted = import_one(tmp_path, cloud, region, zone)
    assert inserted == 0
    assert len(errors) == 1 and "\n" not in errors[0]
    assert errors[0].startswith(f"{tmp_path / 'prices.csv'}: row 2: {says}"), errors[0]


@pytest.mark.parametrize("cloud", sorted(REAL))
def test_every_real_region_and_its_zones_are_accepted(tmp_path: Path, cloud: str) -> None:
    for region in REAL[cloud]:
        assert region_problem(cloud, region) is None, region
        zone = {"aws": f"{region}b", "gcp": f"{region}-c", "azure": "2"}[cloud]
        assert zone_problem(cloud, region, zone) is None, zone
    assert zone_problem("aws", "us-west-2", "us-west-2-lax-1a") is None  # a Local Zone
    errors, inserted = import_one(tmp_path, cloud, REAL[cloud][-1])
    assert errors == [] and inserted == 1
