"""Booked capacity in `costsched plan`: a job's plans with capacity blocks, flex-start and
reservations beside spot with on-demand fallback and on-demand alone, each part in
dollars and why."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from costsched.amounts import age, decimals, usd, usd_all
from costsched.cli.common import console, err_console, table
from costsched.model import InvalidInput

if TYPE_CHECKING:  # `status` shows bookings without the planner
    from costsched.optimize.booked import BookedPlans, CapacityPlan


def print_booked(plans: BookedPlans, at: datetime, wide: bool = False, source: str = "",
                 launcher: str = "") -> None:
    """The plans compared, then the parts of the best one; where booked capacity pays, the
    launch that buys it (of the job file `source`, by the launcher that buys its market
    where the configured `launcher` does not)."""
    base = plans.baseline
    ordered = _ordered(plans)
    places = decimals([p.usd for p in ordered if p.feasible])  # one precision down the table
    rows = []
    for p in ordered:
        gap = p.usd - base.usd
        vs = (("+" if gap >= 0 else "-") + usd(abs(gap), places)
              if p.feasible and p is not base else "baseline" if p is base else "-")
        rows.append([("* " if p is plans.best else "") + p.name,
                     usd(p.usd, places) if p.feasible else "-", vs,
                     f"{p.fallback_probability:.0%}" if p.feasible else "-",
                     _age(p, at), "yes" if p.feasible else f"no: {p.reason}"])
    console.print(table(f"{plans.job}: with capacity booked ahead (expected USD; * the "
                        "plan)", ["plan", "expected $", "vs baseline $", "on-demand odds",
                                  "offer age", "keeps deadline"], rows,
                        detail=["offer age", "on-demand odds"], wide=wide))
    if plans.priced_as:  # not for the configured launcher, whose restarts differ
        console.print(f"  {plans.priced_as}", highlight=False, markup=False)
    best = plans.best
    *amounts, total = usd_all(*(p.usd for p in best.parts), best.usd)
    parts = [[p.kind.replace("_", "-"), _when(at, p.start_hours), _when(at, p.end_hours),
              f"{p.work_hours:,.1f}", amount, p.why]
             for p, amount in zip(best.parts, amounts, strict=True)]
    console.print(table(f"{plans.job}: {best.name}, {total} expected",
                        ["part", "from", "until", "work h", "expected $", "why"], parts,
                        detail=["work h"], wide=wide))
    if best is not base:
        saves, baseline = usd_all(plans.saves_usd, base.usd)
        console.print(f"  saves {saves} ({plans.saves_usd / base.usd:.0%}) "
                      f"against {base.name} ({baseline}); `{_buying(best, source, launcher)}` "
                      "buys it (asked first)", highlight=False, markup=False)
    else:
        console.print(f"  no booked capacity beats {base.name} ({usd(base.usd)})",
                      highlight=False, markup=False)


def _buying(best: CapacityPlan, source: str, launcher: str) -> str:
    """The launch that buys or runs `best`'s booked capacity: `costsched launch FILE
    --book`, with `--launcher` where the configured one is not the launcher of its market
    (`booked_by`: a capacity block's buyer, aws; a flex-start VM's or a reservation's, its
    cloud's)."""
    from costsched.migration.launcher import booked_by

    runs = booked_by(best.booked.offering) if best.booked is not None else ""
    return " ".join(["costsched launch", *([shlex.quote(source)] if source else []), "--book",
                     *([f"--launcher {runs}"] if runs and launcher != runs else [])])


def _ordered(plans: BookedPlans) -> list[CapacityPlan]:
    found = [plans.on_demand, *([plans.spot] if plans.spot else []), *plans.booked]
    return sorted(found, key=lambda p: (not p.feasible, p.usd if p.feasible else 0.0))


def _when(at: datetime, hours: float) -> str:
    return f"{at + timedelta(hours=hours):%m-%d %H:%M}"


def _age(p: CapacityPlan, at: datetime) -> str:
    seen = None if p.booked is None else p.booked.observed_at
    if seen is None:
        return "-"
    return age((at - seen).total_seconds())


def confirm_booking(yes: bool) -> Callable[[BookedPlans], bool]:
    """`launch --book`'s question before anything is bought: the plan, its price and what
    it saves, answered by the user at a terminal (or by --yes); never bought silently."""

    def ask(plans: BookedPlans) -> bool:
        best = plans.best
        b = best.booked
        assert b is not None  # noqa: S101 - asked only for a plan with booked capacity
        upfront, planned, baseline = usd_all(b.upfront_usd, best.usd, plans.baseline.usd)
        buys = b.upfront_usd > 0  # else held already (a reservation, a block paid for)
        what = (f"buy {best.name} ({b.offering_id}) for {upfront} upfront" if buys
                else f"use {best.name} ({b.offering_id}), held already")
        line = (f"{plans.job}: {what}: plan {planned} expected against "
                f"{baseline} for {plans.baseline.name}")
        if yes:
            err_console.print(f"{line}: {'buying' if buys else 'using it'} (--yes)",
                              highlight=False, soft_wrap=True, markup=False)
            return True
        if not sys.stdin.isatty():
            raise InvalidInput(f"{line}: {'buying' if buys else 'using it'} needs your yes: "
                               "run at a terminal to be asked, or give --yes")
        import typer

        return typer.confirm(f"{line}. {'Buy' if buys else 'Use'} it?", default=False,
                             err=True)

    return ask


def booked_lines(s: Any, now: datetime) -> list[str]:
    """`status`'s lines on a job's booked capacity (a `JobStatus`): each booking, when it
    can be used and what it cost (of a job that ended, what it holds unused and what uses
    it next); a flex-start VM waiting for capacity."""
    from costsched.service.booking import held_unused_by

    out = []
    for b in s.bookings:
        o = b.booked.offering
        start, end = b.booked.start, b.booked.end
        if s.record.final and held_unused_by(b, now):
            out.append("booked: " + held_line(b, s.record.name, s.record.state, s.record.id))
            continue
        when = (f"starts in {age((start - now).total_seconds())}" if now < start
                else f"ends in {age((end - now).total_seconds())}" if now < end
                else "ended")
        kind = o.market.replace("_", " ")
        state = b.state if b.state in ("purchasing", "failed") else when
        out.append(f"booked: {kind} {b.reservation_id or b.booked.offering_id} "
                   f"({o.instance_type} x{b.booked.instance_count}, {o.zone or o.region}) "
                   f"{start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M} UTC, "
                   f"{usd(b.booked.upfront_usd)} upfront: {state}"
                   + (f" ({b.detail})" if b.state == "failed" and b.detail else ""))
    if s.instance_state == "pending" and s.instance_detail.startswith("flex-start"):
        out.append(s.instance_detail)
    return out


def held_line(b: Any, job_name: str, job_state: str = "", job_id: int | None = None) -> str:
    """`costsched.service.booking.held_note`, imported when a booking is said."""
    from costsched.service.booking import held_note

    return held_note(b, job_name, job_state, job_id)


def held_lines(held: list[tuple[Any, str, str]]) -> list[str]:
    """`status`'s lines on the capacity paid for that no job shown uses
    (`costsched.service.booking.held_unused`)."""
    return [held_line(b, name, state, b.job_id) for b, name, state in held]
