"""The core vocabulary of costsched (see DESIGN.md): one meaning each, everywhere."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Literal

from costsched import clouds

CLOUDS = clouds.NAMES
MARKETS = ("on_demand", "spot")
Cloud = Literal["aws", "gcp", "azure"]
Market = Literal["on_demand", "spot"]

# The operating system an offering is priced for. Training runs on Linux; the other
# values exist so that recorded spot histories of other products are kept apart
# instead of overwriting the Linux rows that share their timestamps.
OPERATING_SYSTEMS = ("linux", "linux-vpc", "windows", "suse", "rhel")

# The life of a job in the job store. A job in a final state is over; launching it
# again makes a new job.
JOB_STATES = ("pending", "launching", "running", "checkpointing", "migrating", "recovering",
              "succeeded", "failed", "cancelled")
FINAL_STATES = ("succeeded", "failed", "cancelled")
# Why a job was placed on an offering: its first start, a planned move, or after preemption.
PLACEMENT_REASONS = ("launch", "migration", "recovery")


class InvalidInput(ValueError):
    """Bad user input: the message says where (file, row, field) and what is accepted."""


@dataclass(frozen=True, slots=True)
class Offering:
    """One way to rent GPUs: (cloud, region, zone, instance type, market, os)."""

    cloud: str
    region: str
    zone: str  # "" where the price holds for the whole region (on-demand, Azure/GCP spot)
    instance_type: str
    market: str
    gpu_model: str
    gpu_count: int
    vcpus: int = 0
    memory_gb: float = 0.0
    os: str = "linux"

    def __post_init__(self) -> None:
        if self.cloud not in CLOUDS:
            raise InvalidInput(f"cloud {self.cloud!r}: expected one of {', '.join(CLOUDS)}")
        if self.market not in MARKETS:
            raise InvalidInput(f"market {self.market!r}: expected one of {', '.join(MARKETS)}")
        if self.os not in OPERATING_SYSTEMS:
            raise InvalidInput(f"os {self.os!r}: expected one of {', '.join(OPERATING_SYSTEMS)}")
        if self.gpu_count < 0 or (self.gpu_count == 0) != (self.gpu_model == ""):
            raise InvalidInput(f"gpu_count {self.gpu_count} of {self.gpu_model!r}: expected a "
                               "whole number >= 1, or 0 with no GPU model (a CPU instance)")

    @property
    def key(self) -> tuple[str, str, str, str, str, str]:
        """The identity of the offering; two offerings with the same key are the same."""
        return (self.cloud, self.region, self.zone, self.instance_type, self.market, self.os)

    @property
    def location(self) -> str:
        return self.zone or self.region


@dataclass(frozen=True, slots=True)
class PriceObservation:
    """The price of an offering from `effective_at` on (until the next observation)."""

    offering: Offering
    usd_per_hour: float
    effective_at: datetime
    source: str

    def __post_init__(self) -> None:
        if not isinstance(self.usd_per_hour, (int, float)) or not math.isfinite(
            self.usd_per_hour
        ):
            raise InvalidInput(f"price {self.usd_per_hour!r}: expected a finite number")
        if self.usd_per_hour <= 0:
            raise InvalidInput(f"price {self.usd_per_hour}: expected a positive USD/hour")
        if self.effective_at.tzinfo is None:
            raise InvalidInput(f"time {self.effective_at}: expected a timezone-aware time")


@dataclass(frozen=True, slots=True)
class Constraints:
    """What a job allows; empty tuples mean 'any'."""

    deadline_hours: float | None = None
    budget_usd: float | None = None
    clouds: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    markets: tuple[str, ...] = ()
    gpu_models: tuple[str, ...] = ()
    gpu_counts: tuple[int, ...] = ()
    max_price_per_hour: float | None = None
    max_migrations: int | None = None
    # A zone allows its own offerings and the regional ones (zone "") of its region.
    zones: tuple[str, ...] = ()
    instance_types: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Job:
    """A training command with its model, the steps it has to go, and its constraints."""

    name: str
    run: str
    model: str
    steps: float
    checkpoint: str = ""
    checkpoint_gb: float = 0.0
    constraints: Constraints = field(default_factory=Constraints)
    checkpoint_hours: float = 0.5  # hours of work between checkpoints


@dataclass(frozen=True, slots=True)
class Placement:
    """A job on an offering from a time on. A change of placement is a migration."""

    job: str
    offering: Offering
    start: datetime


def utc(ts: datetime) -> datetime:
    """The same instant as an aware UTC datetime (naive input is taken as UTC)."""
    if ts.tzinfo is None:
        return ts.replace(tzinfo=timezone.utc)
    return ts.astimezone(timezone.utc)
