"""Booked capacity in `costsched plan`: a job's plans with capacity blocks, flex-start and
reservations beside spot with on-demand fallback and on-demand alone, each part in
dollars and why."""

from __future__ import annotations

from datetime import datetime, timedelta

from costsched.cli.common import console, money, table
from costsched.optimize.booked import BookedPlans, CapacityPlan


def print_booked(plans: BookedPlans, at: datetime, wide: bool = False) -> None:
    """The plans compared, then the parts of the best one."""
    base = plans.baseline
    rows = []
    for p in _ordered(plans):
        vs = (f"{p.usd - base.usd:+,.2f}" if p.feasible and p is not base else
              "baseline" if p is base else "-")
        rows.append([("* " if p is plans.best else "") + p.name,
                     money(p.usd, 2) if p.feasible else "-", vs,
                     f"{p.fallback_probability:.0%}" if p.feasible else "-",
                     _age(p, at), "yes" if p.feasible else f"no: {p.reason}"])
    console.print(table(f"{plans.job}: with capacity booked ahead (expected USD; * the "
                        "plan)", ["plan", "expected $", "vs baseline $", "on-demand odds",
                                  "offer age", "keeps deadline"], rows,
                        detail=["offer age", "on-demand odds"], wide=wide))
    best = plans.best
    parts = [[p.kind.replace("_", "-"), _when(at, p.start_hours), _when(at, p.end_hours),
              f"{p.work_hours:,.1f}", money(p.usd, 2), p.why] for p in best.parts]
    console.print(table(f"{plans.job}: {best.name}, {money(best.usd, 2)} expected",
                        ["part", "from", "until", "work h", "expected $", "why"], parts,
                        detail=["work h"], wide=wide))
    if best is not base:
        console.print(f"  saves {money(plans.saves_usd, 2)} ({plans.saves_usd / base.usd:.0%}) "
                      f"against {base.name} ({money(base.usd, 2)}); `costsched launch "
                      "--book` buys it (asked first)", highlight=False)
    else:
        console.print(f"  no booked capacity beats {base.name} ({money(base.usd, 2)})",
                      highlight=False)


def _ordered(plans: BookedPlans) -> list[CapacityPlan]:
    found = [plans.on_demand, *([plans.spot] if plans.spot else []), *plans.booked]
    return sorted(found, key=lambda p: (not p.feasible, p.usd if p.feasible else 0.0))


def _when(at: datetime, hours: float) -> str:
    return f"{at + timedelta(hours=hours):%m-%d %H:%M}"


def _age(p: CapacityPlan, at: datetime) -> str:
    seen = None if p.booked is None else p.booked.observed_at
    if seen is None:
        return "-"
    hours = (at - seen).total_seconds() / 3600
    return f"{hours:,.1f} h"
