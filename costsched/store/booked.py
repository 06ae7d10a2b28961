"""Capacity booked ahead: the offerings seen (capacity blocks for sale, reservations held)
and the bookings costsched makes for jobs.

An offering is one row per (cloud, market, offering id), refreshed when it is seen again:
its `observed_at` is its age (a capacity block offering is short-lived; the planner says
how old the one it plans with is). A booking is written as "purchasing" under its token
before the cloud is asked to buy (`intend`), then moved on (`advance`): a costsched that
crashed between the two finds the purchase by its token instead of buying again.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import Engine, insert, select, update

from costsched.model import BookedOffering, InvalidInput, Offering
from costsched.store.database import epoch_second
from costsched.store.schema import booked_offerings, bookings

# purchasing: recorded, the cloud asked (or about to be); scheduled: bought, not started;
# active: its capacity can be used now; ended: past its end; failed: never bought.
BOOKING_STATES = ("purchasing", "scheduled", "active", "ended", "failed")
LIVE_BOOKINGS = ("purchasing", "scheduled", "active")
_OFFERING = ("cloud", "region", "zone", "instance_type", "market", "os", "gpu_model",
             "gpu_count")


def _time(seconds: int) -> datetime:
    return datetime.fromtimestamp(int(seconds), tz=timezone.utc)


def _booked(row: dict) -> BookedOffering:
    offering = Offering(*(row[k] for k in _OFFERING[:5]), row["gpu_model"],
                        int(row["gpu_count"]), os=row["os"])
    return BookedOffering(offering, _time(row["start_ts"]), _time(row["end_ts"]),
                          int(row["instance_count"]), float(row["upfront_usd"]),
                          float(row.get("usd_per_hour") or 0.0), str(row["offering_id"]),
                          float(row.get("wait_hours") or 0.0),
                          _time(row["observed_ts"]) if "observed_ts" in row else None,
                          str(row.get("source", "")))


@dataclass(frozen=True)
class Booking:
    """A booking for a job: what was (or is being) bought, its state and, once bought,
    the cloud's reservation it is launched into (`reservation_id`)."""

    id: int
    token: str
    job_id: int | None
    booked: BookedOffering
    state: str
    reservation_id: str
    detail: str
    created_at: datetime
    updated_at: datetime

    @property
    def live(self) -> bool:
        return self.state in LIVE_BOOKINGS


class BookedStore:
    """Booked offerings and bookings in the database of `engine`."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    # --- offerings ------------------------------------------------------------------

    def add(self, offered: Iterable[BookedOffering], *, tenancy: Sequence[str] = ()
            ) -> tuple[int, int]:
        """Store offerings seen, in one transaction: a new offering id is added, one seen
        before refreshed (its count, times, price and age). (added, refreshed)."""
        rows = list(offered)
        added = refreshed = 0
        with self.engine.begin() as conn:
            for i, b in enumerate(rows):
                if b.observed_at is None:
                    raise InvalidInput(f"booked offering {b.offering_id}: no time observed")
                values = {**{k: getattr(b.offering, k) for k in _OFFERING},
                          "offering_id": b.offering_id, "instance_count": b.instance_count,
                          "start_ts": epoch_second(b.start), "end_ts": epoch_second(b.end),
                          "upfront_usd": float(b.upfront_usd),
                          "usd_per_hour": float(b.usd_per_hour), "currency": "USD",
                          "tenancy": tenancy[i] if i < len(tenancy) else "",
                          "wait_hours": float(b.wait_hours),
                          "observed_ts": epoch_second(b.observed_at),
                          "source": b.source[:256]}
                key = ((booked_offerings.c.cloud == b.offering.cloud)
                       & (booked_offerings.c.market == b.offering.market)
                       & (booked_offerings.c.offering_id == b.offering_id))
                seen = conn.execute(select(booked_offerings.c.observed_ts).where(key)).first()
                if seen is None:
                    conn.execute(insert(booked_offerings).values(**values))
                    added += 1
                elif values["observed_ts"] >= seen[0]:  # an older sighting never wins
                    conn.execute(update(booked_offerings).where(key).values(**values))
                    refreshed += 1
        return added, refreshed

    def offered(self, at: datetime, *, markets: Sequence[str] = (),
                instance_types: Sequence[str] = ()) -> list[BookedOffering]:
        """The offerings seen by `at` whose capacity has not ended by then, soonest first."""
        t = epoch_second(at)
        query = (select(booked_offerings)
                 .where(booked_offerings.c.observed_ts <= t, booked_offerings.c.end_ts > t)
                 .order_by(booked_offerings.c.start_ts, booked_offerings.c.id))
        if markets:
            query = query.where(booked_offerings.c.market.in_(list(markets)))
        if instance_types:
            query = query.where(booked_offerings.c.instance_type.in_(list(instance_types)))
        with self.engine.connect() as conn:
            return [_booked(dict(r)) for r in conn.execute(query).mappings()]

    # --- bookings -------------------------------------------------------------------

    def intend(self, token: str, booked: BookedOffering, *, job_id: int | None,
               at: datetime) -> Booking:
        """Record that `booked` is about to be bought under `token` (state purchasing),
        before the cloud is asked; the booking already recorded under `token` if any."""
        found = self.get(token)
        if found is not None:
            return found
        o = booked.offering
        now = epoch_second(at)
        with self.engine.begin() as conn:
            conn.execute(insert(bookings).values(
                token=token, job_id=job_id, **{k: getattr(o, k) for k in _OFFERING},
                offering_id=booked.offering_id, instance_count=booked.instance_count,
                start_ts=epoch_second(booked.start), end_ts=epoch_second(booked.end),
                upfront_usd=float(booked.upfront_usd), state="purchasing",
                reservation_id="", detail="", created_ts=now, updated_ts=now))
        return self.get(token)  # type: ignore[return-value]

    def advance(self, token: str, state: str, *, at: datetime, reservation_id: str = "",
                detail: str = "", start: datetime | None = None,
                end: datetime | None = None) -> Booking:
        """Move the booking under `token` to `state` (with the cloud's reservation id and
        its confirmed times once bought)."""
        if state not in BOOKING_STATES:
            raise InvalidInput(f"booking state {state!r}: expected one of "
                               f"{', '.join(BOOKING_STATES)}")
        values: dict = {"state": state, "updated_ts": epoch_second(at)}
        if reservation_id:
            values["reservation_id"] = reservation_id
        if detail:
            values["detail"] = detail[:2000]
        if start is not None:
            values["start_ts"] = epoch_second(start)
        if end is not None:
            values["end_ts"] = epoch_second(end)
        with self.engine.begin() as conn:
            done = conn.execute(update(bookings).where(bookings.c.token == token)
                                .values(**values)).rowcount
        if not done:
            raise InvalidInput(f"booking {token!r}: no such booking")
        return self.get(token)  # type: ignore[return-value]

    def give(self, token: str, job_id: int, *, at: datetime) -> Booking:
        """The booking under `token` is the job's (`job_id`)."""
        with self.engine.begin() as conn:
            conn.execute(update(bookings).where(bookings.c.token == token)
                         .values(job_id=job_id, updated_ts=epoch_second(at)))
        found = self.get(token)
        if found is None:
            raise InvalidInput(f"booking {token!r}: no such booking")
        return found

    def get(self, token: str) -> Booking | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(bookings).where(bookings.c.token == token)
                               ).mappings().first()
        return None if row is None else _booking(dict(row))

    def of_job(self, job_id: int) -> list[Booking]:
        """The job's bookings, oldest first."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(bookings).where(bookings.c.job_id == job_id)
                                .order_by(bookings.c.id)).mappings().all()
        return [_booking(dict(r)) for r in rows]

    def of_jobs(self, job_ids: Sequence[int] | None) -> dict[int, tuple[Booking, ...]]:
        """The bookings of each of `job_ids` (None: every job's), in one read."""
        query = select(bookings).where(bookings.c.job_id.is_not(None)).order_by(bookings.c.id)
        if job_ids is not None:
            query = query.where(bookings.c.job_id.in_(list(job_ids)))
        out: dict[int, list[Booking]] = {}
        with self.engine.connect() as conn:
            for row in conn.execute(query).mappings():
                out.setdefault(int(row["job_id"]), []).append(_booking(dict(row)))
        return {k: tuple(v) for k, v in out.items()}

    def all(self, states: Sequence[str] = ()) -> list[Booking]:
        """Every booking (or those in `states`), oldest first."""
        query = select(bookings).order_by(bookings.c.id)
        if states:
            query = query.where(bookings.c.state.in_(list(states)))
        with self.engine.connect() as conn:
            return [_booking(dict(r)) for r in conn.execute(query).mappings()]


def _booking(row: dict) -> Booking:
    return Booking(int(row["id"]), str(row["token"]), row["job_id"],
                   _booked({**row, "observed_ts": row["created_ts"], "source": "booking"}),
                   str(row["state"]), str(row["reservation_id"]), str(row["detail"]),
                   _time(row["created_ts"]), _time(row["updated_ts"]))
