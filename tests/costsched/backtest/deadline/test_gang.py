"""A gang of N nodes in the replay and the optimum, on hand-made instance counts: it makes
progress only in ticks with at least N instances, is billed N x the price, stops (and is
released whole, billed nothing) when fewer than N run, and pays the rendezvous on every
start."""

from __future__ import annotations

import numpy as np
import pytest

from costsched.backtest.deadline import AvailabilityTrace, DeadlineJob, optimum, simulate
from costsched.model import InvalidInput
from costsched.policies.deadline import Greedy
from costsched.policies.deadline.gang import gang_restart

TICK = 60
ZONE = ["us-east-1a"]
SPOT, ON_DEMAND = 1.0, 3.0  # USD per instance-hour


def counts_trace(counts: list[int], nodes: int) -> AvailabilityTrace:
    return AvailabilityTrace.from_counts(np.array([counts]), ZONE, TICK, nodes,
                                         spot_price=SPOT, on_demand_price=ON_DEMAND)


def job(nodes: int, restart_s: float) -> DeadlineJob:
    # 6 minutes of work, a checkpoint every minute, an hour to do it.
    return DeadlineJob(6 / 60, 1.0, restart_minutes=restart_s / 60, checkpoint_minutes=1,
                       nodes=nodes)


def replay(counts: list[int], nodes: int, restart_s: float) -> dict:
    runs = simulate(counts_trace(counts, nodes), Greedy(), job(nodes, restart_s),
                    np.array([0]), np.array([0]))
    return runs.iloc[0].to_dict()


def test_a_gang_runs_only_while_at_least_n_instances_do_and_stops_below() -> None:
    # 4 instances for 5 ticks, 3 for 2, then 4 again.
    counts = [4] * 5 + [3] * 2 + [4] * 53
    gang = replay(counts, nodes=4, restart_s=60)
    # Tick 0 restarts, ticks 1-4 do 4 minutes (checkpointed), ticks 5-6 have 3 < 4:
    # preempted and released (nothing billed), tick 7 restarts, ticks 8-9 finish.
    assert gang["preemptions"] == 1
    assert gang["finish_hours"] * 60 == pytest.approx(10)
    assert gang["cost_usd"] == pytest.approx(8 * 4 * SPOT * TICK / 3600)
    assert gang["spot_hours"] * 60 == pytest.approx(8)
    # A gang of 3 on the same counts never drops: 1 restart tick and 6 of work.
    three = replay(counts, nodes=3, restart_s=60)
    assert three["preemptions"] == 0
    assert three["finish_hours"] * 60 == pytest.approx(7)
    assert three["cost_usd"] == pytest.approx(7 * 3 * SPOT * TICK / 3600)


def test_no_progress_in_ticks_below_n_however_many_instances_run() -> None:
    # 15 of 16 instances for the first 20 ticks: a gang of 16 waits (greedy: nothing),
    # billed nothing, and starts only at tick 20.
    counts = [15] * 20 + [16] * 40
    gang = replay(counts, nodes=16, restart_s=60)
    assert gang["finish_hours"] * 60 == pytest.approx(20 + 1 + 6)
    assert gang["cost_usd"] == pytest.approx(7 * 16 * SPOT * TICK / 3600)


def test_a_gang_is_billed_n_times_the_price() -> None:
    always = [16] * 60
    one = replay(always, nodes=1, restart_s=180)
    gang = replay(always, nodes=8, restart_s=180)
    assert gang["finish_hours"] == pytest.approx(one["finish_hours"])
    assert gang["cost_usd"] == pytest.approx(8 * one["cost_usd"])
    assert gang["cost_usd"] == pytest.approx(9 * 8 * SPOT * TICK / 3600)  # 3 + 6 ticks


def test_every_start_of_a_gang_pays_the_rendezvous() -> None:
    counts = [4] * 5 + [3] * 2 + [4] * 53  # two starts, as above
    boot, rendezvous = 60.0, 120.0
    plain = replay(counts, nodes=4, restart_s=boot)
    met = replay(counts, nodes=4, restart_s=gang_restart(boot, 4, rendezvous))
    # Each of the two starts waits 2 more ticks, billed for the whole gang.
    assert (met["finish_hours"] - plain["finish_hours"]) * 3600 == pytest.approx(
        2 * rendezvous)
    assert met["cost_usd"] - plain["cost_usd"] == pytest.approx(
        2 * 2 * 4 * SPOT * TICK / 3600)
    # One node has no one to meet.
    assert gang_restart(boot, 1, rendezvous) == boot


def test_the_optimum_bills_a_gang_n_times_and_waits_for_n_instances() -> None:
    always = [16] * 60
    one = optimum(counts_trace(always, 1), job(1, 60), [0])[0]
    gang = optimum(counts_trace(always, 8), job(8, 60), [0])[0]
    assert gang == pytest.approx(8 * one)
    # 7 of 8 instances until the deadline (30 minutes): no spot for the gang, on-demand
    # (a restart tick and 6 of work); 8 of 8 would have been spot at a third of that.
    due = DeadlineJob(6 / 60, 0.5, restart_minutes=1, checkpoint_minutes=1, nodes=8)
    short = optimum(counts_trace([7] * 60, 8), due, [0])[0]
    assert short == pytest.approx(7 * 8 * ON_DEMAND * TICK / 3600)
    full = optimum(counts_trace([8] * 60, 8), due, [0])[0]
    assert full == pytest.approx(7 * 8 * SPOT * TICK / 3600)


def test_bad_counts_and_gang_sizes_are_refused() -> None:
    with pytest.raises(InvalidInput, match="nodes"):
        AvailabilityTrace.from_counts(np.array([[1, 2]]), ZONE, TICK, 0)
    with pytest.raises(InvalidInput, match="counts"):
        AvailabilityTrace.from_counts(np.array([[1, -2]]), ZONE, TICK, 2)
    with pytest.raises(InvalidInput, match="nodes"):
        DeadlineJob(1.0, 2.0, restart_minutes=1, checkpoint_minutes=10, nodes=0)
