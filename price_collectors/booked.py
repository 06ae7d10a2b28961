"""Capacity booked ahead, read from the clouds' answers: EC2 Capacity Block offerings
(`DescribeCapacityBlockOfferings`), the capacity reservations an account holds (EC2
`DescribeCapacityReservations`, Compute Engine's reservations list).

Each answer becomes `BookedOffering`s (market capacity_block or reservation) with the time
it was seen: an offering's id and price hold for a short while only, and the planner says
how old the one it plans with is. The same readers serve a recorded response body
(`costsched prices import`) and a live call (`collect --booked`). A bad item rejects its
whole body with one line naming the file, the item and the field.

A reservation already held is paid for: it is offered at no upfront and no hourly price
(`upfront_usd` 0) while it lasts. One with no end date (EC2 EndDateType "unlimited", a
Compute Engine reservation without deleteAtTime) is planned as lasting
OPEN_ENDED_DAYS from when it was seen. A capacity block the account bought outside
costsched is one too (ReservationType "capacity-block": market capacity_block, paid).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from costsched import catalog
from costsched.clouds.aws import AWS
from costsched.clouds.base import message_field as _get
from costsched.clouds.gcp import GCP
from costsched.model import BookedOffering, InvalidInput, Offering, utc
from costsched.validation import zoned_time

BLOCK_FIELDS = ("CapacityBlockOfferingId", "InstanceType", "AvailabilityZone",
                "InstanceCount", "StartDate", "EndDate", "UpfrontFee", "CurrencyCode")
OPEN_ENDED_DAYS = 365
BLOCK_SOURCE = "aws:describe-capacity-block-offerings"
RESERVATION_SOURCE = "aws:describe-capacity-reservations"
GCE_RESERVATION_SOURCE = "gcp:reservations"
# What each top-level key of a recorded body holds.
BODIES = {"CapacityBlockOfferings": "DescribeCapacityBlockOfferings",
          "CapacityReservations": "DescribeCapacityReservations"}


class BodyError(InvalidInput):
    """A body that cannot be read; str() is one line naming where and what."""

    def __init__(self, where: str, message: str, item: int | None = None) -> None:
        at = where + (f": item {item}" if item is not None else "")
        super().__init__(f"{at}: {message}")


def is_booked_body(path: Path) -> bool:
    """Whether a .json file is a booked-capacity response body (by its top-level key)."""
    if path.suffix != ".json":
        return False
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:  # any bytes: a guess only
            head = fh.read(4096)
    except OSError:
        return False
    return any(f'"{key}"' in head for key in BODIES)


def read_body(path: Path, observed_at: datetime) -> tuple[list[BookedOffering], list[str]]:
    """The offerings of a recorded response body, and each one's tenancy."""
    try:
        body = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise BodyError(str(path), f"not valid JSON (line {exc.lineno}, column "
                        f"{exc.colno}): expected a DescribeCapacityBlockOfferings or "
                        "DescribeCapacityReservations response body") from None
    if isinstance(body, dict) and isinstance(body.get("CapacityBlockOfferings"), list):
        return capacity_blocks(body["CapacityBlockOfferings"], observed_at,
                               source=f"import:{path.name}", where=str(path))
    if isinstance(body, dict) and isinstance(body.get("CapacityReservations"), list):
        found = capacity_reservations(body["CapacityReservations"], observed_at,
                                      source=f"import:{path.name}", where=str(path))
        return found, [""] * len(found)
    raise BodyError(str(path), 'expected {"CapacityBlockOfferings": [...]} or '
                    '{"CapacityReservations": [...]}')


# --- EC2 Capacity Blocks ----------------------------------------------------------------


def capacity_blocks(items: Iterable[Any], observed_at: datetime, *, source: str = BLOCK_SOURCE,
                    where: str = "response") -> tuple[list[BookedOffering], list[str]]:
    """Capacity block offerings of `CapacityBlockOfferings` items, and their tenancy."""
    out, tenancy = [], []
    for n, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise BodyError(where, "expected an object with " + ", ".join(BLOCK_FIELDS), n)
        missing = [f for f in BLOCK_FIELDS if item.get(f) in (None, "")]
        if missing:
            raise BodyError(where, f"missing field(s) {', '.join(missing)}", n)
        if str(item["CurrencyCode"]).upper() != "USD":
            raise BodyError(where, f"CurrencyCode {item['CurrencyCode']!r}: expected USD", n)
        offering = _aws_offering(where, n, item, "capacity_block")
        start, end = _time(where, n, item, "StartDate"), _time(where, n, item, "EndDate")
        fee = _number(where, n, "UpfrontFee", item["UpfrontFee"])
        count = _count(where, n, "InstanceCount", item["InstanceCount"])
        hours = item.get("CapacityBlockDurationHours")
        if hours not in (None, "") and abs(float(hours) - (end - start).total_seconds() / 3600
                                           ) > 1.0:
            raise BodyError(where, f"CapacityBlockDurationHours {hours!r}: expected the "
                            f"hours from StartDate to EndDate", n)
        out.append(_booked(where, n, offering, start, end, count, fee,
                           str(item["CapacityBlockOfferingId"]), observed_at, source))
        tenancy.append(str(item.get("Tenancy") or ""))
    return out, tenancy


def capacity_reservations(items: Iterable[Any], observed_at: datetime, *,
                          source: str = RESERVATION_SOURCE,
                          where: str = "response") -> list[BookedOffering]:
    """The usable (active or scheduled, with instances free) reservations of
    `CapacityReservations` items, at no price: they are paid for."""
    out = []
    for n, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise BodyError(where, "expected an object with CapacityReservationId, "
                            "InstanceType, AvailabilityZone", n)
        missing = [f for f in ("CapacityReservationId", "InstanceType", "AvailabilityZone")
                   if not item.get(f)]
        if missing:
            raise BodyError(where, f"missing field(s) {', '.join(missing)}", n)
        if str(item.get("State", "active")) not in ("active", "scheduled"):
            continue  # expired, cancelled, pending payment...: nothing to launch into
        if not str(item.get("InstancePlatform", "Linux/UNIX")).startswith("Linux"):
            continue  # the jobs run on Linux
        free = item.get("AvailableInstanceCount", item.get("TotalInstanceCount"))
        count = _count(where, n, "AvailableInstanceCount", free if free is not None else 0,
                       zero=True)
        if count == 0:
            continue
        market = ("capacity_block" if item.get("ReservationType") == "capacity-block"
                  else "reservation")
        offering = _aws_offering(where, n, item, market)
        start = (_time(where, n, item, "StartDate") if item.get("StartDate")
                 else utc(observed_at))
        end = (_time(where, n, item, "EndDate") if item.get("EndDate")
               else utc(observed_at) + timedelta(days=OPEN_ENDED_DAYS))
        if end <= utc(observed_at):
            continue
        out.append(_booked(where, n, offering, start, end, count, 0.0,
                           str(item["CapacityReservationId"]), observed_at, source))
    return out


def _aws_offering(where: str, n: int, item: dict, market: str) -> Offering:
    zone = str(item["AvailabilityZone"])
    region = AWS.region_of_zone(zone)
    if region is None:
        raise BodyError(where, f"AvailabilityZone {zone!r}: expected a zone like us-east-1a", n)
    try:
        spec = catalog.require("aws", str(item["InstanceType"]))
    except InvalidInput as exc:
        raise BodyError(where, str(exc), n) from None
    return Offering("aws", region, zone, spec["instance_type"], market, spec["gpu_model"],
                    int(spec["gpu_count"]), int(spec["vcpus"]), float(spec["memory_gb"]))


# --- Compute Engine reservations ----------------------------------------------------------


def gce_reservations(items: Iterable[Any], observed_at: datetime, *,
                     source: str = GCE_RESERVATION_SOURCE,
                     where: str = "response") -> list[BookedOffering]:
    """The READY reservations with VMs free, from `reservations.aggregatedList` or `list`
    items (dicts or compute_v1 messages), at no price."""
    out = []
    for n, item in enumerate(items, start=1):
        name, zone = str(_get(item, "name", default="")), str(_get(item, "zone", default=""))
        zone = zone.rstrip("/").split("/")[-1]
        if not name or not zone:
            raise BodyError(where, "expected a reservation with name and zone", n)
        if str(_get(item, "status", default="READY")) != "READY":
            continue
        specific = _get(item, "specific_reservation", "specificReservation", default=None)
        if not specific:
            continue  # an aggregate (TPU) reservation: not a VM shape costsched runs
        count = int(_get(specific, "count", default=0) or 0)
        used = int(_get(specific, "in_use_count", "inUseCount", default=0) or 0)
        if count - used <= 0:
            continue
        props = _get(specific, "instance_properties", "instanceProperties", default={})
        machine = str(_get(props, "machine_type", "machineType", default=""))
        accelerators = list(_get(props, "guest_accelerators", "guestAccelerators",
                                 default=[]) or [])
        instance_type = machine
        if accelerators:
            first = accelerators[0]
            kind = str(_get(first, "accelerator_type", "acceleratorType", default=""))
            cards = int(_get(first, "accelerator_count", "acceleratorCount", default=0) or 0)
            instance_type = f"{machine}+{cards}x{kind.rsplit('/', 1)[-1]}"
        spec = catalog.lookup("gcp", instance_type)
        if spec is None:
            raise BodyError(where, f"reservation {name}: machine {instance_type!r}: not a "
                            "GPU machine costsched knows", n)
        region = GCP.region_of_zone(zone)
        if region is None:
            raise BodyError(where, f"reservation {name}: zone {zone!r}: expected a zone "
                            "like us-central1-a", n)
        offering = Offering("gcp", region, zone, spec["instance_type"], "reservation",
                            spec["gpu_model"], int(spec["gpu_count"]), int(spec["vcpus"]),
                            float(spec["memory_gb"]))
        delete_at = _get(item, "delete_at_time", "deleteAtTime", default="")
        end = (_time(where, n, {"deleteAtTime": delete_at}, "deleteAtTime") if delete_at
               else utc(observed_at) + timedelta(days=OPEN_ENDED_DAYS))
        out.append(_booked(where, n, offering, utc(observed_at), end, count - used, 0.0,
                           name, observed_at, source))
    return out


# --- shared -------------------------------------------------------------------------------


def _booked(where: str, n: int, offering: Offering, start: datetime, end: datetime,
            count: int, upfront: float, offering_id: str, observed_at: datetime,
            source: str) -> BookedOffering:
    try:
        return BookedOffering(offering, start, end, count, upfront, 0.0, offering_id,
                              observed_at=utc(observed_at), source=source)
    except InvalidInput as exc:
        raise BodyError(where, str(exc), n) from None


def _time(where: str, n: int, item: dict, name: str) -> datetime:
    value = item[name]
    if isinstance(value, datetime):  # a live answer: botocore parsed it
        return utc(value)
    try:
        return zoned_time(str(value)).to_pydatetime()
    except ValueError as exc:
        raise BodyError(where, f"{name} {exc}", n) from None


def _number(where: str, n: int, name: str, value: object) -> float:
    try:
        number = float(str(value).strip().lstrip("$").replace(",", ""))
    except ValueError:
        number = float("nan")
    if not (number >= 0 and number < float("inf")):
        raise BodyError(where, f"{name} {value!r}: expected an amount of USD >= 0", n)
    return number


def _count(where: str, n: int, name: str, value: object, zero: bool = False) -> int:
    try:
        count = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        count = -1
    if count < (0 if zero else 1) or str(count) != str(value).strip():
        raise BodyError(where, f"{name} {value!r}: expected a whole number "
                        f">= {0 if zero else 1}", n)
    return count


# --- live calls ---------------------------------------------------------------------------


def ask_capacity_blocks(ec2: Any, instance_type: str, count: int, hours: int,
                        start: datetime, end: datetime, observed_at: datetime
                        ) -> tuple[list[BookedOffering], list[str]]:
    """The capacity block offerings EC2 has (in the client's region) for `count`
    instances of `instance_type` for `hours`, starting between `start` and `end`."""
    items: list[dict] = []
    request = {"InstanceType": instance_type, "InstanceCount": int(count),
               "CapacityDurationHours": int(hours), "StartDateRange": start,
               "EndDateRange": end}
    while True:
        answer = ec2.describe_capacity_block_offerings(**request)
        items.extend(answer.get("CapacityBlockOfferings", []))
        token = answer.get("NextToken")
        if not token:
            break
        request["NextToken"] = token
    return capacity_blocks(items, observed_at, where=f"aws {instance_type} x{count}")


def ask_reservations(ec2: Any, observed_at: datetime) -> list[BookedOffering]:
    """The usable capacity reservations of the account in the client's region."""
    items: list[dict] = []
    request: dict = {"Filters": [{"Name": "state", "Values": ["active", "scheduled"]}]}
    while True:
        answer = ec2.describe_capacity_reservations(**request)
        items.extend(answer.get("CapacityReservations", []))
        token = answer.get("NextToken")
        if not token:
            break
        request["NextToken"] = token
    return capacity_reservations(items, observed_at, where="aws reservations")


def block_durations(hours: float) -> list[int]:
    """The capacity block lengths (whole days, as EC2 sells them up to 14 days; weeks up to
    182) worth asking for a job of `hours` to go: the shortest that holds it, and the
    day shorter and longer ones, at most 182 days."""
    days = max(1, int(-(-hours // 24)))
    wanted = sorted({max(1, days - 1), days, days + 1})
    out = []
    for d in wanted:
        if d > 14:
            d = min(182, -(-d // 7) * 7)
        out.append(d * 24)
    return sorted(set(out))


def shapes_to_ask(jobs: Sequence[tuple[str, int, float]]) -> list[tuple[str, int, int]]:
    """(instance type, count, hours) to ask capacity blocks for, from (instance type,
    instances, hours to go) of the jobs; each once."""
    seen: dict[tuple[str, int, int], None] = {}
    for instance_type, count, hours in jobs:
        for length in block_durations(hours):
            seen[(instance_type, int(count), length)] = None
    return list(seen)
