"""`collect --booked`: the booked capacity on sale and held, into the store.

EC2 is asked (`DescribeCapacityBlockOfferings`) for the capacity blocks that fit: the
jobs costsched runs now (each one's instance type if EC2 sells it as blocks, its nodes,
its hours to go: `price_collectors.booked.block_durations`), and the GPU models asked for
(each of their block types, one instance, 1, 2, 3 and 7 days), starting within the eight
weeks EC2 sells ahead; and for the capacity reservations the account holds
(`DescribeCapacityReservations`). Compute Engine is asked for the project's reservations.
A region or shape EC2 does not sell is a line in `errors`, never a failure of the rest;
so is a cloud whose SDK is not installed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from costsched import catalog
from costsched.clouds import aws as aws_cloud
from costsched.clouds.base import NotSetUp, SdkMissing
from costsched.model import BookedOffering
from costsched.service.stores import StoreLike, using
from costsched.work import own_total

GPU_DAYS = (1, 2, 3, 7)  # block lengths asked for a GPU model with no job to fit


@dataclass
class BookedCollection:
    """What `collect --booked` found: offerings read and newly stored, and what failed."""

    asked: int = 0  # calls made
    offerings: int = 0
    added: int = 0
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"asked": self.asked, "offerings": self.offerings, "added": self.added,
                "errors": self.errors}


def block_shapes(store: Any, gpus: Sequence[str], at: datetime) -> list[tuple[str, int, int]]:
    """(instance type, count, hours) to ask capacity blocks for: the live jobs' and the
    GPU models'."""
    from price_collectors.booked import shapes_to_ask

    wanted: list[tuple[str, int, float]] = []
    placed = store.jobs.placements()
    if len(placed):
        ids = sorted({int(j) for j in placed["job_id"]})
        live = {r.id: r for r in store.jobs.records(ids) if not r.final}
        # Hours to go: the work left at the speed its launch was planned with, both in
        # the units its plan priced (`work_left`).
        speed = store.jobs.predictions(list(live)).set_index("job_id")["steps_per_second"]
        open_ = placed[placed["end_at"].isna() & placed["job_id"].isin(list(live))]
        for p in open_.itertuples():
            if p.cloud == "aws" and p.instance_type in aws_cloud.CAPACITY_BLOCK_TYPES:
                record = live[int(p.job_id)]
                sps = float(speed.get(int(p.job_id), float("nan")))
                left = work_left(record)
                hours = left / sps / 3600 if sps > 0 and left == left else 24.0
                nodes = int((record.spec.get("spec") or {}).get("num_nodes", 1) or 1)
                wanted.append((p.instance_type, nodes, hours))
    shapes = shapes_to_ask(wanted)
    for gpu in gpus:
        for kind in aws_cloud.CAPACITY_BLOCK_TYPES:
            spec = catalog.lookup("aws", kind)
            if spec is not None and spec["gpu_model"] == catalog.gpu_model_name(gpu):
                shapes += [(kind, 1, days * 24) for days in GPU_DAYS]
    return list(dict.fromkeys(shapes))


def work_left(record: Any) -> float:
    """A live job's work left in the units its plan priced (`steps_total`'s; NaN where its
    work is not given): its total less the step it reported where its steps are its own
    (`work.own_total`), all of it where its work is hours on a reference GPU (its reported
    steps are no share of those hours)."""
    if record.steps_total is None:
        return float("nan")
    total = float(record.steps_total)
    if own_total(record.spec, total) is None:
        return total
    return max(total - float(record.steps_done or 0.0), 0.0)


def collect_booked(store: StoreLike, *, at: datetime, regions: Sequence[str] = (),
                   gpus: Sequence[str] = (), clouds: Sequence[str] = ("aws", "gcp"),
                   ec2: Callable[[str], Any] | None = None,
                   gce_reservations: Callable[[], Any] | None = None) -> BookedCollection:
    """Ask the clouds for the booked capacity that fits (see the module's doc) and store
    it. `ec2(region)`: the EC2 client of a region (default boto3's); `gce_reservations()`:
    the project's reservations, an aggregated list (default the Compute Engine client's)."""
    from price_collectors import booked

    out = BookedCollection()
    found: list[tuple[list[BookedOffering], list[str]]] = []
    with using(store) as opened:
        client = None
        if "aws" in clouds:
            try:
                client = ec2 or _ec2_clients()
            except SdkMissing as exc:  # its one line says what to install; nothing asked
                out.errors.append(_one_line(exc))
        if client is not None:
            shapes = block_shapes(opened, gpus, at)
            for region in (regions or aws_cloud.CAPACITY_BLOCK_REGIONS):
                for kind, count, hours in shapes:
                    out.asked += 1
                    try:
                        found.append(booked.ask_capacity_blocks(
                            client(region), kind, count, hours, at,
                            at + timedelta(days=aws_cloud.CAPACITY_BLOCK_AHEAD_DAYS), at))
                    except Exception as exc:  # noqa: BLE001 - one shape, one line
                        out.errors.append(f"aws {region} {kind} x{count} {hours} h: "
                                          f"{_one_line(exc)}")
                out.asked += 1
                try:
                    held = booked.ask_reservations(client(region), at)
                    found.append((held, [""] * len(held)))
                except Exception as exc:  # noqa: BLE001 - one region, one line
                    out.errors.append(f"aws {region} reservations: {_one_line(exc)}")
        if "gcp" in clouds and gce_reservations is not None:
            out.asked += 1
            try:
                items = [r for _, scoped in gce_reservations()
                         for r in (getattr(scoped, "reservations", None) or [])]
                held = booked.gce_reservations(items, at)
                found.append((held, [""] * len(held)))
            except (SdkMissing, NotSetUp) as exc:  # its own line names the cloud
                out.errors.append(_one_line(exc))
            except Exception as exc:  # noqa: BLE001 - the project's reservations, one line
                out.errors.append(f"gcp reservations: {_one_line(exc)}")
        for offered, tenancy in found:
            out.offerings += len(offered)
            out.added += opened.booked.add(offered, tenancy=tenancy)[0]
    return out


def _ec2_clients() -> Callable[[str], Any]:
    session = aws_cloud.new_session()
    made: dict[str, Any] = {}

    def client(region: str) -> Any:
        if region not in made:
            made[region] = session.client("ec2", region_name=region,
                                          config=aws_cloud.boto_config())
        return made[region]

    return client


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]
