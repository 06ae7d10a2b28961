"""What costsched knows of a cloud, in one shape for every cloud (one module per cloud).

Nothing outside `costsched/clouds/`, the per-cloud collectors and the per-cloud launchers
branches on a cloud's name: everything else asks the `Cloud` object.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


class SdkMissing(RuntimeError):
    """A cloud's SDK is not installed; str() is one line saying what to install."""


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
    region_pattern: re.Pattern[str]
    region_example: str
    # A zone name whose `region` group is its region; None where zones are not named
    # after their region (Azure's zones are "1", "2", "3" within a region).
    zone_pattern: re.Pattern[str] | None
    zone_example: str
    egress: EgressPrice
    preemption: PreemptionRate
    # The cloud's own names of GPU models where they differ from the catalog's
    # (GCP's accelerator types: V100 -> nvidia-tesla-v100).
    accelerators: dict[str, str] = field(default_factory=dict)
    # How its object storage's locations begin (s3://...), and the hosts of its storage's
    # URLs (Azure Blob's https://ACCOUNT.blob.core.windows.net/...).
    storage_schemes: tuple[str, ...] = ()
    storage_hosts: tuple[str, ...] = ()

    def is_region(self, name: str) -> bool:
        return bool(self.region_pattern.match(name))

    def stores(self, uri: str) -> bool:
        """Whether `uri` is a location in this cloud's object storage."""
        from urllib.parse import urlsplit

        text = uri.strip()
        if text.lower().startswith(self.storage_schemes):
            return True
        host = (urlsplit(text).hostname or "").lower() if "://" in text else ""
        return bool(host) and text.lower().startswith("https://") and \
            host.endswith(self.storage_hosts)

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
