"""Per-cloud facts, one module per cloud (`aws`, `gcp`, `azure`), behind one `Cloud` shape.

    from costsched import clouds
    clouds.get("gcp").accelerator("V100")          # 'nvidia-tesla-v100'
    clouds.zone_region("us-east-1b")               # ('aws', 'us-east-1')
    clouds.owners_of_region("us-central1")         # ['gcp']
    clouds.storage_cloud("gs://bucket/jobs")       # 'gcp'
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


def storage_cloud(uri: str) -> str | None:
    """The cloud whose object storage `uri` is in (s3:// AWS, gs:// GCP, az:// or a Blob
    account's URL Azure); None for a path."""
    for cloud in CLOUDS.values():
        if cloud.stores(uri):
            return cloud.name
    return None


def storage_roots(roots: dict[str, str]) -> dict[str, str]:
    """A mapping of clouds to locations in some cloud's object storage, as given, without a
    trailing '/'; ValueError naming the first that is not."""
    for cloud, root in roots.items():
        if cloud not in CLOUDS or storage_cloud(root) is None or "?" in root:
            raise ValueError(f"{cloud} = {root!r}: expected a cloud ({', '.join(NAMES)}) = "
                             "s3://BUCKET/PATH, gs://BUCKET/PATH, az://CONTAINER/PATH or an "
                             "Azure Blob account's URL")
    return {cloud: root.strip().rstrip("/") for cloud, root in roots.items()}


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
           "owners_of_region", "storage_cloud", "storage_roots", "zone_region"]
