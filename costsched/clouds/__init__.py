"""Per-cloud facts, one module per cloud (`aws`, `gcp`, `azure`), behind one `Cloud` shape.

    from costsched import clouds
    clouds.get("gcp").accelerator("V100")          # 'nvidia-tesla-v100'
    clouds.zone_region("us-east-1b")               # ('aws', 'us-east-1')
    clouds.owners_of_region("us-central1")         # ['gcp']
"""

from __future__ import annotations

from costsched.clouds.aws import AWS
from costsched.clouds.azure import AZURE
from costsched.clouds.base import Cloud, EgressPrice, PreemptionRate, SdkMissing
from costsched.clouds.gcp import GCP

CLOUDS: dict[str, Cloud] = {c.name: c for c in (AWS, GCP, AZURE)}
NAMES: tuple[str, ...] = tuple(CLOUDS)


class UnknownCloud(ValueError):
    """A name that is not one of NAMES; str() names the accepted ones."""


def get(name: str) -> Cloud:
    try:
        return CLOUDS[name]
    except KeyError:
        raise UnknownCloud(f"cloud {name!r}: expected one of {', '.join(NAMES)}") from None


def owners_of_region(region: str) -> list[str]:
    """The clouds whose region names look like `region` (AWS us-east-1, GCP us-east1,
    Azure eastus are told apart by shape)."""
    return [c.name for c in CLOUDS.values() if c.is_region(region)]


def zone_region(zone: str) -> tuple[str, str] | None:
    """(cloud, region) of a zone name of a cloud that names zones after regions, or None."""
    for cloud in CLOUDS.values():
        region = cloud.region_of_zone(zone)
        if region is not None:
            return cloud.name, region
    return None


def egress(cloud: str) -> EgressPrice:
    """The cloud's egress prices; an unknown cloud is charged like the dearest known one
    rather than for free."""
    found = CLOUDS.get(cloud)
    if found is not None:
        return found.egress
    return max((c.egress for c in CLOUDS.values()), key=lambda e: e.internet_usd_per_gb)


def credential_envs() -> frozenset[str]:
    """Environment variable names that carry some cloud's credentials."""
    from costsched.clouds import aws, azure, gcp

    return frozenset((*aws.CREDENTIAL_ENVS, *gcp.CREDENTIAL_ENVS, *azure.CREDENTIAL_ENVS))


def default_preemption(cloud: str) -> PreemptionRate:
    return get(cloud).preemption


__all__ = ["CLOUDS", "NAMES", "Cloud", "EgressPrice", "PreemptionRate", "SdkMissing",
           "UnknownCloud", "credential_envs", "default_preemption", "egress", "get",
           "owners_of_region", "zone_region"]
