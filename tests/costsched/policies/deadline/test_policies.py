"""Deadline policies on hand-made traces where the right decisions are known."""

from __future__ import annotations

import math

import numpy as np
import pytest

from costsched.backtest.deadline import DeadlineJob, simulate
from costsched.model import InvalidInput
from costsched.policies.deadline import (
    DEADLINE_POLICIES,
    Greedy,
    OnDemand,
    SpotAnywhere,
    UniformProgress,
    deadline_policy,
)
from costsched.policies.deadline.base import NONE
from tests.costsched.backtest.deadline.traces import ON_DEMAND, Recorder, trace

TICK = 60


def run(policy, t, job, homes=(0,), start=0):
    recorder = Recorder(policy)
    runs = simulate(t, recorder, job, np.full(len(homes), start), np.array(homes))
    return runs, recorder.placements


def test_greedy_switches_to_on_demand_exactly_at_the_last_safe_moment() -> None:
    # Spot for 3 ticks, then none: greedy runs spot, waits, and goes on-demand at the first
    # tick where waiting one more could leave on-demand unable to finish in time.
    job = DeadlineJob(work_hours=10 / 60, deadline_hours=20 / 60, restart_minutes=1,
                      checkpoint_minutes=1)
    t = trace(["111" + "0" * 40], ["us-east-1a"], TICK)
    runs, placements = run(Greedy(), t, job)
    saved = (3 - 1) * TICK  # the restart took tick 0; ticks 1 and 2 were checkpointed work
    needed = job.work - saved + job.restart
    expected = next(k for k in range(3, 40)
                    if needed > job.deadline - k * TICK - TICK)
    on_demand = np.flatnonzero(placements[0] >= 1)
    assert on_demand[0] == expected
    assert (placements[0, 3:expected] == NONE).all()
    assert runs["met"].all()
    assert runs["finish_hours"].iloc[0] == pytest.approx(job.deadline_hours)


def test_a_zone_that_keeps_spot_draws_spot_anywhere_while_single_zone_policies_pay() -> None:
    job = DeadlineJob(1.0, 1.5, restart_minutes=3, checkpoint_minutes=10)
    ticks = math.ceil(job.horizon(TICK)) + 5
    t = trace(["0" * ticks, "1" * ticks], ["us-east-1a", "us-west-2a"], TICK)
    anywhere, placed = run(SpotAnywhere(), t, job)
    assert anywhere["on_demand_hours"].iloc[0] == 0
    assert (placed[0][placed[0] != NONE] == 1).all()  # spot in the other zone
    for policy in (Greedy(), UniformProgress()):
        single, _ = run(policy, t, job)
        assert single["spot_hours"].iloc[0] == 0
        assert single["on_demand_hours"].iloc[0] >= job.work_hours
        assert single["met"].all()
        assert anywhere["cost_usd"].iloc[0] < single["cost_usd"].iloc[0]
    assert anywhere["met"].all()


def test_without_spot_every_policy_runs_on_demand_and_is_on_time() -> None:
    job = DeadlineJob(1.0, 2.0, restart_minutes=3, checkpoint_minutes=10)
    t = trace(["0" * 200, "0" * 200], ["us-east-1a", "us-east-1b"], TICK)
    ceiling, _ = run(OnDemand(), t, job)
    billed = math.ceil((job.work + job.restart) / TICK) * TICK / 3600 * ON_DEMAND
    assert ceiling["cost_usd"].iloc[0] == pytest.approx(billed)
    for policy in (OnDemand(), UniformProgress(), SpotAnywhere()):
        runs, placements = run(policy, t, job)
        # On-demand from the first tick (uniform-progress: from the first tick behind).
        first = 1 if policy.name == "uniform-progress" else 0
        assert placements[0, first] >= 2, policy.name
        assert runs["met"].all() and runs["spot_hours"].iloc[0] == 0
    greedy, placements = run(Greedy(), t, job)
    assert greedy["met"].all()
    assert greedy["cost_usd"].iloc[0] == pytest.approx(ceiling["cost_usd"].iloc[0])


@pytest.mark.parametrize("seed", range(4))
def test_no_policy_misses_a_deadline_on_demand_could_meet(seed: int) -> None:
    rng = np.random.default_rng(seed)
    zones = ["us-east-1a", "us-east-1b", "us-west-2a"]
    # Runs of availability of random lengths, tight slack and long restarts.
    matrix = np.repeat(rng.random((3, 60)) < 0.5, 8, axis=1)
    t = trace(matrix, zones, TICK)
    job = DeadlineJob(3.0, 3.5, restart_minutes=12, checkpoint_minutes=30)
    starts = np.repeat(np.arange(0, 100, 20), 3)
    homes = np.tile(np.arange(3), 5)
    for name, cls in DEADLINE_POLICIES.items():
        runs = simulate(t, cls(), job, starts, homes)
        assert runs["met"].all(), name


def test_policies_by_name() -> None:
    assert isinstance(deadline_policy("Spot_Anywhere"), SpotAnywhere)
    with pytest.raises(InvalidInput, match="expected one of on-demand, greedy"):
        deadline_policy("cheapest")


def test_spot_anywhere_prefers_the_zone_whose_past_spells_lasted() -> None:
    # Both zones get spot back at tick 8; zone 0's spells so far lasted a tick each, zone
    # 1's one spell seven ticks: the job starting at tick 8 from home zone 0 goes to zone 1.
    job = DeadlineJob(0.5, 1.5, restart_minutes=3, checkpoint_minutes=10)
    t = trace(["10101010" + "1" * 200, "11111110" + "1" * 200],
              ["us-east-1a", "us-east-1b"], TICK)
    runs, placements = run(SpotAnywhere(), t, job, start=8)
    assert placements[0, 0] == 1
    assert runs["met"].all()


@pytest.mark.parametrize(("deadline_minutes", "leaves"), [(75, False), (180, True)])
def test_spot_anywhere_leaves_on_demand_for_a_short_spell_only_with_slack_to_spare(
        deadline_minutes: int, leaves: bool) -> None:
    # Twenty one-tick spells before the start: the zone's spells are short. The job starts
    # without spot (on-demand, behind the line) and spot comes back at tick 10 for 5 ticks.
    # With 15 minutes of slack the restart it costs is dear: the job stays on on-demand;
    # with two hours it takes the spell.
    job = DeadlineJob(1.0, deadline_minutes / 60, restart_minutes=3, checkpoint_minutes=10)
    t = trace(["10" * 20 + "0" * 10 + "1" * 5 + "0" * 400], ["us-east-1a"], TICK)
    runs, placements = run(SpotAnywhere(), t, job, start=40)
    assert placements[0, 0] == 1  # on-demand in zone 0
    assert (placements[0, 10] == 0) == leaves
    assert runs["met"].all()


def test_pricing_slack_saves_the_restart_of_a_short_spell(monkeypatch) -> None:
    # The scarce-slack case above: without a price on slack the job leaves on-demand for
    # the spell, and the safety rule soon sends it back, one restart more for nothing.
    job = DeadlineJob(1.0, 75 / 60, restart_minutes=3, checkpoint_minutes=10)
    t = trace(["10" * 20 + "0" * 10 + "1" * 5 + "0" * 400], ["us-east-1a"], TICK)
    priced, _ = run(SpotAnywhere(), t, job, start=40)
    monkeypatch.setattr("costsched.policies.deadline.multi_zone.SLACK_WEIGHT", 0.0)
    unpriced, _ = run(SpotAnywhere(), t, job, start=40)
    assert priced["met"].all() and unpriced["met"].all()
    assert priced["restarts"].iloc[0] < unpriced["restarts"].iloc[0]
    assert priced["cost_usd"].iloc[0] < unpriced["cost_usd"].iloc[0]
