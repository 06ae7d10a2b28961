"""Figures read alike wherever and whenever they are read: a part of a total as it reads
alone where a precision lets the parts add up so, two amounts compared in words at a
precision where they differ, what is charged still never '$0.00'; a deadline's words."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pandas as pd

from costsched.amounts import adding_up, charging, decimals, parts_as_written, usd


def test_a_finished_part_reads_the_same_whatever_the_total_beside_it() -> None:
    """The trial's placement of $0.000243 read $0.0002 while its job ran and $0.0003 once
    it stopped (largest remainder). Each part now reads as it does alone, at the fewest
    decimals (six at most under a cent) at which the parts so add up to the total."""
    finished = 0.000243
    seen = set()
    for running in (0.000106, 0.000412, 0.000157):
        total = finished + running
        places = adding_up([(total, [finished, running])], decimals([total, finished]))
        assert places is not None
        first = usd(parts_as_written(total, [finished, running], places)[0], places)
        assert first == usd(finished, places)  # as it reads alone
        seen.add(first.rstrip("0"))
    assert seen <= {"$0.0002", "$0.00024", "$0.000243"}, seen


def test_two_amounts_compared_in_words_differ_as_written() -> None:
    """'expected to cost $0.0003 ..., more than the $0.0003 left of its budget'."""
    from costsched.own_budget import OwnBudget
    from costsched.service.jobs.decider import BudgetShort

    short = BudgetShort("j", OwnBudget(0.005, 0.00472), 4658, "gcp us-east5 g2-standard-4",
                        0.00032, 0.08)
    assert "cost $0.00032 on the cheapest" in short.why, short.why
    assert "more than the $0.00028 left" in short.why, short.why


def test_a_budget_verdict_shows_the_sum_passing_the_cap() -> None:
    from costsched.service.jobs.decider import budget_verdict

    why = budget_verdict("", 0.00399, 0.000011, 0.004)
    assert why is not None and "would pass the budget of $0.004" in why
    spent, ahead = (float(w.split()[0].strip("$")) for w in why.split(" + "))
    assert spent + ahead > 0.004, why


def test_what_is_charged_still_never_reads_zero() -> None:
    assert usd(charging(0.0)) == "<$0.0001" == usd(charging(0.00002))
    assert usd(charging(0.0, live=False)) == "$0.00"


def test_a_stopped_job_before_its_deadline_is_still_due() -> None:
    from costsched.service.views import due_words

    now = datetime(2026, 11, 29, 22, 50, tzinfo=timezone.utc)
    due = now + timedelta(hours=2)
    assert due_words(due, now, True, "stopped", now) == (
        "due 2026-11-30 00:50 UTC (in 2.00 h)")
    assert due_words(due, due + timedelta(hours=1), True, "stopped", now) == (
        "it was stopped with 2.00 h left before its deadline (2026-11-30 00:50 UTC)")
    assert due_words(due, now, True, "failed", now) == (
        "it failed with 2.00 h left before its deadline (2026-11-30 00:50 UTC)")


def test_a_deadline_reads_at_its_own_precision_beside_placements() -> None:
    """'(in 2.00 h)' by launch, '(in 1.9793 h)' by status beside a placement's 0.0031 h:
    the deadlines' hours read together by themselves."""
    from costsched.cli.status_lines import due_places, view_scale

    now = datetime(2026, 11, 29, 22, 50, tzinfo=timezone.utc)
    record = SimpleNamespace(final=True, state="succeeded", updated_at=now)
    placement = SimpleNamespace(hours=0.0031, usd=0.001, end_at=now)
    ran = SimpleNamespace(record=record, due=None, scale=None, open_placement=None,
                          booked_usd=0.0,  # (read without the store's: its own charges')
                          cost=SimpleNamespace(charged=(placement,), total_usd=0.001,
                                               egress_usd=0.0))
    running = SimpleNamespace(record=SimpleNamespace(final=False, state="running",
                                                     updated_at=now),
                              due=now + timedelta(hours=1.9793), open_placement=None,
                              booked_usd=0.0, scale=None,
                              cost=SimpleNamespace(charged=(), total_usd=0.0,
                                                   egress_usd=0.0))
    shown = [ran, running]
    assert view_scale(shown).hours == 4  # type: ignore[arg-type]
    assert due_places(shown, now) == 2  # type: ignore[arg-type]


def test_a_zoneless_offering_says_its_measure_is_its_regions() -> None:
    from costsched.optimize import hazard
    from costsched.optimize.hazard import Evidence

    offer = dict(cloud="aws", region="us-east-1", zone="", instance_type="p3.2xlarge",
                 market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8,
                 memory_gb=61.0, usd_per_hour=0.9, source="test")
    observed = pd.DataFrame({"cloud": ["aws"], "region": ["us-east-1"], "zone": [""],
                             "instance_type": ["p3.2xlarge"], "gpu_model": ["V100"],
                             "gpu_count": [1], "preemptions": [1], "hours": [0.02]})
    out = hazard.offering_hazards(pd.DataFrame([offer]), Evidence(observed))
    [basis] = out["preemption_basis"].tolist()
    assert basis.startswith("measured in region: 1 in 0.02 h"), basis
    assert "in zone" not in basis


def test_amounts_equal_but_for_float_noise_read_at_their_own_decimals() -> None:
    from costsched.amounts import apart

    spent = 0.1 + 0.05  # 0.15000000000000002, a spend summed from two charges
    assert apart(spent, 0.5 * 0.30) == 2  # not the most decimals: they are equal
    assert apart(0.151, 0.15) == 3  # told apart where they differ
