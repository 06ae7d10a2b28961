"""Per-cloud facts, one module per cloud (`aws`, `gcp`, `azure`), behind one `Cloud` shape.

    from costsched import clouds
    clouds.get("gcp").accelerator("V100")          # 'nvidia-tesla-v100'
    clouds.zone_region("us-east-1b")               # ('aws', 'us-east-1')
    clouds.owners_of_region("us-central1")         # ['gcp']
    clouds.storage_cloud("gs://bucket/jobs")       # 'gcp'
    clouds.place_problem("aws", "us-east-1", "us-west-2a")  # 'zone ...: a zone of us-west-2...'

The regions and zones that exist are known here and only here (`base.Cloud.region_problem`
says the rule): every import, collector and option that names a place asks these; a place a
job names asks `given_region_problem` and `given_zone_problem`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from costsched.clouds.aws import AWS
from costsched.clouds.azure import AZURE
from costsched.clouds.base import Cloud, EgressPrice, PreemptionRate, SdkMissing
from costsched.clouds.gcp import GCP
from costsched.vocabulary import did_you_mean

CLOUDS: dict[str, Cloud] = {c.name: c for c in (AWS, GCP, AZURE)}
# A bucket's name as S3 and Cloud Storage take it (each has stricter rules of its own).
BUCKET = re.compile(r"[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]")
NAMES: tuple[str, ...] = tuple(CLOUDS)


class UnknownCloud(ValueError):
    """A name that is not one of NAMES; str() names the accepted ones."""


def get(name: str) -> Cloud:
    try:
        return CLOUDS[name]
    except KeyError:
        raise UnknownCloud(f"cloud {name!r}: expected one of {', '.join(NAMES)}") from None


def owners_of_region(region: str) -> list[str]:
    """The clouds that have `region` (listed, or new by their rule: AWS us-east-1, GCP
    us-east1, Azure eastus are told apart by shape)."""
    return [c.name for c in CLOUDS.values() if c.is_region(region)]


def place_problem(cloud: str, region: object, zone: object = "") -> str | None:
    """What is wrong with a place of `cloud`: its region not one of the cloud's, or its zone
    ('' for the whole region) not in that region; None when it exists (or when `cloud`
    is not a cloud: that is refused as such where clouds are checked)."""
    found = CLOUDS.get(cloud)
    if found is None:
        return None
    return found.region_problem(region) or found.zone_problem(str(region), zone)


def region_problem(region: str, names: tuple[str, ...] = NAMES) -> str | None:
    """What is wrong with `region` as a region of any of the clouds `names` (an option that
    takes regions of every cloud); None when one of them has it."""
    if any(CLOUDS[n].is_region(region) for n in names):
        return None
    shaped = [n for n in names if CLOUDS[n].region_pattern.fullmatch(region)]
    if len(shaped) == 1 or len(names) == 1:  # that cloud's own reason
        return CLOUDS[(shaped or names)[0]].region_problem(region)
    listed = sorted(r for n in names for r in CLOUDS[n].regions)
    examples = ", ".join(f"{n} {CLOUDS[n].region_example}" for n in names)
    return (f"region {region!r}: not a region of {_either(names)}: expected a name such "
            f"as {examples}{did_you_mean(region, listed)}")


def given_region_problem(region: str, names: tuple[str, ...] = NAMES) -> str | None:
    """What is wrong with `region` as a place a job may run (a job file's
    constraints.regions, a task's region or infra), `names` the clouds it may use; None
    when some cloud lists it, or when it is numbered next in a listed series of one of
    `names` (`us-east-3`, `eastus3`: opened since the lists were written). The first of a
    series no cloud lists (`useast1`, of Azure's shape) is refused: typed by a user, such a
    name is a misspelling far more often than a region opened since."""
    if any(region in CLOUDS[n].regions for n in names):
        return None
    examples = ", ".join(CLOUDS[n].region_example for n in names)
    elsewhere = [c.name for c in CLOUDS.values() if region in c.regions]
    if elsewhere:  # another cloud's region, with the job kept to its clouds
        return (f"{region!r} is a region of {_either(tuple(elsewhere))}, not of "
                f"{_either(names)}: add {elsewhere[0]} to the job's clouds, or name a region "
                f"of {_either(names)} such as {examples}")
    if any(CLOUDS[n].region_problem(region, new_series=False) is None for n in names):
        return None
    listed = sorted(r for n in names for r in CLOUDS[n].regions)
    return (f"{region!r}: not a region of {_either(names)}"
            + (did_you_mean(region, listed)
               or f": expected a listed region such as {examples}"))


def zone_region(zone: str) -> tuple[str, str] | None:
    """(cloud, region) of a zone name of a cloud that names zones after regions, or None."""
    for cloud in CLOUDS.values():
        region = cloud.region_of_zone(zone)
        if region is not None:
            return cloud.name, region
    return None


def zones_of_region(named: Iterable[str], cloud: str, region: str) -> list[str]:
    """Of the zones a job names (`named`, in its file's order), those of `cloud`'s
    `region`, once each (a zone Azure names without its region, '1', is one of each of
    its regions)."""
    own = CLOUDS[cloud].zone_names if cloud in CLOUDS else ()
    out: list[str] = []
    for zone in named:
        found = zone_region(zone)
        if (found == (cloud, region) if found is not None else zone in own) \
                and zone not in out:
            out.append(zone)
    return out


def given_zone_problem(zone: str, regions: Iterable[str] = ()) -> str | None:
    """What is wrong with `zone` as a place a job may run ('us-east-1a'): not a zone of any
    cloud, not of one of `regions` (when given), or not one of its region's listed zones
    (`Cloud.unlisted_zone_problem`); None when it will do (or for a zone named without its
    region, as Azure names them)."""
    regions = tuple(sorted(regions))
    found = zone_region(zone)
    if found is None and any(zone in c.zone_names for c in CLOUDS.values()):
        return None  # Azure's '1': a zone of whichever of its regions the job runs in
    if found is None:
        examples = ", ".join(c.zone_example for c in CLOUDS.values() if c.zone_pattern)
        return (f"{zone!r}: not a zone of {_either(regions) if regions else 'a known region'}"
                f": expected a name such as {examples}")
    if regions and found[1] not in regions:
        return f"{zone!r}: a zone of {found[1]}, not of {_either(regions)}"
    return CLOUDS[found[0]].unlisted_zone_problem(zone)


def _either(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def storage_cloud(uri: str) -> str | None:
    """The cloud whose object storage `uri` is in (s3:// AWS, gs:// GCP, az:// or a Blob
    account's URL Azure); None for a path."""
    for cloud in CLOUDS.values():
        if cloud.stores(uri):
            return cloud.name
    return None


def storage_location_problem(location: object) -> str | None:
    """What is wrong with `location` as a place in some cloud's object storage, its bucket
    (or container) named; None when it will do."""
    text = location.strip() if isinstance(location, str) else ""
    found = storage_cloud(text) if text else None
    parts = text.split("://", 1)[-1].split("/")
    # the bucket (or container) follows the scheme, or an Azure account's host
    bucket = "".join(parts[1:2] if text.lower().startswith("https://") else parts[:1])
    if found in ("aws", "gcp") and not BUCKET.fullmatch(bucket):
        bucket = ""
    if found is None or not bucket or "?" in text or "#" in text:
        return ("expected s3://BUCKET/PATH, gs://BUCKET/PATH, az://CONTAINER/PATH or an "
                "Azure Blob account's URL (https://ACCOUNT.blob.core.windows.net/CONTAINER)"
                + (", a bucket of 3-222 lowercase letters, digits, '.', '-', '_'"
                   if found in ("aws", "gcp") else ""))
    return None


def storage_root_problem(cloud: str, root: object) -> str | None:
    """What is wrong with `root` as where `cloud`'s jobs keep their checkpoints (a location
    in some cloud's object storage); None when it will do."""
    if cloud not in CLOUDS:
        return (f"not a cloud: expected one of {', '.join(NAMES)}"
                f"{did_you_mean(cloud, NAMES)}")
    return storage_location_problem(root)


def storage_roots(roots: dict[str, str]) -> dict[str, str]:
    """A mapping of clouds to locations in some cloud's object storage, as given, without a
    trailing '/'; ValueError naming the first that is not."""
    for cloud, root in roots.items():
        problem = storage_root_problem(cloud, root)
        if problem is not None:
            raise ValueError(f"{cloud} = {root!r}: {problem}")
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


__all__ = ["BUCKET", "CLOUDS", "NAMES", "Cloud", "EgressPrice", "PreemptionRate", "SdkMissing",
           "UnknownCloud", "credential_envs", "default_preemption", "egress", "get",
           "given_region_problem", "given_zone_problem", "owners_of_region", "place_problem",
           "region_problem", "storage_cloud", "storage_location_problem", "storage_root_problem",
           "storage_roots", "zone_region"]
