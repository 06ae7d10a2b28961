"""The core vocabulary of costsched (see DESIGN.md): one meaning each, everywhere."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Literal

from costsched import clouds
from costsched.vocabulary import SHOWN_ONLY

CLOUDS = clouds.NAMES
MARKETS = ("on_demand", "spot")
# Capacity booked ahead, beside the hourly markets: an EC2 Capacity Block for ML (bought
# upfront for a start and a duration), a GCE flex-start VM (Dynamic Workload Scheduler: an
# hourly discount, a wait for capacity, at most 7 days) and a reservation the account
# already holds (paid: free to use while it lasts). The general ranking leaves them out
# unless a job names them; `costsched.optimize.booked` plans them (`BookedOffering`).
BOOKED_MARKETS = ("capacity_block", "flex_start", "reservation")
ALL_MARKETS = (*MARKETS, *BOOKED_MARKETS)
# Of those, the markets whose instance waits for capacity after it is asked for and is
# billed only from when it runs (Google Cloud's flex-start documentation, 2026: the time
# the VM runs is charged, not its wait): a placement there is charged from when its instance
# was seen running, not from its launch (a capacity block and a reservation are paid for
# whether used or not: their hours cost nothing more).
BILLED_FROM_RUNNING = ("flex_start",)
Cloud = Literal["aws", "gcp", "azure"]
Market = Literal["on_demand", "spot"]

# The operating system an offering is priced for. Training runs on Linux; the other
# values exist so that recorded spot histories of other products are kept apart
# instead of overwriting the Linux rows that share their timestamps.
OPERATING_SYSTEMS = ("linux", "linux-vpc", "windows", "suse", "rhel")

# The life of a job in the job store. A job in a final state has no instance and is not
# watched: a succeeded job is over (launching it again makes a new job), a stopped job
# (`costsched stop`, or a budget's cap) or a failed one can be started again from its
# newest checkpoint (`costsched start`).
JOB_STATES = ("pending", "launching", "running", "checkpointing", "migrating", "recovering",
              "succeeded", "failed", "stopped")
FINAL_STATES = ("succeeded", "failed", "stopped")
# Every state a view shows a job in, as `status --state` (and the dashboard's filter)
# takes them: the stored ones, after running those a running job whose instance ended
# reads, and after succeeded a success short of its declared steps (`vocabulary.SHOWN_ONLY`).
_AFTER = {"running": SHOWN_ONLY[:2], "succeeded": SHOWN_ONLY[2:]}
SHOWN_STATES = tuple(s for state in JOB_STATES for s in (state, *_AFTER.get(state, ())))
# The shown states of a job that ended: it has no instance and is not watched.
SHOWN_FINAL = (*FINAL_STATES, *SHOWN_ONLY[2:])


def state_phrase(state: str) -> str:
    """A job's state in a sentence: 'has succeeded', 'has failed', 'is stopped', 'is
    running'."""
    return f"has {state}" if state in ("succeeded", "failed") else f"is {state}"


def failure_words(exit_code: int | None, detail: str) -> str:
    """Why an instance failed, naming its exit code once: the launcher's own words ('exit
    code 2 (ValueError: bad batch size)'), led by the exit code where they do not say it
    (a store written by an earlier version may hold it twice: it is said once)."""
    detail = str(detail or "").strip()
    if exit_code is None:
        return detail
    code = f"exit code {exit_code}"
    detail = re.sub(rf"^(?:{code}: )+(?={code}\b)", "", detail)
    if not detail:
        return code
    return detail if re.search(rf"\b{code}\b", detail) else f"{code}: {detail}"


# A gang's failure as its launcher words it: 'node 1 failed: setup failed: exit code 3 ...'.
_NODE_FAILED = re.compile(r"^(?:exit code -?\d+: )?node (\d+) failed\b(?:: (setup) failed\b)?")


def failed_node(detail: str) -> tuple[int, str] | None:
    """(its rank, 'setup' where it failed in its setup, else '') of the node of a gang
    whose failure ended it, as its failure's words (`detail`) say it ('node 1 failed:
    setup failed: exit code 3'); None for any other failure (rank 0's, a single job's)."""
    found = _NODE_FAILED.match(str(detail or ""))
    if found is None or int(found.group(1)) == 0:
        return None
    return int(found.group(1)), found.group(2) or ""


# How a job file's note says that a part of what it asks for was dropped as read (an
# accelerator of a set no instance type has): 'resources.accelerators: A10:1 dropped: ...'.
# A "no plan" repeats such notes (`optimize.planner.dropped_notes`).
DROPPED = " dropped: "

# Why a job was placed on an offering: its first start, a planned move, after a preemption
# (a recovery), or a stopped job started again by the user (a start, not a recovery).
PLACEMENT_REASONS = ("launch", "migration", "recovery", "start")
# The job log's kind for a gang's node lost and replaced where it ran, the gang kept on its
# placement: a recovery without a move, counted with the recovery moves (`recoveries`).
NODE_RECOVERY = "node_recovery"
# What a gang's NODE_RECOVERY line says will come while its new node is set up (each
# launcher's words), and, once the gang is whole again, that it came (`status`).
GANG_RESUMES = "the gang resumes once the new node is set up"
GANG_RESUMED = "the gang resumed once the new node was set up"
# A gang's node replaced in place, its job stopped before the gang resumed: no recovery
# (`gang_stalls.stopped_first`), as `status` and `report` say it.
GANG_STOPPED_FIRST = "stopped before the gang resumed"
# The job log's kind for the steps a recovery lost: 'instance ID: ' and the words of
# `steps.resume_from` ('resumes from step 300 (its checkpoint's): 78 steps lost').
RECOVERY_NOTE = "recovery"


def lost_steps_said(detail: str) -> tuple[str, str]:
    """(the lost instance, the words of the steps lost) of a RECOVERY_NOTE's detail."""
    instance, _, words = str(detail).removeprefix("instance ").partition(": ")
    return instance, words


# How `steps.resume_from`'s words (`service.jobs.resumed_words`) count the steps lost:
# 'N steps lost', 'at least N steps lost' (a floor: a cloud's instance, gone with its last
# steps), 'about N steps lost' (its checkpoint's step read off the time it was saved).
_LOST_COUNT = re.compile(r"(?:^|[\s(:])(at least |about )?(\d[\d,]*) steps? lost\b")
_NONE_LOST = re.compile(r"(?:^|[\s(:])no step lost\b")


def steps_lost(words: str) -> tuple[float, str] | None:
    """The steps a recovery's words (a RECOVERY_NOTE's, after 'instance ID: ') say were
    lost, and how they are known ('' counted; 'at least '; 'about '): (0, '') for 'no step
    lost'; None where they say how many is not known (or say nothing of it)."""
    found = _LOST_COUNT.search(words)
    if found is not None:
        return float(found.group(2).replace(",", "")), found.group(1) or ""
    return (0.0, "") if _NONE_LOST.search(words) else None


def recoveries(move_kinds: Iterable[str], nodes_replaced: int = 0) -> int:
    """A job's recoveries after a preemption: its recovery moves (of `move_kinds`, its
    moves' kinds) and its gang's nodes replaced in place (its NODE_RECOVERY events)."""
    return sum(kind == "recovery" for kind in move_kinds) + int(nodes_replaced)


class InvalidInput(ValueError):
    """Bad user input: the message says where (file, row, field) and what is accepted."""


class TryAgain(InvalidInput):  # noqa: N818 - the name says what to do
    """What was asked cannot be done now because another costsched acts on it (a job it
    starts, recovers or moves): the same command may work later. The CLI exits 75
    (EX_TEMPFAIL) for it, as for a store that is busy."""


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
        if self.market not in ALL_MARKETS:
            raise InvalidInput(f"market {self.market!r}: expected one of "
                               f"{', '.join(ALL_MARKETS)}")
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
class BookedOffering:
    """Capacity booked ahead (see BOOKED_MARKETS): `offering.market` says which kind. The
    instances are held over [start, end) (a flex-start VM: from when capacity is found,
    `wait_hours` after asking, for at most `end - start`); `upfront_usd` is paid at the
    purchase for all `instance_count` instances (0 for a reservation already held), and
    `usd_per_hour` per instance while one runs (flex-start's price; 0 for a block or a
    reservation). `offering_id` names it to the cloud (a CapacityBlockOfferingId, a
    reservation's id or name); `observed_at` is when it was offered: its age."""

    offering: Offering
    start: datetime
    end: datetime
    instance_count: int
    upfront_usd: float = 0.0
    usd_per_hour: float = 0.0
    offering_id: str = ""
    wait_hours: float = 0.0
    observed_at: datetime | None = None
    source: str = ""

    def __post_init__(self) -> None:
        if self.offering.market not in BOOKED_MARKETS:
            raise InvalidInput(f"market {self.offering.market!r}: expected one of "
                               f"{', '.join(BOOKED_MARKETS)} for booked capacity")
        if self.start.tzinfo is None or self.end.tzinfo is None:
            raise InvalidInput("booked capacity: expected timezone-aware start and end")
        if self.end <= self.start:
            raise InvalidInput(f"booked capacity {self.offering_id or self.offering.key}: "
                               f"end {self.end:%Y-%m-%d %H:%M} is not after its start")
        if self.instance_count < 1:
            raise InvalidInput(f"instance count {self.instance_count}: expected >= 1")
        for name in ("upfront_usd", "usd_per_hour", "wait_hours"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise InvalidInput(f"{name} {value!r}: expected a number >= 0")

    @property
    def hours(self) -> float:
        """Its length in hours."""
        return (self.end - self.start).total_seconds() / 3600


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
    # A task's alternatives (SkyPilot's any_of/ordered) where the fields above, their
    # union, would allow more than they do: each a place filter of its own (clouds,
    # regions, zones, markets, GPUs, instance types); an offering must pass one of them
    # as well as the fields above. Empty: the fields above say it all.
    alternatives: tuple[Constraints, ...] = ()


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
