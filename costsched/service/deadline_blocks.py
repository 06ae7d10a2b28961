"""Capacity blocks in deadline backtests: a block each replayed run may buy at its start,
as `costsched backtest-deadline --block` gives it, replayed through the same deadline
policies with the block in their hands (`decide.booked.WithBooked`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from costsched import clouds
from costsched.amounts import usd
from costsched.backtest.deadline import AvailabilityTrace
from costsched.backtest.deadline.engine import BookedRun
from costsched.model import InvalidInput
from costsched.optimize.booked import BLOCK_MARGIN_HOURS


@dataclass(frozen=True)
class Block:
    """A capacity block a replayed run may buy at its start: `hours` long from
    `start_hours` after the run's start, in `zone`, for `upfront_usd`."""

    instance_type: str
    zone: str
    start_hours: float
    hours: float
    upfront_usd: float

    @property
    def label(self) -> str:
        return (f"block {self.zone} +{self.start_hours:g} h for {self.hours:g} h "
                f"{usd(self.upfront_usd)}")

    def as_dict(self) -> dict:
        return {"instance_type": self.instance_type, "zone": self.zone,
                "start_hours": self.start_hours, "hours": self.hours,
                "upfront_usd": self.upfront_usd, "label": self.label,
                "usable_hours": self.hours - BLOCK_MARGIN_HOURS}


def parse_block(text: str, where: str = "block") -> Block:
    """'INSTANCE_TYPE,ZONE,START_HOURS,HOURS,UPFRONT_USD' ('p3.2xlarge,us-east-1a,24,48,
    90.5'): a block starting START_HOURS after each run's start."""
    parts = [p.strip() for p in text.split(",")]
    shape = ("expected INSTANCE_TYPE,ZONE,START_HOURS,HOURS,UPFRONT_USD such as "
             "p3.2xlarge,us-east-1a,24,48,90.50")
    if len(parts) != 5:
        raise InvalidInput(f"{where} {text!r}: {shape}")
    try:
        start, hours, upfront = (float(v) for v in parts[2:])
    except ValueError:
        raise InvalidInput(f"{where} {text!r}: {shape}") from None
    if not (math.isfinite(start) and start >= 0):
        raise InvalidInput(f"{where} {text!r}: START_HOURS {parts[2]}: expected hours >= 0")
    if not (math.isfinite(hours) and hours > BLOCK_MARGIN_HOURS):
        raise InvalidInput(f"{where} {text!r}: HOURS {parts[3]}: expected more than the "
                           f"{BLOCK_MARGIN_HOURS:g} h a job leaves a block before its end")
    if not (math.isfinite(upfront) and upfront >= 0):
        raise InvalidInput(f"{where} {text!r}: UPFRONT_USD {parts[4]}: expected USD >= 0")
    return Block(parts[0], parts[1], start, hours, upfront)


def booked_arm(trace: AvailabilityTrace, block: Block, instance_type: str
                ) -> tuple[AvailabilityTrace, BookedRun]:
    """The trace with the block's zone, and the block as every run books it."""
    if block.instance_type != instance_type:
        raise InvalidInput(f"block {block.label}: instance type {block.instance_type}: "
                           f"expected the replayed {instance_type}")
    found = clouds.zone_region(block.zone)
    region = None if found is None else found[1]
    if region is None:
        raise InvalidInput(f"block {block.label}: zone {block.zone!r}: expected a zone "
                           "such as us-east-1a")
    replayed, index = trace.with_booked_zone(block.zone, region)
    return replayed, BookedRun(index, block.start_hours, block.hours - BLOCK_MARGIN_HOURS,
                               block.upfront_usd)


BLOCK_COLUMNS = ["instance_type", "zone", "start_hours", "hours", "upfront_usd"]


def blocks_from(values: list[str]) -> list[Block]:
    """Blocks from `--block` values: each 'INSTANCE_TYPE,ZONE,START_HOURS,HOURS,UPFRONT_USD'
    or a CSV file with those columns (one block a row)."""
    from pathlib import Path

    out: list[Block] = []
    for value in values:
        path = Path(value)
        if not path.is_file():
            out.append(parse_block(value))
            continue
        lines = [line.strip() for line in path.read_text().splitlines()]
        lines = [line for line in lines if line and not line.startswith("#")]
        header = [c.strip() for c in lines[0].split(",")] if lines else []
        if header != BLOCK_COLUMNS:
            raise InvalidInput(f"blocks {path}: expected the header "
                               f"{','.join(BLOCK_COLUMNS)} and a block a row")
        out.extend(parse_block(line, f"blocks {path} row {i}")
                   for i, line in enumerate(lines[1:], start=2))
    return out
