"""What copying a checkpoint from one place to another is billed, per GB, by cloud and
region pair: the clouds' published rates.

- One region, whatever the zones: free (the copy goes through the region's object
  storage, and storage to a machine of its region is not billed; see `EgressPrice`).
- Regions of one cloud: the pair's listed rate where the cloud lists rates per pair (AWS:
  `costsched/data/aws_egress_pairs.csv`), else the cloud's inter-region rate.
- Another cloud: the source cloud's internet rate.
"""

from __future__ import annotations

import csv
from functools import cache
from importlib import resources

from costsched.clouds.base import EgressPrice

# `costsched/data/aws_egress_pairs.csv`: AWS data transfer USD/GB for 1,122 region pairs
# (first paid tier), exported from the AWS Pricing API by the authors of the SkyNomad
# artifact (andylizf/skynomad-artifact, Apache-2.0, file aws_egress_pricing.csv), after
# June 2025 (it lists ap-east-2, opened then). us-east-1 <-> us-east-2 is $0.01/GB.
AWS_PAIRS_SOURCE = ("AWS Pricing API 'AWS Data Transfer' per region pair, exported 2025 "
                    "(SkyNomad artifact's aws_egress_pricing.csv)")


@cache
def listed_pairs(cloud: str) -> dict[tuple[str, str], float]:
    """(from region, to region) -> USD/GB where the cloud lists a rate per pair."""
    if cloud != "aws":
        return {}
    with resources.files("costsched.data").joinpath("aws_egress_pairs.csv").open("r") as fh:
        return {(row["from_region"], row["to_region"]): float(row["usd_per_gb"])
                for row in csv.DictReader(fh)}


def pair_usd_per_gb(price: EgressPrice, src_cloud: str, src_region: str, src_zone: str,
                    dst_cloud: str, dst_region: str, dst_zone: str) -> float:
    """USD per GB of a checkpoint's copy from one place to another; `price`: the source
    cloud's rates. The zones are those of the places; no zone pair changes the price."""
    if src_cloud != dst_cloud:
        return price.internet_usd_per_gb
    if src_region == dst_region:
        return 0.0
    return listed_pairs(src_cloud).get((src_region, dst_region),
                                       price.inter_region_usd_per_gb)
