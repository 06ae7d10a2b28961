"""Buying booked capacity for a job, once: the booking is recorded before the cloud is
asked (`BookedStore.intend`, under a token made of the job's name and the offering), the
cloud is asked whether it sold it under that token already (a purchase a crash left
unrecorded), and only then asked to sell it. Launching the same job with the same offering
again finds the booking and buys nothing more.

A booking whose job could not be placed (or ended) is held unused, not lost: it is said
at the failure and in `status` (`held_unused`, `held_note`), and the next `launch --book`
of a job of that name plans with it as paid (no upfront price), so that it is used before
anything else is bought.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from costsched.amounts import usd
from costsched.migration.launcher import CapacityError, Launcher
from costsched.model import BookedOffering, InvalidInput
from costsched.store import PriceStore
from costsched.store.booked import Booking

if TYPE_CHECKING:  # `status` reads bookings without the planner
    from costsched.jobspec import ResolvedJob
    from costsched.optimize.booked import BookedPlans
    from costsched.optimize.planner import JobPlan

HELD_STATES = ("purchasing", "scheduled", "active")  # bought, or maybe bought: paid for
BOUGHT = ("capacity_block",)  # the markets costsched buys ahead (paid whether used or not)
HELD_FOR = "held for job "  # the detail of a booking whose job was never stored


def booking_token(job_name: str, booked: BookedOffering) -> str:
    """The booking's idempotency token: the same job name and offering, the same token."""
    o = booked.offering
    digest = hashlib.sha256(f"{job_name}\x1f{o.cloud}\x1f{o.market}\x1f{booked.offering_id}"
                            .encode()).hexdigest()
    return f"costsched-{digest[:32]}"


def book(store: PriceStore, launcher: Launcher, booked: BookedOffering, *, token: str,
         at: datetime, job_id: int | None = None) -> Booking:
    """Buy `booked` under `token` (recorded first; bought at most once), and say when it
    can be used. InvalidInput, the booking marked failed, when the cloud no longer sells
    it."""
    booking = store.booked.intend(token, booked, job_id=job_id, at=at)
    if booking.state not in ("purchasing", "failed"):
        return booking  # bought already
    found = launcher.purchased(booked, token)
    if found is None:
        try:
            found = launcher.purchase(booked, token, job_id)
        except CapacityError as exc:
            store.booked.advance(token, "failed", at=at, detail=str(exc))
            raise InvalidInput(f"{_what(booked)}: not bought: {exc.reason}; `costsched "
                               "collect --booked` finds the offerings for sale now") from None
        except InvalidInput as exc:  # refused before the cloud was asked: nothing bought
            store.booked.advance(token, "failed", at=at, detail=str(exc))
            raise
        # Any other error leaves it "purchasing": whether the cloud sold it is unknown
        # until it is asked again under the same token.
    state = "active" if found.start <= at else "scheduled"
    return store.booked.advance(token, state, at=at, reservation_id=found.reservation_id,
                                start=found.start, end=found.end,
                                detail=f"bought ({found.state or 'confirmed'})")


def attach(store: PriceStore, token: str, job_id: int, at: datetime) -> Booking:
    """Give the booking under `token` to the job stored as `job_id`."""
    return store.booked.give(token, job_id, at=at)


def _what(b: BookedOffering) -> str:
    o = b.offering
    return (f"{o.market.replace('_', ' ')} {b.offering_id} ({o.instance_type} x"
            f"{b.instance_count}, {o.zone or o.region}, {b.start:%Y-%m-%d %H:%M} to "
            f"{b.end:%Y-%m-%d %H:%M} UTC, {usd(b.upfront_usd)})")


def held_unused(store: PriceStore, at: datetime, shown: Collection[int] = ()
                ) -> list[tuple[Booking, str, str]]:
    """The bookings paid for (or maybe: a purchase unconfirmed) that have not ended by
    `at` and that no live job uses: those of no job (its placement failed before it was
    stored) or of an ended one, but those of the jobs `shown` (their own lines say them).
    (booking, the job's name or '', its state or '')."""
    out = []
    for b in store.booked.all(HELD_STATES):
        if not held_unused_by(b, at) or b.job_id in shown:
            continue
        if b.job_id is None:
            out.append((b, b.detail.removeprefix(HELD_FOR) if b.detail.startswith(HELD_FOR)
                        else "", ""))
            continue
        record = store.jobs.get(int(b.job_id))
        if record.final:
            out.append((b, record.name, record.state))
    return out


def held_unused_by(b: Booking, at: datetime) -> bool:
    """Whether `b`, of a job not running, is capacity bought that has not ended by `at`."""
    return (b.state in HELD_STATES and b.booked.offering.market in BOUGHT
            and b.booked.end > at)


def held_document(held: list[tuple[Booking, str, str]]) -> list[dict]:
    """`status --json`'s "held_bookings": the same, one object each."""
    return [{"job_id": b.job_id, "job": name or None, "job_state": state or None,
             "market": b.booked.offering.market, "state": b.state,
             "reservation_id": b.reservation_id or None,
             "offering_id": b.booked.offering_id,
             "instance_type": b.booked.offering.instance_type,
             "instance_count": b.booked.instance_count,
             "zone": b.booked.offering.zone or None, "region": b.booked.offering.region,
             "start": b.booked.start.isoformat(), "end": b.booked.end.isoformat(),
             "upfront_usd": b.booked.upfront_usd, "line": held_note(b, name, state, b.job_id)}
            for b, name, state in held]


def held_note(b: Booking, job_name: str, job_state: str = "", job_id: int | None = None
              ) -> str:
    """One line: what is held, until when, what it cost, and what uses it next."""
    o = b.booked.offering
    what = (f"{o.market.replace('_', ' ')} {b.reservation_id or b.booked.offering_id} "
            f"({o.instance_type} x{b.booked.instance_count}, {o.zone or o.region}, "
            f"{b.booked.start:%Y-%m-%d %H:%M} to {b.booked.end:%Y-%m-%d %H:%M} UTC, "
            f"{usd(b.booked.upfront_usd)} paid)")
    if b.state == "purchasing":
        what += ", its purchase unconfirmed,"
    if job_state == "stopped" and job_id is not None:
        return f"{what} is held unused while job {job_id} is stopped: `costsched start " \
               f"{job_id}` uses it"
    if not job_name:
        return f"{what} is held unused"
    return (f"{what} is held unused: the next `costsched launch --book` of job "
            f"{job_name!r} uses it")


def not_placed(store: PriceStore, booking: Booking | None, job_name: str,
               exc: InvalidInput, at: datetime) -> InvalidInput:
    """`exc` (why the job that just bought `booking` cannot be placed), with the booking
    it leaves held in the same line; the booking keeps the job's name for `status`. (A
    reservation is the account's whatever costsched does: nothing to say.)"""
    if booking is None or booking.booked.offering.market not in BOUGHT:
        return exc
    held = store.booked.advance(booking.token, booking.state, at=at,
                                detail=f"{HELD_FOR}{job_name}")
    return InvalidInput(f"{exc}; {held_note(held, job_name)}")


def _paid(offered: list[BookedOffering], held: list[Booking]) -> list[BookedOffering]:
    """`offered` with the capacity of `held` bookings at no upfront price (paid)."""
    ids = {(b.booked.offering.cloud, b.booked.offering.market, b.booked.offering_id): b
           for b in held}
    out = [o for o in offered
           if (o.offering.cloud, o.offering.market, o.offering_id) not in ids]
    return out + [replace(b.booked, upfront_usd=0.0) for b in ids.values()]


def book_for_launch(store: PriceStore, launcher: Launcher, resolved: ResolvedJob, source: str,
                    at: datetime, confirm: Callable[[BookedPlans], bool]
                    ) -> tuple[Booking | None, str | None]:
    """What `launch --book` does before the job is stored: the job's plan with the booked
    capacity the store offers, priced as `plan` prices it (for the launcher that buys
    that capacity: `booked_plans`); when booked capacity is in its best plan, the user's yes
    (`confirm`), then the purchase (`book`). (the booking, or None for a flex-start plan,
    which buys nothing ahead; the offering to launch on, None for the deadline policy's)."""
    from costsched.service.booked import booked_plans
    from costsched.service.jobs.decider import market_at, planned

    market = market_at(store, at)
    plan = planned(resolved, market, at)
    held = [b for b, _, state in held_unused(store, at) if state != "stopped"
            and b.state != "purchasing" and b.token == booking_token(resolved.name, b.booked)]
    # priced as `plan` prices it, for the launcher that buys it (the launch's own decision)
    plans = booked_plans(store, plan, at, _paid(store.booked.offered(at), held),
                         replan=lambda job: planned(job, market, at))
    best = None if plans is None else plans.best
    if plans is None:  # none known that fits: what is missing, and what collects it
        raise InvalidInput(f"{source}: job {resolved.name!r}: {no_booked_known(plan)}; or "
                           "launch it without --book")
    if best is None or best.booked is None:
        raise InvalidInput(f"{source}: job {resolved.name!r}: no booked capacity in its plan"
                           f": {plans.baseline.name} costs less; launch it without --book "
                           f"(`costsched plan {source}` shows why)")
    b = best.booked
    if not confirm(plans):
        raise InvalidInput(f"job {resolved.name!r}: not booked: nothing bought, nothing "
                           "launched")
    if b.offering.market == "flex_start":  # asked for at launch, billed by the hour
        o = b.offering
        return None, f"{o.cloud}:{o.zone or o.region}:{o.instance_type}:flex_start"
    if b.offering.market == "reservation":  # held already: nothing to buy
        token = booking_token(resolved.name, b)
        store.booked.intend(token, b, job_id=None, at=at)
        return store.booked.advance(token, "active" if b.start <= at else "scheduled",
                                    at=at, reservation_id=b.offering_id,
                                    detail="a reservation held"), None
    return book(store, launcher, b, token=booking_token(resolved.name, b), at=at), None


def no_booked_known(plan: JobPlan) -> str:
    """Why a job has no plan with booked capacity when none that fits it is stored, and
    the command that collects it for the job's best offering's cloud, region and GPU:
    EC2's capacity blocks on sale and the reservations held (`collect --booked`), GCP's
    flex-start prices with its prices (docs/booked-capacity.md)."""
    choices = plan.choices
    found = [choices[choices["cloud"] == c] for c in ("aws", "gcp")]  # where it is sold
    choices = next((c for c in found if not c.empty), choices.iloc[:0])
    if choices.empty and plan.reason:  # nothing priced that it allows: as plan says why
        return plan.reason.removeprefix(f"job {plan.job.name}: ")
    if choices.empty:
        return ("no booked capacity known that fits it, and it may run on no cloud that "
                "sells it (aws, gcp): docs/booked-capacity.md says where it is sold")
    best = choices.iloc[0]
    cloud, region, gpu = str(best["cloud"]), str(best["region"]), str(best["gpu_model"])
    what, collects = (("capacity block or reservation", "the capacity blocks on sale and "
                       "the reservations held") if cloud == "aws" else
                      ("flex-start price or reservation", "GCP's prices, flex-start's among "
                       "them, and the reservations the project holds"))
    from costsched.clouds.hints import collect_command

    return (f"no {what} known for {gpu}:{int(best['gpu_count'])} in {cloud} {region}; "
            f"`{collect_command([cloud], [region], [gpu], booked=True)}` "
            f"collects {collects}, then `--book` plans with them")
