"""The booked-capacity plans: spot with on-demand behind it, and booked capacity with the
work it cannot hold run around it, by the deadline, in expected dollars."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest

from costsched.model import BookedOffering, Offering
from costsched.optimize.booked import (
    BLOCK_MARGIN_HOURS,
    HourlyMarket,
    JobShape,
    booked_plan,
    on_demand_plan,
    plans,
    spot_part,
    spot_plan,
)

NOW = datetime(2026, 12, 1, 8, tzinfo=timezone.utc)
JOB = JobShape(work_hours=60, deadline_hours=96, restart_hours=0.25, checkpoint_hours=0.5)


def market(rate: float = 0.0, dry: float = 1.0, spot: float | None = 20.0) -> HourlyMarket:
    return HourlyMarket("p5.48xlarge", "od", 50.0, None if spot is None else "spot",
                        math.nan if spot is None else spot, rate, dry, "us-east-1")


def booked(market_: str = "capacity_block", start_h: float = 24, hours: float = 48,
           upfront: float = 1900.0, count: int = 1, **more: float) -> BookedOffering:
    o = Offering("aws", "us-east-1", "us-east-1a", "p5.48xlarge", market_, "H100", 8)
    return BookedOffering(o, NOW + timedelta(hours=start_h),
                          NOW + timedelta(hours=start_h + hours), count, upfront,
                          offering_id="x", observed_at=NOW, **more)


def test_spot_without_preemptions_runs_all_on_spot_its_start_billed() -> None:
    found = spot_part(60, 96, market(0.0), JOB)
    assert (found.spot_hours, found.on_demand_hours, found.fallback_probability) == (
        60 + JOB.restart_hours, 0, 0)  # its instance's start, as the on-demand plan bills
    assert not spot_part(60, 60, market(0.0), JOB).feasible  # no room for a restart


def test_on_demand_steps_in_as_spot_gets_scarcer_and_the_expected_cost_rises() -> None:
    costs, odds = [], []
    for rate, dry in ((0.02, 1), (0.1, 3), (0.3, 6), (0.6, 10)):
        p = spot_plan(JOB, market(rate, dry))
        costs.append(p.usd)
        odds.append(p.fallback_probability)
    assert costs == sorted(costs) and odds == sorted(odds)
    assert odds[0] < 0.01 and odds[-1] > 0.99
    assert costs[-1] < on_demand_plan(JOB, market()).usd  # spot before it still pays


def test_a_block_that_holds_the_job_costs_its_price_and_the_job_waits_for_it() -> None:
    p = booked_plan(JOB, market(0.3, 6), booked(start_h=10, hours=72, upfront=2800), NOW)
    assert p.feasible and p.usd == 2800
    assert [x.kind for x in p.parts] == ["wait", "capacity_block"]
    assert p.parts[1].end_hours == pytest.approx(10 + 0.25 + 60)


def test_a_shorter_block_has_the_rest_run_before_it_on_spot_with_on_demand_behind() -> None:
    # Due soon after the block ends: what the block cannot hold runs before it.
    p = booked_plan(JobShape(60, 72, 0.25, 0.5), market(0.3, 6), booked(start_h=24, hours=48),
                    NOW)
    inside = 48 - BLOCK_MARGIN_HOURS - 0.25
    assert [x.kind for x in p.parts] == ["spot", "on_demand", "capacity_block"]
    assert p.parts[2].work_hours == pytest.approx(inside)
    assert p.parts[0].work_hours == pytest.approx(60 - inside)
    assert p.usd == pytest.approx(sum(x.usd for x in p.parts))


def test_a_block_ending_early_has_the_rest_run_after_it_by_the_deadline() -> None:
    p = booked_plan(JOB, market(0.0), booked(start_h=0, hours=40), NOW)
    after = [x for x in p.parts if x.start_hours >= 40 - BLOCK_MARGIN_HOURS]
    assert p.feasible and after and after[-1].end_hours <= 96
    assert sum(x.work_hours for x in p.parts) == pytest.approx(60)


def test_what_cannot_work_says_why() -> None:
    assert "holds 1 instances, the job needs 2" in booked_plan(
        JobShape(60, 96, 0.25, 0.5, nodes=2), market(), booked(), NOW).reason
    assert "none of its time is usable" in booked_plan(
        JOB, market(), booked(start_h=100), NOW).reason
    # Three restarts (before, in and after the block) do not fit 0.6 h of slack.
    late = booked_plan(JobShape(60, 60.6, 0.25, 0.5), market(), booked(start_h=10, hours=24),
                       NOW)
    assert not late.feasible and "do not fit" in late.reason


def test_a_reservation_held_is_free_and_flex_start_is_billed_by_the_hour() -> None:
    held = booked_plan(JOB, market(0.3, 6), booked("reservation", start_h=0, hours=200,
                                                   upfront=0), NOW)
    assert held.usd == 0 and held.feasible
    flex = booked_plan(JOB, market(0.3, 6), booked("flex_start", start_h=0, hours=170,
                                                   upfront=0, usd_per_hour=30.0,
                                                   wait_hours=2.0), NOW)
    assert flex.feasible and flex.usd == pytest.approx(30.0 * (60 + 0.25))
    assert flex.parts[-1].start_hours == 2.0  # after its expected wait


def test_the_best_plan_is_booked_only_when_it_is_cheaper() -> None:
    cheap = plans("j", [(JOB, market(0.3, 6))], [(JOB, market(0.3, 6), booked(), 0.0)], NOW)
    assert cheap.best.booked is not None and cheap.saves_usd > 0
    dear = plans("j", [(JOB, market(0.0))], [(JOB, market(0.0), booked(), 0.0)], NOW)
    assert dear.best is dear.spot and dear.saves_usd == 0


def test_hours_in_the_plans_words_never_read_zero() -> None:
    """A short job's hours in a plan's words keep two significant digits (the one rule of
    `costsched.amounts`), never '0.0 h'."""
    short = JobShape(work_hours=0.03, deadline_hours=0.02, restart_hours=0.004,
                     checkpoint_hours=0.01)
    plan = on_demand_plan(short, market(dry=0.04))
    assert "0.03 h of work" in plan.parts[0].why and "0.0 h" not in plan.parts[0].why
    assert "needs 0.03 h, the deadline is 0.02 h away" in plan.reason
    roomy = JobShape(work_hours=0.03, deadline_hours=2, restart_hours=0.004,
                     checkpoint_hours=0.01)
    words = " ".join(p.why for p in spot_plan(roomy, market(0.5, dry=0.04)).parts)
    assert "0.0 h" not in words and " h of work on spot" in words


def test_a_one_character_gpu_name_gets_its_near_miss() -> None:
    from costsched.throughput import GPU_SPECS
    from costsched.vocabulary import did_you_mean

    assert did_you_mean("T5", GPU_SPECS) == "; did you mean 'T4'?"
    assert did_you_mean("X1", GPU_SPECS) == ""
