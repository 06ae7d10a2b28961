"""What costsched knows of a cloud, in one shape for every cloud (one module per cloud).

Nothing outside `costsched/clouds/`, the per-cloud collectors and the per-cloud launchers
branches on a cloud's name: everything else asks the `Cloud` object.

Places: a region is one of the cloud's listed regions, or a region opened after the list
was written. Such a new one must have the shape the cloud documents for its names (a
geography, a direction, a number) and be numbered at most one past the highest listed
region of its series (`us-east-3` after us-east-1 and us-east-2; `us-north-1` for a new
series; never `us-east-9`): clouds number a series' regions in the order they open them.
A region a job names must be listed or continue a listed series: the first of a new
series is taken from the clouds' own reports (prices, signals), not from a job file. A
zone is a zone of its region: named after it (AWS, GCP) or one of the cloud's zone names
(Azure's 1, 2, 3).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from costsched.vocabulary import did_you_mean


def installed(module: str) -> bool:
    """Whether `module` can be imported here, found without importing it or its parent
    packages (an SDK's import costs a tenth of a second or more, and a command that only
    prints a hint loads none); False for one a test or the user blocked (None in
    sys.modules)."""
    import importlib.util
    import sys
    from pathlib import Path

    parts = module.split(".")
    # A package blocked above it blocks it, loaded or not (its import fails at the package).
    if any(sys.modules.get(".".join(parts[:n]), True) is None for n in range(1, len(parts))):
        return False
    if module in sys.modules:
        return sys.modules[module] is not None
    top, *rest = parts
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    if not rest:
        return True
    *folders, name = rest
    for root in spec.submodule_search_locations or ():
        base = Path(root, *folders)
        if (base / name / "__init__.py").is_file() or (base / f"{name}.py").is_file() \
                or any(base.glob(f"{name}.*.so")) or (base / name).is_dir():
            return True
    return False


class SdkMissing(RuntimeError):
    """A cloud's SDK is not installed; str() is one line saying what to install."""


class NotSetUp(LookupError):
    """The cloud's account is not set up on this machine (no credentials, no project);
    str() is one line saying what to do."""


@dataclass(frozen=True, slots=True)
class EgressPrice:
    """USD per GB of data leaving the cloud's region (first paid volume tier). Within a
    region a checkpoint's copy is free whatever the zones: it goes through the region's
    object storage, and storage to a machine of its region is not billed on any of the
    three clouds (the clouds' zone-to-zone rates are for traffic between machines)."""

    internet_usd_per_gb: float  # to another cloud
    inter_region_usd_per_gb: float  # to another region of the same cloud (no listed pair)
    source: str


@dataclass(frozen=True, slots=True)
class PreemptionRate:
    """Spot preemptions per instance-hour when nothing better is known of an offering."""

    per_hour: float
    source: str


@dataclass(frozen=True)
class Cloud:
    name: str
    # The shape the cloud documents for its region names (matched in full).
    region_pattern: re.Pattern[str]
    region_example: str
    # A zone name whose `region` group is its region; None where zones are not named
    # after their region (Azure's zones are "1", "2", "3" within a region).
    zone_pattern: re.Pattern[str] | None
    zone_example: str
    egress: EgressPrice
    preemption: PreemptionRate
    # The regions the cloud lists (as of the date its module gives).
    regions: frozenset[str] = frozenset()
    # Zone names where they are not named after their region (Azure: 1, 2, 3).
    zone_names: tuple[str, ...] = ()
    # The zones of the regions whose zones are listed (as of the date its module gives);
    # a zone of another region is known by its shape only.
    zones: frozenset[str] = frozenset()
    # The cloud's own names of GPU models where they differ from the catalog's
    # (GCP's accelerator types: V100 -> nvidia-tesla-v100).
    accelerators: dict[str, str] = field(default_factory=dict)
    # How its object storage's locations begin (s3://...), and the hosts of its storage's
    # URLs (Azure Blob's https://ACCOUNT.blob.core.windows.net/...).
    storage_schemes: tuple[str, ...] = ()
    storage_hosts: tuple[str, ...] = ()

    def is_region(self, name: str) -> bool:
        """Whether `name` is one of the cloud's regions, listed or new (`region_problem`)."""
        return self.region_problem(name) is None

    def region_problem(self, region: object, new_series: bool = True) -> str | None:
        """What is wrong with `region` as a region of this cloud (None: nothing): a listed
        region, or a new one of the documented shape numbered next in its series;
        `new_series`: also the first of a series no listed region is of (as the cloud's own
        reports may name a region opened since; a name a user typed is more likely a
        misspelling, `costsched.clouds.given_region_problem`)."""
        if isinstance(region, str) and region in self.regions:
            return None
        text = region if isinstance(region, str) else repr(region)
        where = f"region {text!r}: not a region of {self.name}"
        if not isinstance(region, str) or not self.region_pattern.fullmatch(region):
            return (f"{where}: expected a name such as {self.region_example}"
                    f"{did_you_mean(text, sorted(self.regions))}")
        series, number = _series(region)
        listed = sorted((n, r) for r in self.regions for s, n in [_series(r)] if s == series)
        highest = listed[-1][0] if listed else 0
        if number <= highest + 1 and (listed or new_series):
            return None
        following = self._numbered(series, highest + 1)
        known = (f"its series has {', '.join(r for _, r in listed)}, and a new one would be "
                 f"{following}" if listed else
                 f"no listed region is of its series, whose first would be {following}")
        return f"{where}: {known}{did_you_mean(region, sorted(self.regions))}"

    def _numbered(self, series: str, number: int) -> str:
        """The region `number` of `series`; a cloud whose first regions carry no number
        (Azure's eastus, eastus2) names its first so."""
        unnumbered_first = any(not r[-1:].isdigit() for r in self.regions)
        return series if number == 1 and unnumbered_first else f"{series}{number}"

    def zone_problem(self, region: str, zone: object) -> str | None:
        """What is wrong with `zone` ('' for a price or signal of the whole region) as a
        zone of `region` (a region of this cloud) (None: nothing)."""
        if zone == "":
            return None
        text = zone if isinstance(zone, str) else repr(zone)
        if self.zone_pattern is None:
            if zone in self.zone_names:
                return None
            *first, last = self.zone_names
            return (f"zone {text!r}: not an {self.name.title()} availability zone: expected "
                    f"{', '.join(first)} or {last} (or empty)")
        example = self.zone_example.replace(self.region_of_zone(self.zone_example) or "",
                                            region, 1)
        of_zone = self.region_of_zone(zone) if isinstance(zone, str) else None
        if of_zone is None or self.region_problem(of_zone) is not None:
            return (f"zone {text!r}: not a zone of {self.name}: expected a zone of {region} "
                    f"such as {example}")
        if of_zone != region:
            return (f"zone {text!r}: a zone of {of_zone}, not of region {region}: expected a "
                    f"zone such as {example}")
        unlisted = self.unlisted_zone_problem(zone)  # a typo: us-east-1q where a..f are
        return None if unlisted is None else f"zone {unlisted}"

    def unlisted_zone_problem(self, zone: str) -> str | None:
        """What is wrong with `zone`, of the cloud's shape, where its region's zones are
        listed: none of them, nor the letter after the last (a zone opened since, as a
        region numbered next is taken). None elsewhere: a region whose zones are not
        listed, or a zone of another kind (AWS Local Zones: us-west-2-lax-1a)."""
        region = self.region_of_zone(zone)
        listed = self._listed_zones.get(region, ()) if region is not None else ()
        if region is None or not listed or zone in listed:
            return None
        stem = listed[-1][:-1]  # the region's zones less their letter: 'us-central1-'
        if len(zone) != len(stem) + 1 or not zone.startswith(stem):
            return None
        if zone[-1] == chr(ord(listed[-1][-1]) + 1):
            return None
        return f"{zone!r}: not a zone of {region}; its zones are {', '.join(listed)}"

    def stores(self, uri: str) -> bool:
        """Whether `uri` is a location in this cloud's object storage."""
        from urllib.parse import urlsplit

        text = uri.strip()
        if text.lower().startswith(self.storage_schemes):
            return True
        host = (urlsplit(text).hostname or "").lower() if "://" in text else ""
        return bool(host) and text.lower().startswith("https://") and \
            host.endswith(self.storage_hosts)

    @cached_property
    def _listed_zones(self) -> dict[str, tuple[str, ...]]:
        """The listed zones of each region, in order: worked out once, not at each zone a
        batch of prices names."""
        by_region: dict[str, list[str]] = {}
        for zone in sorted(self.zones):
            region = self.region_of_zone(zone)
            if region is not None:
                by_region.setdefault(region, []).append(zone)
        return {region: tuple(zones) for region, zones in by_region.items()}

    def region_of_zone(self, zone: str) -> str | None:
        """The region of a zone name, or None if it is not a zone of this cloud."""
        if self.zone_pattern is None:
            return None
        m = self.zone_pattern.match(zone)
        return m.group("region") if m else None

    def accelerator(self, gpu_model: str) -> str:
        """The cloud's name of a catalog GPU model (the same name where it has no other)."""
        return self.accelerators.get(gpu_model, gpu_model)

    def gpu_model_of(self, accelerator: str) -> str | None:
        """The catalog GPU model of one of the cloud's accelerator names, or None."""
        for model, name in self.accelerators.items():
            if name == accelerator.strip().lower():
                return model
        return None


def _series(region: str) -> tuple[str, int]:
    """A region name's series and number: ('us-east-', 2), ('us-east', 4), ('eastus', 1)
    (an Azure name without a number is the first of its series)."""
    m = re.fullmatch(r"(.*?)(\d*)", region)
    assert m is not None  # the pattern matches any text
    return m[1], int(m[2] or 1)


def message_field(obj: Any, *names: str, default: Any = None) -> Any:
    """A field of a proto-plus message or a REST dict (snake_case or camelCase): the
    Google clients answer with the one, recorded and documented bodies are the other."""
    for name in names:
        if isinstance(obj, dict):
            if name in obj:
                return obj[name]
        elif hasattr(obj, name):
            return getattr(obj, name)
    return default
