"""A running job's booked capacity in its deadline decision: the capacity block it bought
(or a reservation it was given) becomes the last zone of its market, on-demand there at no
price (it is paid), and the job's deadline policy is wrapped so that the job runs there
while it is usable and leaves it before its end (`costsched.decide.booked`), as the
deadline backtest replays it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from costsched.decide.booked import BookedWindow, WithBooked
from costsched.decide.deadline import KEY, DeadlineMarket
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.optimize.booked import margin_hours
from costsched.optimize.decision import egress_per_gb
from costsched.policies.deadline import DeadlinePolicy
from costsched.store.booked import Booking

USABLE_STATES = ("scheduled", "active")  # bought: its capacity is the job's
LAUNCHED_INTO = ("capacity_block", "reservation")  # what a launch can target by id


def usable_booking(bookings: Sequence[Booking], at: datetime,
                   instance_type: str) -> Booking | None:
    """The first booking of the job bought, of `instance_type` (the market's), launched
    into by its reservation, and not yet past the time the job must leave it."""
    for b in bookings:
        o = b.booked.offering
        leave = b.booked.end.timestamp() - margin_hours(o.market) * 3600
        if (b.state in USABLE_STATES and b.reservation_id and o.market in LAUNCHED_INTO
                and o.instance_type == instance_type and leave > at.timestamp()):
            return b
    return None


def reservation_of(bookings: Sequence[Booking], key: tuple) -> str:
    """The capacity reservation a job booked on offering `key` ('' when it booked none
    there): what a node replaced in booked capacity is launched into."""
    for b in bookings:
        if b.reservation_id and b.booked.offering.key == tuple(key):
            return b.reservation_id
    return ""


def with_booking(found: DeadlineMarket, policy: DeadlinePolicy, booking: Booking,
                 created_at: datetime, checkpoint_gb: float
                 ) -> tuple[DeadlineMarket, DeadlinePolicy]:
    """The market with the booked capacity as its last zone, and `policy` wrapped to use
    it from its start to its end less the margin (seconds from the job's creation, the
    deadline policies' clock)."""
    zones = found.offerings
    o = booking.booked.offering
    same = np.flatnonzero((zones["cloud"] == o.cloud).to_numpy()
                          & (zones["region"] == o.region).to_numpy())
    twin = int(same[0]) if len(same) else 0
    row = zones.iloc[twin].copy()
    row["zone"] = o.zone
    row["region"] = o.region
    for k in KEY:
        row[f"od_{k}"] = getattr(o, k)
    row["od_usd_per_hour"] = 0.0  # bought: nothing more to pay while it is used
    grown = pd.concat([zones, row.to_frame().T], ignore_index=True).astype(zones.dtypes)
    m = found.market
    codes = pd.factorize(grown["cloud"] + "/" + grown["region"])[0]
    per_gb = egress_per_gb(grown["cloud"].to_numpy(dtype=object),
                           grown["region"].to_numpy(dtype=object),
                           zone=grown["zone"].to_numpy(dtype=object))

    def column(a: np.ndarray | None, value: object = None) -> np.ndarray | None:
        if a is None:
            return None
        extra = a[..., twin:twin + 1] if value is None else np.full(a.shape[:-1] + (1,), value)
        return np.concatenate([a, extra], axis=-1)

    market = replace(m, spot_available=column(m.spot_available, False),
                     available_for=column(m.available_for, 0.0),
                     spot_price=column(m.spot_price), on_demand_price=column(
                         m.on_demand_price, 0.0), region=codes,
                     move_usd=checkpoint_gb * per_gb, spell_mean=column(m.spell_mean),
                     zone_share=column(m.zone_share), dry_mean=column(m.dry_mean),
                     dry_for=column(m.dry_for), spot_spell=column(m.spot_spell))
    window = BookedWindow((booking.booked.start - created_at).total_seconds(),
                          (booking.booked.end - created_at).total_seconds()
                          - margin_hours(o.market) * 3600, len(zones), twin)
    return DeadlineMarket(grown, market), WithBooked(policy, window)
